extends SceneTree
## Multiplayer sync cost (issue 37), headless: a dedicated server (server_mode on) with a
## RESOLUTION² island and EDITS runtime edits (a fifth sculpt dabs, the rest paint strokes,
## scatter erase and smoothing, as tests/test_island_sync.gd), then one client process
## (tests/net/net_client.gd) joins over ENet on 127.0.0.1 and catches up.
## Prints `net_bench` with the payload bytes sent to the client, ENet's total bytes sent, the
## island's heights + splat bytes (8 a sample) and the client's connect-to-playable time.
##
## godot --headless --path godot_project -s res://bench/net_bench.gd -- [RESOLUTION] [EDITS]

const NET_SCENE := preload("res://tests/net/net_scene.gd")


func _initialize() -> void:
	_run.call_deferred()


func _run() -> void:
	var args := OS.get_cmdline_user_args()
	var n := int(args[0]) if args.size() > 0 else 1025
	var edits := int(args[1]) if args.size() > 1 else 100
	var net := NET_SCENE.build(424242)
	var island: ProceduralIsland = net.get_node("Island")
	island.resolution = n
	island.world_size = float(n - 1) * 2.0
	island.server_mode = ProceduralIsland.SERVER_MODE_ON
	root.add_child(net)
	var sync: IslandSync = net.get_node("Island/Sync")
	var brush: TerrainBrush = net.get_node("Island/Brush")
	var rng := RandomNumberGenerator.new()
	rng.seed = 99
	var half := island.world_size * 0.3
	for i in edits:
		var p := Vector3(rng.randf_range(-half, half), 0.0, rng.randf_range(-half, half))
		brush.radius = rng.randf_range(10.0, 30.0)
		brush.strength = 0.6
		match i % 5:
			0:
				brush.mode = TerrainBrush.MODE_SCULPT_LOWER
				brush.sculpt_height = 3.0
				sync.edit_dab(brush, p)
			1, 2:
				brush.mode = TerrainBrush.MODE_PAINT
				brush.layer = 4 + i % 4
				sync.edit_stroke(brush, PackedVector3Array([p, p + Vector3(25, 0, 5), p + Vector3(40, 0, 30)]))
			3:
				brush.mode = TerrainBrush.MODE_SCATTER_ERASE
				sync.edit_dab(brush, p)
			4:
				brush.mode = TerrainBrush.MODE_SMOOTH
				sync.edit_dab(brush, p)
	var t := Time.get_ticks_msec()
	while not sync.is_idle():
		await process_frame
	print("net_bench server applied %d edits in %d ms" % [edits, Time.get_ticks_msec() - t])
	var peer := ENetMultiplayerPeer.new()
	peer.set_bind_ip("127.0.0.1")
	var port := 0
	for attempt in 20:
		var p := 20000 + randi() % 40000
		if peer.create_server(p, 4) == OK:
			port = p
			break
	get_multiplayer().multiplayer_peer = peer
	var pipe := OS.execute_with_pipe(OS.get_executable_path(), PackedStringArray(["--headless", "--audio-driver", "Dummy", "--path", ProjectSettings.globalize_path("res://"), "-s", "res://tests/net/net_client.gd", "--", "--port=%d" % port, "--timeout=600"]), false)
	var out := ""
	# An Array: a lambda captures a bool by value.
	var verified := [false]
	sync.peer_verified.connect(func(_id: int, _hex: String) -> void: verified[0] = true)
	var deadline := Time.get_ticks_msec() + 600000
	while not verified[0] and Time.get_ticks_msec() < deadline:
		for f in [pipe.stdio, pipe.stderr]:
			out += (f.get_buffer(65536) as PackedByteArray).get_string_from_utf8()
		await process_frame
	# The verdict reaches the client, which prints its timing, before the server closes.
	var until := Time.get_ticks_msec() + 30000
	while verified[0] and not out.contains("NETCLIENT timing") and Time.get_ticks_msec() < until:
		for f in [pipe.stdio, pipe.stderr]:
			out += (f.get_buffer(65536) as PackedByteArray).get_string_from_utf8()
		await process_frame
	var stats := sync.get_sync_stats()
	var payload: int = stats.bytes_sent
	var enet := peer.host.pop_statistic(ENetConnection.HOST_TOTAL_SENT_DATA)
	peer.close()
	get_multiplayer().multiplayer_peer = OfflineMultiplayerPeer.new()
	while OS.is_process_running(pipe.pid):
		for f in [pipe.stdio, pipe.stderr]:
			out += (f.get_buffer(65536) as PackedByteArray).get_string_from_utf8()
		await process_frame
	for f in [pipe.stdio, pipe.stderr]:
		out += (f.get_buffer(65536) as PackedByteArray).get_string_from_utf8()
	var timing := ""
	for line in out.split("\n"):
		if line.begins_with("NETCLIENT timing"):
			timing = line.substr(17)
	var terrain := n * n * 8
	print("net_bench\t%d\t%d\tverified=%s\tpayload=%d\tenet_sent=%d\tterrain=%d\tratio_payload=%.4f%%\tratio_enet=%.4f%%\t%s" % [
		n, stats.edits, verified[0], payload, enet, terrain, 100.0 * payload / terrain, 100.0 * enet / terrain, timing])
	if not verified[0]:
		print(out)
	net.free()
	quit(0 if verified[0] else 1)
