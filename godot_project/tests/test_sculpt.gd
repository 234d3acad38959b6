extends IslandTestCase
## TerrainBrush's sculpt and sketch modes (issue 23): each mode changes the heights where and
## only where it should, the edits live in a sculpt layer applied inside the generator (flatten
## level through erosion, a dam makes a lake, a sketched channel makes two islands), survive a
## new seed, save/reload and a resolution change, undo restores the heights bit for bit, the
## masks limit them, runtime dabs update the colliders, exports include them, bad input errors.

var timeout_s := 600.0

const RiverValley := preload("res://tests/river_valley.gd")


## A 129² ROUND island over 512 m (4 m spacing) with a brush child, generated synchronously.
func _setup(parent: Node = self, props: Dictionary = {}) -> Array:
	var isl := ProceduralIsland.new()
	isl.resolution = 129
	isl.chunk_size = 32
	isl.world_size = 512.0
	isl.island_shape = ProceduralIsland.SHAPE_ROUND
	isl.seed = 3
	isl.sea_enabled = false
	isl.name = "Island"
	for k in props:
		isl.set(k, props[k])
	parent.add_child(isl)
	var brush := TerrainBrush.new()
	brush.name = "Brush"
	brush.hardness = 0.6
	isl.add_child(brush)
	return [isl, brush]


func _heights(isl: ProceduralIsland) -> PackedFloat32Array:
	return isl.get_heightmap_image().get_data().to_float32_array()


## A dry land point whose height is between lo and hi metres, scanning from the centre out.
func _land(isl: ProceduralIsland, lo: float, hi: float) -> Vector3:
	var water := isl.get_water_image()
	var n := isl.resolution
	var s := isl.world_size / (n - 1)
	for r in range(4, 60):
		for k in 16:
			var a := k * TAU / 16.0
			var x := r * 4.0 * cos(a)
			var z := r * 4.0 * sin(a)
			var ix := int(round((x + isl.world_size * 0.5) / s))
			var iz := int(round((z + isl.world_size * 0.5) / s))
			var h := isl.get_height_at(x, z)
			if h > lo and h < hi and water.get_pixel(ix, iz).r8 == 0:
				return Vector3(x, h, z)
	return Vector3.INF


## Sample indices within `r` metres of (x, z).
func _disc(isl: ProceduralIsland, x: float, z: float, r: float) -> PackedInt32Array:
	var n := isl.resolution
	var s := isl.world_size / (n - 1)
	var half := isl.world_size * 0.5
	var out := PackedInt32Array()
	for iz in n:
		for ix in n:
			if Vector2(ix * s - half - x, iz * s - half - z).length() <= r:
				out.append(iz * n + ix)
	return out


func _finish(isl: ProceduralIsland) -> void:
	if isl.is_generating():
		await wait_signal(isl, "generation_finished", 120.0)


## Dabs (each mode) change the shown heights inside the radius and nowhere else; after the
## regeneration the edit is in the generated island.
func test_each_mode_changes_heights_where_and_only_where_it_should() -> void:
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	var p := _land(isl, 20.0, 60.0)
	check(p != Vector3.INF, "found a land point")
	var modes := {
		TerrainBrush.MODE_SCULPT_RAISE: "raise",
		TerrainBrush.MODE_SCULPT_LOWER: "lower",
		TerrainBrush.MODE_SCULPT_SMOOTH: "smooth",
		TerrainBrush.MODE_SCULPT_FLATTEN: "flatten",
		TerrainBrush.MODE_SKETCH_SEA: "sketch sea",
	}
	brush.radius = 30.0
	brush.strength = 1.0
	brush.flatten_height = p.y + 10.0
	var n := isl.resolution
	var inside := _disc(isl, p.x, p.z, 30.0)
	var near := _disc(isl, p.x, p.z, 30.0 + 2.0 * isl.world_size / (n - 1))
	for m in modes:
		brush.mode = m
		# Lowering by another amount than the raise: the edits must not cancel out.
		brush.sculpt_height = 6.0 if m == TerrainBrush.MODE_SCULPT_LOWER else 4.0
		brush.flatten_height = p.y + 10.0
		var before := _heights(isl)
		check(brush.begin_stroke(), "begin %s" % modes[m])
		check(brush.paint_at(p) > 0, "%s dab" % modes[m])
		var shown := _heights(isl)
		var changed_in := 0
		var changed_out := 0
		for i in n * n:
			if shown[i] != before[i]:
				if near.has(i):
					changed_in += 1
				else:
					changed_out += 1
		check(changed_in > inside.size() / 4, "%s changes the shown heights under the brush (%d samples)" % [modes[m], changed_in])
		check_eq(changed_out, 0, "%s changes nothing outside the brush" % modes[m])
		var centre := int(inside[inside.size() / 2])
		match m:
			TerrainBrush.MODE_SCULPT_RAISE:
				check_near(isl.get_height_at(p.x, p.z) - p.y, 4.0, 0.01, "raise: 4 m at the centre")
			TerrainBrush.MODE_SCULPT_LOWER:
				check_near(isl.get_height_at(p.x, p.z) - p.y, -6.0, 0.01, "lower: 6 m down at the centre")
			TerrainBrush.MODE_SCULPT_FLATTEN:
				check_near(isl.get_height_at(p.x, p.z), p.y + 10.0, 0.5, "flatten: at the level in the centre")
			TerrainBrush.MODE_SKETCH_SEA:
				check(isl.get_height_at(p.x, p.z) < 0.0, "sketch sea: under water at once")
		if m == TerrainBrush.MODE_SCULPT_RAISE:
			# The chunk mesh under the brush follows the dab: its vertex at the dab's nearest
			# sample is at the shown height.
			var top := -INF
			for mi in _mesh_instances(isl):
				if not mi.name.begins_with("Chunk_"):
					continue
				var verts: PackedVector3Array = mi.mesh.surface_get_arrays(0)[Mesh.ARRAY_VERTEX]
				for v in verts:
					if Vector2(v.x - p.x, v.z - p.z).length() < 2.9:
						top = maxf(top, v.y)
			check(top > p.y + 3.0, "the chunk mesh under the brush is raised at once (%f m, was %f m)" % [top, p.y])
		var snap := brush.end_stroke()
		check(snap.has("sculpt"), "%s: the stroke's snapshot holds the sculpt region" % modes[m])
		check(isl.is_generating(), "%s: the stroke's end regenerates the island" % modes[m])
		await _finish(isl)
		check(isl.has_sculpt(), "the island has sculpt edits after %s" % modes[m])
		p.y = isl.get_height_at(p.x, p.z)
		if m == TerrainBrush.MODE_SKETCH_SEA:
			check(p.y < 0.0, "sketched sea stays sea after the regeneration (%f m)" % p.y)
			# Sea, or a lake at sea level where the sketched sea does not reach the open sea.
			check(isl.get_water_image().get_pixel(int(round((p.x + 256.0) / 4.0)), int(round((p.z + 256.0) / 4.0))).r8 >= 2, "the water map has water there")
	# Sketching land back where the sea was.
	brush.mode = TerrainBrush.MODE_SKETCH_LAND
	brush.begin_stroke()
	brush.paint_at(p)
	brush.paint_at(p)
	brush.end_stroke()
	await _finish(isl)
	check(isl.get_height_at(p.x, p.z) > 0.0, "sketched land rises above the sea")


## A flattened area stays level within 0.5 m after the island regenerates (erosion and the
## river carving leave it alone), with another seed too; sculpt_enabled off shows the pure
## island without deleting the edit; clear_sculpt removes it.
func test_flatten_stays_level_through_regenerate_and_seed_change() -> void:
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	var pure := _heights(isl)
	var p := _land(isl, 25.0, 60.0)
	brush.mode = TerrainBrush.MODE_SCULPT_FLATTEN
	brush.radius = 40.0
	brush.hardness = 0.7
	brush.strength = 1.0
	check_near(brush.pick_flatten_height(p), p.y, 0.01, "pick_flatten_height reads the terrain")
	check_near(brush.flatten_height, p.y, 0.01, "and sets flatten_height")
	brush.begin_stroke()
	for k in 3:
		brush.paint_at(p)
	brush.end_stroke()
	await _finish(isl)
	var core := _disc(isl, p.x, p.z, 40.0 * 0.65)
	for label in ["after regenerate", "after a seed change"]:
		var h := _heights(isl)
		var dev := 0.0
		for i in core:
			dev = maxf(dev, absf(h[i] - p.y))
		check(dev <= 0.5, "%s the flattened area is level (max deviation %f m)" % [label, dev])
		isl.seed = 11
		check(isl.regenerate(), "regenerate with seed 11")
	isl.seed = 3
	isl.sculpt_enabled = false
	isl.regenerate()
	check(_heights(isl) == pure, "sculpt_enabled off: exactly the pure island")
	check(isl.has_sculpt(), "the edits are still there")
	isl.sculpt_enabled = true
	isl.regenerate()
	check(_heights(isl) != pure, "on again: the edits are back")
	check(isl.clear_sculpt(), "clear_sculpt")
	await _finish(isl)
	check(not isl.has_sculpt(), "no edits after clear_sculpt")
	check(_heights(isl) == pure, "the pure island after clear_sculpt")
	expect_error("no sculpt edits")
	check(not isl.clear_sculpt(), "clearing twice reports it")


## Undo and redo of a sculpt stroke restore the island's heights bit for bit.
func test_undo_redo_restores_exact_heights() -> void:
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	var p := _land(isl, 10.0, 60.0)
	var before := _heights(isl)
	brush.mode = TerrainBrush.MODE_SCULPT_RAISE
	brush.radius = 25.0
	brush.sculpt_height = 3.0
	brush.begin_stroke()
	brush.paint_stroke(p - Vector3(30, 0, 0), p + Vector3(30, 0, 10))
	var snap := brush.end_stroke()
	await _finish(isl)
	var after := _heights(isl)
	check(after != before, "the stroke changed the island")
	check(brush.apply_snapshot(snap, false), "undo")
	await _finish(isl)
	check(_heights(isl) == before, "undo: bit-identical heights")
	check(brush.apply_snapshot(snap, true), "redo")
	await _finish(isl)
	check(_heights(isl) == after, "redo: bit-identical heights")
	# A second stroke undone alone leaves the first.
	brush.mode = TerrainBrush.MODE_SCULPT_LOWER
	brush.begin_stroke()
	brush.paint_at(p + Vector3(0, 0, -40))
	var snap2 := brush.end_stroke()
	await _finish(isl)
	check(brush.apply_snapshot(snap2, false), "undo the second stroke")
	await _finish(isl)
	check(_heights(isl) == after, "one stroke at a time")


## A stroke started while the previous stroke's island is still being generated keeps its dabs
## on screen (the older generation does not replace them mid-stroke), and its release gives an
## island with both strokes.
func test_a_stroke_during_the_previous_regeneration_keeps_its_dabs() -> void:
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	var a := _land(isl, 10.0, 60.0)
	var b := a + Vector3(-60.0, 0.0, 50.0)
	b.y = isl.get_height_at(b.x, b.z)
	brush.mode = TerrainBrush.MODE_SCULPT_RAISE
	brush.radius = 15.0
	brush.sculpt_height = 5.0
	brush.begin_stroke()
	brush.paint_at(a)
	brush.end_stroke()
	check(isl.is_generating(), "the first stroke's island is generating")
	brush.begin_stroke()
	brush.paint_at(b)
	var raised := isl.get_height_at(b.x, b.z)
	check_near(raised - b.y, 5.0, 0.01, "the second stroke's dab shows at once")
	await wait_frames(60)
	check_near(isl.get_height_at(b.x, b.z), raised, 0.01, "still there while the stroke is open")
	brush.end_stroke()
	await _finish(isl)
	check(isl.get_height_at(a.x, a.z) > a.y + 3.0, "the first stroke is in the island")
	check(isl.get_height_at(b.x, b.z) > b.y + 3.0, "the second stroke is in the island")


## The brush's height and slope masks limit sculpting as they limit paint.
func test_masks_limit_sculpting() -> void:
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	var p := _land(isl, 10.0, 60.0)
	brush.mode = TerrainBrush.MODE_SCULPT_RAISE
	brush.radius = 30.0
	brush.sculpt_height = 5.0
	brush.min_height = 500.0
	brush.max_height = 1000.0
	var before := _heights(isl)
	brush.begin_stroke()
	brush.paint_at(p)
	check(_heights(isl) == before, "nothing sculpted outside the height mask")
	brush.min_height = p.y - 1.0
	brush.max_height = p.y + 1.0
	brush.paint_at(p)
	var h := _heights(isl)
	var n := isl.resolution
	var raised := 0
	var wrong := 0
	for i in n * n:
		if h[i] != before[i]:
			raised += 1
			if before[i] < p.y - 1.0 or before[i] > p.y + 1.0:
				wrong += 1
	brush.end_stroke()
	await _finish(isl)
	check(raised > 0, "samples inside the band are raised")
	check_eq(wrong, 0, "no sample outside the height band is raised")


## The edits are kept in the scene file and in their world positions at another resolution.
func test_edits_survive_save_reload_and_resolution_change() -> void:
	var root := Node3D.new()
	root.name = "Root"
	add_child(root)
	var pair := _setup(root)
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	isl.owner = root
	brush.owner = root
	var p := _land(isl, 20.0, 60.0)
	brush.mode = TerrainBrush.MODE_SCULPT_FLATTEN
	brush.radius = 40.0
	brush.hardness = 0.7
	brush.strength = 1.0
	brush.flatten_height = p.y + 8.0
	brush.begin_stroke()
	for k in 3:
		brush.paint_at(p)
	brush.end_stroke()
	await _finish(isl)
	var sculpted := _heights(isl)
	var packed := PackedScene.new()
	check_eq(packed.pack(root), OK, "pack")
	var path := "user://test_sculpt_scene.tscn"
	check_eq(ResourceSaver.save(packed, path), OK, "save")
	var loaded := ResourceLoader.load(path, "", ResourceLoader.CACHE_MODE_IGNORE) as PackedScene
	var root2 := loaded.instantiate()
	add_child(root2)
	var isl2 := root2.get_node("Island") as ProceduralIsland
	check(isl2.has_sculpt(), "the sculpt layer is saved with the scene")
	check(_heights(isl2) == sculpted, "the reloaded island is the sculpted one, bit for bit")
	DirAccess.remove_absolute(ProjectSettings.globalize_path(path))
	isl2.resolution = 257
	check(isl2.regenerate(), "regenerate at 257")
	var dev := 0.0
	for i in _disc(isl2, p.x, p.z, 40.0 * 0.6):
		dev = maxf(dev, absf(_heights(isl2)[i] - (p.y + 8.0)))
	check(dev <= 0.5, "at 257² the shelf is at its level (max deviation %f m)" % dev)


## Counts 4-connected components of samples where `land[i]` with at least `min_size` samples;
## returns their sample lists.
func _components(land: PackedByteArray, n: int, min_size: int) -> Array:
	var seen := PackedByteArray()
	seen.resize(n * n)
	var out := []
	for s in n * n:
		if seen[s] == 1 or land[s] == 0:
			continue
		var comp := PackedInt32Array()
		var stack := [s]
		seen[s] = 1
		while not stack.is_empty():
			var i: int = stack.pop_back()
			comp.append(i)
			var x := i % n
			var z := i / n
			for j in [i - 1 if x > 0 else -1, i + 1 if x + 1 < n else -1, i - n if z > 0 else -1, i + n if z + 1 < n else -1]:
				if j >= 0 and seen[j] == 0 and land[j] == 1:
					seen[j] = 1
					stack.append(j)
		if comp.size() >= min_size:
			out.append(comp)
	return out


func _land_mask(isl: ProceduralIsland) -> PackedByteArray:
	var w := isl.get_water_image().get_data()
	var out := PackedByteArray()
	out.resize(w.size())
	for i in w.size():
		out[i] = 0 if w[i] == 3 else 1
	return out


## A channel sketched across the island makes two islands, each with rivers reaching the sea.
func test_a_sketched_channel_makes_two_drained_islands() -> void:
	var pair := _setup(self, {"resolution": 257, "world_size": 1000.0, "seed": 7, "chunk_size": 64})
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	var n := isl.resolution
	check_eq(_components(_land_mask(isl), n, 500).size(), 1, "one island before")
	brush.mode = TerrainBrush.MODE_SKETCH_SEA
	brush.radius = 25.0
	brush.hardness = 0.8
	brush.strength = 1.0
	brush.spacing = 0.25
	brush.begin_stroke()
	brush.paint_stroke(Vector3(-480, 0, 10), Vector3(480, 0, 10))
	brush.end_stroke()
	await _finish(isl)
	var parts := _components(_land_mask(isl), n, 500)
	check_eq(parts.size(), 2, "two islands after the channel")
	var water := isl.get_water_image().get_data()
	for part in parts:
		var mouths := 0
		for i in part:
			if water[i] != 1:
				continue
			var x: int = i % n
			var z: int = i / n
			for j in [i - 1 if x > 0 else i, i + 1 if x + 1 < n else i, i - n if z > 0 else i, i + n if z + 1 < n else i]:
				if water[j] == 3:
					mouths += 1
		check(mouths > 0, "an island of %d samples has a river reaching the sea" % part.size())


## A ridge raised across a river valley holds a lake behind it: at the river sample (most river
## upstream) whose valley sides rise at least 12 m within 60 m on both sides, an 8 m dam from
## side to side.
func test_a_dam_across_a_valley_makes_a_lake() -> void:
	var pair := _setup(self, {"resolution": 257, "world_size": 1000.0, "seed": 2, "chunk_size": 64})
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	var n := isl.resolution
	var s := isl.world_size / (n - 1)
	var h := _heights(isl)
	var pos := func(i: int) -> Vector2: return Vector2((i % n) * s - 500.0, (i / n) * s - 500.0)
	var valley := RiverValley.find(isl)
	check(not valley.is_empty(), "found a river valley")
	if valley.is_empty():
		return
	var best: int = valley.index
	var best_up: int = valley.upstream
	var c: Vector2 = valley.centre
	var fall: Vector2 = valley.fall
	var across := Vector2(-fall.y, fall.x)
	var lakes_upstream := func() -> int:
		var w := isl.get_water_image().get_data()
		var count := 0
		for i in _disc(isl, c.x, c.y, 250.0):
			if w[i] == 2 and (pos.call(i) - c).dot(fall) < -10.0:
				count += 1
		return count
	var before: int = lakes_upstream.call()
	brush.mode = TerrainBrush.MODE_SCULPT_RAISE
	brush.radius = 14.0
	brush.hardness = 0.5
	brush.sculpt_height = 2.0
	brush.spacing = 0.25
	brush.begin_stroke()
	var a := c - across * 75.0
	var b := c + across * 75.0
	brush.paint_stroke(Vector3(a.x, 0, a.y), Vector3(b.x, 0, b.y))
	brush.end_stroke()
	await _finish(isl)
	var crest := isl.get_height_at(c.x, c.y) - h[best]
	var after: int = lakes_upstream.call()
	print("    dam at %s (river sample %d, %d upstream, %.1f m), crest +%.1f m, lake samples upstream %d -> %d" % [c, best, best_up, h[best], crest, before, after])
	check(crest > 5.0, "the dam stands (%.1f m)" % crest)
	check(after > before + 20, "a lake fills behind the dam (%d lake samples upstream before, %d after)" % [before, after])


## A dab from GDScript at runtime (no stroke) digs a crater: the island regenerates with it,
## the colliders follow, get_height_at and export_heightmap include it.
func test_runtime_crater_updates_colliders_and_exports() -> void:
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	var p := _land(isl, 20.0, 60.0)
	brush.mode = TerrainBrush.MODE_SCULPT_LOWER
	brush.radius = 15.0
	brush.sculpt_height = 8.0
	check(brush.paint_at(p) > 0, "crater dab")
	await _finish(isl)
	var h := isl.get_height_at(p.x, p.z)
	check(h < p.y - 6.0, "the crater is in the regenerated island (%f m, was %f m)" % [h, p.y])
	# A ray down onto the colliders hits the crater floor.
	await wait_frames(2)
	var space := isl.get_world_3d().direct_space_state
	var q := PhysicsRayQueryParameters3D.create(Vector3(p.x, 500.0, p.z), Vector3(p.x, -500.0, p.z))
	var hit := space.intersect_ray(q)
	check(not hit.is_empty(), "the ray hits the terrain")
	if not hit.is_empty():
		check_near(hit.position.y, h, 0.05, "the collider has the crater")
	var path := "user://test_sculpt_heights.r32"
	check_eq(isl.export_heightmap(path), OK, "export")
	var f := FileAccess.get_file_as_bytes(path).to_float32_array()
	var n := isl.resolution
	var i := int(round((p.z + 256.0) / 4.0)) * n + int(round((p.x + 256.0) / 4.0))
	check_eq(f[i], _heights(isl)[i], "the exported heightmap holds the crater")
	DirAccess.remove_absolute(ProjectSettings.globalize_path(path))


## Bad input: clear errors, nothing changed, no panic.
func test_bad_input_changes_nothing() -> void:
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	var before := _heights(isl)
	brush.mode = TerrainBrush.MODE_SCULPT_RAISE
	expect_error("finite")
	check_eq(brush.paint_at(Vector3(NAN, 0, 0)), -1, "NaN position")
	brush.radius = 0.0
	expect_error("radius")
	check_eq(brush.paint_at(Vector3.ZERO), -1, "zero radius")
	brush.radius = -5.0
	check_eq(brush.paint_at(Vector3.ZERO), -1, "negative radius")
	brush.radius = 10.0
	brush.mode = TerrainBrush.MODE_SCULPT_FLATTEN
	brush.flatten_height = 1.0e6
	expect_error("flatten_height")
	check_eq(brush.paint_at(Vector3.ZERO), -1, "flatten height outside the world")
	check(not isl.is_generating(), "nothing regenerates")
	check(_heights(isl) == before, "the heights are unchanged")
	check(not isl.has_sculpt(), "no edit was stored")
	# An island that was never generated.
	var fresh := ProceduralIsland.new()
	fresh.generate_on_ready = false
	add_child(fresh)
	var b2 := TerrainBrush.new()
	fresh.add_child(b2)
	b2.mode = TerrainBrush.MODE_SCULPT_RAISE
	expect_error("not been generated")
	check_eq(b2.paint_at(Vector3.ZERO), -1, "no island yet")
	check(not fresh.has_sculpt(), "nothing stored on the ungenerated island")


func _sea_border_warnings(logger: Object) -> int:
	var n := 0
	for t in logger.get("warnings"):
		if "sea border" in t:
			n += 1
	return n


## Issue 40.4: sketching land into the map's sea border (the outer shelf + two samples, where land
## never appears) is no longer silent: the brush says how far a dab reaches into it, warns once
## per stroke (once per call outside a stroke), and its cursor turns orange with the border's
## inner edge drawn. Land sketched inside still rises; the ring stays sea.
func test_sketch_land_in_the_sea_border_warns() -> void:
	if not ClassDB.class_exists("Logger"):
		check(false, "this test needs Godot 4.5+ (Logger) to see the warning")
		return
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	brush.mode = TerrainBrush.MODE_SKETCH_LAND
	brush.radius = 12.0
	brush.strength = 1.0
	# 512 m map, 60 m shelf, 4 m spacing: the ring is the outer 68 m (|x| > 188 m).
	var edge := Vector3(240.0, 0.0, 0.0)
	var near := Vector3(180.0, 0.0, 0.0)
	var inside := Vector3(150.0, 0.0, 0.0)
	check_near(brush.get_sea_border_overlap(edge), 240.0 + 12.0 - 188.0, 1e-3, "a dab at 240 m reaches 64 m into the ring")
	check_near(brush.get_sea_border_overlap(near), 180.0 + 12.0 - 188.0, 1e-3, "a dab at 180 m grazes it by 4 m")
	check_eq(brush.get_sea_border_overlap(inside), 0.0, "a dab at 150 m stays inside")
	var logger := _add_warn_logger()
	# A stroke inside the land area: no warning.
	brush.begin_stroke()
	brush.paint_at(inside)
	brush.paint_at(inside)
	brush.end_stroke()
	await _finish(isl)
	var quiet := _sea_border_warnings(logger)
	# A stroke into the ring: one warning however many dabs.
	brush.begin_stroke()
	for k in 4:
		brush.paint_at(edge)
	brush.paint_stroke(edge, near)
	brush.end_stroke()
	await _finish(isl)
	var stroke := _sea_border_warnings(logger)
	# A single dab outside a stroke warns by itself.
	brush.paint_at(edge)
	await _finish(isl)
	var single := _sea_border_warnings(logger)
	OS.call("remove_logger", logger)
	check_eq(quiet, 0, "no warning for sketching inside the land area")
	check_eq(stroke, 1, "one warning for a stroke into the sea border (%s)" % [logger.get("warnings")])
	check_eq(single, 2, "one more for a lone dab there")
	check(isl.get_height_at(inside.x, inside.z) > 0.0, "land sketched inside rises above the sea (%f m)" % isl.get_height_at(inside.x, inside.z))
	check(isl.get_height_at(edge.x, edge.z) < 0.0, "the sea border stays sea (%f m)" % isl.get_height_at(edge.x, edge.z))
	# The cursor: the ring plus the border's edge, in orange, at the edge; the ring alone inside.
	brush.show_cursor(edge)
	var cursor: MeshInstance3D = null
	for c in brush.get_children(true):
		if c is MeshInstance3D:
			cursor = c
	if check(cursor != null, "cursor node"):
		var mesh: ImmediateMesh = cursor.mesh
		check(mesh.get_surface_count() >= 2, "the border's edge is drawn next to the ring (%d surfaces)" % mesh.get_surface_count())
		var cols: PackedColorArray = mesh.surface_get_arrays(0)[Mesh.ARRAY_COLOR]
		check(cols.size() > 0 and cols[0].r > 0.9 and cols[0].g > 0.4 and cols[0].g < 0.7, "the ring is orange there (%s)" % [cols[0] if cols.size() > 0 else null])
		var line: PackedVector3Array = mesh.surface_get_arrays(1)[Mesh.ARRAY_VERTEX]
		var on_edge := true
		for v in line:
			on_edge = on_edge and absf(absf(isl.to_local(v).x) - 188.0) < 0.01
		check(line.size() > 2 and on_edge, "the drawn line is the border's inner edge, x = 188 m")
		brush.show_cursor(inside)
		check_eq(mesh.get_surface_count(), 1, "only the ring inside the land area")
		brush.hide_cursor()
