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
	craft = MeshInstance3D.new()
	var box := BoxMesh.new()
	box.size = Vector3(4, 2, 10)
	(craft as MeshInstance3D).mesh = box
	add_child(craft)
	craft.position = Vector3(2048, 1, 2048)
	cam = Camera3D.new()
	cam.far = 20000.0
	add_child(cam)
	cam.make_current()
	world = IslandWorld.new()
	world.world_seed = 1
	add_child(world)
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
