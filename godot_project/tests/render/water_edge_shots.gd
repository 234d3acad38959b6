extends SceneTree
## Renders the water's edges at eye height (issue 40.3): a river mouth on a beach and a lake
## shore, each seen from 1.7 m above the ground a few metres away, on the demo's island (default
## parameters, 1025² over 1024 m). Needs a display (`xvfb-run -a`); not part of the headless suite.
##
## After `--`: `--out=DIR` (writes DIR/water_river_mouth.png and DIR/water_lake_shore.png),
## `--seed=N` (default 0: the demo's island), `--shader=PATH` (the water shader code read from
## PATH instead of the addon's, e.g. the previous version, to compare), `--size=WxH`.

var _out := "."
var _seed := -1
var _shader := ""
var _cam: Camera3D
var _isl: ProceduralIsland
var _frames := 0
var _shots: Array = []


func _initialize() -> void:
	var size := Vector2i(1280, 720)
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--out="):
			_out = a.substr(6)
		elif a.begins_with("--seed="):
			_seed = int(a.substr(7))
		elif a.begins_with("--shader="):
			_shader = a.substr(9)
		elif a.begins_with("--size="):
			var p := a.substr(7).split("x")
			size = Vector2i(int(p[0]), int(p[1]))
	root.size = size
	var env := WorldEnvironment.new()
	var e := Environment.new()
	e.background_mode = Environment.BG_SKY
	e.sky = Sky.new()
	e.sky.sky_material = ProceduralSkyMaterial.new()
	e.tonemap_mode = Environment.TONE_MAPPER_FILMIC
	env.environment = e
	root.add_child(env)
	var sun := DirectionalLight3D.new()
	sun.rotation_degrees = Vector3(-40, -30, 0)
	sun.shadow_enabled = true
	root.add_child(sun)
	_cam = Camera3D.new()
	_cam.fov = 60.0
	_cam.near = 0.05
	_cam.far = 4000
	root.add_child(_cam)
	_isl = ProceduralIsland.new()
	_isl.generate_on_ready = false
	if _seed >= 0:
		_isl.seed = _seed
	root.add_child(_isl)
	if _shader != "":
		var sh := Shader.new()
		sh.code = FileAccess.get_file_as_string(_shader)
		var m := ShaderMaterial.new()
		m.shader = sh
		_isl.water_material = m
	_isl.regenerate()
	var mouth := _find_edge(1, 3)
	var shore := _find_edge(2, 0)
	if mouth.is_empty():
		print("water_edge_shots: no river mouth found")
	else:
		_shots.append(["water_river_mouth.png", mouth])
	if shore.is_empty():
		print("water_edge_shots: no lake shore found")
	else:
		_shots.append(["water_lake_shore.png", shore])


## A sample of kind `kind` (1 river, 2 lake) next to one of kind `other` (3 sea: a mouth; 0 dry:
## a shore) with low dry ground beside it for the camera: {target, eye}. Scans from the map's
## centre outwards so the result does not depend on the map's corner.
func _find_edge(kind: int, other: int) -> Dictionary:
	var w := _isl.get_water_image()
	var n := _isl.resolution
	var s := _isl.world_size / float(n - 1)
	var half := _isl.world_size * 0.5
	var best := {}
	var best_d := INF
	for z in range(4, n - 4, 2):
		for x in range(4, n - 4, 2):
			if w.get_pixel(x, z).r8 != kind:
				continue
			var touches := false
			for d in [Vector2i(3, 0), Vector2i(-3, 0), Vector2i(0, 3), Vector2i(0, -3)]:
				if w.get_pixel(x + d.x, z + d.y).r8 == other:
					touches = true
			if not touches:
				continue
			# Dry ground 6..14 samples away, low (a beach or a flat shore), for the eye.
			for r in [8, 12]:
				for a in 16:
					var ang := a * TAU / 16.0
					var ex := x + int(round(cos(ang) * r))
					var ez := z + int(round(sin(ang) * r))
					if ex < 0 or ez < 0 or ex >= n or ez >= n or w.get_pixel(ex, ez).r8 != 0:
						continue
					var gx := ex * s - half
					var gz := ez * s - half
					var gh := _isl.get_height_at(gx, gz)
					if gh < 0.0 or gh > 4.0:
						continue
					var tx := x * s - half
					var tz := z * s - half
					var score := Vector2(tx, tz).length() + gh * 20.0
					if score < best_d:
						best_d = score
						var level := _isl.get_water_level_at(tx, tz)
						best = {"target": Vector3(tx, level if is_finite(level) else 0.0, tz),
							"eye": Vector3(gx, gh + 1.7, gz)}
	return best


func _process(_delta: float) -> bool:
	_frames += 1
	if _isl.is_generating() or _frames < 12:
		return false
	if _shots.is_empty():
		return true
	var shot: Array = _shots[0]
	var where: Dictionary = shot[1]
	if _frames == 12:
		_cam.look_at_from_position(where.eye, where.target)
		print("water_edge_shots: ", shot[0], " eye ", where.eye, " target ", where.target)
		return false
	if _frames < 18:
		return false
	var img := root.get_viewport().get_texture().get_image()
	var path := _out.path_join(shot[0])
	print("saved ", path, " ", error_string(img.save_png(path)))
	_shots.pop_front()
	_frames = 0
	return _shots.is_empty()
