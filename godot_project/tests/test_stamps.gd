extends IslandTestCase
## IslandStamp (issue 38): landmarks placed by hand enter the generator where the sculpt layer
## does (before erosion and drainage). A plateau stays level through erosion, a mountain rises
## and moves with its node, a crater has a bowl and a rim, an islet makes land in the sea and a
## bay makes sea in the land; a stamp added at runtime regenerates the island; a bad stamp is an
## error that keeps the previous terrain.

var timeout_s := 300.0


func _isl(props: Dictionary = {}) -> ProceduralIsland:
	# A round outline (AUTO could pick VOLCANIC, whose caldera would reshape some tests' ground).
	var p := {"seed": 21, "world_size": 1024.0, "generate_on_ready": false, "island_shape": ProceduralIsland.SHAPE_ROUND}
	p.merge(props, true)
	return _island(257, 64, p)


func _stamp(kind: int, at: Vector3, radius: float, height: float) -> IslandStamp:
	var s := IslandStamp.new()
	s.kind = kind
	s.position = at
	s.radius = radius
	s.height = height
	return s


func _wait_idle(isl: ProceduralIsland) -> void:
	var deadline := Time.get_ticks_msec() + 60000
	await get_tree().process_frame
	await get_tree().process_frame
	while isl.is_generating() and Time.get_ticks_msec() < deadline:
		await get_tree().process_frame


func test_plateau_stays_level_through_erosion_and_a_new_seed() -> void:
	var isl := _isl()
	isl.add_child(_stamp(IslandStamp.KIND_PLATEAU, Vector3(60, 0, -40), 80.0, 45.0))
	for s in [21, 22]:
		isl.seed = s
		check(isl.regenerate(), "generated with the plateau (seed %d)" % s)
		var lo := INF
		var hi := -INF
		for j in range(-10, 11):
			for i in range(-10, 11):
				var p := Vector2(60 + i * 4.0, -40 + j * 4.0)
				if p.distance_to(Vector2(60, -40)) <= 0.6 * 80.0:
					var h := isl.get_height_at(p.x, p.y)
					lo = minf(lo, h)
					hi = maxf(hi, h)
		check(hi - lo <= 0.5, "seed %d: the plateau top is level within 0.5 m (%.3f..%.3f)" % [s, lo, hi])
		check_near(lo, 45.0, 0.5, "seed %d: at the stamp's height" % s)


func test_moving_a_mountain_moves_the_peak_and_little_else() -> void:
	var plain := _isl()
	plain.regenerate()
	var isl := _isl()
	var m := _stamp(IslandStamp.KIND_MOUNTAIN, Vector3(-80, 0, 60), 50.0, 60.0)
	isl.add_child(m)
	isl.regenerate()
	var a := Vector2(-80, 60)
	var b := Vector2(90, -30)
	check(isl.get_height_at(a.x, a.y) > plain.get_height_at(a.x, a.y) + 40.0, "a peak at A (%.1f over %.1f)" % [isl.get_height_at(a.x, a.y), plain.get_height_at(a.x, a.y)])
	var before := isl.get_heightmap_image()
	m.position = Vector3(b.x, 0, b.y)
	isl.regenerate()
	check(isl.get_height_at(b.x, b.y) > plain.get_height_at(b.x, b.y) + 40.0, "the peak moved to B")
	check_near(isl.get_height_at(a.x, a.y), plain.get_height_at(a.x, a.y), 2.0, "A is back to the plain island's height")
	# Far from both positions (more than 3 radii): the terrain is the same.
	var after := isl.get_heightmap_image()
	var n := isl.resolution
	var same := 0
	var far := 0
	for j in range(0, n, 4):
		for i in range(0, n, 4):
			var p := Vector2((i / float(n - 1) - 0.5) * 1024.0, (j / float(n - 1) - 0.5) * 1024.0)
			if p.distance_to(a) > 150.0 and p.distance_to(b) > 150.0:
				far += 1
				if absf(before.get_pixel(i, j).r - after.get_pixel(i, j).r) <= 0.05:
					same += 1
	check(far > 1000 and same >= 0.95 * far, "far from the stamp nothing changed: %d of %d samples" % [same, far])


## Moving a stamp in a game (background regenerate) rebuilds only the chunks whose mesh or
## collider changed; every chunk then holds the new island exactly. Nothing changed: nothing
## rebuilt.
func test_moving_a_stamp_rebuilds_only_the_chunks_it_changes() -> void:
	var isl := _island(257, 32, {"seed": 21, "world_size": 1024.0, "generate_on_ready": false, "island_shape": ProceduralIsland.SHAPE_ROUND})
	var m := _stamp(IslandStamp.KIND_MOUNTAIN, Vector3(-250, 0, -250), 40.0, 40.0)
	isl.add_child(m)
	isl.regenerate_async()
	await _wait_idle(isl)
	var s0 := isl.get_last_stats()
	check_eq(int(s0.kept_chunks), 0, "the first build builds every chunk")
	check_eq(int(s0.encoded_surfaces) + int(s0.array_surfaces), 64, "64 chunk surfaces set")
	var first := isl.get_heightmap_image()
	m.position = Vector3(-250, 0, -180)
	await _wait_idle(isl)
	var s := isl.get_last_stats()
	check(first.get_data() != isl.get_heightmap_image().get_data(), "the island changed")
	var kept := int(s.kept_chunks)
	check(kept >= 32 and kept < 64, "most chunks kept, the stamp's rebuilt: %d of 64 kept" % kept)
	check(int(s.encoded_surfaces) + int(s.array_surfaces) <= 64 - kept, "only the other chunks' surfaces set (%d)" % (int(s.encoded_surfaces) + int(s.array_surfaces)))
	var worst := _chunks_off_the_heightmap(isl, 32)
	check_eq(worst.x, 0.0, "every mesh holds the new heights")
	check_eq(worst.y, 0.0, "every collider holds the new heights")
	# The same values again: the island is the same, no chunk is rebuilt.
	isl.regenerate_async()
	await _wait_idle(isl)
	check_eq(int(isl.get_last_stats().kept_chunks), 64, "nothing changed: every chunk kept")
	# Back where it was: the first island, bit for bit, in every chunk.
	m.position = Vector3(-250, 0, -250)
	await _wait_idle(isl)
	check(first.get_data() == isl.get_heightmap_image().get_data(), "the first island again")
	worst = _chunks_off_the_heightmap(isl, 32)
	check(worst == Vector2.ZERO, "every chunk holds it (worst %s)" % worst)


func test_crater_islet_and_bay_shape_the_land() -> void:
	var plain := _isl()
	plain.regenerate()
	var isl := _isl()
	isl.add_child(_stamp(IslandStamp.KIND_CRATER, Vector3(0, 0, 0), 60.0, 20.0))
	# An islet in the open sea near the map's edge, a bay on the land near the coast.
	var sea := Vector2(380, 380)
	check(plain.get_height_at(sea.x, sea.y) < 0.0, "the islet's place is sea without it")
	isl.add_child(_stamp(IslandStamp.KIND_ISLET, Vector3(sea.x, 0, sea.y), 45.0, 12.0))
	var land := Vector2.ZERO
	for k in range(100, 400, 10):
		var h := plain.get_height_at(-float(k), 0.0)
		if h > 3.0:
			land = Vector2(-float(k), 0.0)
	check(land != Vector2.ZERO, "a land point for the bay")
	isl.add_child(_stamp(IslandStamp.KIND_BAY, Vector3(land.x, 0, land.y), 40.0, 0.0))
	check(isl.regenerate(), "generated with three stamps")
	var centre := isl.get_height_at(0, 0)
	var rim := isl.get_height_at(0.8 * 60.0, 0)
	check(centre < plain.get_height_at(0, 0) - 10.0, "the crater's bowl is lower (%.1f, plain %.1f)" % [centre, plain.get_height_at(0, 0)])
	check(rim > centre + 10.0, "the rim stands above the bowl (%.1f / %.1f)" % [rim, centre])
	check(isl.get_height_at(sea.x, sea.y) > 3.0, "the islet is land (%.1f m)" % isl.get_height_at(sea.x, sea.y))
	check(isl.get_height_at(land.x, land.y) < 0.0, "the bay is sea (%.1f m)" % isl.get_height_at(land.x, land.y))
	check_eq(isl.get_water_level_at(land.x, land.y), 0.0, "the bay holds sea water")


func test_runtime_stamp_regenerates_and_bad_stamps_are_errors() -> void:
	var isl := _isl()
	isl.regenerate()
	var h0 := isl.get_height_at(30, 30)
	var s := _stamp(IslandStamp.KIND_MOUNTAIN, Vector3(30, 0, 30), 40.0, 50.0)
	isl.add_child(s)
	await _wait_idle(isl)
	check(isl.get_height_at(30, 30) > h0 + 30.0, "a stamp added at runtime raised the island in the background (%.1f -> %.1f)" % [h0, isl.get_height_at(30, 30)])
	var h1 := isl.get_height_at(30, 30)
	expect_error("invalid IslandStamp")
	s.radius = 0.0
	await _wait_idle(isl)
	check(not isl.regenerate(), "a zero radius is refused")
	check_eq(isl.get_height_at(30, 30), h1, "the previous terrain stays")


func test_heightmap_stamp_raises_the_image() -> void:
	var plain := _isl()
	plain.regenerate()
	# A 64 × 64 image: white in its right half (+x), black in its left half.
	var img := Image.create(64, 64, false, Image.FORMAT_L8)
	for y in 64:
		for x in 64:
			img.set_pixel(x, y, Color.WHITE if x >= 32 else Color.BLACK)
	var s := _stamp(IslandStamp.KIND_HEIGHTMAP, Vector3(-40, 0, 20), 80.0, 30.0)
	s.falloff = 0.1
	var isl := _isl()
	isl.add_child(s)
	expect_error("heightmap")
	check(not isl.regenerate(), "a heightmap stamp without an image is refused")
	s.heightmap = ImageTexture.create_from_image(img)
	check(isl.regenerate(), "generated with the heightmap stamp")
	var white := Vector2(-40 + 40, 20)
	var black := Vector2(-40 - 40, 20)
	var rise_w := isl.get_height_at(white.x, white.y) - plain.get_height_at(white.x, white.y)
	var rise_b := isl.get_height_at(black.x, black.y) - plain.get_height_at(black.x, black.y)
	check(rise_w > 20.0, "raised where the image is white (%.1f m)" % rise_w)
	check(absf(rise_b) < 3.0, "left alone where it is black (%.1f m)" % rise_b)
	# Outside the stamp's square nothing changes.
	check_near(isl.get_height_at(-40, 20 + 150), plain.get_height_at(-40, 20 + 150), 1.0, "outside the square: the plain island")
	check_eq(s.get_warnings().size(), 0, "no warning with an image")
