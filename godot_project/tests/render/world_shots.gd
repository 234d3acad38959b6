extends SceneTree
## Renders docs/world.png: an IslandWorld seen from altitude, several islands in view (the near
## ones detailed, the far ones as coarse meshes), the one ocean between them. Needs a display
## (`xvfb-run -a`); not part of the headless suite.
##
## After `--`: `--out=PATH` (PNG), `--seed=N` (world seed, default 7), `--size=WxH`,
## `--low` (a low view from a boat's mast height off the first island's coast, at 0.5 samples
## per metre, looking across it to the islands beyond: docs/world_low.png).

var _out := "world.png"
var _world: IslandWorld
var _cam: Camera3D
var _frames := 0
var _stable := 0


func _initialize() -> void:
	var size := Vector2i(1280, 720)
	var seed := 7
	var low := false
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--out="):
			_out = a.substr(6)
		elif a.begins_with("--seed="):
			seed = int(a.substr(7))
		elif a == "--low":
			low = true
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
	e.fog_enabled = true
	e.fog_light_color = Color(0.66, 0.76, 0.88)
	e.fog_density = 0.00008
	env.environment = e
	root.add_child(env)
	var sun := DirectionalLight3D.new()
	sun.rotation_degrees = Vector3(-35, -40, 0)
	sun.shadow_enabled = true
	sun.directional_shadow_max_distance = 3000.0
	root.add_child(sun)
	_world = IslandWorld.new()
	_world.world_seed = seed
	_world.samples_per_metre = 0.5 if low else 0.25
	_world.detail_distance = 2500.0
	_world.collision_distance = 800.0
	_world.view_distance = 12000.0
	_world.build_budget_ms = 400.0
	root.add_child(_world)
	_cam = Camera3D.new()
	_cam.fov = 60.0
	_cam.far = 20000.0
	root.add_child(_cam)
	_cam.make_current()
	# Over the first island near the origin, looking across the cells beyond it.
	var c := Vector3.ZERO
	for j in 3:
		for i in 3:
			var info := _world.get_island_info(Vector2i(i, j))
			if info.exists and c == Vector3.ZERO:
				c = info.center
	if low:
		var info := _world.get_island_info(_world.cell_at(c.x, c.z))
		var half: float = info.world_size * 0.5
		_cam.look_at_from_position(c + Vector3(-half - 200.0, 75.0, -half * 0.3), c + Vector3(half * 0.3, 0.0, half * 0.2))
	else:
		_cam.look_at_from_position(c + Vector3(-1800, 1100, -1800), c + Vector3(2500, -200, 2500))


func _process(_delta: float) -> bool:
	_frames += 1
	var s := _world.get_world_stats()
	if _frames % 20 == 0:
		print("world_shots: frame %d: %s" % [_frames, s])
	if s.generating == 0 and s.queued == 0 and s.loaded > 0:
		_stable += 1
	else:
		_stable = 0
	if _stable < 8 and _frames < 3000:
		return false
	var img := root.get_viewport().get_texture().get_image()
	print("saved ", _out, " ", error_string(img.save_png(_out)), " ", s)
	return true
