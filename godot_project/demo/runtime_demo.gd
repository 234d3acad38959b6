extends Node3D
## Runtime demo: a game's view of the island. Press R (or Space) for a new island: it is
## generated in the background (`regenerate_async`), its navigation mesh baked on the navigation
## server's threads (`bake_navigation_mesh_async`), then four agents spawn at `find_points` on
## the beach and walk to the highest peak along `NavigationServer3D.map_get_path`, printing
## their footsteps from `get_surface_at`.

const AGENTS := 4
const SPEED := 12.0 # m/s (fast, so the demo shows the whole climb)
const STEP := 6.0 # metres between printed footsteps

@onready var island: ProceduralIsland = $Island
@onready var region: NavigationRegion3D = $Navigation
@onready var camera: Camera3D = $Camera

var _agents: Array[Dictionary] = []
var _nav := NavigationMesh.new()
var _peak := Vector3.ZERO


func _ready() -> void:
	_nav.cell_size = 1.0
	_nav.cell_height = 0.25
	_nav.agent_radius = 1.0
	_nav.agent_max_slope = 40.0
	var map := region.get_navigation_map()
	NavigationServer3D.map_set_cell_size(map, _nav.cell_size)
	NavigationServer3D.map_set_cell_height(map, _nav.cell_height)
	if NavigationServer3D.has_method("map_set_use_async_iterations"):
		NavigationServer3D.call("map_set_use_async_iterations", map, false)
	island.generation_finished.connect(_on_generated)
	island.navigation_baked.connect(_on_navigation_baked)
	island.regenerate_async()


func _unhandled_input(event: InputEvent) -> void:
	if event is InputEventKey and event.pressed and not event.echo \
			and event.keycode in [KEY_R, KEY_SPACE] and not island.is_generating():
		island.seed += 1
		print("new island, seed %d" % island.seed)
		island.regenerate_async()


func _on_generated(stats: Dictionary) -> void:
	print("island %d generated in %.0f ms; baking the navigation mesh" % [stats.seed, stats.total_ms])
	for a in _agents:
		a.node.queue_free()
	_agents.clear()
	island.bake_navigation_mesh_async(_nav)


func _on_navigation_baked(mesh: NavigationMesh) -> void:
	region.navigation_mesh = mesh
	print("navigation mesh: %d polygons" % mesh.get_polygon_count())
	# The highest dry point of the island.
	var best := -INF
	for p in island.find_points(64, {"min_height": island.get_last_stats().max_height * 0.8, "seed": 1}):
		if p.y > best:
			best = p.y
			_peak = p
	var spawns := island.find_points(AGENTS, {"min_height": 0.5, "max_height": 4.0,
		"max_slope_degrees": 20.0, "min_distance": 60.0, "min_water_distance": 4.0})
	for i in spawns.size():
		_spawn(i, spawns[i])
	camera.position = Vector3(0.0, 170.0, 230.0)
	camera.look_at(Vector3(0.0, 10.0, 10.0))
	# Paths once the map has taken the new mesh (a physics frame or two).
	var map := region.get_navigation_map()
	var it := NavigationServer3D.map_get_iteration_id(map)
	for i in 60:
		await get_tree().physics_frame
		if NavigationServer3D.map_get_iteration_id(map) > it + 1:
			break
	var goal := NavigationServer3D.map_get_closest_point(map, _peak)
	for a in _agents:
		a.path = NavigationServer3D.map_get_path(map, a.node.position, goal, true)
		print("agent %d: %d path points to the peak at %s" % [a.id, a.path.size(), goal])
	# `-- --shot=file.png`: save a screenshot after a few seconds of walking and quit.
	for arg in OS.get_cmdline_user_args():
		if arg.begins_with("--shot="):
			await get_tree().create_timer(4.0).timeout
			await RenderingServer.frame_post_draw
			get_viewport().get_texture().get_image().save_png(arg.trim_prefix("--shot="))
			print("screenshot saved")
			get_tree().quit()


func _spawn(i: int, at: Vector3) -> void:
	var body := MeshInstance3D.new()
	var capsule := CapsuleMesh.new()
	capsule.radius = 4.0
	capsule.height = 14.0
	var mat := StandardMaterial3D.new()
	mat.albedo_color = Color.from_hsv(float(i) / AGENTS, 0.8, 1.0)
	mat.emission_enabled = true
	mat.emission = mat.albedo_color * 0.6
	capsule.material = mat
	body.mesh = capsule
	body.position = at
	add_child(body)
	_agents.append({"id": i, "node": body, "path": PackedVector3Array(), "next": 0, "walked": 0.0})


func _physics_process(delta: float) -> void:
	for a in _agents:
		var path: PackedVector3Array = a.path
		if a.next >= path.size():
			continue
		var node: Node3D = a.node
		var target := path[a.next]
		var to := target - node.position
		var step := SPEED * delta
		if to.length() <= step:
			node.position = target
			a.next += 1
			if a.next == path.size():
				print("agent %d reached the peak" % a.id)
		else:
			node.position += to.normalized() * step
		a.walked += step
		if a.walked >= STEP:
			a.walked = 0.0
			var s := island.get_surface_at(node.position.x, node.position.z)
			if not s.is_empty():
				print("agent %d step on %s (water %d, slope %.0f°, wetness %.2f)" % [a.id,
					s.layer_name, s.water, s.slope_degrees, s.wetness])
