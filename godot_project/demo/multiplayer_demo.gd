extends Node3D
## Host or join a match on one island: players walk and dig craters that every peer sees.
## The island itself never travels: IslandSync sends the host's parameters and each crater as a
## 58-byte command, and every peer proves with a fingerprint that it has the host's island.
##
## Buttons Host / Join, or on the command line (after `--`): `--host`, `--join=ADDRESS`,
## `--port=N` (default 7777), `--seed=N` (host), `--autopilot` (walk in a circle and dig every
## few seconds), `--shot=PATH --shot-after=S` (save a screenshot and quit), `--quit-after=S`.
## Keys: WASD walk, E (or left click) dig a crater in front of you, Esc quit.

const CHARACTER := preload("res://demo/character.gd")
const DEFAULT_PORT := 7777

var island: ProceduralIsland
var sync: IslandSync
var brush: TerrainBrush
var me: CharacterBody3D
var cam: Camera3D
var hud: Label
var menu: HBoxContainer
var address: LineEdit
var avatars := {}
var port := DEFAULT_PORT
var autopilot := false
var shot_path := ""
var shot_after := 0.0
var quit_after := 0.0
var spawned := false
var clock := 0.0
var pos_clock := 0.0
var dig_clock := 0.0
var verdict := ""
var start_ms := Time.get_ticks_msec()


func _ready() -> void:
	_environment()
	island = ProceduralIsland.new()
	island.name = "Island"
	island.seed = 2026
	island.resolution = 257
	island.world_size = 512.0
	add_child(island)
	sync = IslandSync.new()
	sync.name = "IslandSync"
	sync.allow_client_edits = true
	sync.edit_filter = _allow_edit
	island.add_child(sync)
	sync.synced.connect(func(fp: String) -> void:
		verdict = "same island as the host (%s)" % fp
		if not spawned:
			_spawn())
	sync.sync_failed.connect(func(reason: String) -> void: verdict = "NOT the host's island: " + reason)
	sync.peer_verified.connect(func(id: int, fp: String) -> void: verdict = "peer %d verified (%s)" % [id, fp])
	sync.peer_mismatch.connect(func(id: int, reason: String) -> void: verdict = "peer %d differs: %s" % [id, reason])
	brush = TerrainBrush.new()
	brush.name = "Brush"
	brush.mode = TerrainBrush.MODE_SCULPT_LOWER
	brush.radius = 5.0
	brush.hardness = 0.4
	brush.sculpt_height = 2.5
	island.add_child(brush)
	me = _capsule(Color(0.95, 0.55, 0.15), true)
	add_child(me)
	me.global_position = Vector3(0, 400, 0)
	me.set_physics_process(false)
	cam = Camera3D.new()
	cam.far = 4000.0
	add_child(cam)
	cam.make_current()
	_ui()
	multiplayer.peer_disconnected.connect(func(id: int) -> void:
		if avatars.has(id):
			avatars[id].queue_free()
			avatars.erase(id))
	multiplayer.server_disconnected.connect(func() -> void: verdict = "the host left")
	var host := false
	var join := ""
	var seed_arg := -1
	for a in OS.get_cmdline_user_args():
		if a == "--host":
			host = true
		elif a.begins_with("--join="):
			join = a.substr(7)
		elif a.begins_with("--port="):
			port = int(a.substr(7))
		elif a.begins_with("--seed="):
			seed_arg = int(a.substr(7))
		elif a == "--autopilot":
			autopilot = true
		elif a.begins_with("--shot="):
			shot_path = a.substr(7)
		elif a.begins_with("--shot-after="):
			shot_after = float(a.substr(13))
		elif a.begins_with("--quit-after="):
			quit_after = float(a.substr(13))
	if host:
		_host(seed_arg)
	elif join != "":
		_join(join)


func _environment() -> void:
	var env := WorldEnvironment.new()
	var e := Environment.new()
	e.background_mode = Environment.BG_SKY
	e.sky = Sky.new()
	e.sky.sky_material = ProceduralSkyMaterial.new()
	e.tonemap_mode = Environment.TONE_MAPPER_FILMIC
	env.environment = e
	add_child(env)
	var sun := DirectionalLight3D.new()
	sun.rotation_degrees = Vector3(-50, -35, 0)
	sun.shadow_enabled = true
	add_child(sun)


func _ui() -> void:
	var layer := CanvasLayer.new()
	add_child(layer)
	hud = Label.new()
	hud.position = Vector2(12, 48)
	hud.add_theme_color_override("font_outline_color", Color.BLACK)
	hud.add_theme_constant_override("outline_size", 4)
	layer.add_child(hud)
	menu = HBoxContainer.new()
	menu.position = Vector2(12, 10)
	layer.add_child(menu)
	var host_button := Button.new()
	host_button.text = "Host"
	host_button.pressed.connect(func() -> void: _host(-1))
	menu.add_child(host_button)
	address = LineEdit.new()
	address.text = "127.0.0.1"
	address.custom_minimum_size = Vector2(160, 0)
	menu.add_child(address)
	var join_button := Button.new()
	join_button.text = "Join"
	join_button.pressed.connect(func() -> void: _join(address.text))
	menu.add_child(join_button)


## A player: ours walks (character.gd), the others' are shown where their peers say.
func _capsule(color: Color, walking: bool) -> Node3D:
	var body: Node3D
	if walking:
		body = CharacterBody3D.new()
		body.set_script(CHARACTER)
		var shape := CollisionShape3D.new()
		var capsule := CapsuleShape3D.new()
		capsule.radius = 0.4
		capsule.height = 1.8
		shape.shape = capsule
		body.add_child(shape)
	else:
		body = Node3D.new()
	var mesh := MeshInstance3D.new()
	var cm := CapsuleMesh.new()
	cm.radius = 0.4
	cm.height = 1.8
	var mat := StandardMaterial3D.new()
	mat.albedo_color = color
	cm.material = mat
	mesh.mesh = cm
	body.add_child(mesh)
	return body


func _host(seed_arg: int) -> void:
	var peer := ENetMultiplayerPeer.new()
	if peer.create_server(port, 8) != OK:
		verdict = "cannot host on port %d" % port
		return
	multiplayer.multiplayer_peer = peer
	menu.hide()
	island.seed = seed_arg if seed_arg >= 0 else randi() % 100000
	island.regenerate()
	_spawn()


func _join(addr: String) -> void:
	var peer := ENetMultiplayerPeer.new()
	if peer.create_client(addr, port) != OK:
		verdict = "cannot reach %s:%d" % [addr, port]
		return
	multiplayer.multiplayer_peer = peer
	menu.hide()
	verdict = "joining %s:%d ..." % [addr, port]


## Put our player on dry, gentle ground near the others: the same candidate points on every peer
## (find_points is deterministic), the ones nearest the first, one per peer id.
func _spawn() -> void:
	var pts := island.find_points(32, {"min_height": 2.0, "max_slope_degrees": 20.0, "min_distance": 4.0, "seed": 7})
	var p := Vector3.ZERO
	if pts.size() > 0:
		var first: Vector3 = pts[0]
		var near := Array(pts)
		near.sort_custom(func(u: Vector3, v: Vector3) -> bool: return u.distance_to(first) < v.distance_to(first))
		near = near.slice(0, 6)
		p = near[absi(multiplayer.get_unique_id()) % near.size()]
	me.global_position = island.to_global(p) + Vector3(0, 1.5, 0)
	me.set_physics_process(true)
	spawned = true


## The host's rule for client craters: small ones only.
func _allow_edit(_peer_id: int, edit: Dictionary) -> bool:
	return edit.radius <= 8.0


func _dig() -> void:
	var fwd := -cam.global_basis.z
	fwd.y = 0.0
	var target := me.global_position + fwd.normalized() * 4.0
	sync.edit_dab(brush, target)


@rpc("any_peer", "unreliable_ordered")
func _player_at(pos: Vector3) -> void:
	var id := multiplayer.get_remote_sender_id()
	if not avatars.has(id):
		var hue := fmod(float(id % 997) / 997.0, 1.0)
		var a := _capsule(Color.from_hsv(hue, 0.7, 0.9), false)
		a.name = "Player_%d" % id
		add_child(a)
		avatars[id] = a
	avatars[id].global_position = pos


func _unhandled_input(event: InputEvent) -> void:
	if event is InputEventKey and event.pressed and not event.echo:
		if event.keycode == KEY_E and spawned:
			_dig()
		elif event.keycode == KEY_ESCAPE:
			get_tree().quit()
	elif event is InputEventMouseButton and event.pressed and event.button_index == MOUSE_BUTTON_LEFT and spawned:
		_dig()


func _process(delta: float) -> void:
	clock += delta
	var online := multiplayer.multiplayer_peer != null and not (multiplayer.multiplayer_peer is OfflineMultiplayerPeer) \
		and multiplayer.multiplayer_peer.get_connection_status() == MultiplayerPeer.CONNECTION_CONNECTED
	if autopilot and spawned and online:
		var a := clock * 0.6
		var dir := Vector3(cos(a), 0, sin(a))
		me.set("steer", dir * 2.0)
		dig_clock += delta
		if dig_clock > 3.0:
			dig_clock = 0.0
			_dig()
	if online and spawned:
		pos_clock += delta
		if pos_clock > 0.1:
			pos_clock = 0.0
			_player_at.rpc(me.global_position)
	var p := me.global_position
	var back := Vector3(cos(clock * 0.05) * 14.0, 9.0, sin(clock * 0.05) * 14.0)
	cam.global_position = p + back
	cam.look_at(p, Vector3.UP)
	var role := "offline (Host or Join)"
	if online:
		role = "host" if multiplayer.is_server() else "client %d" % multiplayer.get_unique_id()
	var stats := sync.get_sync_stats()
	hud.text = "%s   players %d   edits %d (applied %d)   %s\nWASD walk, E dig, Esc quit" % [
		role, avatars.size() + 1, stats.edits, stats.applied, verdict]
	# Real seconds since start (a slow software-rendered frame still counts in full).
	var real := (Time.get_ticks_msec() - start_ms) / 1000.0
	if shot_path != "" and real > shot_after:
		get_viewport().get_texture().get_image().save_png(shot_path)
		print("MPDEMO shot ", shot_path, " ", hud.text.replace("\n", " | "))
		shot_path = ""
		get_tree().quit()
	if quit_after > 0.0 and real > quit_after:
		print("MPDEMO quit ", hud.text.replace("\n", " | "))
		get_tree().quit()
