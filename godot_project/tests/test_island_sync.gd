extends IslandTestCase
## IslandSync (issue 37): edits travel as commands and every peer ends bit-identical. A replayed
## edit log gives the same island; a real server and two client processes over ENet on
## 127.0.0.1 (one joining late, one misbehaving) end with the server's fingerprint; malformed
## and flooding messages are refused, naming the peer, without changing anything.

var timeout_s := 420.0

const NET_SCENE := preload("res://tests/net/net_scene.gd")
const CLIENT := "res://tests/net/net_client.gd"


## Server-side edits: sculpt raise/lower dabs, paint strokes, scatter erase dabs and paint
## smoothing, at positions from a fixed random sequence.
func _make_edits(sync: IslandSync, brush: TerrainBrush, count: int, rng: RandomNumberGenerator) -> void:
	for i in count:
		var p := Vector3(rng.randf_range(-300.0, 300.0), 0.0, rng.randf_range(-300.0, 300.0))
		brush.radius = rng.randf_range(10.0, 30.0)
		brush.strength = 0.6
		match i % 5:
			0:
				brush.mode = TerrainBrush.MODE_SCULPT_RAISE if i % 10 == 0 else TerrainBrush.MODE_SCULPT_LOWER
				brush.sculpt_height = 3.0
				check(sync.edit_dab(brush, p), "sculpt edit %d accepted" % i)
			1, 2:
				brush.mode = TerrainBrush.MODE_PAINT
				brush.layer = 4 + i % 4
				var pts := PackedVector3Array([p, p + Vector3(25, 0, 5), p + Vector3(40, 0, 30)])
				check(sync.edit_stroke(brush, pts), "paint stroke %d accepted" % i)
			3:
				brush.mode = TerrainBrush.MODE_SCATTER_ERASE
				brush.scatter_layer = 0
				check(sync.edit_dab(brush, p), "scatter erase %d accepted" % i)
			4:
				brush.mode = TerrainBrush.MODE_SMOOTH
				check(sync.edit_dab(brush, p), "smooth %d accepted" % i)


## Wait (bounded) until `cond` holds; false on timeout.
func _wait_for(cond: Callable, seconds: float) -> bool:
	var deadline := Time.get_ticks_msec() + int(seconds * 1000.0)
	while not cond.call():
		if Time.get_ticks_msec() > deadline:
			return false
		await get_tree().process_frame
	return true


func test_replayed_edit_log_gives_the_same_island() -> void:
	var a := NET_SCENE.build(7)
	var b := NET_SCENE.build(7)
	add_child(a)
	add_child(b)
	var sa: IslandSync = a.get_node("Island/Sync")
	var sb: IslandSync = b.get_node("Island/Sync")
	var brush: TerrainBrush = a.get_node("Island/Brush")
	var before_b := ""
	check(await _wait_for(func() -> bool: return sb.is_idle(), 60.0), "island b generated")
	before_b = sb.get_fingerprint()
	var rng := RandomNumberGenerator.new()
	rng.seed = 5
	_make_edits(sa, brush, 20, rng)
	check_eq(sa.get_edit_count(), 20, "20 edits logged")
	check(await _wait_for(func() -> bool: return sa.is_idle(), 120.0), "edits applied")
	check_eq(sa.get_applied_count(), 20, "every edit applied")
	var log := sa.get_edit_log()
	# A few dozen bytes an edit: the log is not terrain.
	check(log.size() < 20 * 100, "log of 20 edits is %d bytes" % log.size())
	var fa := sa.get_fingerprint()
	check(fa != before_b, "the edits changed the island")
	var island_a: ProceduralIsland = a.get_node("Island")
	var sculpted := island_a.has_sculpt()
	check(sculpted, "the sculpt edits are in the sculpt layer")
	# Hostile logs: refused whole, nothing changes.
	expect_error("edit log")
	check(not sb.apply_edit_log(PackedByteArray([1, 2, 3])), "garbage log refused")
	var cut := log.slice(0, log.size() - 3)
	check(not sb.apply_edit_log(cut), "truncated log refused")
	check_eq(sb.get_edit_count(), 0, "a refused log adds no edit")
	check_eq(sb.get_fingerprint(), before_b, "a refused log changes nothing")
	# The replay.
	check(sb.apply_edit_log(log), "log replayed")
	check(await _wait_for(func() -> bool: return sb.is_idle() and sb.get_applied_count() == 20, 120.0), "replay applied")
	check_eq(sb.get_fingerprint(), fa, "replayed island is bit-identical")
	var ib: ProceduralIsland = b.get_node("Island")
	check_eq(ib.get_height_at(10.0, 20.0), island_a.get_height_at(10.0, 20.0), "same height")


func test_server_and_two_client_processes_end_identical() -> void:
	var mp := get_tree().get_multiplayer()
	var peer := ENetMultiplayerPeer.new()
	peer.set_bind_ip("127.0.0.1")
	var port := 0
	var rng := RandomNumberGenerator.new()
	rng.randomize()
	for attempt in 20:
		var p := rng.randi_range(20000, 60000)
		if peer.create_server(p, 4) == OK:
			port = p
			break
	if not check(port != 0, "an ENet server on 127.0.0.1"):
		return
	mp.multiplayer_peer = peer
	var net := NET_SCENE.build(424242)
	# A dedicated server's island: colliders and queries only; the clients draw theirs.
	(net.get_node("Island") as ProceduralIsland).server_mode = ProceduralIsland.SERVER_MODE_ON
	get_tree().root.add_child(net)
	var sync: IslandSync = net.get_node("Island/Sync")
	var island: ProceduralIsland = net.get_node("Island")
	var brush: TerrainBrush = net.get_node("Island/Brush")
	sync.allow_client_edits = true
	sync.edit_filter = func(_peer_id: int, edit: Dictionary) -> bool: return edit.radius <= 50.0
	var peers: Array[int] = []
	mp.peer_connected.connect(func(id: int) -> void: peers.append(id))
	var verified := {}
	sync.peer_verified.connect(func(id: int, hex: String) -> void:
		verified[id] = [sync.get_edit_count(), hex])
	var mismatches: Array = []
	sync.peer_mismatch.connect(func(id: int, reason: String) -> void: mismatches.append([id, reason]))
	var rejected := {}
	sync.edit_rejected.connect(func(id: int, _reason: String) -> void:
		rejected[id] = rejected.get(id, 0) + 1)
	var clients: Array = []
	var exe := OS.get_executable_path()
	var args := ["--headless", "--audio-driver", "Dummy", "--path", ProjectSettings.globalize_path("res://"), "-s", CLIENT, "--", "--port=%d" % port, "--timeout=240"]
	# Client A (misbehaves later).
	clients.append(OS.execute_with_pipe(exe, PackedStringArray(args + ["--hostile"]), false))
	var out := ["", ""]
	var pump := func() -> void:
		for i in clients.size():
			var c: Dictionary = clients[i]
			for f in [c.stdio, c.stderr]:
				var chunk: PackedByteArray = f.get_buffer(65536)
				if chunk.size() > 0:
					out[i] += chunk.get_string_from_utf8()
	var ok := await _wait_for(func() -> bool:
		pump.call()
		return peers.size() == 1 and verified.has(peers[0]), 90.0)
	if not check(ok, "client A joined and matched the server's island (output: %s)" % out[0]):
		_stop(clients, net, mp, pump)
		return
	check_eq(verified[peers[0]][0], 0, "A verified before any edit")
	# 100 edits on the server while A is connected.
	var erng := RandomNumberGenerator.new()
	erng.seed = 99
	_make_edits(sync, brush, 100, erng)
	ok = await _wait_for(func() -> bool:
		pump.call()
		return sync.is_idle() and verified.get(peers[0], [0])[0] == 100, 180.0)
	check(ok, "A applied the 100 edits and matched (output: %s)" % out[0])
	# A misbehaves: malformed edits, a parameter and a log message, a vetoed edit, a flood.
	var log_before := sync.get_edit_count()
	expect_error("refused a message from peer %d" % peers[0])
	net.get_node("Control").rpc_id(peers[0], "go_hostile")
	ok = await _wait_for(func() -> bool:
		pump.call()
		return rejected.get(peers[0], 0) >= 250, 30.0)
	check(ok, "A's malformed and flooding messages were refused (%d)" % rejected.get(peers[0], 0))
	await wait_frames(10)
	var accepted := sync.get_edit_count() - log_before
	# The bucket holds 30 messages: 8 went to the malformed and vetoed ones.
	check(accepted > 0 and accepted <= 30, "only the flood's first edits were accepted (%d)" % accepted)
	check_eq(int(sync.get_sync_stats().rejected), 310 - accepted, "every other message refused")
	ok = await _wait_for(func() -> bool:
		pump.call()
		return sync.is_idle(), 120.0)
	check(ok, "server applied the accepted edits")
	# Client B joins after all edits.
	clients.append(OS.execute_with_pipe(exe, PackedStringArray(args), false))
	var total := sync.get_edit_count()
	ok = await _wait_for(func() -> bool:
		pump.call()
		return peers.size() == 2 and verified.get(peers[1], [-1])[0] == total \
			and verified.get(peers[0], [-1])[0] == total, 180.0)
	check(ok, "late client B and client A matched after %d edits (A: %s / B: %s)" % [total, out[0], out[1] if out.size() > 1 else ""])
	var own := sync.get_fingerprint()
	check(own != "", "server fingerprint")
	if ok:
		check_eq(verified[peers[0]][1], own, "client A's fingerprint equals the server's")
		check_eq(verified[peers[1]][1], own, "client B's fingerprint equals the server's")
	check_eq(mismatches.size(), 0, "no mismatch: %s" % [mismatches])
	# What B cost: the whole sync against the island's heightmap and splat.
	var sent: int = sync.get_sync_stats().bytes_sent_per_peer.get(peers[1] if peers.size() > 1 else -1, 0)
	var n := island.resolution
	# Heights as f32 and the splat as RGBA8: 8 bytes a sample.
	var terrain_bytes := n * n * 8
	print("    sync bytes to the late client: %d for %d edits (%.3f %% of %d bytes of heights + splat at %d²)" % [sent, total, 100.0 * sent / terrain_bytes, terrain_bytes, n])
	check(sent > 0 and sent < terrain_bytes / 20, "the sync sends far less than the terrain")
	await _stop(clients, net, mp, pump)
	for i in clients.size():
		check(out[i].contains("NETCLIENT synced"), "client %d printed its verdict" % i)
		check(not out[i].contains("ERROR"), "client %d ran without errors: %s" % [i, out[i]])


## Close the server, let the clients quit by themselves (bounded), kill any still running.
func _stop(clients: Array, net: Node, mp: MultiplayerAPI, pump: Callable) -> void:
	mp.multiplayer_peer.close()
	mp.multiplayer_peer = OfflineMultiplayerPeer.new()
	var deadline := Time.get_ticks_msec() + 20000
	for c in clients:
		while OS.is_process_running(c.pid) and Time.get_ticks_msec() < deadline:
			pump.call()
			await get_tree().process_frame
		if OS.is_process_running(c.pid):
			fail("client %d did not quit by itself" % c.pid)
			OS.kill(c.pid)
		elif OS.has_method("get_process_exit_code"):
			check_eq(OS.get_process_exit_code(c.pid), 0, "client %d exit code" % c.pid)
	pump.call()
	net.free()


## A quick world for the sync test (as test_island_world.gd's).
func _sync_world(seed: int) -> IslandWorld:
	var w := IslandWorld.new()
	w.name = "World"
	w.world_seed = seed
	w.cell_size = 2048.0
	w.island_size_min = 512.0
	w.island_size_max = 1024.0
	w.samples_per_metre = 0.25
	w.view_distance = 3000.0
	w.detail_distance = 900.0
	w.collision_distance = 400.0
	w.coarse_resolution = 65
	w.build_budget_ms = 50.0
	w.sea_enabled = false
	return w


## One side of the world test: /root/<branch>/World (+ Sync, Brush, Target), with its own
## SceneMultiplayer for the branch.
func _world_branch(branch: String, seed: int, at: Vector3) -> Node:
	var root := Node.new()
	root.name = branch
	get_tree().root.add_child(root)
	get_tree().set_multiplayer(SceneMultiplayer.new(), root.get_path())
	var target := Node3D.new()
	target.name = "Target"
	root.add_child(target)
	target.position = at
	var w := _sync_world(seed)
	root.add_child(w)
	w.targets = [w.get_path_to(target)]
	var sync := IslandSync.new()
	sync.name = "Sync"
	w.add_child(sync)
	var brush := TerrainBrush.new()
	brush.name = "Brush"
	root.add_child(brush)
	return root


func test_world_edits_reach_a_peer_that_streams_its_own_islands() -> void:
	# Where the server's world (seed 42) has an island: both targets stand on it.
	var info := _first_world_island(42)
	if not check(not info.is_empty(), "the world has an island"):
		return
	var centre: Vector3 = info.center
	var a := _world_branch("SyncServer", 42, centre)
	var b := _world_branch("SyncClient", 5, centre)
	var wa: IslandWorld = a.get_node("World")
	var wb: IslandWorld = b.get_node("World")
	var sa: IslandSync = a.get_node("World/Sync")
	var sb: IslandSync = b.get_node("World/Sync")
	var brush: TerrainBrush = a.get_node("Brush")
	var ok := await _wait_for(func() -> bool:
		var isl := wa.get_island_at(centre.x, centre.z)
		return isl != null and isl.name.ends_with("detail") and sa.is_idle(), 120.0)
	if not check(ok, "server's detailed island loaded"):
		_free_branches([a, b])
		return
	var cell := wa.cell_at(centre.x, centre.z)
	var rng := RandomNumberGenerator.new()
	rng.seed = 3
	for i in 12:
		var p := centre + Vector3(rng.randf_range(-150, 150), 0, rng.randf_range(-150, 150))
		brush.radius = 25.0
		brush.mode = TerrainBrush.MODE_SCULPT_RAISE if i % 3 == 0 else TerrainBrush.MODE_PAINT
		brush.sculpt_height = 4.0
		brush.layer = 5
		check(sa.edit_dab(brush, p), "world edit %d accepted" % i)
	check_eq(sa.get_edit_count(), 12, "12 world edits logged")
	ok = await _wait_for(func() -> bool: return sa.is_idle() and sa.get_applied_count() == 12, 120.0)
	check(ok, "server applied its world edits")
	var server_fp := sa.get_cell_fingerprint(cell)
	check(server_fp != "", "server cell fingerprint")
	# An edit where no detailed island is loaded is refused.
	expect_error("no detailed island loaded")
	check(not sa.edit_dab(brush, centre + Vector3(2048.0 * 3, 0, 0)), "edit far away refused")
	# The client joins over ENet on 127.0.0.1.
	var verified := []
	var mismatches := []
	_join_over_enet(a, b, sa, verified, mismatches)
	ok = await _wait_for(func() -> bool: return verified.size() > 0 or mismatches.size() > 0, 180.0)
	check(ok, "the client's cell was compared")
	check_eq(mismatches, [], "no mismatch")
	if verified.size() > 0:
		check_eq(verified[0][1], server_fp, "the client's cell fingerprint equals the server's")
	check_eq(wb.world_seed, 42, "the client took the server's world seed")
	check_eq(sb.get_edit_count(), 12, "the client has the log")
	var hc := wb.get_height_at(centre.x, centre.z)
	check_eq(hc, wa.get_height_at(centre.x, centre.z), "same height at the island's centre")
	_free_branches([a, b])


## A pinned (customised) island takes its cell's edits: both sides' scenes pin the same cell
## with the same customisation (as a saved scene does); the server's edits land on its pinned
## island, reach the client's pinned island, and the fingerprints agree.
func test_world_edits_reach_a_pinned_island() -> void:
	var info := _first_world_island(42)
	if not check(not info.is_empty(), "the world has an island"):
		return
	var centre: Vector3 = info.center
	var cell: Vector2i = info.cell
	var a := _world_branch("SyncServer", 42, centre)
	var b := _world_branch("SyncClient", 42, centre)
	var wa: IslandWorld = a.get_node("World")
	var wb: IslandWorld = b.get_node("World")
	var sa: IslandSync = a.get_node("World/Sync")
	var sb: IslandSync = b.get_node("World/Sync")
	var brush: TerrainBrush = a.get_node("Brush")
	var pins: Array[ProceduralIsland] = []
	for w in [wa, wb]:
		var pinned: ProceduralIsland = w.pin_island(cell)
		if not check(pinned != null, "pinned"):
			_free_branches([a, b])
			return
		pinned.max_height = pinned.max_height * 1.25
		pinned.regenerate()
		pins.append(pinned)
	var ok := await _wait_for(func() -> bool: return sa.is_idle() and not pins[0].is_generating(), 120.0)
	if not check(ok, "server's pinned island ready"):
		_free_branches([a, b])
		return
	var before := pins[0].get_heightmap_image().get_data()
	var rng := RandomNumberGenerator.new()
	rng.seed = 9
	for i in 6:
		var p := centre + Vector3(rng.randf_range(-120, 120), 0, rng.randf_range(-120, 120))
		brush.radius = 25.0
		brush.mode = TerrainBrush.MODE_SCULPT_RAISE if i % 2 == 0 else TerrainBrush.MODE_PAINT
		brush.sculpt_height = 4.0
		brush.layer = 5
		check(sa.edit_dab(brush, p), "edit %d on the pinned island accepted" % i)
	ok = await _wait_for(func() -> bool: return sa.is_idle() and sa.get_applied_count() == 6 and not pins[0].is_generating(), 120.0)
	check(ok, "server applied the edits")
	check(pins[0].get_heightmap_image().get_data() != before, "the edits changed the server's pinned island")
	check(pins[0].splat_paint != null and pins[0].splat_paint.data.size() > 0, "and painted it")
	var server_fp := sa.get_cell_fingerprint(cell)
	check(server_fp != "", "a fingerprint for the pinned cell")
	var verified := []
	var mismatches := []
	_join_over_enet(a, b, sa, verified, mismatches)
	ok = await _wait_for(func() -> bool: return verified.size() > 0 or mismatches.size() > 0, 180.0)
	check(ok, "the client's pinned cell was compared")
	check_eq(mismatches, [], "no mismatch")
	if verified.size() > 0:
		check_eq(verified[0][1], server_fp, "the client's pinned island equals the server's")
	ok = await _wait_for(func() -> bool: return sb.get_applied_count() == 6 and not pins[1].is_generating(), 60.0)
	check(ok, "the client applied the 6 edits to its pinned island")
	check(pins[1].get_heightmap_image().get_data() == pins[0].get_heightmap_image().get_data(), "same heights on both pinned islands")
	check(pins[1].splat_paint != null and pins[1].splat_paint.data == pins[0].splat_paint.data, "same paint")
	_free_branches([a, b])


## The first cell (scanning out from the origin) where the sync test world of `seed` has an
## island: get_island_info's dictionary, or empty.
func _first_world_island(seed: int) -> Dictionary:
	var probe := _sync_world(seed)
	add_child(probe)
	var info := {}
	for r in 6:
		for j in range(-r, r + 1):
			for i in range(-r, r + 1):
				var inf := probe.get_island_info(Vector2i(i, j))
				if info.is_empty() and inf.exists:
					info = inf
	probe.free()
	return info


## Branch `a` hosts over ENet on 127.0.0.1 (a free port), branch `b` joins; the authority's
## verdicts on the client land in `verified` ([peer, fingerprint hex]) and `mismatches`.
func _join_over_enet(a: Node, b: Node, sa: IslandSync, verified: Array, mismatches: Array) -> void:
	var server_peer := ENetMultiplayerPeer.new()
	server_peer.set_bind_ip("127.0.0.1")
	var port := 0
	for attempt in 20:
		var p := 20000 + randi() % 40000
		if server_peer.create_server(p, 2) == OK:
			port = p
			break
	get_tree().get_multiplayer(a.get_path()).multiplayer_peer = server_peer
	sa.peer_verified.connect(func(id: int, hex: String) -> void: verified.append([id, hex]))
	sa.peer_mismatch.connect(func(id: int, reason: String) -> void: mismatches.append(reason))
	var client_peer := ENetMultiplayerPeer.new()
	client_peer.create_client("127.0.0.1", port)
	get_tree().get_multiplayer(b.get_path()).multiplayer_peer = client_peer


func _free_branches(branches: Array) -> void:
	for br in branches:
		var mp := get_tree().get_multiplayer(br.get_path())
		if mp.multiplayer_peer != null:
			mp.multiplayer_peer.close()
		get_tree().set_multiplayer(null, br.get_path())
		br.free()


func test_a_peer_with_another_island_is_told_why() -> void:
	# Two branches of this process, each with its own SceneMultiplayer, over ENet on 127.0.0.1.
	# The client's scene has a stamp the server's lacks: the same parameters give another island.
	var a := Node.new()
	a.name = "MismatchServer"
	get_tree().root.add_child(a)
	get_tree().set_multiplayer(SceneMultiplayer.new(), a.get_path())
	var b := Node.new()
	b.name = "MismatchClient"
	get_tree().root.add_child(b)
	get_tree().set_multiplayer(SceneMultiplayer.new(), b.get_path())
	var na := NET_SCENE.build(31)
	var nb := NET_SCENE.build(31)
	var stamp := IslandStamp.new()
	stamp.kind = IslandStamp.KIND_MOUNTAIN
	stamp.position = Vector3(100, 0, 100)
	nb.get_node("Island").add_child(stamp)
	a.add_child(na)
	b.add_child(nb)
	var sa: IslandSync = na.get_node("Island/Sync")
	var sb: IslandSync = nb.get_node("Island/Sync")
	var mismatches := []
	sa.peer_mismatch.connect(func(id: int, reason: String) -> void: mismatches.append(reason))
	var failures := []
	sb.sync_failed.connect(func(reason: String) -> void: failures.append(reason))
	var server_peer := ENetMultiplayerPeer.new()
	server_peer.set_bind_ip("127.0.0.1")
	var port := 0
	for attempt in 20:
		var p := 20000 + randi() % 40000
		if server_peer.create_server(p, 2) == OK:
			port = p
			break
	get_tree().get_multiplayer(a.get_path()).multiplayer_peer = server_peer
	var client_peer := ENetMultiplayerPeer.new()
	client_peer.create_client("127.0.0.1", port)
	get_tree().get_multiplayer(b.get_path()).multiplayer_peer = client_peer
	expect_error("differ from the authority's")
	var ok := await _wait_for(func() -> bool: return mismatches.size() > 0 and failures.size() > 0, 120.0)
	check(ok, "the server got peer_mismatch and the client sync_failed")
	if ok:
		check(mismatches[0].contains("heights"), "the reason names the heights: %s" % mismatches[0])
		check_eq(failures[0], mismatches[0], "the client hears the same reason")
	for br in [a, b]:
		var mp := get_tree().get_multiplayer(br.get_path())
		mp.multiplayer_peer.close()
		get_tree().set_multiplayer(null, br.get_path())
		br.free()
