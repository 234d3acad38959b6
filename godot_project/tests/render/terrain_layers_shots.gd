extends SceneTree
## Renders one island from a fixed camera and saves a PNG (needs a display: `xvfb-run -a`; see
## docs/inspector.md "Terrain layers" for how it is used). Not part of the headless suite.
##
## After `--`: `--out=PATH` (PNG), `--close` (a camera near the ground), `--bake=PATH` (also
## bake the island there: with a real renderer the layer texture arrays are saved with their
## pixels), `--mode=none|empty|textured|shader:PATH`:
##   none      no terrain_layers (the built-in look);
##   empty     eight TerrainLayers without textures (must render exactly as `none`);
##   textured  procedural albedo/normal/roughness textures on sand, grass and rock;
##   shader:P  no layers, but the terrain shader code read from file P (e.g. the previous version
##             of terrain.gdshader, to compare with `none`).

var _out := ""
var _mode := "none"
var _close := false
var _bake := ""
var _cam: Camera3D
var _frames := 0
var _island: Node3D


func _noise_image(size: int, freq: float, seed: int, a: Color, b: Color) -> Image:
	var n := FastNoiseLite.new()
	n.seed = seed
	n.frequency = freq
	n.fractal_octaves = 4
	var img := Image.create(size, size, false, Image.FORMAT_RGBA8)
	for y in size:
		for x in size:
			var v := clampf(n.get_noise_2d(x, y) * 0.5 + 0.5, 0.0, 1.0)
			img.set_pixel(x, y, a.lerp(b, v))
	return img


func _normal_from(img: Image, strength: float) -> ImageTexture:
	var n := img.duplicate()
	n.bump_map_to_normal_map(strength)
	return ImageTexture.create_from_image(n)


func _layer(name: String, albedo: Image, normal: bool, uv: float) -> TerrainLayer:
	var l := TerrainLayer.new()
	l.name = name
	l.albedo_texture = ImageTexture.create_from_image(albedo)
	if normal:
		l.normal_texture = _normal_from(albedo, 6.0)
	l.uv_scale = uv
	return l


func _initialize() -> void:
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--out="):
			_out = a.substr(6)
		elif a.begins_with("--mode="):
			_mode = a.substr(7)
		elif a.begins_with("--bake="):
			_bake = a.substr(7)
		elif a == "--close":
			_close = true
	var env := WorldEnvironment.new()
	var e := Environment.new()
	e.background_mode = Environment.BG_SKY
	e.sky = Sky.new()
	e.sky.sky_material = ProceduralSkyMaterial.new()
	e.tonemap_mode = Environment.TONE_MAPPER_FILMIC
	env.environment = e
	root.add_child(env)
	var sun := DirectionalLight3D.new()
	sun.rotation_degrees = Vector3(-50, -30, 0)
	root.add_child(sun)
	var cam := Camera3D.new()
	cam.far = 4000
	root.add_child(cam)
	cam.look_at_from_position(Vector3(210, 150, 260), Vector3(0, 10, 0))
	_cam = cam
	_island = ClassDB.instantiate("ProceduralIsland")
	_island.resolution = 257
	_island.chunk_size = 64
	_island.world_size = 512.0
	_island.seed = 3
	_island.generate_on_ready = false
	# The water animates (TIME): off, so that two renders of the same terrain are identical.
	_island.sea_enabled = _mode == "textured"
	_island.inland_water_enabled = _mode == "textured"
	if _mode == "empty":
		var layers: Array[TerrainLayer] = []
		for i in 8:
			layers.append(TerrainLayer.new())
		_island.set("terrain_layers", layers)
	elif _mode == "textured":
		# Different sizes on purpose (256, 128, 512): the arrays scale them to one size.
		var sand := _layer("Beach", _noise_image(256, 0.06, 1, Color(0.70, 0.60, 0.40), Color(1.0, 0.95, 0.80)), true, 3.0)
		var grass := _layer("Lawn", _noise_image(128, 0.12, 2, Color(0.08, 0.25, 0.04), Color(0.55, 0.75, 0.20)), true, 2.0)
		var rock := _layer("Cliff", _noise_image(512, 0.02, 3, Color(0.15, 0.13, 0.12), Color(0.75, 0.68, 0.60)), true, 10.0)
		var layers: Array[TerrainLayer] = [sand, grass, rock]
		_island.set("terrain_layers", layers)
	elif _mode.begins_with("shader:"):
		var sh := Shader.new()
		sh.code = FileAccess.get_file_as_string(_mode.substr(7))
		var m := ShaderMaterial.new()
		m.shader = sh
		_island.terrain_material = m
	root.add_child(_island)
	_island.regenerate()
	if _close:
		# Close to the ground on the south-east slope, where sand, grass and rock meet.
		var target := Vector3(40, 0, 70)
		target.y = _island.get_height_at(target.x, target.z)
		var eye := target + Vector3(35, 30, 50)
		eye.y = maxf(eye.y, _island.get_height_at(eye.x, eye.z) + 20.0)
		_cam.look_at_from_position(eye, target)


func _process(_delta: float) -> bool:
	_frames += 1
	if _frames == 30:
		var img := root.get_viewport().get_texture().get_image()
		img.save_png(_out)
		print("saved ", _out, " (", _mode, ")")
		if not _bake.is_empty():
			print("bake: ", error_string(_island.bake(_bake)))
		quit(0)
	return false
