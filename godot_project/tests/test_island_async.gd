extends IslandTestCase
## ProceduralIsland background generation: returns at once, one finished signal, coalescing,
## cancel, freeing mid-generation, and no leaks over many regenerates.

var timeout_s := 300.0


## An island that generates in `_ready` only when `generate_now`.
func _async_island(resolution: int, chunk_size: int, generate_now: bool = true) -> ProceduralIsland:
	return _island(resolution, chunk_size, {"generate_on_ready": generate_now})


func _reference_image(seed_value: int, resolution: int, chunk_size: int) -> Image:
	var ref := _async_island(resolution, chunk_size, false)
	ref.seed = seed_value
	ref.collision_enabled = false
	check(ref.regenerate(), "reference generation")
	var img := ref.get_heightmap_image()
	ref.free()
	return img


func test_async_returns_at_once_and_finishes_once() -> void:
	var isl := _async_island(513, 64, false)
	var started := [0]
	var finished: Array = []
	var progress: Array = []
	isl.generation_started.connect(func() -> void: started[0] += 1)
	isl.generation_finished.connect(func(stats: Dictionary) -> void: finished.append(stats))
	isl.generation_progress.connect(func(f: float, stage: String) -> void: progress.append([f, stage]))
	var t0 := Time.get_ticks_usec()
	isl.regenerate_async()
	var call_ms := (Time.get_ticks_usec() - t0) / 1000.0
	print("    regenerate_async() returned after %.3f ms" % call_ms)
	check(call_ms < 20.0, "regenerate_async returns at once (%.3f ms)" % call_ms)
	check(isl.is_generating(), "is_generating right after the call")
	check_eq(finished.size(), 0, "not finished synchronously")
	var args := await wait_signal(isl, "generation_finished", 120.0)
	check_eq(args.size(), 1, "generation_finished carries the stats")
	await wait_frames(5)
	check_eq(finished.size(), 1, "generation_finished fired exactly once")
	check_eq(started[0], 1, "generation_started fired once")
	check(not isl.is_generating(), "idle afterwards")
	check_eq(isl.get_child_count(true), 64, "8×8 chunks built")
	if finished.size() == 1:
		check_eq(finished[0].resolution, 513, "stats of the finished island")
	check(progress.size() >= 11, "progress reported per stage (%d reports)" % progress.size())
	var monotonic := true
	for k in range(1, progress.size()):
		if progress[k][0] < progress[k - 1][0]:
			monotonic = false
	check(monotonic, "progress never goes backwards")
	if progress.size() > 0:
		check_eq(progress[-1][0], 1.0, "progress ends at 1")
	check(_image_equal(isl.get_heightmap_image(), _reference_image(1, 513, 64), false), "async island equals the synchronous one")


func test_budgeted_build_spreads_over_frames() -> void:
	var isl := _async_island(257, 16, false)
	isl.build_budget_ms = 0.5
	var frames := [0]
	var counting := [false]
	isl.generation_progress.connect(func(_f: float, stage: String) -> void:
		if stage == "chunks":
			frames[0] += 1)
	isl.regenerate_async()
	await wait_signal(isl, "generation_finished", 120.0)
	print("    256 chunks built over %d+ frames with a 0.5 ms budget" % frames[0])
	check(frames[0] >= 2, "chunk building spread over several frames (%d)" % frames[0])
	check_eq(isl.get_child_count(true), 256, "all chunks built")


func test_quick_calls_coalesce_and_last_wins() -> void:
	var isl := _async_island(257, 32, false)
	var finished := [0]
	var started := [0]
	isl.generation_finished.connect(func(_s: Dictionary) -> void: finished[0] += 1)
	isl.generation_started.connect(func() -> void: started[0] += 1)
	for s in [11, 12, 13]:
		isl.seed = s
		isl.regenerate_async()
	await wait_signal(isl, "generation_finished", 120.0)
	await wait_frames(30)
	check_eq(finished[0], 1, "three quick calls give one generation_finished")
	check_eq(started[0], 1, "and one generation_started")
	check(not isl.is_generating(), "idle afterwards")
	check_eq(isl.get_last_stats().seed, 13, "the last request won")
	check(_image_equal(isl.get_heightmap_image(), _reference_image(13, 257, 32), false), "island of the last seed")


func test_cancel_keeps_previous_island() -> void:
	var isl := _async_island(65, 32)
	var before := isl.get_heightmap_image()
	var failed: Array = []
	var finished := [0]
	isl.generation_failed.connect(func(m: String) -> void: failed.append(m))
	isl.generation_finished.connect(func(_s: Dictionary) -> void: finished[0] += 1)
	expect_error("generation cancelled")
	isl.resolution = 1025
	isl.chunk_size = 64
	isl.seed = 99
	isl.regenerate_async()
	isl.cancel()
	check(not isl.is_generating(), "cancel stops at once")
	check_eq(failed, ["generation cancelled"], "cancel emits generation_failed")
	await wait_frames(20)
	check_eq(finished[0], 0, "no generation_finished after cancel")
	check(_image_equal(before, isl.get_heightmap_image(), false), "previous island intact")
	check_eq(isl.get_child_count(true), 4, "previous chunks intact")


func test_freeing_while_generating_does_not_crash() -> void:
	for k in 3:
		var isl := _async_island(1025, 64, false)
		isl.seed = 100 + k
		isl.regenerate_async()
		await wait_frames(k)
		isl.free()
	# A second island still works afterwards.
	var isl2 := _async_island(65, 32, false)
	isl2.regenerate_async()
	var args := await wait_signal(isl2, "generation_finished", 60.0)
	check_eq(args.size(), 1, "generation still works after freeing busy nodes")
	# queue_free while its worker runs.
	var isl3 := _async_island(513, 64, false)
	isl3.regenerate_async()
	isl3.queue_free()
	await wait_frames(3)
	check(not is_instance_valid(isl3), "queue_free'd island is gone")


func test_regenerate_cancels_async() -> void:
	var isl := _async_island(65, 32, false)
	var finished := [0]
	isl.generation_finished.connect(func(_s: Dictionary) -> void: finished[0] += 1)
	isl.seed = 3
	isl.regenerate_async()
	isl.seed = 4
	check(isl.regenerate(), "synchronous regenerate")
	check(not isl.is_generating(), "the async job was dropped")
	await wait_frames(20)
	check_eq(finished[0], 1, "only the synchronous generation finished")
	check_eq(isl.get_last_stats().seed, 4, "synchronous result kept")


func _counts() -> Array:
	return [Performance.get_monitor(Performance.OBJECT_COUNT), Performance.get_monitor(Performance.OBJECT_NODE_COUNT),
		Performance.get_monitor(Performance.OBJECT_RESOURCE_COUNT)]


func _regenerate_many(isl: ProceduralIsland, first: int, count: int) -> void:
	for k in count:
		isl.seed = first + k
		if not isl.regenerate():
			check(false, "regenerate %d failed" % (first + k))
			return


func test_200_regenerates_leak_nothing() -> void:
	var isl := _async_island(65, 32)
	_regenerate_many(isl, 0, 5)
	await wait_frames(3)
	var a := _counts()
	var t0 := Time.get_ticks_msec()
	_regenerate_many(isl, 10, 100)
	await wait_frames(3)
	var b := _counts()
	_regenerate_many(isl, 110, 100)
	await wait_frames(3)
	var c := _counts()
	print("    200 regenerates at 65² took %d ms; [objects, nodes, resources]: %s -> %s -> %s" % [
		Time.get_ticks_msec() - t0, a, b, c])
	# A leak of anything per regenerate would grow by >= 100 between the snapshots.
	check_eq(c, b, "object/node/resource counts stable over the second 100 regenerates")
	check(b[0] - a[0] <= 2 and b[1] == a[1] and b[2] - a[2] <= 2, "no growth over the first 100: %s -> %s" % [a, b])
	# Also through the async path, with collision toggling (collider nodes freed and re-created).
	for k in 20:
		isl.collision_enabled = k % 2 == 0
		isl.regenerate_async()
		await wait_signal(isl, "generation_finished", 30.0)
	isl.collision_enabled = true
	isl.regenerate()
	await wait_frames(3)
	check_eq(_counts(), c, "counts stable after async regenerates and collision toggles")


func test_signal_handlers_may_call_back_into_the_node() -> void:
	var isl := _async_island(65, 32, false)
	var seen: Array = []
	isl.generation_progress.connect(func(f: float, _s: String) -> void: seen.append(isl.is_generating()))
	isl.generation_finished.connect(func(stats: Dictionary) -> void:
		seen.append(isl.get_height_at(0.0, 0.0))
		seen.append(isl.get_last_stats().seed)
		if stats.seed == 1:
			isl.seed = 2
			isl.regenerate())
	isl.regenerate_async()
	await wait_signal(isl, "generation_finished", 60.0)
	await wait_frames(3)
	check(seen.size() > 4, "handlers ran (%d calls)" % seen.size())
	check_eq(isl.get_last_stats().seed, 2, "a regenerate() from inside generation_finished completed")
	check(not isl.is_generating(), "idle afterwards")
	check_eq(isl.get_child_count(true), 4, "chunks intact")


## An infinite or huge build_budget_ms builds every chunk (it used to panic in `_process` when
## turned into a Duration, and the island was never finished).
func test_unbounded_build_budget_builds_everything() -> void:
	for budget in [INF, 1e30]:
		var isl := _async_island(65, 32, false)
		isl.build_budget_ms = budget
		isl.regenerate_async()
		var args := await wait_signal(isl, "generation_finished", 60.0)
		check_eq(args.size(), 1, "generation_finished with build_budget_ms = %s" % budget)
		check_eq(_mesh_instances(isl).size(), 4, "every chunk built with build_budget_ms = %s" % budget)
		check(not isl.is_generating(), "idle after the build (budget %s)" % budget)
		isl.free()


## A regenerate() from a generation_progress handler wins: the older async result is not built
## over it afterwards and generation_finished does not fire a second time for it. Triggered on the
## last core stage (delivered with the worker's result) and on the final "done".
func test_regenerate_from_a_progress_handler_wins() -> void:
	var reference := _reference_image(99, 65, 32)
	for trigger in ["stats", "done"]:
		var isl := _async_island(65, 32, false)
		isl.seed = 5
		var finished: Array = []
		var state := {"fired": false}
		isl.generation_finished.connect(func(stats: Dictionary) -> void: finished.append(stats.seed))
		isl.generation_progress.connect(func(_f: float, stage: String) -> void:
			if stage == trigger and not state.fired:
				state.fired = true
				isl.seed = 99
				isl.regenerate())
		isl.regenerate_async()
		for i in 600:
			await get_tree().process_frame
			if state.fired and not isl.is_generating():
				break
		await wait_frames(5)
		check(state.fired, "the handler ran on '%s'" % trigger)
		check_eq(finished, [99], "one generation_finished, for the handler's island ('%s')" % trigger)
		check(_image_equal(isl.get_heightmap_image(), reference, false), "the handler's island stays ('%s')" % trigger)
		isl.free()


## Rays straight down at `points` (node-local x, z): how many hit a collider.
func _ray_hits(isl: ProceduralIsland, points: Array) -> int:
	var space := isl.get_world_3d().direct_space_state
	var hits := 0
	for p in points:
		var q := PhysicsRayQueryParameters3D.create(Vector3(p.x, 500.0, p.y), Vector3(p.x, -500.0, p.y))
		if not space.intersect_ray(q).is_empty():
			hits += 1
	return hits


## Issue 12: during an async rebuild with another chunk size, every part of the island keeps a
## mesh and a collider in every frame: a ball resting on it never falls through.
func test_async_chunk_size_change_never_leaves_a_hole() -> void:
	var isl := _island(129, 32, {"world_size": 256.0})
	check_eq(isl.get_child_count(true), 16, "4×4 chunks")
	var points: Array = []
	for iz in 5:
		for ix in 5:
			points.append(Vector2(-100.0 + ix * 50.0, -100.0 + iz * 50.0))
	await get_tree().physics_frame
	await get_tree().physics_frame
	check_eq(_ray_hits(isl, points), points.size(), "every probe hits the island before")
	# A ball resting on land.
	var spot := Vector3(0.0, -INF, 0.0)
	for iz in range(-100, 101, 10):
		for ix in range(-100, 101, 10):
			var h := isl.get_height_at(ix, iz)
			if h > spot.y and h < 40.0:
				spot = Vector3(ix, h, iz)
	check(spot.y > 1.0, "found land (%.1f m)" % spot.y)
	var ball := RigidBody3D.new()
	var shape := CollisionShape3D.new()
	var sphere := SphereShape3D.new()
	sphere.radius = 0.5
	shape.shape = sphere
	ball.add_child(shape)
	ball.position = spot + Vector3(0.0, 0.6, 0.0)
	add_child(ball)
	for k in 20:
		await get_tree().physics_frame
	# Same terrain, other chunking, built one chunk per frame.
	isl.chunk_size = 16
	isl.build_budget_ms = 0.0
	isl.regenerate_async()
	var frames := 0
	var worst := points.size()
	var lowest := ball.position.y
	var visible_min := 1 << 30
	while isl.is_generating() and frames < 3000:
		await get_tree().physics_frame
		frames += 1
		worst = mini(worst, _ray_hits(isl, points))
		lowest = minf(lowest, ball.position.y)
		var shown := 0
		for m in _mesh_instances(isl):
			if m.visible and m.get_aabb().size.x > 0.0:
				shown += 1
		visible_min = mini(visible_min, shown)
	print("    rebuild over %d physics frames; fewest probe hits %d of %d; fewest drawn chunks %d" % [frames, worst, points.size(), visible_min])
	check(frames > 10, "the rebuild spanned many frames (%d)" % frames)
	check_eq(worst, points.size(), "every probe hit a collider in every frame")
	check(visible_min >= 16, "the island was drawn in full in every frame (fewest drawn chunks %d)" % visible_min)
	check(lowest > spot.y - 0.5, "the ball never fell through (lowest %.2f, ground %.2f)" % [lowest, spot.y])
	await wait_frames(2)
	check_eq(isl.get_child_count(true), 64, "8×8 chunks after the swap")
	check_eq(_ray_hits(isl, points), points.size(), "every probe hits the new chunks")
	var named := 0
	for c in isl.get_children(true):
		if c.name.begins_with("Chunk_"):
			named += 1
	check_eq(named, 64, "the new chunks carry their Chunk_x_z names")
	ball.free()


## Splat map 0 of `isl` as the island shows it: the map's image and the bytes its texture holds
## (not under the headless display server: its dummy renderer keeps a texture's first image and
## ignores updates).
func _map0(isl: ProceduralIsland) -> Array:
	var tex := isl.get_splat_map_texture(0)
	var headless := DisplayServer.get_name() == "headless"
	var tex_img: Image = tex.get_image() if tex != null and not headless else null
	return [isl.get_splat_map_image(0), tex_img]


## Maps of 513² and more are made ahead in the quiet frames of a background generation (and
## from kept arrays of freed islands); what the island shows must be its splat all the same.
func test_splat_maps_made_ahead_show_the_island() -> void:
	for round in 3:
		var res := 1025 if round == 2 else 513
		var isl := _async_island(257 if round == 2 else res, 128, false)
		isl.seed = 11
		if round == 2:
			# A size change of a live island: the new maps are made ahead, the old ones shown
			# meanwhile.
			check(isl.regenerate(), "first generation at 257")
			isl.resolution = res
		isl.regenerate_async()
		var got := await wait_signal(isl, "generation_finished", 120.0)
		if not check(not got.is_empty(), "round %d: finished" % round):
			isl.free()
			return
		var expect := isl.get_splat_image()
		var maps := _map0(isl)
		var img: Image = maps[0]
		check(img != null and img.get_width() == res and img.get_data() == expect.get_data(), "round %d: splat map 0 at %d² is the island's splat" % [round, res])
		if maps[1] != null and not (maps[1] as Image).is_empty():
			check((maps[1] as Image).get_data() == expect.get_data(), "round %d: its texture holds the same bytes" % round)
		# Against a lone synchronous island of the same seed.
		var ref := _async_island(res, 128, false)
		ref.seed = 11
		check(ref.regenerate(), "reference at %d" % res)
		check(ref.get_splat_map_image(0).get_data() == img.get_data(), "round %d: the same map as a synchronous generation" % round)
		ref.free()
		isl.free()
