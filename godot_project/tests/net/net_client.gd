extends SceneTree
## A client of the multiplayer test (test_island_sync.gd starts it as its own headless Godot
## process): joins 127.0.0.1:<port>, lets IslandSync bring its island up to date, prints
## `NETCLIENT synced <fingerprint> edits=<n>` at each verdict and quits when the server goes
## away, or after --timeout seconds (exit code 0 only when the last verdict was a match).
## With --hostile it sends malformed and flooding messages when the server asks.

const NET_SCENE := preload("res://tests/net/net_scene.gd")

var _net: Node
var _sync: IslandSync
var _peer: ENetMultiplayerPeer
var _deadline := 0
var _was_connected := false
var _last_ok := false
var _hostile := false
var _t0 := 0
var _first_island_ms := -1


func _initialize() -> void:
	var port := 0
	var timeout := 120.0
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--port="):
			port = int(a.substr(7))
		elif a.begins_with("--timeout="):
			timeout = float(a.substr(10))
		elif a == "--hostile":
			_hostile = true
	_deadline = Time.get_ticks_msec() + int(timeout * 1000.0)
	# Another seed than the server's: the island must take the server's parameters.
	_net = NET_SCENE.build(1)
	root.add_child(_net)
	_sync = _net.get_node("Island/Sync")
	_sync.synced.connect(func(hex: String) -> void:
		_last_ok = true
		print("NETCLIENT synced %s edits=%d" % [hex, _sync.get_applied_count()])
		# Connect-to-playable: from create_client to the verdict (the island generated from the
		# server's parameters with every logged edit applied, colliders in place).
		print("NETCLIENT timing first_island_ms=%d playable_ms=%d" % [_first_island_ms, Time.get_ticks_msec() - _t0]))
	var island: ProceduralIsland = _net.get_node("Island")
	island.generation_finished.connect(func(_stats: Dictionary) -> void:
		if _first_island_ms < 0 and _sync.get_sync_stats().joined:
			_first_island_ms = Time.get_ticks_msec() - _t0)
	_sync.sync_failed.connect(func(reason: String) -> void:
		_last_ok = false
		print("NETCLIENT failed ", reason))
	_net.get_node("Control").hostile_requested.connect(_misbehave)
	_peer = ENetMultiplayerPeer.new()
	_t0 = Time.get_ticks_msec()
	var err := _peer.create_client("127.0.0.1", port)
	if err != OK:
		print("NETCLIENT cannot connect: ", err)
		quit(3)
		return
	get_multiplayer().multiplayer_peer = _peer


func _process(_delta: float) -> bool:
	if Time.get_ticks_msec() > _deadline:
		print("NETCLIENT timeout")
		_finish(2)
		return true
	var status := _peer.get_connection_status()
	if status == MultiplayerPeer.CONNECTION_CONNECTED:
		_was_connected = true
	elif _was_connected and status == MultiplayerPeer.CONNECTION_DISCONNECTED:
		print("NETCLIENT server gone, last verdict ok=%s" % _last_ok)
		_finish(0 if _last_ok else 1)
		return true
	return false


func _finish(code: int) -> void:
	get_multiplayer().multiplayer_peer = null
	_net.free()
	quit(code)


## Malformed edits, a client trying to send parameters and log entries, an edit the server's
## filter refuses, then a flood of well-formed edits in one frame.
func _misbehave() -> void:
	print("NETCLIENT misbehaving")
	var bad: Array[PackedByteArray] = []
	bad.append(PackedByteArray([1, 2, 3]))
	bad.append(NET_SCENE.raw_dab(NAN, 0.0, 0.0))
	bad.append(NET_SCENE.raw_dab(1.0e9, 0.0, 0.0))
	bad.append(NET_SCENE.raw_dab(5.0, 0.0, 0.0, 99))
	bad.append(NET_SCENE.raw_dab(5.0, 0.0, 0.0, 0, 2))
	bad.append(NET_SCENE.raw_dab(5.0, NAN, 0.0))
	var long := NET_SCENE.raw_dab(5.0, 0.0, 0.0)
	long.append(0)
	bad.append(long)
	for b in bad:
		_sync.rpc_id(1, "_net_request_edit", b)
	# A client never changes parameters or the log.
	_sync.rpc_id(1, "_net_hello", PackedByteArray([0, 1]), PackedByteArray())
	_sync.rpc_id(1, "_net_edit", 0, NET_SCENE.raw_dab(5.0, 0.0, 0.0))
	# Well-formed, but the server's edit_filter refuses radii over 50 m.
	_sync.rpc_id(1, "_net_request_edit", NET_SCENE.raw_dab(80.0, 10.0, 10.0))
	# A flood: far more than max_messages_per_second in one frame.
	for i in 300:
		_sync.rpc_id(1, "_net_request_edit", NET_SCENE.raw_dab(6.0, -200.0 + i, 40.0))
