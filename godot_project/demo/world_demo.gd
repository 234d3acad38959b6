extends Node3D
## An endless ocean of islands (IslandWorld): sail a boat or fly a plane over it.
## W/S: throttle, A/D: steer, F: boat / plane, R: new world seed, Esc: quit.
## The islands near you are detailed (with colliders), the far ones coarse meshes; the HUD shows
## the world's stats.
##
## Autopilot (to fly it without a keyboard, e.g. under Xvfb): after `--`, `--autopilot=SECONDS`
## goes straight ahead at full throttle for that long, `--fly` as the plane, `--shot=PATH` saves
## the view as a PNG at the end; it then prints the world's stats and quits.

const BOAT_SPEED := 30.0
const PLANE_SPEED := 120.0

var world: IslandWorld
var craft: Node3D
var cam: Camera3D
var hud: Label
var heading := 0.0
var throttle := 1.0
var flying := false
var autopilot_s := 0.0
var shot_path := ""
var elapsed := 0.0
var aground_s := 0.0


func _ready() -> void:
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--autopilot="):
			autopilot_s = float(a.substr(12))
		elif a == "--fly":
			flying = true
		elif a.begins_with("--shot="):
			shot_path = a.substr(7)
	var env := WorldEnvironment.new()
	var e := Environment.new()
	e.background_mode = Environment.BG_SKY
	e.sky = Sky.new()
	e.sky.sky_material = ProceduralSkyMaterial.new()
	e.tonemap_mode = Environment.TONE_MAPPER_FILMIC
	e.fog_enabled = true
	e.fog_light_color = Color(0.66, 0.76, 0.88)
	e.fog_density = 0.0001
	env.environment = e
	add_child(env)
	var sun := DirectionalLight3D.new()
	sun.rotation_degrees = Vector3(-45, -30, 0)
	sun.shadow_enabled = true
	sun.directional_shadow_max_distance = 1500.0
	add_child(sun)
	craft = _make_boat()
	add_child(craft)
	cam = Camera3D.new()
	cam.far = 20000.0
	add_child(cam)
	cam.make_current()
	world = IslandWorld.new()
	world.world_seed = 1
	add_child(world)
	_start_near_an_island()
	world.targets = [world.get_path_to(craft)]
	hud = Label.new()
	hud.position = Vector2(12, 12)
	var layer := CanvasLayer.new()
	layer.add_child(hud)
	add_child(layer)


func _unhandled_input(event: InputEvent) -> void:
	if event is InputEventKey and event.pressed and not event.echo:
		match event.keycode:
			KEY_R:
				world.world_seed = randi()
				_start_near_an_island()
			KEY_F:
				flying = not flying
			KEY_ESCAPE:
				get_tree().quit()


func _process(delta: float) -> void:
	if autopilot_s > 0.0:
		_autopilot(delta)
	if Input.is_key_pressed(KEY_A):
		heading += delta * (0.6 if flying else 0.4)
	if Input.is_key_pressed(KEY_D):
		heading -= delta * (0.6 if flying else 0.4)
	if Input.is_key_pressed(KEY_W):
		throttle = minf(throttle + delta * 0.5, 1.0)
	if Input.is_key_pressed(KEY_S):
		throttle = maxf(throttle - delta * 0.5, 0.0)
	var speed := (PLANE_SPEED if flying else BOAT_SPEED) * throttle
	var fwd := Vector3(sin(heading), 0, cos(heading))
	var p := craft.position + fwd * speed * delta
	var ground := world.get_height_at(p.x, p.z)
	if flying:
		p.y = lerpf(p.y, 300.0, delta)
	elif is_finite(ground) and ground > -0.5:
		# Aground: stop at the beach.
		p = craft.position
		p.y = 1.0
		aground_s += delta
	else:
		p.y = 1.0
	craft.position = p
	craft.rotation.y = heading
	var back := -fwd * (40.0 if not flying else 120.0) + Vector3.UP * (15.0 if not flying else 40.0)
	cam.position = cam.position.lerp(p + back, minf(1.0, delta * 3.0))
	cam.look_at(p + fwd * 60.0, Vector3.UP)
	var s := world.get_world_stats()
	hud.text = "%s  %.0f m/s  world seed %d  cell %s\nislands loaded %d, detailed %d, generating %d, queued %d, world frame max %.2f ms\nW/S throttle, A/D steer, F boat/plane, R new world, Esc quit" % [
		"plane" if flying else "boat", speed, world.world_seed, world.cell_at(p.x, p.z),
		s.loaded, s.detailed, s.generating, s.queued, s.frame_ms_max]


## A small boat: a hull, a cabin and a mast with a sail (built-in meshes, no assets).
func _make_boat() -> Node3D:
	var boat := Node3D.new()
	var white := StandardMaterial3D.new()
	white.albedo_color = Color(0.93, 0.93, 0.9)
	var red := StandardMaterial3D.new()
	red.albedo_color = Color(0.62, 0.12, 0.1)
	var wood := StandardMaterial3D.new()
	wood.albedo_color = Color(0.45, 0.3, 0.18)
	var parts := [
		[BoxMesh.new(), Vector3(3.2, 1.2, 9.0), Vector3(0, 0.2, 0), red],
		[PrismMesh.new(), Vector3(3.2, 3.0, 1.2), Vector3(0, 0.2, 5.1), red],
		[BoxMesh.new(), Vector3(2.0, 1.2, 2.6), Vector3(0, 1.4, -1.8), white],
		[CylinderMesh.new(), Vector3(0.15, 7.0, 0.15), Vector3(0, 4.3, 0.9), wood],
		[PrismMesh.new(), Vector3(0.08, 6.0, 3.4), Vector3(0, 4.6, 0.1), white],
	]
	for p in parts:
		var m := MeshInstance3D.new()
		var mesh: PrimitiveMesh = p[0]
		if mesh is BoxMesh:
			mesh.size = p[1]
		elif mesh is PrismMesh:
			mesh.size = p[1]
			mesh.left_to_right = 0.0 if p[3] == white else 0.5
		elif mesh is CylinderMesh:
			mesh.top_radius = p[1].x
			mesh.bottom_radius = p[1].x
			mesh.height = p[1].y
		mesh.material = p[3]
		m.mesh = mesh
		m.position = p[2]
		if mesh is PrismMesh and p[3] == red:
			# The bow: the prism on its side, pointing ahead.
			m.rotation_degrees = Vector3(90, 0, 0)
		elif mesh is PrismMesh:
			# The sail, sheeted out a little (not edge-on from astern).
			m.rotation_degrees = Vector3(0, 25, 0)
		boat.add_child(m)
	return boat


## Put the craft south-west of the island nearest the origin, heading north to pass 250 m off
## its west coast: the first minute shows the island ahead, and its neighbours beyond.
func _start_near_an_island() -> void:
	var best := {}
	for r in 4:
		for j in range(-r, r + 1):
			for i in range(-r, r + 1):
				var info := world.get_island_info(Vector2i(i, j))
				if best.is_empty() and info.get("exists", false):
					best = info
	if best.is_empty():
		craft.position = Vector3(2048, 1, 2048)
		return
	var c: Vector3 = best.center
	var half: float = best.world_size * 0.5
	craft.position = Vector3(c.x - half - 250.0, 1.0, c.z - half - 1200.0)
	heading = 0.0
	cam.position = craft.position + Vector3(0, 15, -40)


## `--autopilot`: straight ahead; at the end the picture and the stats, then quit.
func _autopilot(delta: float) -> void:
	elapsed += delta
	if elapsed < autopilot_s:
		return
	autopilot_s = 0.0
	var s := world.get_world_stats()
	print("world_demo autopilot: %s, %.0f s, at %s (cell %s), %.1f s aground, stats %s" % [
		"plane" if flying else "boat", elapsed, craft.position, world.cell_at(craft.position.x, craft.position.z), aground_s, s])
	if shot_path != "":
		await RenderingServer.frame_post_draw
		var img := get_viewport().get_texture().get_image()
		print("world_demo autopilot: saved %s %s" % [shot_path, error_string(img.save_png(shot_path))])
	get_tree().quit()
