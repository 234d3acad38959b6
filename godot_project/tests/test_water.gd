extends IslandTestCase
## ProceduralIsland water: the sea surface node, river/lake nodes, get_water_level_at,
## get_water_image, ray casts against the water meshes, sea_enabled, no leaks on regenerate.

const KIND_DRY := 0
const KIND_RIVER := 1
const KIND_LAKE := 2
const KIND_SEA := 3


## The internal water nodes of `isl`: the sea ("Sea") and river/lake chunks ("Water_x_z").
func _sea_nodes(isl: Node) -> Array[MeshInstance3D]:
	var out: Array[MeshInstance3D] = []
	for c in isl.get_children(true):
		if c is MeshInstance3D and String(c.name).begins_with("Sea"):
			out.append(c)
	return out


func _water_chunks(isl: Node) -> Array[MeshInstance3D]:
	var out: Array[MeshInstance3D] = []
	for c in isl.get_children(true):
		if c is MeshInstance3D and String(c.name).begins_with("Water_") and c.visible:
			out.append(c)
	return out


## River/lake nodes, hidden (pooled) ones included.
func _all_water_chunks(isl: Node) -> int:
	var c := 0
	for n in isl.get_children(true):
		if String(n.name).begins_with("Water_"):
			c += 1
	return c


func _wet_island(props: Dictionary = {}) -> ProceduralIsland:
	var p := {"world_size": 512.0, "sea_enabled": true, "inland_water_enabled": true}
	p.merge(props, true)
	return _island(65, 32, p)


## Node-local position of sample (i, j).
func _sample_pos(isl: ProceduralIsland, i: int, j: int) -> Vector2:
	var n: int = isl.resolution
	var s: float = isl.world_size / float(n - 1)
	return Vector2(i * s - isl.world_size * 0.5, j * s - isl.world_size * 0.5)


## First hit of the ray `from` + t·`dir` (t >= 0) with the triangles of `nodes`, or null.
func _ray_hit(nodes: Array[MeshInstance3D], from: Vector3, dir: Vector3) -> Variant:
	var best: Variant = null
	for mi in nodes:
		if mi.mesh == null:
			continue
		var xf := mi.global_transform
		var faces := mi.mesh.get_faces()
		for k in range(0, faces.size(), 3):
			var hit: Variant = Geometry3D.ray_intersects_triangle(from, dir, xf * faces[k], xf * faces[k + 1], xf * faces[k + 2])
			if hit != null and (best == null or from.distance_to(hit) < from.distance_to(best)):
				best = hit
	return best


func test_sea_node_at_sea_level_past_the_island() -> void:
	var isl := _wet_island()
	var seas := _sea_nodes(isl)
	if not check_eq(seas.size(), 1, "one sea node"):
		return
	var sea := seas[0]
	check(sea.owner == null, "the sea is not saved into the scene")
	check_eq(isl.get_child_count(), 0, "the sea is an internal child")
	check(sea.mesh != null and sea.mesh.get_surface_count() == 1, "sea mesh has a surface")
	var aabb := sea.get_aabb()
	check_near(aabb.position.y, 0.0, 1e-6, "sea at y = 0")
	check_near(aabb.size.y, 0.0, 1e-4, "sea is flat")
	check_near(sea.global_position.y, 0.0, 1e-6, "sea node at y = 0")
	check(aabb.position.x < -256.0 * 10.0 and aabb.end.x > 256.0 * 10.0, "sea reaches far past the island in x: %s" % aabb)
	check(aabb.position.z < -256.0 * 10.0 and aabb.end.z > 256.0 * 10.0, "sea reaches far past the island in z: %s" % aabb)
	var mat := sea.material_override as ShaderMaterial
	check(mat != null and mat.shader != null and mat.shader.resource_path.ends_with("water.gdshader"), "default water shader")
	check(mat.get_shader_parameter("water_depth") is Texture2D, "the shader gets the depth texture")
	var stats := isl.get_last_stats()
	for key in ["water_samples", "sea_samples", "river_samples", "lake_samples", "water_chunks"]:
		check(stats.has(key), "stats has %s" % key)
	check(stats.sea_samples > 0, "the island has sea samples")
	check_eq(stats.water_samples, stats.sea_samples + stats.river_samples + stats.lake_samples, "water_samples sums the kinds")
	# A user material replaces the default on the sea.
	var user := StandardMaterial3D.new()
	isl.water_material = user
	await wait_frames(2)
	check(sea.material_override == user, "water_material is applied")
	isl.water_material = null
	await wait_frames(2)
	check(sea.material_override is ShaderMaterial, "back to the default water material")


func test_water_image_matches_heights() -> void:
	var isl := _wet_island()
	var img := isl.get_water_image()
	if not check(img != null, "water image"):
		return
	check_eq(img.get_format(), Image.FORMAT_R8, "FORMAT_R8")
	check_eq(img.get_size(), Vector2i(65, 65), "one pixel per sample")
	var hm := isl.get_heightmap_image()
	var data := img.get_data()
	var n := 65
	# Below sea level and connected to the border through samples below sea level.
	var sea := PackedByteArray()
	sea.resize(n * n)
	var stack: Array[int] = []
	for k in n:
		for idx in [k, (n - 1) * n + k, k * n, k * n + n - 1]:
			if hm.get_pixel(idx % n, idx / n).r < 0.0 and sea[idx] == 0:
				sea[idx] = 1
				stack.append(idx)
	while not stack.is_empty():
		var idx: int = stack.pop_back()
		var x := idx % n
		var z := idx / n
		for d in [Vector2i(1, 0), Vector2i(-1, 0), Vector2i(0, 1), Vector2i(0, -1)]:
			var xx: int = x + d.x
			var zz: int = z + d.y
			if xx < 0 or zz < 0 or xx >= n or zz >= n:
				continue
			var j := zz * n + xx
			if sea[j] == 0 and hm.get_pixel(xx, zz).r < 0.0:
				sea[j] = 1
				stack.append(j)
	var bad := 0
	var counts := [0, 0, 0, 0]
	for j in n * n:
		var k := data[j]
		counts[mini(k, 3)] += 1
		var h := hm.get_pixel(j % n, j / n).r
		if k > KIND_SEA or (k == KIND_SEA) != (sea[j] == 1):
			bad += 1
		elif k != KIND_DRY and k != KIND_SEA and not is_finite(isl.get_water_level_at(_sample_pos(isl, j % n, j / n).x, _sample_pos(isl, j % n, j / n).y)):
			bad += 1
		elif k == KIND_DRY and h < 0.0 and sea[j] == 1:
			bad += 1
	print("    water kinds: dry %d, river %d, lake %d, sea %d" % counts)
	check_eq(bad, 0, "sea exactly where the ground is below 0 and connected to the border")
	check(counts[KIND_SEA] > 0 and counts[KIND_DRY] > 0, "both land and sea")
	check_eq(counts[KIND_SEA], isl.get_last_stats().sea_samples, "sea_samples matches the image")


func test_water_level_at_samples() -> void:
	var isl := _wet_island()
	var img := isl.get_water_image()
	var data := img.get_data()
	var hm := isl.get_heightmap_image()
	var n := 65
	var wrong := 0
	var peak := Vector2i.ZERO
	var peak_h := -INF
	for j in n:
		for i in n:
			var p := _sample_pos(isl, i, j)
			var level := isl.get_water_level_at(p.x, p.y)
			var k := data[j * n + i]
			var h := hm.get_pixel(i, j).r
			if h > peak_h:
				peak_h = h
				peak = Vector2i(i, j)
			match k:
				KIND_SEA:
					if level != 0.0:
						wrong += 1
				KIND_DRY:
					if not is_nan(level):
						wrong += 1
				_:
					if not is_finite(level) or level < h - 1e-3:
						wrong += 1
	check_eq(wrong, 0, "level 0 on sea samples, NaN on dry ones, at or above the ground on rivers/lakes")
	var pp := _sample_pos(isl, peak.x, peak.y)
	check(peak_h > 0.0 and is_nan(isl.get_water_level_at(pp.x, pp.y)), "NaN on the highest peak (%.1f m)" % peak_h)
	check(is_nan(isl.get_water_level_at(1e6, 0.0)), "NaN outside the map")
	var empty := ProceduralIsland.new()
	empty.generate_on_ready = false
	add_child(empty)
	check(is_nan(empty.get_water_level_at(0.0, 0.0)), "NaN before any generation")
	check(empty.get_water_image() == null, "no water image before any generation")
	empty.queue_free()


func test_rays_hit_the_water_surface() -> void:
	var isl := _wet_island()
	isl.position = Vector3(30.0, 0.0, -20.0)
	await wait_frames(1)
	var data := isl.get_water_image().get_data()
	var n := 65
	var water_nodes: Array[MeshInstance3D] = _sea_nodes(isl) + _water_chunks(isl)
	var sea_hits := 0
	var inland_hits := 0
	var bad := 0
	for j in range(0, n, 4):
		for i in range(0, n, 4):
			var k := data[j * n + i]
			if k == KIND_DRY:
				continue
			var p := _sample_pos(isl, i, j)
			var level := isl.get_water_level_at(p.x, p.y)
			var from := isl.global_transform * Vector3(p.x, 200.0, p.y)
			var hit: Variant = _ray_hit(water_nodes, from, Vector3.DOWN)
			if hit == null or absf((hit as Vector3).y - level) > 1e-3:
				bad += 1
			elif k == KIND_SEA:
				sea_hits += 1
			else:
				inland_hits += 1
	print("    ray hits: sea %d, river/lake %d" % [sea_hits, inland_hits])
	check_eq(bad, 0, "every ray over water hits a water mesh at get_water_level_at")
	check(sea_hits > 10, "rays hit the sea (%d)" % sea_hits)
	# Far out at sea, past the map: still the sea surface at 0.
	var far: Variant = _ray_hit(_sea_nodes(isl), Vector3(3000.0, 50.0, 2500.0), Vector3.DOWN)
	check(far != null and absf((far as Vector3).y) < 1e-4, "the sea continues past the map: %s" % far)
	# A slanted ray towards the horizon meets the sea too.
	var slant: Variant = _ray_hit(_sea_nodes(isl), Vector3(0.0, 100.0, 0.0), Vector3(1.0, -0.01, 0.3).normalized())
	check(slant != null and absf((slant as Vector3).y) < 1e-3, "a shallow ray meets the sea far away: %s" % slant)


func test_sea_enabled_false_removes_it() -> void:
	var isl := _wet_island()
	check_eq(_sea_nodes(isl).size(), 1, "sea there")
	isl.sea_enabled = false
	await wait_frames(2)
	check_eq(_sea_nodes(isl).size(), 0, "sea_enabled = false removes the sea node")
	check(isl.regenerate(), "regenerate")
	check_eq(_sea_nodes(isl).size(), 0, "regenerate keeps it off")
	check_eq(isl.get_water_level_at(_sample_pos(isl, 0, 0).x, _sample_pos(isl, 0, 0).y), 0.0, "the water data stays")
	isl.sea_enabled = true
	await wait_frames(2)
	check_eq(_sea_nodes(isl).size(), 1, "sea_enabled = true brings it back")
	var off := _island(65, 32, {"sea_enabled": false})
	check_eq(_sea_nodes(off).size(), 0, "an island created with sea_enabled = false has no sea")


func test_regenerate_keeps_one_sea() -> void:
	var isl := _wet_island()
	var first := _sea_nodes(isl)[0]
	for s in [1, 2, 3]:
		isl.seed = s
		check(isl.regenerate(), "regenerate seed %d" % s)
	check_eq(_sea_nodes(isl).size(), 1, "one sea node after regenerates")
	check(_sea_nodes(isl)[0] == first, "the sea node is reused")
	check_eq(isl.get_child_count(true) - _all_water_chunks(isl), 4 + 1, "4 chunks and one sea: no extra nodes")
	check(_all_water_chunks(isl) <= 4, "at most one river/lake node per chunk")
	isl.world_size = 800.0
	isl.regenerate_async()
	var r := await wait_signal(isl, "generation_finished", 60.0)
	check(not r.is_empty(), "async regenerate finished")
	check_eq(_sea_nodes(isl).size(), 1, "one sea node after an async regenerate")
	check(_sea_nodes(isl)[0].get_aabb().end.x > 800.0 * 10.0, "the sea follows the new world_size")
	# Another chunk count: the water nodes are rebuilt, still one sea.
	isl.resolution = 129
	check(isl.regenerate(), "regenerate at 129²")
	check_eq(_sea_nodes(isl).size(), 1, "one sea node after a resolution change")
