extends IslandTestCase
## TerrainBrush: masked painting, falloff, erase, smooth, undo/redo snapshots, saving with the
## scene, regenerating with the paint kept.

var timeout_s := 240.0


## A 129² island over 256 m (2 m spacing) generated synchronously, with a brush child.
func _setup(parent: Node = self) -> Array:
	var isl := ProceduralIsland.new()
	isl.resolution = 129
	isl.chunk_size = 32
	isl.world_size = 256.0
	isl.name = "Island"
	parent.add_child(isl)
	var brush := TerrainBrush.new()
	brush.name = "Brush"
	isl.add_child(brush)
	return [isl, brush]


## A land point (x, z) whose height is between lo and hi metres and slope under max_slope.
func _find_point(isl: ProceduralIsland, lo: float, hi: float, max_slope: float = 90.0) -> Vector3:
	for iz in range(8, 121, 2):
		for ix in range(8, 121, 2):
			var x := ix * 2.0 - 128.0
			var z := iz * 2.0 - 128.0
			var h := isl.get_height_at(x, z)
			var slope := rad_to_deg(isl.get_normal_at(x, z).angle_to(Vector3.UP))
			if h > lo and h < hi and slope < max_slope:
				return Vector3(x, h, z)
	return Vector3.INF


func _sum(w: PackedFloat32Array) -> float:
	var s := 0.0
	for v in w:
		s += v
	return s


func _maps(isl: ProceduralIsland) -> PackedByteArray:
	var out := PackedByteArray()
	out.append_array(isl.get_splat_map_image(0).get_data())
	out.append_array(isl.get_splat_map_image(1).get_data())
	return out


func test_weights_are_eight_and_normalised() -> void:
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var w := isl.get_splat_weights_at(0.0, 0.0)
	check_eq(w.size(), 8, "eight weights")
	check_near(_sum(w), 1.0, 1e-4, "weights sum to 1")
	for k in range(4, 8):
		check_eq(w[k], 0.0, "user layer %d starts empty" % k)
	var img := isl.get_splat_map_image(0)
	check(img != null and img.get_size() == Vector2i(129, 129), "splat map 0 at the heightmap's resolution")
	check(isl.get_splat_map_texture(1) != null, "splat map texture 1")
	check(isl.get_splat_map_image(2) == null, "only two maps")
	# No user layer painted: map 1 is all zeros, uploaded as a 1×1 black texture (537 MB saved
	# at 8193²); the image API still answers at full size.
	var img1 := isl.get_splat_map_image(1)
	check(img1.get_size() == Vector2i(129, 129) and img1.get_data().count(0) == img1.get_data().size(), "map 1 image: 129² zeros")
	check_eq(isl.get_splat_map_texture(1).get_size(), Vector2(1, 1), "unpainted map 1 texture is 1×1")


func test_masks_block_outside_height_and_slope() -> void:
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	var p := _find_point(isl, 5.0, 60.0)
	check(p != Vector3.INF, "found a land point")
	var before := _maps(isl)
	brush.layer = 5
	brush.radius = 20.0
	brush.strength = 1.0
	brush.min_height = 500.0
	brush.max_height = 1000.0
	check_eq(brush.paint_at(p), 0, "nothing painted above the terrain's height range")
	check_eq(brush.fill_by_rule(), 0, "fill_by_rule outside the height range changes nothing")
	check(_maps(isl) == before, "splat maps unchanged")
	check_eq(brush.get_mask_at(p), 0.0, "mask is 0 there")
	brush.min_height = -1000.0
	brush.max_height = 1000.0
	brush.min_slope_degrees = 89.0
	brush.max_slope_degrees = 90.0
	check_eq(brush.paint_at(p), 0, "nothing painted outside the slope range")
	check_eq(brush.fill_by_rule(), 0, "fill_by_rule outside the slope range changes nothing")
	check(_maps(isl) == before, "splat maps still unchanged")
	# Inside both ranges: the layer increases and weights stay normalised.
	brush.min_slope_degrees = 0.0
	brush.max_slope_degrees = 90.0
	brush.min_height = p.y - 20.0
	brush.max_height = p.y + 20.0
	brush.height_fade = 2.0
	var w0 := isl.get_splat_weights_at(p.x, p.z)
	var changed := brush.paint_at(isl.to_global(p))
	check(changed > 0, "painting inside the ranges changes texels (%d)" % changed)
	# The first paint of a user layer gives map 1 its full size, with the paint in it.
	var tex1 := isl.get_splat_map_texture(1)
	check_eq(tex1.get_size(), Vector2(129, 129), "painted map 1 texture at full size")
	var painted1 := isl.get_splat_map_image(1).get_data()
	check(painted1.count(0) < painted1.size(), "the paint is in map 1")
	var w1 := isl.get_splat_weights_at(p.x, p.z)
	check(w1[5] > w0[5] + 0.5, "layer 5 increased (%s -> %s)" % [w0[5], w1[5]])
	check_near(_sum(w1), 1.0, 1e-4, "still normalised")
	for y in range(0, 129, 8):
		for x in range(0, 129, 8):
			var w := isl.get_splat_weights_at(x * 2.0 - 128.0, y * 2.0 - 128.0)
			if absf(_sum(w) - 1.0) > 1e-4:
				check(false, "weights at (%d, %d) sum to %s" % [x, y, _sum(w)])
	# Only texels inside the height range got paint.
	var img := isl.get_splat_map_image(1)
	var bad := 0
	for iz in 129:
		for ix in 129:
			if img.get_pixel(ix, iz).g > 0.0:
				var h := isl.get_height_at(ix * 2.0 - 128.0, iz * 2.0 - 128.0)
				if h < brush.min_height - 0.01 or h > brush.max_height + 0.01:
					bad += 1
	check_eq(bad, 0, "no paint outside the height range")


func test_falloff_follows_hardness() -> void:
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	brush.hardness = 0.5
	check_eq(brush.get_falloff(0.0), 1.0, "centre")
	check_eq(brush.get_falloff(0.49), 1.0, "flat core up to hardness")
	check(brush.get_falloff(0.75) > 0.0 and brush.get_falloff(0.75) < 1.0, "fade between hardness and rim")
	check_eq(brush.get_falloff(1.0), 0.0, "rim")
	brush.hardness = 0.0
	check_near(brush.get_falloff(0.5), 0.5, 1e-5, "soft brush: smoothstep midpoint")
	# Painted profile: soft brush decreases with distance.
	brush.layer = 6
	brush.radius = 30.0
	brush.strength = 1.0
	brush.hardness = 0.0
	brush.paint_at(Vector3(0.0, 0.0, 0.0))
	var a := isl.get_splat_weights_at(0.0, 0.0)[6]
	var b := isl.get_splat_weights_at(10.0, 0.0)[6]
	var c := isl.get_splat_weights_at(20.0, 0.0)[6]
	var d := isl.get_splat_weights_at(32.0, 0.0)[6]
	check(a > b and b > c and c > 0.0, "soft falloff decreases: %s %s %s" % [a, b, c])
	check_near(a, 1.0, 0.01, "full strength at the centre")
	check_eq(d, 0.0, "nothing outside the radius")
	# Hard brush: full strength up to near the rim.
	brush.layer = 7
	brush.hardness = 1.0
	brush.paint_at(Vector3(60.0, 0.0, 60.0))
	check_near(isl.get_splat_weights_at(60.0 + 26.0, 60.0)[7], 1.0, 0.01, "hard brush is full at 26/30 m")


func test_erase_and_smooth() -> void:
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	brush.layer = 4
	brush.radius = 16.0
	brush.strength = 1.0
	brush.hardness = 1.0
	brush.paint_at(Vector3(0.0, 0.0, 0.0))
	check_near(isl.get_splat_weights_at(0.0, 0.0)[4], 1.0, 0.01, "painted")
	brush.mode = TerrainBrush.MODE_ERASE
	brush.strength = 0.5
	check(brush.paint_at(Vector3(0.0, 0.0, 0.0)) > 0, "erase changes texels")
	var w := isl.get_splat_weights_at(0.0, 0.0)
	check_near(w[4], 0.5, 0.01, "half erased")
	check_near(_sum(w), 1.0, 1e-4, "normalised after erase")
	brush.strength = 1.0
	brush.paint_at(Vector3(0.0, 0.0, 0.0))
	check_eq(isl.get_splat_weights_at(0.0, 0.0)[4], 0.0, "fully erased")
	# Smooth: a hard edge of layer 4 gets blended.
	brush.mode = TerrainBrush.MODE_PAINT
	brush.radius = 20.0
	brush.paint_at(Vector3(40.0, 0.0, 0.0))
	var edge_in := isl.get_splat_weights_at(58.0, 0.0)[4]
	var edge_out := isl.get_splat_weights_at(62.0, 0.0)[4]
	check(edge_in > 0.99 and edge_out == 0.0, "hard edge before smoothing (%s, %s)" % [edge_in, edge_out])
	brush.mode = TerrainBrush.MODE_SMOOTH
	brush.radius = 12.0
	check(brush.paint_at(Vector3(60.0, 0.0, 0.0)) > 0, "smooth changes texels")
	var s_in := isl.get_splat_weights_at(58.0, 0.0)[4]
	var s_out := isl.get_splat_weights_at(62.0, 0.0)[4]
	check(s_in < edge_in - 0.05 and s_out > 0.05, "edge blended (%s, %s)" % [s_in, s_out])
	check_near(_sum(isl.get_splat_weights_at(60.0, 0.0)), 1.0, 1e-4, "normalised after smooth")
	# clear_layer removes the rest.
	check(brush.clear_layer(4) > 0, "clear_layer changes texels")
	check_eq(isl.get_splat_weights_at(30.0, 0.0)[4], 0.0, "layer 4 cleared")
	brush.mode = 11
	expect_error("mode must be 0..10")
	check_eq(brush.paint_at(Vector3.ZERO), -1, "invalid mode is an error")


func test_stroke_undo_redo_exact() -> void:
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	brush.layer = 3
	brush.radius = 10.0
	brush.strength = 0.4
	brush.hardness = 0.3
	brush.spacing = 0.2
	# Some earlier paint that must survive undo.
	brush.paint_at(Vector3(-50.0, 0.0, -50.0))
	var before := _maps(isl)
	check(brush.begin_stroke(), "begin_stroke")
	check(brush.is_stroke_active(), "stroke active")
	brush.paint_at(Vector3(-60.0, 0.0, 0.0))
	var changed := brush.paint_stroke(Vector3(-60.0, 0.0, 0.0), Vector3(0.0, 0.0, 20.0))
	changed += brush.paint_stroke(Vector3(0.0, 0.0, 20.0), Vector3(40.0, 0.0, -30.0))
	check(changed > 0, "stroke painted")
	var snap := brush.end_stroke()
	check(not brush.is_stroke_active(), "stroke ended")
	var after := _maps(isl)
	check(after != before, "the stroke changed the maps")
	check(snap.has("rect") and snap.has("before") and snap.has("after"), "snapshot keys")
	var r: Rect2i = snap.rect
	check(r.size.x < 129 and r.size.y < 129, "snapshot holds only the touched region (%s)" % r)
	check_eq((snap.before as PackedByteArray).size(), r.size.x * r.size.y * 8, "8 bytes per texel")
	check(brush.apply_snapshot(snap, false), "undo")
	check(_maps(isl) == before, "undo restores exactly")
	check(brush.apply_snapshot(snap, true), "redo")
	check(_maps(isl) == after, "redo restores exactly")
	check(brush.apply_snapshot(snap, false), "undo again")
	check(_maps(isl) == before, "undo again restores exactly")
	check(brush.end_stroke().is_empty(), "no open stroke: empty snapshot")
	expect_error("needs")
	var broken := snap.duplicate()
	broken.before = PackedByteArray([1, 2, 3])
	check(not brush.apply_snapshot(broken, false), "bad snapshot rejected")


func test_save_and_reload_identical() -> void:
	var root := Node3D.new()
	root.name = "Root"
	add_child(root)
	var pair := _setup(root)
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	isl.owner = root
	brush.owner = root
	brush.layer = 3
	brush.radius = 25.0
	brush.strength = 0.8
	var p := _find_point(isl, 3.0, 200.0)
	brush.min_height = p.y - 5.0
	brush.max_height = p.y + 50.0
	brush.height_fade = 3.0
	check(brush.paint_stroke(p - Vector3(20, 0, 0), p + Vector3(20, 0, 10)) > 0, "painted")
	brush.layer = 6
	brush.min_height = -1000.0
	check(brush.paint_at(Vector3(-40.0, 0.0, 40.0)) > 0, "painted layer 6")
	var maps := _maps(isl)
	var packed := PackedScene.new()
	check_eq(packed.pack(root), OK, "pack")
	var path := "user://test_terrain_brush_scene.tscn"
	check_eq(ResourceSaver.save(packed, path), OK, "save")
	var loaded := ResourceLoader.load(path, "", ResourceLoader.CACHE_MODE_IGNORE) as PackedScene
	check(loaded != null, "load")
	var root2 := loaded.instantiate()
	add_child(root2)
	var isl2 := root2.get_node("Island") as ProceduralIsland
	check(isl2 != null and isl2.splat_paint != null, "paint resource loaded")
	check(isl2.splat_paint != isl.splat_paint, "a fresh resource, not the cached one")
	check(_maps(isl2) == maps, "identical splat after reload")
	var w1 := isl.get_splat_weights_at(p.x, p.z)
	var w2 := isl2.get_splat_weights_at(p.x, p.z)
	check(w1 == w2, "identical weights after reload")
	check(root2.get_node("Island/Brush") is TerrainBrush, "brush saved too")
	DirAccess.remove_absolute(ProjectSettings.globalize_path(path))


func test_regenerate_keeps_paint() -> void:
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	brush.layer = 5
	brush.radius = 20.0
	brush.strength = 1.0
	brush.hardness = 0.8
	brush.paint_at(Vector3(10.0, 0.0, 10.0))
	var maps := _maps(isl)
	check(isl.regenerate(), "regenerate")
	check(_maps(isl) == maps, "same parameters: identical splat with the paint")
	# A different seed recomputes the base but keeps every painted texel.
	isl.seed = 4242
	check(isl.regenerate(), "regenerate with a new seed")
	check_near(isl.get_splat_weights_at(10.0, 10.0)[5], 1.0, 0.01, "paint kept on the new base")
	check_eq(isl.get_splat_weights_at(-100.0, -100.0)[5], 0.0, "unpainted texels show the base")
	# A new resolution shows the paint resampled (the painted data itself stays at 129²).
	isl.resolution = 65
	check(isl.regenerate(), "regenerate at 65²")
	check_eq(isl.splat_paint.get_resolution(), 129, "paint kept at the resolution it was painted at")
	check_near(isl.get_splat_weights_at(10.0, 10.0)[5], 1.0, 0.02, "paint shown resampled at 65²")
	check_near(_sum(isl.get_splat_weights_at(10.0, 10.0)), 1.0, 1e-4, "normalised")


func test_raycast_and_errors() -> void:
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	var hit = brush.raycast(Vector3(5.0, 500.0, -7.0), Vector3.DOWN)
	check(hit is Vector3, "ray hits the terrain")
	if hit is Vector3:
		check_near(hit.y, isl.get_height_at(5.0, -7.0), 0.01, "hit on the surface")
	check(brush.raycast(Vector3(0.0, 500.0, 0.0), Vector3.UP) == null, "ray pointing up misses")
	var lone := TerrainBrush.new()
	add_child(lone)
	expect_error("no island")
	check_eq(lone.paint_at(Vector3.ZERO), -1, "brush without island: error")
	brush.radius = -1.0
	expect_error("radius")
	check_eq(brush.paint_at(Vector3.ZERO), -1, "negative radius: error")
	brush.radius = 5.0
	brush.show_cursor(Vector3.ZERO)
	check(brush.get_child_count(true) == 1, "cursor ring node")
	brush.hide_cursor()
	brush.layer = 9
	expect_error("layer")
	check_eq(brush.fill_by_rule(), -1, "bad layer: error")


func test_materials_get_the_splat_maps() -> void:
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var tex := isl.get_splat_map_texture(0)
	var chunk: MeshInstance3D = null
	for c in isl.get_children(true):
		if c is MeshInstance3D:
			chunk = c
			break
	check(chunk != null, "a chunk")
	var mat := chunk.material_override as ShaderMaterial
	check(mat != null, "default material is a ShaderMaterial")
	if mat != null:
		check_eq(mat.get_shader_parameter("splat_maps_enabled"), true, "maps enabled on the default material")
		check(mat.get_shader_parameter("splat_map_0") == tex, "default material reads splat map 0")
		check(mat.get_shader_parameter("splat_map_1") == isl.get_splat_map_texture(1), "and splat map 1")
		check_eq(mat.get_shader_parameter("splat_map_size"), 129.0, "map size")
	# A user ShaderMaterial assigned later gets them too.
	var custom := ShaderMaterial.new()
	custom.shader = load("res://addons/procedural_island/terrain.gdshader")
	isl.terrain_material = custom
	await wait_frames(3)
	check(chunk.material_override == custom, "custom material applied")
	check(custom.get_shader_parameter("splat_map_0") == tex, "custom material reads splat map 0")
	check_eq(custom.get_shader_parameter("splat_maps_enabled"), true, "maps enabled on the custom material")
	# Painting updates the texture's image in place (same texture object).
	var brush: TerrainBrush = pair[1]
	brush.layer = 2
	brush.strength = 1.0
	brush.paint_at(Vector3.ZERO)
	check(isl.get_splat_map_texture(0) == tex, "same texture after painting")


func test_layer_is_an_enum_of_the_layer_names() -> void:
	var brush := TerrainBrush.new()
	var found := {}
	for p in brush.get_property_list():
		found[p.name] = p
	check_eq(found.layer.hint, PROPERTY_HINT_ENUM, "layer is a dropdown")
	var names := ["Sand", "Grass", "Rock", "Snow", "Forest", "Dirt", "Gravel", "Meadow"]
	for i in names.size():
		check_eq(_enum_pick(found.layer.hint_string, names[i]), i, "layer %s is %d (shader order)" % [names[i], i])
	check_eq(TerrainBrush.LAYER_SNOW, 3, "LAYER_SNOW constant")
	check_eq(TerrainBrush.LAYER_MEADOW, names.size() - 1, "LAYER_MEADOW is the last layer")
	brush.free()


## Issue 12.5: a resolution round trip gives the painted data back exactly (the paint stays at
## the resolution it was painted at; other resolutions show a resampled view).
func test_resolution_round_trip_keeps_paint_exact() -> void:
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	brush.layer = 6
	brush.radius = 6.0
	brush.strength = 0.9
	brush.hardness = 0.8
	for k in 6:
		brush.paint_at(Vector3(-70.0 + k * 25.0, 0.0, 10.0 - k * 12.0))
	var painted: PackedByteArray = isl.splat_paint.data
	var maps0 := _maps(isl)
	for res in [65, 33, 129]:
		isl.resolution = res
		check(isl.regenerate(), "regenerate at %d" % res)
		if res != 129:
			check(_maps(isl).size() == res * res * 8, "maps at %d" % res)
			check_eq(isl.splat_paint.get_resolution(), 129, "the paint keeps its own resolution at %d" % res)
			check(isl.splat_paint.data == painted, "showing it at %d does not change the saved paint" % res)
	check(isl.splat_paint.data == painted, "129 -> 65 -> 33 -> 129 gives the painted data back")
	check(_maps(isl) == maps0, "and the same splat maps")
	# Painting at another resolution makes that the paint's resolution.
	isl.resolution = 65
	isl.regenerate()
	check(brush.paint_at(Vector3(0.0, 0.0, 0.0)) > 0, "paint at 65")
	check_eq(isl.splat_paint.get_resolution(), 65, "painted at 65: the paint is at 65 now")


## Issue 12.6 / 15.4: a duplicated island owns its paint: painting or resizing the copy never
## changes the original's paint or maps.
func test_duplicate_owns_its_paint() -> void:
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	brush.layer = 5
	brush.radius = 10.0
	brush.strength = 1.0
	check(brush.paint_at(Vector3(-40.0, 0.0, -40.0)) > 0, "painted the original")
	var data0: PackedByteArray = isl.splat_paint.data
	var maps0 := _maps(isl)
	var copy: ProceduralIsland = isl.duplicate()
	copy.name = "Copy"
	add_child(copy)
	check(copy.splat_paint != null, "the copy has paint")
	check(copy.splat_paint != isl.splat_paint, "but not the original's resource")
	check(copy.splat_paint.data == data0, "with the same painted data")
	var cbrush: TerrainBrush = null
	for c in copy.get_children():
		if c is TerrainBrush:
			cbrush = c
	check(cbrush != null, "the copy has its brush")
	cbrush.layer = 7
	cbrush.radius = 15.0
	cbrush.strength = 1.0
	check(cbrush.paint_at(Vector3(30.0, 0.0, 30.0)) > 0, "painted the copy")
	check(isl.splat_paint.data == data0, "the original's paint is unchanged")
	check(_maps(isl) == maps0, "and so are its splat maps")
	copy.resolution = 65
	check(copy.regenerate(), "copy regenerated at 65")
	check(isl.splat_paint.data == data0, "resizing the copy leaves the original's paint alone")
	check_eq(isl.splat_paint.get_resolution(), 129, "original paint still at 129")
	# Sharing on purpose.
	var shared := SplatPaint.new()
	shared.shared = true
	isl.splat_paint = shared
	copy.resolution = 129
	copy.splat_paint = shared
	copy.regenerate()
	isl.refresh_splat_maps()
	check(brush.paint_at(Vector3(-40.0, 0.0, 40.0)) > 0, "painted the shared paint")
	check(copy.splat_paint == shared and isl.splat_paint == shared, "a shared paint stays shared")


## Issue 12.7: undo of a stroke that spans a resolution change restores the paint from before
## the stroke (as the island now shows it) and writes no paint where there was none.
func test_undo_of_a_stroke_across_a_resolution_change() -> void:
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	brush.layer = 4
	brush.radius = 8.0
	brush.strength = 1.0
	check(brush.begin_stroke(), "begin_stroke at 129")
	check(brush.paint_at(Vector3(-60.0, 0.0, -60.0)) > 0, "dab at 129")
	isl.resolution = 65
	check(isl.regenerate(), "regenerated at 65 mid-stroke")
	check(brush.paint_at(Vector3(50.0, 0.0, 50.0)) > 0, "dab at 65")
	var snap := brush.end_stroke()
	check_eq(int(snap.get("resolution", 0)), 65, "snapshot at the island's resolution now")
	check(brush.apply_snapshot(snap, false), "undo")
	var w := isl.get_splat_weights_at(50.0, 50.0)
	check_near(w[4], 0.0, 1e-6, "no paint at the second dab after undo")
	w = isl.get_splat_weights_at(-60.0, -60.0)
	check_near(w[4], 0.0, 1e-6, "no paint at the first dab after undo")
	var blank := true
	var img := isl.get_splat_map_image(1)
	for y in img.get_height():
		for x in img.get_width():
			if img.get_pixel(x, y).r > 0.0:
				blank = false
	check(blank, "layer 4 is empty everywhere after undo (nothing written where nothing was)")
	check(brush.apply_snapshot(snap, true), "redo")
	check(isl.get_splat_weights_at(50.0, 50.0)[4] > 0.5, "redo paints the second dab again")
	# A snapshot from another resolution is refused instead of writing garbage.
	isl.resolution = 129
	isl.regenerate()
	expect_error("taken at resolution 65")
	check(not brush.apply_snapshot(snap, false), "a 65² snapshot does not apply to a 129² island")
