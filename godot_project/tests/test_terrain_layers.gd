extends IslandTestCase
## TerrainLayer resources in ProceduralIsland.terrain_layers: no layers leave the built-in material
## exactly as it was; textures of any size/format become one Texture2DArray per kind with mipmaps;
## per-layer slots, tints, UV scales and triplanar blends reach the shader; a layer's `changed`
## updates the material; the brush's layer menu shows the layer names.

var timeout_s := 180.0

const LAYER_PARAMS := ["terrain_layers_enabled", "layer_albedo_textures", "layer_normal_textures",
	"layer_roughness_textures", "layer_albedo_slot", "layer_normal_slot", "layer_roughness_slot",
	"layer_tint", "layer_triplanar", "layer_normals_enabled", "layer0_uv_scale", "layer3_uv_scale"]


func _material(isl: ProceduralIsland) -> ShaderMaterial:
	for c in _mesh_instances(isl):
		if c.material_override is ShaderMaterial:
			return c.material_override
	return null


func _layers(list: Array) -> Array[TerrainLayer]:
	var out: Array[TerrainLayer] = []
	out.assign(list)
	return out


func _texture(w: int, h: int, format: int, color: Color) -> ImageTexture:
	var img := Image.create(w, h, false, format)
	img.fill(color)
	return ImageTexture.create_from_image(img)


## Every layer parameter of the material: what a render depends on besides the splat maps.
func _layer_params(m: ShaderMaterial) -> Dictionary:
	var out := {}
	for p in LAYER_PARAMS:
		out[p] = m.get_shader_parameter(p)
	return out


func test_no_layers_leave_the_material_as_it_was() -> void:
	var plain := _island(65, 32)
	var m := _material(plain)
	check(m != null, "built-in material")
	for p in LAYER_PARAMS:
		check_eq(m.get_shader_parameter(p), null, "%s unset without layers" % p)
	# An empty list and a list of empty entries are the same as no list.
	var listed := _island(65, 32, {"terrain_layers": _layers([null, null])})
	await wait_frames(2)
	check_eq(_layer_params(_material(listed)), _layer_params(m), "empty entries change nothing")
	# Layers set and then removed: back to the shader defaults.
	var l := TerrainLayer.new()
	l.albedo_texture = _texture(8, 8, Image.FORMAT_RGBA8, Color.RED)
	listed.terrain_layers = [l]
	await wait_frames(2)
	check_eq(_material(listed).get_shader_parameter("terrain_layers_enabled"), true, "layers applied")
	listed.terrain_layers = []
	await wait_frames(2)
	check_eq(_layer_params(_material(listed)), _layer_params(m), "removing the layers restores the defaults")


func test_textures_of_any_size_and_format_become_arrays() -> void:
	var sand := TerrainLayer.new()
	sand.name = "Beach"
	sand.albedo_texture = _texture(64, 64, Image.FORMAT_RGBA8, Color(0.9, 0.8, 0.6))
	sand.uv_scale = 4.0
	var grass := TerrainLayer.new()
	grass.tint = Color(0.5, 1.0, 0.5)
	grass.triplanar = 0.25
	var rock := TerrainLayer.new()
	rock.albedo_texture = _texture(32, 16, Image.FORMAT_RGB8, Color(0.4, 0.4, 0.4))
	rock.normal_texture = _texture(16, 16, Image.FORMAT_RGBA8, Color(0.5, 0.5, 1.0))
	rock.roughness_texture = _texture(128, 128, Image.FORMAT_L8, Color(0.7, 0.7, 0.7))
	var isl := _island(65, 32, {"terrain_layers": _layers([sand, grass, rock])})
	var m := _material(isl)
	check_eq(m.get_shader_parameter("terrain_layers_enabled"), true, "layers enabled")
	check_eq(m.get_shader_parameter("layer_albedo_slot"), PackedInt32Array([0, -1, 1, -1, -1, -1, -1, -1]), "albedo slots")
	check_eq(m.get_shader_parameter("layer_normal_slot"), PackedInt32Array([-1, -1, 0, -1, -1, -1, -1, -1]), "normal slots")
	check_eq(m.get_shader_parameter("layer_roughness_slot"), PackedInt32Array([-1, -1, 0, -1, -1, -1, -1, -1]), "roughness slots")
	check_eq(m.get_shader_parameter("layer_normals_enabled"), true, "normal maps in use")
	var albedo: Texture2DArray = m.get_shader_parameter("layer_albedo_textures")
	if check(albedo != null, "albedo array"):
		check_eq(albedo.get_layers(), 2, "one slot per textured layer")
		check_eq(Vector2i(albedo.get_width(), albedo.get_height()), Vector2i(64, 64), "scaled to the largest texture")
		check_eq(albedo.get_format(), Image.FORMAT_RGBA8, "one format")
		check(albedo.has_mipmaps(), "mipmaps")
	var normal: Texture2DArray = m.get_shader_parameter("layer_normal_textures")
	check(normal != null and normal.get_layers() == 1 and normal.get_width() == 16, "normal array")
	var rough: Texture2DArray = m.get_shader_parameter("layer_roughness_textures")
	check(rough != null and rough.get_width() == 128 and rough.get_format() == Image.FORMAT_RGBA8, "roughness array (L8 converted)")
	var tints: PackedColorArray = m.get_shader_parameter("layer_tint")
	check_eq(tints.size(), 8, "eight tints")
	check_eq(tints[1], Color(0.5, 1.0, 0.5), "grass tint")
	check_eq(tints[5], Color.WHITE, "unset layers keep white")
	var tri: PackedFloat32Array = m.get_shader_parameter("layer_triplanar")
	check_near(tri[1], 0.25, 1e-6, "grass triplanar")
	check_near(tri[0], 1.0, 1e-6, "default triplanar")
	check_eq(m.get_shader_parameter("layer0_uv_scale"), 4.0, "sand UV scale")
	check_eq(m.get_shader_parameter("layer3_uv_scale"), null, "layers without an entry keep the shader default")


func test_a_layer_change_updates_the_material() -> void:
	var sand := TerrainLayer.new()
	var isl := _island(65, 32, {"terrain_layers": _layers([sand])})
	var m := _material(isl)
	check_eq(m.get_shader_parameter("layer_albedo_textures"), null, "no texture yet")
	sand.uv_scale = 2.5
	sand.albedo_texture = _texture(16, 16, Image.FORMAT_RGBA8, Color.YELLOW)
	await wait_frames(2)
	check_eq(m.get_shader_parameter("layer0_uv_scale"), 2.5, "uv scale followed")
	var arr: Texture2DArray = m.get_shader_parameter("layer_albedo_textures")
	check(arr != null and arr.get_layers() == 1, "texture added")
	# A texture's own `changed` (e.g. a re-import) rebuilds the array. (Headless Godot's dummy
	# renderer keeps the first image of an ImageTexture for get_image(), so the test checks that
	# a new array was built rather than its size.)
	var tex: ImageTexture = sand.albedo_texture
	tex.set_image(Image.create(32, 32, false, Image.FORMAT_RGBA8))
	await wait_frames(2)
	var rebuilt: Texture2DArray = m.get_shader_parameter("layer_albedo_textures")
	check(rebuilt != null and rebuilt != arr, "re-imported texture rebuilt the array")
	sand.albedo_texture = null
	await wait_frames(2)
	check_eq(m.get_shader_parameter("layer_albedo_slot"), PackedInt32Array([-1, -1, -1, -1, -1, -1, -1, -1]), "texture removed")


func test_layer_textures_are_sampled_only_when_a_layer_has_one() -> void:
	var file_code: String = load("res://addons/procedural_island/terrain.gdshader").code
	var plain_code := file_code.replace("shader_type spatial;\n", "shader_type spatial;\n#define TERRAIN_NO_LAYER_TEXTURES\n")
	check(plain_code != file_code and file_code.contains("#ifdef TERRAIN_NO_LAYER_TEXTURES"), "the addon shader has the define's switch")
	var isl := _island(65, 32)
	var m := _material(isl)
	check_eq(m.shader.code, plain_code, "no layers: drawn without layer textures")
	var splat: Texture2D = m.get_shader_parameter("splat_map_0")
	check(splat != null, "splat map set")
	# A layer with a tint only: still nothing to sample.
	var sand := TerrainLayer.new()
	sand.tint = Color(1.0, 0.5, 0.5)
	isl.terrain_layers = [sand]
	await wait_frames(2)
	check_eq(m.shader.code, plain_code, "a tint needs no textures")
	check_eq(m.get_shader_parameter("terrain_layers_enabled"), true, "the tint is applied")
	# A texture: the shader file itself; every parameter stays on the material.
	sand.albedo_texture = _texture(16, 16, Image.FORMAT_RGBA8, Color.YELLOW)
	await wait_frames(2)
	check_eq(_material(isl), m, "the same material")
	check_eq(m.shader.code, file_code, "a texture: drawn with the layer textures")
	check(m.get_shader_parameter("layer_albedo_textures") != null, "texture array set")
	check_eq(m.get_shader_parameter("splat_map_0"), splat, "splat map kept across the switch")
	check_eq((m.get_shader_parameter("layer_tint") as PackedColorArray)[0], Color(1.0, 0.5, 0.5), "tint kept across the switch")
	# Texture removed: back to the build without them, parameters kept.
	sand.albedo_texture = null
	await wait_frames(2)
	check_eq(m.shader.code, plain_code, "texture removed: drawn without layer textures again")
	check_eq(m.get_shader_parameter("splat_map_0"), splat, "splat map kept")
	# A user material is never switched.
	var user := ShaderMaterial.new()
	user.shader = load("res://addons/procedural_island/terrain.gdshader")
	var isl2 := _island(65, 32, {"terrain_material": user})
	isl2.terrain_layers = [sand]
	await wait_frames(2)
	check_eq(_material(isl2).shader.code, file_code, "a user's terrain_material keeps its shader")


func test_unreadable_texture_is_reported() -> void:
	var l := TerrainLayer.new()
	var ph := PlaceholderTexture2D.new()
	ph.size = Vector2(8, 8)
	l.albedo_texture = ph
	expect_error("terrain_layers[0] albedo texture")
	var isl := _island(65, 32, {"terrain_layers": _layers([l])})
	var m := _material(isl)
	check_eq(m.get_shader_parameter("layer_albedo_slot"), PackedInt32Array([-1, -1, -1, -1, -1, -1, -1, -1]), "drawn without it")


## Issue 40.1: a NoiseTexture2D (its pixels are generated on a thread and arrive with its
## `changed`) as a layer's albedo prints no error while it generates, and the layer is drawn with
## its pixels once they are there. A large texture, so that it is still generating when the
## island first builds its layers.
func test_noise_texture_layer_is_textured_once_ready() -> void:
	var noise := FastNoiseLite.new()
	noise.seed = 7
	noise.fractal_octaves = 8
	var tex := NoiseTexture2D.new()
	tex.width = 1024
	tex.height = 1024
	tex.noise = noise
	var l := TerrainLayer.new()
	l.albedo_texture = tex
	var isl := _island(65, 32, {"terrain_layers": _layers([l])})
	var m := _material(isl)
	if tex.get_image() != null:
		print("    note: the noise texture was ready before the island built its layers")
	var t0 := Time.get_ticks_msec()
	while tex.get_image() == null and Time.get_ticks_msec() - t0 < 20000:
		await wait_frames(1)
	if not check(tex.get_image() != null, "the noise texture generated its pixels"):
		return
	await wait_frames(3)
	check_eq(m.get_shader_parameter("layer_albedo_slot"), PackedInt32Array([0, -1, -1, -1, -1, -1, -1, -1]), "textured once the noise is ready")
	var arr: Texture2DArray = m.get_shader_parameter("layer_albedo_textures")
	if check(arr != null, "albedo array built"):
		check_eq(Vector2i(arr.get_width(), arr.get_height()), Vector2i(1024, 1024), "at the texture's size")
		check_eq(arr.get_layers(), 1, "one slot: the noise texture")
		check(arr.has_mipmaps(), "with mipmaps")
	# A NoiseTexture2D without a noise never gets pixels: reported at once.
	var l2 := TerrainLayer.new()
	l2.albedo_texture = NoiseTexture2D.new()
	expect_error("NoiseTexture2D without a `noise`")
	var isl2 := _island(65, 32, {"terrain_layers": _layers([l2])})
	check_eq(_material(isl2).get_shader_parameter("layer_albedo_slot"), PackedInt32Array([-1, -1, -1, -1, -1, -1, -1, -1]), "drawn without it")


func test_brush_layer_menu_uses_layer_names() -> void:
	var a := TerrainLayer.new()
	a.name = "Beach"
	var b := TerrainLayer.new()
	b.name = "Lawn, short"
	var isl := _island(65, 32)
	var brush := TerrainBrush.new()
	isl.add_child(brush)
	var hint := ""
	for p in brush.get_property_list():
		if p.name == "layer":
			hint = p.hint_string
	check(hint.contains("SAND") or hint.contains("Sand"), "built-in names without layers: " + hint)
	isl.terrain_layers = [a, b]
	for p in brush.get_property_list():
		if p.name == "layer":
			hint = p.hint_string
	check_eq(hint, "Beach:0,Lawn short:1,Rock:2,Snow:3,Forest:4,Dirt:5,Gravel:6,Meadow:7", "layer names in the menu")
	check_eq(_enum_pick(hint, "Lawn short"), 1, "picking a name stores its layer index")


## The editor's resource preview thread calls the getter of every saved resource-typed property
## of a resource it previews (`Resource.hash_edited_version_for_preview`); an extension's getter
## cannot run there (godot-rust panics off the main thread). None of our resources may have one.
func test_no_saved_resource_property_for_the_preview_thread() -> void:
	for cls in ["TerrainLayer", "ScatterLayer", "SplatPaint"]:
		var r: Object = ClassDB.instantiate(cls)
		for p in r.get_property_list():
			if p["name"] == "script":
				continue  # Object's own property: the engine reads it, no getter of ours runs
			var hashed: bool = p["usage"] & PROPERTY_USAGE_STORAGE and p["type"] == TYPE_OBJECT \
				and p["hint"] == PROPERTY_HINT_RESOURCE_TYPE
			check(not hashed, "%s.%s is a saved resource property (the preview thread would call its getter)" % [cls, p["name"]])


func test_layer_resources_survive_save_and_load() -> void:
	var dir := "user://layer_roundtrip"
	DirAccess.make_dir_recursive_absolute(dir)
	var albedo := _texture(8, 8, Image.FORMAT_RGBA8, Color.RED)
	var normal := _texture(4, 4, Image.FORMAT_RGBA8, Color(0.5, 0.5, 1.0))
	var l := TerrainLayer.new()
	l.albedo_texture = albedo
	l.normal_texture = normal
	l.uv_scale = 3.0
	check_eq(ResourceSaver.save(l, dir + "/layer.tres"), OK, "terrain layer saved")
	var back := ResourceLoader.load(dir + "/layer.tres", "", ResourceLoader.CACHE_MODE_IGNORE) as TerrainLayer
	check(back != null, "terrain layer loaded")
	if back != null:
		check(back.albedo_texture != null and back.albedo_texture.get_image().get_pixel(0, 0).is_equal_approx(Color.RED), "albedo texture kept")
		check(back.normal_texture != null and back.normal_texture.get_size() == Vector2(4, 4), "normal texture kept")
		check(back.roughness_texture == null, "no roughness texture")
		check_eq(back.uv_scale, 3.0, "uv scale kept")
	var s := ScatterLayer.new()
	s.mesh = BoxMesh.new()
	s.density = 4.0
	check_eq(ResourceSaver.save(s, dir + "/scatter.tres"), OK, "scatter layer saved")
	var sback := ResourceLoader.load(dir + "/scatter.tres", "", ResourceLoader.CACHE_MODE_IGNORE) as ScatterLayer
	check(sback != null and sback.mesh is BoxMesh and sback.scene == null, "scatter mesh kept")
	# A file written before the textures were stored as one array still loads.
	var old := FileAccess.open(dir + "/old_layer.tres", FileAccess.WRITE)
	old.store_string('[gd_resource type="TerrainLayer" format=3]\n\n[sub_resource type="BoxMesh" id="1"]\n\n[sub_resource type="PlaceholderTexture2D" id="2"]\nsize = Vector2(16, 16)\n\n[resource]\nalbedo_texture = SubResource("2")\nuv_scale = 5.0\n')
	old.close()
	var ol := ResourceLoader.load(dir + "/old_layer.tres", "", ResourceLoader.CACHE_MODE_IGNORE) as TerrainLayer
	check(ol != null and ol.albedo_texture is PlaceholderTexture2D and ol.uv_scale == 5.0, "old-format layer loads its texture")
	var olds := FileAccess.open(dir + "/old_scatter.tres", FileAccess.WRITE)
	olds.store_string('[gd_resource type="ScatterLayer" format=3]\n\n[sub_resource type="SphereMesh" id="1"]\n\n[resource]\nmesh = SubResource("1")\ndensity = 2.0\n')
	olds.close()
	var os := ResourceLoader.load(dir + "/old_scatter.tres", "", ResourceLoader.CACHE_MODE_IGNORE) as ScatterLayer
	check(os != null and os.mesh is SphereMesh and os.density == 2.0, "old-format scatter layer loads its mesh")
