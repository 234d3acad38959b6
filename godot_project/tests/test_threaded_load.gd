extends IslandTestCase
## Scenes holding an island are loaded the way games load levels behind a loading screen:
## `ResourceLoader.load_threaded_request` (a WorkerThreadPool thread parses the scene and builds
## its sub-resources). Our resource classes (TerrainLayer, ScatterLayer, SplatPaint) are Rust
## classes that godot-rust can only construct on the main thread, so the island saves them as
## plain data (`stored_resources`) and builds them when the node is instantiated. These tests
## fail (a panic on the loader thread and a failed load) when a scene stores them as
## sub-resources.

const SCENE := "user://test_threaded_load.tscn"


## An island with two terrain layers (one with a texture), two scatter layers (one with a mesh),
## paint, scatter erase and a sculpt edit, under a root with a brush; packed and saved.
func _save_island_scene() -> Dictionary:
	var root := Node3D.new()
	root.name = "Root"
	var isl := ProceduralIsland.new()
	isl.name = "Island"
	isl.resolution = 65
	isl.chunk_size = 32
	isl.sea_enabled = false
	isl.inland_water_enabled = false
	var tex := ImageTexture.create_from_image(Image.create(8, 8, false, Image.FORMAT_RGBA8))
	var grass := TerrainLayer.new()
	grass.name = "Lawn"
	grass.tint = Color(0.5, 0.9, 0.4)
	grass.albedo_texture = tex
	grass.uv_scale = 3.0
	var rock := TerrainLayer.new()
	rock.triplanar = 0.25
	isl.terrain_layers = [null, grass, rock]
	var palms := ScatterLayer.new()
	palms.mesh = BoxMesh.new()
	palms.density = 3.0
	palms.max_slope_degrees = 25.0
	var rocks := ScatterLayer.new()
	rocks.density = 1.5
	isl.scatter_layers = [palms, rocks]
	root.add_child(isl)
	isl.owner = root
	add_child(root)
	var brush := TerrainBrush.new()
	brush.name = "Brush"
	isl.add_child(brush)
	brush.owner = root
	brush.island = brush.get_path_to(isl)
	brush.radius = 12.0
	brush.strength = 1.0
	brush.layer = 6
	brush.min_height = -1000.0
	check(brush.paint_at(Vector3(5.0, 0.0, -5.0)) > 0, "painted")
	brush.mode = TerrainBrush.MODE_SCATTER_ERASE
	brush.layer = 0
	brush.paint_at(Vector3(0.0, 0.0, 0.0))
	check(isl.splat_paint.get_scatter_erased_samples(0) > 0, "scatter erased")
	brush.mode = TerrainBrush.MODE_SCULPT_RAISE
	brush.sculpt_height = 6.0
	brush.paint_at(Vector3(-10.0, 0.0, 10.0))
	isl.regenerate()
	check(isl.has_sculpt(), "sculpted")
	var expect := {
		"heights": isl.get_heightmap_image().get_data(),
		"paint": isl.splat_paint.data,
		"sculpt": isl.splat_paint.sculpt_data,
		"erase": isl.splat_paint.scatter_erase_data,
	}
	var packed := PackedScene.new()
	check_eq(packed.pack(root), OK, "pack")
	check_eq(ResourceSaver.save(packed, SCENE), OK, "save")
	root.queue_free()
	return expect


func _load_threaded(path: String) -> PackedScene:
	# Headless Godot draws with its dummy renderer, whose mesh RID allocator has no lock in 4.6.3
	# (godotengine/godot#121949, fixed upstream by #121958): the loader thread allocates the RID of
	# the scene's BoxMesh, and a main thread freeing meshes in the same moment can lose one count
	# of the allocator; the last mesh freed later then writes outside it (signal 11 in
	# RendererDummy::MeshStorage::mesh_free). So let every queued free run first
	# (`_save_island_scene`'s island, nodes its regenerate replaced), and free or create nothing on
	# the main thread until the load is done.
	await get_tree().process_frame
	await get_tree().process_frame
	check_eq(ResourceLoader.load_threaded_request(path, "", false, ResourceLoader.CACHE_MODE_IGNORE), OK, "request")
	var deadline := Time.get_ticks_msec() + 20000
	while ResourceLoader.load_threaded_get_status(path) == ResourceLoader.THREAD_LOAD_IN_PROGRESS:
		if Time.get_ticks_msec() > deadline:
			fail("threaded load did not finish in 20 s")
			return null
		await get_tree().process_frame
	check_eq(ResourceLoader.load_threaded_get_status(path), ResourceLoader.THREAD_LOAD_LOADED, "loaded on a thread")
	return ResourceLoader.load_threaded_get(path) as PackedScene


func test_a_saved_island_scene_loads_on_a_thread_with_all_its_data() -> void:
	var expect := _save_island_scene()
	var text := FileAccess.get_file_as_string(SCENE)
	for cls in ["TerrainLayer", "ScatterLayer", "SplatPaint"]:
		check(not text.contains('type="%s"' % cls), "%s not saved as a sub-resource" % cls)
	var packed: PackedScene = await _load_threaded(SCENE)
	if not check(packed != null, "scene loaded"):
		return
	var root := packed.instantiate()
	add_child(root)
	var isl := root.get_node("Island") as ProceduralIsland
	check_eq(isl.terrain_layers.size(), 3, "terrain layers")
	check(isl.terrain_layers[0] == null, "empty slot kept")
	var grass := isl.terrain_layers[1] as TerrainLayer
	check(grass != null and grass.name == "Lawn" and grass.uv_scale == 3.0, "grass layer")
	check(grass != null and grass.tint.is_equal_approx(Color(0.5, 0.9, 0.4)), "grass tint")
	check(grass != null and grass.albedo_texture is ImageTexture \
		and grass.albedo_texture.get_size() == Vector2(8, 8), "grass texture")
	check_eq((isl.terrain_layers[2] as TerrainLayer).triplanar, 0.25, "rock triplanar")
	check_eq(isl.scatter_layers.size(), 2, "scatter layers")
	var palms := isl.scatter_layers[0] as ScatterLayer
	check(palms.mesh is BoxMesh and palms.density == 3.0 and palms.max_slope_degrees == 25.0, "palms")
	check_eq((isl.scatter_layers[1] as ScatterLayer).density, 1.5, "rocks")
	check(isl.splat_paint.data == expect["paint"], "paint")
	check(isl.splat_paint.sculpt_data == expect["sculpt"], "sculpt")
	check(isl.splat_paint.scatter_erase_data == expect["erase"], "scatter erase")
	check(root.get_node("Island/Brush") is TerrainBrush, "brush")
	check(isl.get_heightmap_image().get_data() == expect["heights"], "the same island, bit for bit (sculpt included)")
	root.queue_free()
	DirAccess.remove_absolute(ProjectSettings.globalize_path(SCENE))


func test_the_demo_scene_loads_on_a_thread() -> void:
	var packed: PackedScene = await _load_threaded("res://demo/demo.tscn")
	if not check(packed != null, "demo loaded"):
		return
	var state := packed.get_state()
	var found := false
	for i in state.get_node_count():
		if state.get_node_type(i) == &"ProceduralIsland":
			found = true
	check(found, "the demo holds an island")


## A scene saved before `stored_resources` (our resources as sub-resources, shared by two
## islands) still loads on the main thread with its data, and is saved in the new form.
func test_a_scene_of_the_old_format_loads_and_is_saved_in_the_new_one() -> void:
	var old := "user://test_threaded_load_old.tscn"
	var f := FileAccess.open(old, FileAccess.WRITE)
	f.store_string("""[gd_scene load_steps=5 format=3]

[sub_resource type="TerrainLayer" id="Grass"]
name = "Old grass"
uv_scale = 4.0

[sub_resource type="ScatterLayer" id="Palms"]
builtin_mesh = 0
density = 2.5

[sub_resource type="SplatPaint" id="Paint"]
shared = true

[node name="Root" type="Node3D"]

[node name="A" type="ProceduralIsland" parent="."]
generate_on_ready = false
terrain_layers = [SubResource("Grass")]
scatter_layers = [SubResource("Palms")]
splat_paint = SubResource("Paint")

[node name="B" type="ProceduralIsland" parent="."]
generate_on_ready = false
terrain_layers = [SubResource("Grass")]
""")
	f.close()
	var packed := ResourceLoader.load(old, "", ResourceLoader.CACHE_MODE_IGNORE) as PackedScene
	if not check(packed != null, "old scene loads"):
		return
	var root := packed.instantiate()
	var a := root.get_node("A") as ProceduralIsland
	var b := root.get_node("B") as ProceduralIsland
	check(a.terrain_layers[0] is TerrainLayer and a.terrain_layers[0].name == "Old grass" \
		and a.terrain_layers[0].uv_scale == 4.0, "old terrain layer")
	check(a.terrain_layers[0] == b.terrain_layers[0], "shared in the old scene, as it was saved")
	check(a.scatter_layers[0] is ScatterLayer and a.scatter_layers[0].density == 2.5, "old scatter layer")
	check(a.splat_paint != null and a.splat_paint.shared, "old paint")
	var again := PackedScene.new()
	check_eq(again.pack(root), OK, "pack")
	var resaved := "user://test_threaded_load_resaved.tscn"
	check_eq(ResourceSaver.save(again, resaved), OK, "save")
	var text := FileAccess.get_file_as_string(resaved)
	check(not text.contains("sub_resource"), "no sub-resource left in the saved scene")
	check(text.contains('"Old grass"') and text.contains("stored_resources"), "saved as plain data")
	root.free()
	var packed2: PackedScene = await _load_threaded(resaved)
	if check(packed2 != null, "resaved scene loads on a thread"):
		var root2 := packed2.instantiate()
		var a2 := root2.get_node("A") as ProceduralIsland
		check(a2.terrain_layers[0].name == "Old grass" and a2.scatter_layers[0].density == 2.5 \
			and a2.splat_paint.shared, "the same data after the round trip")
		root2.free()
	DirAccess.remove_absolute(ProjectSettings.globalize_path(old))
	DirAccess.remove_absolute(ProjectSettings.globalize_path(resaved))


## A layer saved in a file of its own is stored by path: after a threaded load both islands use
## the one resource from that file, and editing it changes both.
func test_a_layer_in_its_own_file_stays_shared() -> void:
	var layer_path := "user://test_threaded_load_layer.tres"
	var l := TerrainLayer.new()
	l.name = "Shared sand"
	l.uv_scale = 2.0
	check_eq(ResourceSaver.save(l, layer_path), OK, "layer saved")
	var file_layer := ResourceLoader.load(layer_path) as TerrainLayer
	var root := Node3D.new()
	for n in ["A", "B"]:
		var isl := ProceduralIsland.new()
		isl.name = n
		isl.generate_on_ready = false
		isl.terrain_layers = [file_layer]
		root.add_child(isl)
		isl.owner = root
	var packed := PackedScene.new()
	check_eq(packed.pack(root), OK, "pack")
	check_eq(ResourceSaver.save(packed, SCENE), OK, "save")
	root.free()
	check(FileAccess.get_file_as_string(SCENE).contains(layer_path), "stored by path")
	var loaded: PackedScene = await _load_threaded(SCENE)
	if not check(loaded != null, "loaded on a thread"):
		return
	var root2 := loaded.instantiate()
	var a := root2.get_node("A") as ProceduralIsland
	var b := root2.get_node("B") as ProceduralIsland
	check(a.terrain_layers[0] == b.terrain_layers[0], "one resource for both islands")
	check(a.terrain_layers[0] == file_layer, "the resource of the file")
	check_eq(a.terrain_layers[0].name, "Shared sand", "its data")
	root2.free()
	DirAccess.remove_absolute(ProjectSettings.globalize_path(SCENE))
	DirAccess.remove_absolute(ProjectSettings.globalize_path(layer_path))


## Broken stored data (hand-edited or from a newer version) is reported; the island loads with
## what is valid, nothing crashes.
func test_bad_stored_data_is_reported_and_skipped() -> void:
	var isl := ProceduralIsland.new()
	isl.generate_on_ready = false
	expect_error("is a `ScatterLayer`, not a `TerrainLayer`")
	expect_error("stored scatter_layers is not an array")
	expect_error("could not be loaded")
	isl.stored_resources = {
		"terrain_layers": [{"class": "ScatterLayer", "props": {}}, {"class": "TerrainLayer", "props": {"uv_scale": 6.0}}],
		"scatter_layers": 7,
		"splat_paint": {"class": "SplatPaint", "path": "user://no_such_paint.tres"},
	}
	check_eq(isl.terrain_layers.size(), 2, "both entries kept in place")
	check(isl.terrain_layers[0] == null, "the wrong class is left empty")
	check_eq((isl.terrain_layers[1] as TerrainLayer).uv_scale, 6.0, "the valid entry")
	check(isl.scatter_layers.is_empty(), "no scatter layers")
	check(isl.splat_paint == null, "missing paint file: no paint")
	isl.free()
