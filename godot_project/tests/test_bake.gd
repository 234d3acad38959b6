extends IslandTestCase
## ProceduralIsland.bake() and export_gltf(): the baked scene holds plain nodes only (chunk meshes
## at full resolution, HeightMapShape3D colliders, an embedded material, the water surfaces) whose
## heights match get_height_at; glTF reads back with the right meshes and vertex positions; bad
## calls return an error code and print it. (Loading the baked scene in a project WITHOUT the
## extension is the bake check of `cargo xtask test`: tests/bake/.)

var timeout_s := 240.0

const DIR := "user://bake_tests"
const EXTENSION_CLASSES := ["ProceduralIsland", "TerrainBrush", "SplatPaint", "ScatterLayer", "TerrainLayer"]


func _all_nodes(n: Node, out: Array[Node] = []) -> Array[Node]:
	out.append(n)
	for c in n.get_children(true):
		_all_nodes(c, out)
	return out


## Largest |vertex.y - get_height_at(vertex.x, vertex.z)| over `vertices` (node-local).
func _max_height_error(isl: ProceduralIsland, vertices: PackedVector3Array) -> float:
	var worst := 0.0
	for v in vertices:
		worst = maxf(worst, absf(v.y - isl.get_height_at(v.x, v.z)))
	return worst


func test_bake_without_island_fails() -> void:
	var isl := _island(65, 32, {"generate_on_ready": false})
	expect_error("nothing generated yet")
	check_eq(isl.bake(DIR.path_join("none.tscn")), ERR_UNCONFIGURED, "bake before generating")
	expect_error("nothing generated yet")
	check_eq(isl.export_gltf(DIR.path_join("none.glb")), ERR_UNCONFIGURED, "export before generating")
	check(not FileAccess.file_exists(DIR.path_join("none.tscn")), "nothing written")


func test_bake_bad_paths_fail() -> void:
	var isl := _island(65, 32)
	expect_error("bad path")
	check_eq(isl.bake(DIR.path_join("island.png")), ERR_FILE_BAD_PATH, "scene needs .tscn/.scn")
	expect_error("bad path")
	check_eq(isl.bake(""), ERR_FILE_BAD_PATH, "empty path")
	expect_error("bad path")
	check_eq(isl.export_gltf(DIR.path_join("island.tscn")), ERR_FILE_BAD_PATH, "glTF needs .gltf/.glb")
	# A folder that cannot be created (below a file).
	var f := FileAccess.open(DIR.path_join("a_file"), FileAccess.WRITE)
	if f == null:
		DirAccess.make_dir_recursive_absolute(DIR)
		f = FileAccess.open(DIR.path_join("a_file"), FileAccess.WRITE)
	f.store_string("x")
	f.close()
	expect_error("Could not create directory")
	expect_error("ProceduralIsland.bake")
	var err := isl.bake(DIR.path_join("a_file/sub/island.tscn"))
	check(err != OK, "unwritable path fails (%s)" % error_string(err))
	check(not FileAccess.file_exists(DIR.path_join("a_file/sub/island.tscn")), "nothing written")


func test_baked_scene_has_plain_nodes_matching_the_island() -> void:
	var isl := _island(65, 32, {"world_size": 512.0, "sea_enabled": true, "inland_water_enabled": true})
	for path in [DIR.path_join("island.tscn"), DIR.path_join("sub/island.scn")]:
		check_eq(isl.bake(path), OK, "bake " + path)
		var ps: PackedScene = ResourceLoader.load(path, "", ResourceLoader.CACHE_MODE_IGNORE)
		if not check(ps != null, "baked scene loads: " + path):
			continue
		var root: Node3D = ps.instantiate()
		add_child(root)
		for n in _all_nodes(root):
			check(not EXTENSION_CLASSES.has(n.get_class()), "%s is a plain node (%s)" % [n.name, n.get_class()])
		var chunks := root.get_node("Terrain").get_children()
		check_eq(chunks.size(), 4, "one node per chunk")
		var verts := 0
		for c in chunks:
			check(c is MeshInstance3D and String(c.name).begins_with("Chunk_"), "chunk node " + c.name)
			var arr: Array = c.mesh.surface_get_arrays(0)
			verts += arr[Mesh.ARRAY_VERTEX].size()
			check(_max_height_error(isl, arr[Mesh.ARRAY_VERTEX]) < 1e-3, "%s vertex heights = get_height_at" % c.name)
			var shape_node := _shape_node(c)
			if check(shape_node != null and shape_node.shape is HeightMapShape3D, "%s has a HeightMapShape3D" % c.name):
				var hm: HeightMapShape3D = shape_node.shape
				check_eq(hm.map_data.size(), 33 * 33, "collider at full resolution")
			var m: Variant = c.material_override
			if check(m is ShaderMaterial, "terrain ShaderMaterial"):
				check(m.shader.resource_path.contains("::"), "the shader is embedded, not the addon file (%s)" % m.shader.resource_path)
				# The island draws without layer textures (no TerrainLayer has one): the addon's code
				# with the define that leaves them out.
				check_eq(m.shader.code, load("res://addons/procedural_island/terrain.gdshader").code.replace("shader_type spatial;\n", "shader_type spatial;\n#define TERRAIN_NO_LAYER_TEXTURES\n"), "the terrain shader code")
				check(_image_equal(m.get_shader_parameter("splat_map_0").get_image(), isl.get_splat_map_image(0)), "splat map 0 embedded")
				# No user layer painted: map 1 is embedded as its 1×1 black texture.
				var m1: Image = m.get_shader_parameter("splat_map_1").get_image()
				var full1 := isl.get_splat_map_image(1)
				var zero1 := full1.get_data().count(0) == full1.get_data().size()
				check(_image_equal(m1, full1) or (zero1 and m1.get_size() == Vector2i(1, 1) and m1.get_data() == PackedByteArray([0, 0, 0, 0])), "splat map 1 embedded")
		check_eq(verts, 4 * 33 * 33, "full-resolution meshes")
		var water := root.get_node_or_null("Water")
		if check(water != null, "water surfaces baked"):
			check(water.get_node_or_null("Sea") != null, "the sea is baked")
			var river_lake := 0
			for w in water.get_children():
				if String(w.name).begins_with("Water_"):
					river_lake += 1
			check_eq(river_lake + 1, water.get_child_count(), "only the sea and river/lake surfaces")
			for w in water.get_children():
				check(w.material_override is ShaderMaterial and w.material_override.shader.resource_path.contains("::"), "water shader embedded")
		root.free()


func test_bake_without_water_and_with_flat_shading() -> void:
	var isl := _island(65, 16, {"flat_shading": true})
	check_eq(isl.bake(DIR.path_join("flat.tscn")), OK, "bake")
	var root: Node3D = ResourceLoader.load(DIR.path_join("flat.tscn"), "", ResourceLoader.CACHE_MODE_IGNORE).instantiate()
	check_eq(root.get_node("Terrain").get_child_count(), 16, "16 chunks of 16")
	check(root.get_node_or_null("Water") == null, "no water node without water surfaces")
	var c: MeshInstance3D = root.get_node("Terrain").get_child(5)
	var arr: Array = c.mesh.surface_get_arrays(0)
	check(_max_height_error(isl, arr[Mesh.ARRAY_VERTEX]) < 1e-3, "flat-shaded vertex heights")
	root.free()


func test_export_gltf_reads_back() -> void:
	var isl := _island(65, 32, {"world_size": 400.0})
	for path in [DIR.path_join("island.glb"), DIR.path_join("island.gltf")]:
		check_eq(isl.export_gltf(path), OK, "export " + path)
		var doc := GLTFDocument.new()
		var state := GLTFState.new()
		check_eq(doc.append_from_file(ProjectSettings.globalize_path(path), state), OK, "GLTFDocument reads " + path)
		var meshes := state.get_meshes()
		check_eq(meshes.size(), 4, "one mesh per chunk")
		var verts := 0
		for gm in meshes:
			var im: ImporterMesh = gm.mesh
			var arr: Array = im.get_surface_arrays(0)
			verts += arr[Mesh.ARRAY_VERTEX].size()
			check(_max_height_error(isl, arr[Mesh.ARRAY_VERTEX]) < 1e-3, "glTF vertex positions = get_height_at")
		check_eq(verts, 4 * 33 * 33, "full-resolution vertices")


func test_export_gltf_includes_water() -> void:
	var isl := _island(65, 32, {"world_size": 512.0, "sea_enabled": true, "inland_water_enabled": true})
	var water := 0
	for c in isl.get_children(true):
		if c is MeshInstance3D and c.visible and (String(c.name) == "Sea" or String(c.name).begins_with("Water_")):
			water += 1
	check(water > 0, "the island has water surfaces")
	check_eq(isl.export_gltf(DIR.path_join("wet.glb")), OK, "export")
	var state := GLTFState.new()
	check_eq(GLTFDocument.new().append_from_file(ProjectSettings.globalize_path(DIR.path_join("wet.glb")), state), OK, "reads back")
	check_eq(state.get_meshes().size(), 4 + water, "terrain and water meshes")
