extends IslandTestCase
## IslandWorld (issue 36): placement is a pure function of the world seed and the cell, islands
## stream around a target (coarse far meshes, detailed islands with colliders near it), a world
## island is the lone ProceduralIsland of get_island_info bit for bit, queries answer in world
## coordinates, islands unload far away and their edits come back, bad settings warn.

var timeout_s := 600.0

const SEA_DEPTH := 18.0


## Whether the island at (x, z) is loaded at full detail.
func _detailed_at(w: IslandWorld, x: float, z: float) -> bool:
	var isl := w.get_island_at(x, z)
	return isl != null and isl.name.ends_with("detail")


func test_placement_is_a_pure_function_of_seed_and_cell() -> void:
	var a := _world()
	var b := _world()
	add_child(a)
	add_child(b)
	var count := 0
	var cells := 0
	for j in range(-10, 10):
		for i in range(-10, 10):
			var ia := a.get_island_info(Vector2i(i, j))
			check_eq(ia, b.get_island_info(Vector2i(i, j)), "same seed, same island in cell (%d, %d)" % [i, j])
			cells += 1
			if ia.exists:
				count += 1
				var c: Vector3 = ia.center
				var half: float = ia.world_size * 0.5
				check(ia.world_size >= 512.0 and ia.world_size <= 1024.0, "size in range (%f)" % ia.world_size)
				check(c.x - half >= i * 2048.0 and c.x + half <= (i + 1) * 2048.0 and c.z - half >= j * 2048.0 and c.z + half <= (j + 1) * 2048.0, "the island's map lies inside its cell (%d, %d)" % [i, j])
				check_eq(a.cell_at(c.x, c.z), Vector2i(i, j), "cell_at of the centre")
				check_eq(ia.resolution, 257 if ia.world_size > 512.0 else 129, "resolution from samples_per_metre")
	check(count > cells * 0.35 and count < cells * 0.65, "about half the cells have an island (%d of %d)" % [count, cells])
	# find_islands: exactly the islands whose map overlaps the rectangle.
	var rect := Rect2(-3000.0, -2000.0, 9000.0, 5000.0)
	var found := a.find_islands(rect)
	var expect: Array[Vector2i] = []
	for j in range(-3, 4):
		for i in range(-3, 5):
			var info := a.get_island_info(Vector2i(i, j))
			if info.exists:
				var c: Vector3 = info.center
				var h: float = info.world_size * 0.5
				if Rect2(c.x - h, c.z - h, 2.0 * h, 2.0 * h).intersects(rect):
					expect.append(Vector2i(i, j))
	check(found.size() > 0, "islands found")
	var sorted_found := found.duplicate()
	sorted_found.sort()
	expect.sort()
	check_eq(sorted_found, expect, "find_islands lists the overlapping islands")
	# Another world seed, another layout.
	b.world_seed = 43
	var differ := 0
	for i in 20:
		if a.get_island_info(Vector2i(i, 0)) != b.get_island_info(Vector2i(i, 0)):
			differ += 1
	check(differ > 5, "another world seed moves the islands (%d of 20 cells differ)" % differ)


## Streaming around a target: the island under it comes in at full detail (with colliders), its
## neighbours as coarse meshes; the world island equals a lone ProceduralIsland with the values
## of get_island_info; heights in world coordinates; signals.
func test_streams_islands_around_a_target() -> void:
	var w := _world()
	var target := Node3D.new()
	add_child(target)
	add_child(w)
	w.targets = [w.get_path_to(target)]
	var info := _first_island(w)
	if not check(not info.is_empty(), "an island near the origin"):
		return
	var centre: Vector3 = info.center
	target.position = centre
	var loaded := []
	var changed := []
	w.island_loaded.connect(func(c, isl): loaded.append([c, isl]))
	w.island_detail_changed.connect(func(c, l): changed.append([c, l]))
	var ok := await wait_until(func(): return _detailed_at(w, centre.x, centre.z), 3000)
	if not check(ok, "the island under the target is detailed (%s)" % w.get_world_stats()):
		return
	var isl := w.get_island_at(centre.x, centre.z)
	if not check(isl != null, "get_island_at finds it"):
		return
	check_eq(isl.resolution, info.resolution, "full resolution")
	check_eq(isl.seed, info.seed, "the cell's seed")
	check(isl.collision_enabled, "with colliders")
	check_eq(loaded.size() >= 1 and loaded[0][0] == info.cell, true, "island_loaded for its cell first (%s)" % [loaded])
	check(changed.has([info.cell, 2]), "island_detail_changed to level 2 (%s)" % [changed])
	# The lone island of get_island_info: bit for bit the same heights.
	var lone := ProceduralIsland.new()
	lone.seed = info.seed
	lone.world_size = info.world_size
	lone.resolution = info.resolution
	lone.chunk_size = isl.chunk_size
	lone.sea_enabled = false
	add_child(lone)
	check(lone.get_heightmap_image().get_data() == isl.get_heightmap_image().get_data(), "a lone ProceduralIsland with get_island_info's values is the same island")
	check(lone.get_water_image().get_data() == isl.get_water_image().get_data(), "and the same water")
	lone.queue_free()
	# World-coordinate heights: the island's own on it, the sea floor between islands.
	for d in [Vector2(0, 0), Vector2(37.5, -81.0), Vector2(-120.0, 64.0)]:
		var p: Vector2 = Vector2(centre.x, centre.z) + d
		check_eq(w.get_height_at(p.x, p.y), isl.get_height_at(d.x, d.y), "height at %s is the island's" % p)
	var sea_cell := Vector2i(0, 0)
	for i in range(-5, 5):
		if not w.get_island_info(Vector2i(i, 7)).exists:
			sea_cell = Vector2i(i, 7)
			break
	check_eq(w.get_height_at(sea_cell.x * 2048.0 + 1000.0, 7 * 2048.0 + 1000.0), -SEA_DEPTH, "the sea floor in an empty cell")
	# A physics ray hits the island's collider at its height.
	await wait_frames(2)
	var space := w.get_world_3d().direct_space_state
	var q := PhysicsRayQueryParameters3D.create(centre + Vector3(10.0, 500.0, 10.0), centre + Vector3(10.0, -500.0, 10.0))
	var hit := space.intersect_ray(q)
	if check(not hit.is_empty(), "a ray hits the island's collider"):
		check_near(hit.position.y, w.get_height_at(centre.x + 10.0, centre.z + 10.0), 0.05, "at get_height_at")
	# Neighbours in view come as coarse meshes.
	await wait_until(func(): return w.get_world_stats().loaded >= 2, 3000)
	var stats := w.get_world_stats()
	check(stats.loaded >= 2, "neighbouring islands in view are loaded too (%s)" % stats)
	check(stats.memory_bytes > 0, "memory estimate")
	for c in w.get_children():
		if c is ProceduralIsland and c.name.ends_with("coarse"):
			check_eq(c.resolution, 65, "a coarse far mesh at coarse_resolution")
			check(not c.collision_enabled, "without colliders")


## Colliders follow collision_distance: a detailed island farther than it has none (the
## physics space holds nothing of it), coming within it the island gets them from its own
## heights without regenerating, and leaving past 1.1 × it drops them again.
func test_colliders_follow_the_collision_ring() -> void:
	var w := _world({"view_distance": 3000.0, "detail_distance": 1500.0, "collision_distance": 300.0})
	var target := Node3D.new()
	add_child(target)
	add_child(w)
	w.targets = [w.get_path_to(target)]
	var info := _first_island(w)
	if not check(not info.is_empty(), "an island near the origin"):
		return
	var centre: Vector3 = info.center
	var half: float = info.world_size * 0.5
	# 600 m off the island's east edge: in the detail ring, outside the collision ring.
	target.position = centre + Vector3(half + 600.0, 0.0, 0.0)
	var ok := await wait_until(func(): return _detailed_at(w, centre.x, centre.z), 3000)
	if not check(ok, "the island is detailed from 600 m (%s)" % w.get_world_stats()):
		return
	var isl := w.get_island_at(centre.x, centre.z)
	check(not isl.collision_enabled, "without colliders outside collision_distance")
	check(not isl.is_collision_ready(), "not collision-ready")
	for c in _mesh_instances(isl):
		check(_shape_node(c) == null, "no collider body on chunk %s" % c.name)
	await wait_frames(2)
	var space := w.get_world_3d().direct_space_state
	var probe := centre + Vector3(10.0, 0.0, 10.0)
	var q := PhysicsRayQueryParameters3D.create(probe + Vector3(0, 500, 0), probe + Vector3(0, -500, 0))
	check(space.intersect_ray(q).is_empty(), "a ray falls through the island (no colliders)")
	check(not is_nan(w.get_height_at(probe.x, probe.z)), "get_height_at still answers on it")
	check_eq(w.get_world_stats().with_colliders, 0, "the stats count no island with colliders")
	var started := [0]
	isl.generation_started.connect(func(): started[0] += 1)
	# 200 m off the edge: inside the collision ring.
	target.position = centre + Vector3(half + 200.0, 0.0, 0.0)
	ok = await wait_until(func(): return isl.is_collision_ready(), 3000)
	if not check(ok, "the island gets its colliders within collision_distance (%s)" % w.get_world_stats()):
		return
	check(w.get_island_at(centre.x, centre.z) == isl, "the same island node")
	check_eq(started[0], 0, "without regenerating")
	var off := _chunks_off_the_heightmap(isl, isl.chunk_size)
	check_eq(off.y, 0.0, "every collider is at the heightmap's heights")
	check_eq(w.get_world_stats().with_colliders, 1, "the stats count it")
	await wait_frames(2)
	var hit := space.intersect_ray(q)
	if check(not hit.is_empty(), "a ray hits the island now"):
		check_near(hit.position.y, w.get_height_at(probe.x, probe.z), 0.05, "at get_height_at")
	# 320 m: past the ring but within its 10 % hysteresis, the colliders stay.
	target.position = centre + Vector3(half + 320.0, 0.0, 0.0)
	await wait_frames(5)
	check(isl.is_collision_ready(), "kept within 1.1 × collision_distance")
	# 500 m: dropped, the island stays detailed.
	target.position = centre + Vector3(half + 500.0, 0.0, 0.0)
	ok = await wait_until(func(): return _collider_count(isl) == 0, 3000)
	check(ok, "the colliders are dropped beyond 1.1 × collision_distance")
	check(w.get_island_at(centre.x, centre.z) == isl, "the island stays detailed")
	check_eq(started[0], 0, "still without regenerating")


## Far away the island unloads (its paint kept), back near it reloads with the paint.
func test_islands_unload_far_away_and_edits_come_back() -> void:
	var w := _world({"view_distance": 1500.0, "detail_distance": 900.0})
	var target := Node3D.new()
	add_child(target)
	add_child(w)
	w.targets = [w.get_path_to(target)]
	var info := _first_island(w)
	var centre: Vector3 = info.center
	target.position = centre
	if not check(await wait_until(func(): return _detailed_at(w, centre.x, centre.z), 3000), "detailed"):
		return
	var isl := w.get_island_at(centre.x, centre.z)
	var brush := TerrainBrush.new()
	isl.add_child(brush)
	brush.layer = 5
	brush.radius = 30.0
	brush.strength = 1.0
	check(brush.paint_at(centre) > 0, "painted on the world island")
	var painted: PackedByteArray = isl.splat_paint.data
	var unloaded := []
	w.island_unloaded.connect(func(c): unloaded.append(c))
	# 100 km away: every island here unloads.
	target.position = centre + Vector3(100000.0, 0.0, 0.0)
	check(await wait_until(func(): return unloaded.has(info.cell), 600), "island_unloaded for its cell")
	await wait_frames(2)
	check(not is_instance_valid(isl), "the island node is freed")
	check(w.get_edited_cells().has(info.cell), "its edits are kept")
	check(is_nan(w.get_height_at(centre.x, centre.z)), "NaN where the island is not loaded")
	# Save and load the edits with another world.
	var path := "user://island_world_edits.bin"
	check_eq(w.save_edits(path), OK, "save_edits")
	var w2 := _world()
	add_child(w2)
	check_eq(w2.load_edits(path), OK, "load_edits")
	check_eq(w2.get_edited_cells(), w.get_edited_cells(), "the same edited cells")
	w2.queue_free()
	# Back: the island returns with its paint.
	target.position = centre
	check(await wait_until(func(): return _detailed_at(w, centre.x, centre.z), 3000), "detailed again")
	var again := w.get_island_at(centre.x, centre.z)
	if check(again != null and again.splat_paint != null, "the island is back with its paint"):
		check(again.splat_paint.data == painted, "the same paint, byte for byte")


## Bad settings: a configuration warning and an error, no crash, nothing streams.
func test_bad_settings_warn() -> void:
	var w := _world({"cell_size": 800.0})
	add_child(w)
	var warn := w.get_warnings()
	check(warn.size() == 1 and "cell_size" in warn[0], "cell_size below island_size_max warns (%s)" % warn)
	expect_error("cell_size")
	await wait_frames(3)
	check_eq(w.get_world_stats().loaded, 0, "nothing streams")
	check_eq(w.get_island_info(Vector2i(0, 0)).exists, false, "no island with invalid settings")
	w.cell_size = 2048.0
	w.detail_distance = 5000.0
	warn = w.get_warnings()
	check(warn.size() == 1 and "grow outwards" in warn[0], "inverted distances warn (%s)" % warn)
	w.detail_distance = -5.0
	check("positive" in w.get_warnings()[0], "a negative distance warns")
	w.detail_distance = 900.0
	check_eq(w.get_warnings().size(), 0, "fine again")
	var scene := PackedScene.new()
	var root := Node3D.new()
	scene.pack(root)
	root.free()
	w.island_scene = scene
	warn = w.get_warnings()
	check(warn.size() == 1 and "ProceduralIsland" in warn[0], "a template whose root is not a ProceduralIsland warns (%s)" % warn)
	w.island_scene = null
	var t := Node3D.new()
	add_child(t)
	w.targets = [w.get_path_to(t)]
	t.free()
	warn = w.get_warnings()
	check(warn.size() == 1 and "target" in warn[0], "a freed target warns (%s)" % warn)
	expect_error("target")
	await wait_frames(3)
	check_eq(w.get_world_stats().loaded, 0, "a freed target streams nothing")


## 100 km from the origin (single precision: 1 ulp of 100 000 m is 7.8 mm) an island still
## generates, and physics rays hit its collider within 5 cm of get_height_at.
func test_islands_100_km_out_still_work() -> void:
	var w := _world({"view_distance": 1500.0, "detail_distance": 900.0})
	var target := Node3D.new()
	add_child(target)
	add_child(w)
	w.targets = [w.get_path_to(target)]
	var info := {}
	for r in 6:
		for j in range(49 - r, 50 + r):
			for i in range(49 - r, 50 + r):
				var inf := w.get_island_info(Vector2i(i, j))
				if info.is_empty() and inf.exists:
					info = inf
	if not check(not info.is_empty(), "an island near 100 km"):
		return
	var centre: Vector3 = info.center
	check(centre.x > 95000.0 and centre.z > 95000.0, "the island is about 100 km out (%s)" % centre)
	target.position = centre
	if not check(await wait_until(func(): return _detailed_at(w, centre.x, centre.z), 6000), "detailed 100 km out"):
		return
	await wait_frames(2)
	var space := w.get_world_3d().direct_space_state
	var worst := 0.0
	var hits := 0
	for d in [Vector2(10, 10), Vector2(-73.5, 41.25), Vector2(120, -95), Vector2(3.3, -150.7)]:
		var p := Vector3(centre.x + d.x, 0.0, centre.z + d.y)
		var q := PhysicsRayQueryParameters3D.create(p + Vector3(0, 500, 0), p + Vector3(0, -500, 0))
		var hit := space.intersect_ray(q)
		var h := w.get_height_at(p.x, p.z)
		if not hit.is_empty() and not is_nan(h):
			hits += 1
			worst = maxf(worst, absf(hit.position.y - h))
	check(hits >= 3, "rays hit the island 100 km out (%d)" % hits)
	check(worst <= 0.05, "within 5 cm of get_height_at (worst %.4f m)" % worst)
	print("    100 km out: worst ray-to-height difference %.4f m over %d rays" % [worst, hits])


func test_load_now_gives_ground_before_the_first_frame() -> void:
	var w := _world()
	var target := Node3D.new()
	add_child(target)
	var info := _first_island(w)
	if not check(not info.is_empty(), "an island near the origin"):
		return
	var centre: Vector3 = info.center
	target.position = centre + Vector3(25.0, 0.0, -40.0)
	add_child(w)
	w.targets = [w.get_path_to(target)]
	var loaded := []
	w.island_loaded.connect(func(c: Vector2i, _i: ProceduralIsland): loaded.append(c))
	var made := w.load_now()
	# No frame has run since: everything below is what load_now() left.
	check(made >= 1, "load_now generated the island under the target (%d)" % made)
	check(_detailed_at(w, centre.x, centre.z), "the island is at full detail at once")
	check(loaded.has(info.cell), "island_loaded was emitted for it (%s)" % [loaded])
	var isl := w.get_island_at(centre.x, centre.z)
	if not check(isl != null, "get_island_at finds it"):
		return
	var p := target.position
	var h := w.get_height_at(p.x, p.z)
	var own := isl.get_height_at(p.x - isl.position.x, p.z - isl.position.z)
	check(not is_nan(h) and h == own, "get_height_at under the target (%.3f) is the island's (%.3f)" % [h, own])
	var off := _chunks_off_the_heightmap(isl, isl.chunk_size)
	check(off.y == 0.0, "every chunk has its collider, at the heightmap's heights (worst %.4f m)" % off.y)
	check(w.get_world_stats().with_colliders >= 1, "the stats count it with colliders")
	check(w.load_now() == 0, "a second load_now has nothing to do")
	# A ray through the physics space once the bodies took part in a physics step.
	await wait_frames(2)
	var q := PhysicsRayQueryParameters3D.create(p + Vector3(0, 500, 0), p + Vector3(0, -500, 0))
	var hit := w.get_world_3d().direct_space_state.intersect_ray(q)
	check(not hit.is_empty() and absf(hit.position.y - h) <= 0.05, "a ray lands on the ground under the target (%s vs %.3f)" % [hit.get("position", "no hit"), h])
	# Bad settings: an error, nothing generated.
	expect_error("cell_size")
	var bad := _world({"island_size_max": 4096.0})
	add_child(bad)
	bad.targets = [bad.get_path_to(target)]
	check(bad.load_now() == 0, "load_now with cell_size below island_size_max generates nothing")
	bad.queue_free()
	w.queue_free()
	target.queue_free()


const DIGEST := "res://tests/world/world_digest.gd"


## The settings of `_world()` as `key:value,...`, for the digest helper process.
func _world_settings() -> String:
	var w := _world()
	var d := PackedStringArray()
	for k in ["world_seed", "cell_size", "island_size_min", "island_size_max", "samples_per_metre", "view_distance", "detail_distance", "collision_distance", "coarse_resolution", "build_budget_ms"]:
		d.append("%s:%s" % [k, var_to_str(w.get(k))])
	w.free()
	return ",".join(d)


## Sail a target from `from` to `to` in steps of `step` m a frame until the island of `cell` is
## loaded at full detail; the cells in the order they were loaded, and that island's digests.
func _approach(cell: Vector2i, from: Vector3, to: Vector3, step: float) -> Dictionary:
	var w := _world({"generator_threads": 2})
	var target := Node3D.new()
	add_child(target)
	target.position = from
	add_child(w)
	w.targets = [w.get_path_to(target)]
	var order: Array[Vector2i] = []
	w.island_loaded.connect(func(c: Vector2i, _i: ProceduralIsland): order.append(c))
	var info := w.get_island_info(cell)
	var centre: Vector3 = info.center
	var ok := await wait_until(func() -> bool:
		target.position = target.position.move_toward(to, step)
		return _detailed_at(w, centre.x, centre.z) and not w.get_island_at(centre.x, centre.z).is_generating(), 3000)
	var out := {"ok": ok, "order": order}
	if ok:
		var isl := w.get_island_at(centre.x, centre.z)
		out.digest = [WorldDigest.sha(isl.get_heightmap_image()), WorldDigest.sha(isl.get_water_image()), WorldDigest.sha(isl.get_splat_image())]
		out.threads = w.get_world_stats().generator_threads
	w.queue_free()
	target.queue_free()
	await wait_frames(2)
	return out


const WorldDigest := preload("res://tests/world/world_digest.gd")


## Issue 36: an island is bit-identical whichever way the target approaches it (so whatever
## the loading order of it and its neighbours) and whatever the number of generator threads.
func test_an_island_is_the_same_whatever_the_approach_and_thread_count() -> void:
	var probe := _world()
	var info := _first_island(probe)
	probe.free()
	if not check(not info.is_empty(), "an island near the origin"):
		return
	var cell: Vector2i = info.cell
	var c: Vector3 = info.center
	var west := await _approach(cell, c + Vector3(-2600.0, 0.0, 900.0), c, 60.0)
	var east := await _approach(cell, c + Vector3(2600.0, 0.0, -1300.0), c, 60.0)
	if not check(west.ok and east.ok, "the island reached full detail from the west (%s) and from the east (%s)" % [west.ok, east.ok]):
		return
	check(west.order != east.order, "the islands loaded in another order (%s / %s)" % [west.order, east.order])
	check_eq(west.digest, east.digest, "heights, water and splat from the west and from the east")
	# Another process with one generator thread.
	var exe := OS.get_executable_path()
	var args := PackedStringArray(["--headless", "--audio-driver", "Dummy", "--path", ProjectSettings.globalize_path("res://"), "-s", DIGEST, "--", "--settings=" + _world_settings(), "--cell=%d,%d" % [cell.x, cell.y]])
	var before := OS.get_environment("RAYON_NUM_THREADS")
	OS.set_environment("RAYON_NUM_THREADS", "1")
	var output := []
	var rc := OS.execute(exe, args, output, true)
	if before.is_empty():
		OS.unset_environment("RAYON_NUM_THREADS")
	else:
		OS.set_environment("RAYON_NUM_THREADS", before)
	var line := ""
	for l in "".join(output).split("\n"):
		if l.begins_with("WORLD_DIGEST"):
			line = l
	var parts := line.split(" ")
	if not check(rc == 0 and parts.size() == 5, "the one-thread process printed its digests (rc %d, %s)" % [rc, line]):
		return
	check_eq(int(parts[1]), 1, "that process generated with one thread")
	check_eq(west.threads, 2, "this process generates with two (generator_threads = 2)")
	# Automatic: a core left to the main thread (RAYON_NUM_THREADS, when set, decides).
	var auto := _world()
	var n: int = auto.get_world_stats().generator_threads
	auto.free()
	if OS.get_environment("RAYON_NUM_THREADS").is_empty():
		check(n >= 1 and n <= maxi(1, OS.get_processor_count() - 1), "automatic generator threads leave the main thread a core (%d of %d)" % [n, OS.get_processor_count()])
	check_eq([parts[2], parts[3], parts[4]], west.digest, "heights, water and splat with one thread (load_now) and with %d (streamed)" % west.threads)



## Issue 36's inspector map: `get_map_image` draws loaded islands in relief, islands not loaded
## as outlines, the targets as dots, and generates nothing.
func test_map_image_shows_loaded_islands_outlines_and_targets() -> void:
	var w := _world()
	var target := Node3D.new()
	add_child(target)
	var info := _first_island(w)
	if not check(not info.is_empty(), "an island near the origin"):
		return
	var c: Vector3 = info.center
	target.position = c
	add_child(w)
	w.targets = [w.get_path_to(target)]
	if not check(await wait_until(func(): return _detailed_at(w, c.x, c.z), 3000), "the island under the target is detailed"):
		return
	var isl := w.get_island_at(c.x, c.z)
	# 20 km around the target, 400 px: 50 m a pixel.
	var rect := Rect2(c.x - 10000.0, c.z - 10000.0, 20000.0, 20000.0)
	var generating_before: int = w.get_world_stats().generating
	var img := w.get_map_image(rect, 400)
	if not check(img != null and img.get_size() == Vector2i(400, 400) and img.get_format() == Image.FORMAT_RGB8, "a 400² RGB8 map"):
		return
	check(w.get_world_stats().generating <= generating_before, "drawing the map started no generation")
	var px := func(x: float, z: float) -> Vector2i:
		return Vector2i(int((x - rect.position.x) / 50.0), int((z - rect.position.y) / 50.0))
	var at_target: Vector2i = px.call(c.x, c.z)
	check_eq(img.get_pixelv(at_target), Color.WHITE, "the target is a white dot")
	# Land of the loaded island (at a pixel's centre), away from the dot, is not sea.
	var sea := Color8(16, 48, 104)
	var land := 0
	var checked := 0
	for j in range(-12, 13):
		for i in range(-12, 13):
			if absi(i) <= 4 and absi(j) <= 4:
				continue
			var p: Vector2i = at_target + Vector2i(i, j)
			var x := rect.position.x + (p.x + 0.5) * 50.0
			var z := rect.position.y + (p.y + 0.5) * 50.0
			if isl.get_height_at(x - isl.position.x, z - isl.position.z) > 15.0:
				checked += 1
				var col := img.get_pixelv(p)
				if not col.is_equal_approx(sea) and col != Color.WHITE:
					land += 1
	check(checked > 0 and land == checked, "the island's land shows in relief (%d of %d land pixels)" % [land, checked])
	# An island too far to be loaded is outlined.
	var outlined := 0
	var far := 0
	for cell in w.find_islands(rect):
		var inf := w.get_island_info(cell)
		var ctr: Vector3 = inf.center
		var b := Rect2(ctr.x - inf.world_size * 0.5, ctr.z - inf.world_size * 0.5, inf.world_size, inf.world_size)
		if w.get_island_at(ctr.x, ctr.z) != null or not rect.encloses(b):
			continue
		far += 1
		var corner := Vector2i(ceili((b.position.x - rect.position.x) / 50.0 - 0.5), ceili((b.position.y - rect.position.y) / 50.0 - 0.5))
		if img.get_pixelv(corner).is_equal_approx(Color8(170, 180, 190)):
			outlined += 1
	check(far > 0 and outlined == far, "islands not loaded are outlined (%d of %d)" % [outlined, far])
	# Bad input: an error and no image.
	expect_error("size must be")
	check(w.get_map_image(rect, 8) == null, "a map of 8 px is refused")
	expect_error("positive")
	check(w.get_map_image(Rect2(0, 0, 0, 100), 64) == null, "an empty rectangle is refused")
	w.queue_free()
	target.queue_free()


## Pinning: a world island becomes a node of the scene (saved with it, every property its own),
## taking the cell's paint; the world stops streaming that cell and answers queries with the
## pinned island; unpinning gives the cell and its paint back.
func test_a_pinned_island_is_the_scenes_own_and_the_world_leaves_its_cell() -> void:
	var w := _world()
	var target := Node3D.new()
	add_child(target)
	var info := _first_island(w)
	var cell: Vector2i = info.cell
	var centre: Vector3 = info.center
	target.position = centre
	add_child(w)
	w.targets = [w.get_path_to(target)]
	if not check(w.load_now() >= 1, "the island under the target loaded"):
		return
	var streamed := w.get_island_at(centre.x, centre.z)
	var brush := TerrainBrush.new()
	streamed.add_child(brush)
	brush.layer = 5
	brush.radius = 30.0
	brush.strength = 1.0
	check(brush.paint_at(centre) > 0, "painted on the streamed island")
	var painted: PackedByteArray = streamed.splat_paint.data
	var probe := centre + Vector3(37.0, 0.0, -21.0)
	var h_streamed := w.get_height_at(probe.x, probe.z)
	var unloaded := []
	w.island_unloaded.connect(func(c: Vector2i): unloaded.append(c))

	var pinned := w.pin_island(cell)
	if not check(pinned != null, "pin_island made the pinned island"):
		return
	check(pinned.get_parent() == w and pinned.owner == w, "a child of the world, owned so it saves with the scene")
	check(pinned.has_meta(&"island_world_pin") and pinned.get_meta(&"island_world_pin") == cell, "marked with its cell")
	check(not pinned.has_meta(&"island_world_cell"), "not marked as a streamed (read-only) island")
	check_eq(pinned.seed, info.seed, "the cell's seed")
	check_eq(pinned.world_size, info.world_size, "the cell's size")
	check_eq(pinned.resolution, info.resolution, "the cell's resolution")
	check_eq(pinned.position, Vector3(centre.x, 0.0, centre.z), "at the cell's island position")
	check(pinned.splat_paint != null and pinned.splat_paint.data == painted, "the paint moved over, byte for byte")
	check(not w.get_edited_cells().has(cell), "the world keeps no edits of its own for the cell")
	check(unloaded.has(cell), "the streamed island of the cell unloaded (%s)" % [unloaded])
	check_eq(w.pin_island(cell), pinned, "pinning again returns the same island")
	check_eq(w.get_pinned_cells(), [cell], "get_pinned_cells")
	if not check(await wait_until(func(): return not pinned.is_generating() and pinned.get_heightmap_image() != null, 3000), "the pinned island generated"):
		return
	await wait_frames(30)
	check(w.get_island_at(probe.x, probe.z) == pinned, "get_island_at answers with the pinned island")
	check_eq(w.get_height_at(probe.x, probe.z), h_streamed, "the pinned island is the streamed island, bit for bit")
	for n in w.get_children():
		check(not String(n.name).begins_with("Island_%d_%d_" % [cell.x, cell.y]), "the world streams nothing into the pinned cell (%s)" % n.name)
	check_eq(w.get_world_stats().pinned, 1, "the stats count it")

	# Customised: its own settings, the world's queries follow it.
	pinned.max_height = pinned.max_height * 1.5
	check(pinned.regenerate(), "the customised island regenerates")
	var own := pinned.get_height_at(probe.x - centre.x, probe.z - centre.z)
	var h_pinned := w.get_height_at(probe.x, probe.z)
	check(h_pinned == own and h_pinned != h_streamed, "get_height_at follows the customised island (%.3f, was %.3f)" % [h_pinned, h_streamed])
	var map := w.get_map_image(Rect2(centre.x - 600.0, centre.z - 600.0, 1200.0, 1200.0), 64)
	# 150 m east of the centre (8 px; the target's dot covers the middle) against the open sea
	# 570 m west (past the largest island's half size).
	check(pinned.get_height_at(150.0, 0.0) > 0.0, "land 150 m east of the centre")
	var land := map.get_pixel(40, 32) if map != null else Color.BLACK
	var sea := map.get_pixel(2, 32) if map != null else Color.BLACK
	check(map != null and land != sea and sea.b > sea.r, "the map draws the pinned island (%s) on the sea (%s)" % [land, sea])

	# Saved with the scene.
	var scene := PackedScene.new()
	check_eq(scene.pack(w), OK, "the world packs")
	var copy := scene.instantiate()
	var saved: Node = null
	for n in copy.get_children():
		if n.has_meta(&"island_world_pin"):
			saved = n
	check(saved != null and saved.max_height == pinned.max_height, "the pinned island and its own settings are in the saved scene")
	check(saved != null and saved.splat_paint != null and saved.splat_paint.data == painted, "with its paint")
	copy.free()

	# Far away every streamed island unloads; the pinned one is the scene's and stays.
	target.position = centre + Vector3(100000.0, 0.0, 0.0)
	await wait_frames(20)
	check(is_instance_valid(pinned) and pinned.is_inside_tree(), "the pinned island stays loaded")

	# Unpinned: the cell and its paint go back to the world.
	check(w.unpin_island(cell), "unpin_island")
	await wait_frames(2)
	check(not is_instance_valid(pinned), "the pinned island is freed")
	check(w.get_pinned_cells().is_empty(), "no pinned cell left")
	check(w.get_edited_cells().has(cell), "the world keeps the cell's paint again")
	target.position = centre
	check(w.load_now() >= 1, "the world makes the cell's island again")
	var back := w.get_island_at(centre.x, centre.z)
	check(back != null and back.has_meta(&"island_world_cell"), "a streamed island again")
	check(back != null and back.splat_paint != null and back.splat_paint.data == painted, "with the paint, byte for byte")
	check_eq(w.get_height_at(probe.x, probe.z), h_streamed, "and the template's heights")
	# Bad input: errors, nothing changes.
	expect_error("not pinned")
	check(not w.unpin_island(cell), "unpinning a cell that is not pinned fails")
	var empty := Vector2i(cell.x + 1000, cell.y)
	while w.get_island_info(empty).exists:
		empty.x += 1
	expect_error("has no island")
	check(w.pin_island(empty) == null, "pinning a cell without an island fails")
	check(w.get_pinned_cells().is_empty(), "nothing pinned by the failures")
	w.queue_free()
	target.queue_free()
