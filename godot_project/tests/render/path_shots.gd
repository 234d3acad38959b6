extends SceneTree
## Renders the pictures of docs/paths.md (needs a display: `xvfb-run -a`). Not part of the
## headless suite.
##
## After `--`: `--out=DIR` and optionally `--road-layer=N` (the road's splat layer, default 2:
## rock; 4..7 are the paint layers, e.g. 6 gravel). Saves DIR/paths_road.png (a road from a beach across a river up to
## a village plateau, and a ridge), DIR/stamp_crater_before.png and
## DIR/stamp_crater_moved.png (a crater stamp, then the same stamp moved 260 m), each after the
## island regenerated, as a user sees them.

var _out := "."
var _road_layer := 2
var _cam: Camera3D
var _isl: ProceduralIsland
var _crater: IslandStamp
var _frames := 0
var _step := 0


func _initialize() -> void:
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--out="):
			_out = a.substr(6)
		elif a.begins_with("--road-layer="):
			_road_layer = int(a.substr(13))
	var env := WorldEnvironment.new()
	var e := Environment.new()
	e.background_mode = Environment.BG_SKY
	e.sky = Sky.new()
	e.sky.sky_material = ProceduralSkyMaterial.new()
	e.tonemap_mode = Environment.TONE_MAPPER_FILMIC
	env.environment = e
	root.add_child(env)
	var sun := DirectionalLight3D.new()
	sun.rotation_degrees = Vector3(-45, -40, 0)
	sun.shadow_enabled = true
	root.add_child(sun)
	_cam = Camera3D.new()
	_cam.far = 6000
	_cam.fov = 50.0
	root.add_child(_cam)
	_isl = ProceduralIsland.new()
	_isl.resolution = 513
	_isl.chunk_size = 64
	_isl.world_size = 1024.0
	_isl.seed = 3
	_isl.island_shape = ProceduralIsland.SHAPE_ROUND
	_isl.generate_on_ready = false
	root.add_child(_isl)
	_isl.regenerate()
	# The village plateau north-east of the west river, level with the land there.
	var plateau := IslandStamp.new()
	plateau.kind = IslandStamp.KIND_PLATEAU
	plateau.radius = 45.0
	plateau.height = maxf(_isl.get_height_at(-110, 10), 4.0) + 1.0
	plateau.position = Vector3(-110, 0, 10)
	_isl.add_child(plateau)
	# A ridge (a raised dyke) south of the lake.
	var ridge := _curve_path(IslandPath.KIND_RIDGE, [Vector2(-60, 150), Vector2(40, 130)])
	ridge.height = 8.0
	ridge.width = 6.0
	ridge.shoulder = 14.0
	_isl.add_child(ridge)
	# The road: from the south-west beach, across the west river (a ford), up to the plateau.
	var road := _curve_path(IslandPath.KIND_ROAD, [Vector2(-300, 175), Vector2(-215, 120), Vector2(-175, 60), Vector2(-140, 30), Vector2(-110, 10)])
	road.width = 8.0
	road.shoulder = 5.0
	road.max_grade = 10.0
	road.splat_layer = _road_layer
	_isl.add_child(road)
	var typed: Array[ScatterLayer] = [_trees()]
	_isl.scatter_layers = typed
	_isl.regenerate()
	_cam.look_at_from_position(Vector3(-40, 120, -60), Vector3(-250, 0, 150))


func _trees() -> ScatterLayer:
	var l := ScatterLayer.new()
	l.builtin_mesh = ScatterLayer.BROADLEAF
	l.density = 1.5
	l.min_distance = 4.0
	l.min_height = 2.0
	l.max_height = 200.0
	l.max_slope_degrees = 35.0
	return l


func _curve_path(kind: int, pts: Array) -> IslandPath:
	var p := IslandPath.new()
	p.kind = kind
	var c := Curve3D.new()
	for q in pts:
		c.add_point(Vector3(q.x, 0, q.y))
	p.curve = c
	return p


## The x of the last land sample along z going east from x = 0.
func _coast_x(z: float) -> float:
	var last := 0.0
	for x in range(0, 500):
		if _isl.get_height_at(float(x), z) > 0.0:
			last = float(x)
	return last


func _shot(name: String) -> void:
	var img := root.get_viewport().get_texture().get_image()
	var path := _out.path_join(name)
	print("saved ", path, " ", error_string(img.save_png(path)))


func _process(_delta: float) -> bool:
	_frames += 1
	if _isl.is_generating() or _frames < 20:
		return false
	match _step:
		0:
			_shot("paths_road.png")
			for c in _isl.get_children():
				if c is IslandPath or c is IslandStamp:
					c.free()
			_isl.scatter_layers = []
			_crater = IslandStamp.new()
			_crater.kind = IslandStamp.KIND_CRATER
			_crater.radius = 90.0
			_crater.height = 30.0
			_crater.position = Vector3(-120, 0, 40)
			_isl.add_child(_crater)
			_isl.regenerate()
			_cam.look_at_from_position(Vector3(0, 520, 480), Vector3(0, 0, 0))
			_step = 1
			_frames = 0
		1:
			_shot("stamp_crater_before.png")
			_crater.position = Vector3(140, 0, -60)
			_isl.regenerate()
			_step = 2
			_frames = 0
		2:
			_shot("stamp_crater_moved.png")
			return true
	return false
