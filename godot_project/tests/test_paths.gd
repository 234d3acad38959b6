extends IslandTestCase
## IslandPath (issue 38): roads, river courses, ridges and canals drawn as Path3D curves that the
## island grows around. A road keeps its grade and is level across after erosion, carries its
## splat layer and no scatter; a river path holds river water on a bed that never rises and
## ends in the sea; a canal below sea level splits the island; editing the curve at runtime
## moves the road; a bad path is an error that keeps the previous terrain.

var timeout_s := 300.0


func _isl(props: Dictionary = {}) -> ProceduralIsland:
	var p := {"seed": 3, "world_size": 1024.0, "generate_on_ready": false, "island_shape": ProceduralIsland.SHAPE_ROUND}
	p.merge(props, true)
	return _island(513, 64, p)


func _path(kind: int, points: Array, props: Dictionary = {}) -> IslandPath:
	var path := IslandPath.new()
	path.kind = kind
	var c := Curve3D.new()
	for q in points:
		c.add_point(Vector3(q.x, 0.0, q.y))
	path.curve = c
	for k in props:
		path.set(k, props[k])
	return path


func _wait_idle(isl: ProceduralIsland) -> void:
	var deadline := Time.get_ticks_msec() + 60000
	await get_tree().process_frame
	await get_tree().process_frame
	while isl.is_generating() and Time.get_ticks_msec() < deadline:
		await get_tree().process_frame


## Points every `step` metres along the polyline, each with its unit direction.
func _walk(points: Array, step: float) -> Array:
	var out := []
	for k in range(points.size() - 1):
		var a: Vector2 = points[k]
		var b: Vector2 = points[k + 1]
		var d := b - a
		var n := int(floor(d.length() / step))
		for s in range(n):
			out.append([a + d * (s * step / d.length()), d.normalized()])
	return out


func _near_water(isl: ProceduralIsland, p: Vector2, r: float) -> bool:
	for j in range(-3, 4):
		for i in range(-3, 4):
			var q := p + Vector2(i, j) * (r / 3.0)
			if q.distance_to(p) <= r and not is_nan(isl.get_water_level_at(q.x, q.y)):
				return true
	return false


## The x of the last land sample along z = 0 going east from the centre.
func _coast_x(isl: ProceduralIsland) -> float:
	var last := 0.0
	for x in range(0, 500):
		if isl.get_height_at(float(x), 0.0) > 0.0:
			last = float(x)
	return last


func test_road_keeps_its_grade_is_level_across_and_carries_its_splat_without_scatter() -> void:
	var plain := _isl()
	check(plain.regenerate(), "plain island")
	var xc := _coast_x(plain)
	var pts := [Vector2(xc - 3.0, 0.0), Vector2(xc - 120.0, 30.0), Vector2(xc - 300.0, 10.0)]
	var layer := ScatterLayer.new()
	layer.builtin_mesh = ScatterLayer.ROCK
	layer.density = 5.0
	layer.min_distance = 2.0
	layer.min_height = 0.5
	layer.max_height = 200.0
	layer.max_slope_degrees = 60.0
	var typed: Array[ScatterLayer] = [layer]
	var isl := _isl({"scatter_layers": typed})
	check(isl.regenerate(), "island without the road")
	var before := 0
	var centre := _walk(pts, 2.0)
	for p in isl.get_scatter_positions(0):
		for c in centre:
			if Vector2(p.x, p.z).distance_to(c[0]) < 4.0:
				before += 1
				break
	check(before > 5, "instances stand where the road will go (%d)" % before)
	# The road added at runtime: the island regenerates in the background.
	var road := _path(IslandPath.KIND_ROAD, pts, {"width": 8.0, "shoulder": 6.0, "max_grade": 8.0, "splat_layer": 0})
	isl.add_child(road)
	await _wait_idle(isl)
	var worst_grade := 0.0
	var worst_across := 0.0
	var dry := 0
	var low_splat := 0
	for k in range(centre.size()):
		var c: Vector2 = centre[k][0]
		var t: Vector2 = centre[k][1]
		if _near_water(isl, c, 6.0):
			continue
		dry += 1
		var hc := isl.get_height_at(c.x, c.y)
		var nrm := Vector2(-t.y, t.x) * 3.0
		for s in [1.0, -1.0]:
			var q: Vector2 = c + nrm * s
			worst_across = maxf(worst_across, absf(isl.get_height_at(q.x, q.y) - hc))
		if k + 5 < centre.size():
			var c2: Vector2 = centre[k + 5][0]
			if not _near_water(isl, c2, 6.0):
				worst_grade = maxf(worst_grade, absf(isl.get_height_at(c2.x, c2.y) - hc) / c.distance_to(c2))
		if isl.get_splat_weights_at(c.x, c.y)[0] < 0.8:
			low_splat += 1
	check(dry > 60, "most of the road is on dry land (%d samples)" % dry)
	check(worst_grade <= 0.085, "grade ≤ max_grade + 0.5 %% along the centreline (worst %.2f %%)" % (worst_grade * 100.0))
	check(worst_across <= 0.2, "level across within 0.2 m (worst %.3f m)" % worst_across)
	check_eq(low_splat, 0, "the road's splat layer (sand) is at least 0.8 on it")
	var on_road := 0
	for p in isl.get_scatter_positions(0):
		for c in centre:
			if Vector2(p.x, p.z).distance_to(c[0]) < 4.0:
				on_road += 1
				break
	check_eq(on_road, 0, "no scatter instance on the road")
	# The same road again gives the same bits.
	var img := isl.get_heightmap_image()
	check(isl.regenerate(), "regenerated")
	check(img.get_data() == isl.get_heightmap_image().get_data(), "bit-identical with the same road")


func test_a_road_on_a_user_layer_carries_it_in_map_1_under_the_paint() -> void:
	# A cobbled road: the road paints paint layer 6 (gravel, which a TerrainLayer can restyle).
	var pts := [Vector2(-250, -60), Vector2(-50, -40), Vector2(150, -80)]
	var sand := _isl()
	sand.add_child(_path(IslandPath.KIND_ROAD, pts, {"width": 10.0, "splat_layer": 0}))
	check(sand.regenerate(), "island with a sand road")
	var isl := _isl()
	var road := _path(IslandPath.KIND_ROAD, pts, {"width": 10.0, "splat_layer": 6})
	isl.add_child(road)
	check(isl.regenerate(), "island with a gravel road")
	check(sand.get_heightmap_image().get_data() == isl.get_heightmap_image().get_data(), "the layer does not change the heights")
	var map1 := isl.get_splat_map_image(1)
	check(map1 != null and map1.get_width() == 513, "map 1 has the island's size with a road on it")
	var n := 513
	var on := 0
	var low := 0
	var low_map := 0
	for c in _walk(pts, 4.0):
		var p: Vector2 = c[0]
		if _near_water(isl, p, 8.0) or isl.get_height_at(p.x, p.y) <= 0.5:
			continue
		on += 1
		var w := isl.get_splat_weights_at(p.x, p.y)
		if w[6] < 0.8:
			low += 1
		var px := clampi(roundi((p.x + 512.0) / 1024.0 * (n - 1)), 0, n - 1)
		var pz := clampi(roundi((p.y + 512.0) / 1024.0 * (n - 1)), 0, n - 1)
		if map1.get_pixel(px, pz).b < 0.8:
			low_map += 1
	check(on > 30, "most of the road on dry land (%d samples)" % on)
	check_eq(low, 0, "gravel weighs at least 0.8 on the road")
	check_eq(low_map, 0, "splat map 1's blue channel (layer 6) carries it to the shader")
	var off := isl.get_splat_weights_at(-50, 150)
	check(off[6] == 0.0 and is_equal_approx(off[0] + off[1] + off[2] + off[3], 1.0), "off the road the generated layers as before: %s" % off)
	var sw := sand.get_splat_weights_at(-50, 150)
	check(sw == off, "and the same as with the sand road")
	# Paint stays on top: grass painted over the road shows grass there.
	var brush := TerrainBrush.new()
	isl.add_child(brush)
	brush.layer = 1
	brush.radius = 6.0
	brush.strength = 1.0
	brush.hardness = 1.0
	brush.paint_at(Vector3(-50, 0, -40))
	var painted := isl.get_splat_weights_at(-50, -40)
	check(painted[1] > 0.9 and painted[6] < 0.1, "grass painted over the road: %s" % painted)
	# The user's own layer index out of range is an error that keeps the terrain.
	var img := isl.get_heightmap_image()
	expect_error("splat_layer")
	road.splat_layer = 9
	await _wait_idle(isl)
	check(not isl.regenerate(), "splat_layer 9 is refused")
	check(img.get_data() == isl.get_heightmap_image().get_data(), "the previous terrain stays")
	check(road.get_warnings().size() > 0, "the path shows a configuration warning")


func test_moving_a_curve_point_moves_the_road() -> void:
	var isl := _isl()
	var road := _path(IslandPath.KIND_ROAD, [Vector2(-200, -100), Vector2(0, -100), Vector2(150, -60)], {"width": 10.0})
	isl.add_child(road)
	check(isl.regenerate(), "generated with a road")
	var a := isl.get_height_at(-100, -100)
	var plain := _isl()
	plain.regenerate()
	# Move the middle point 80 m north: the road follows and the old corridor returns to the land.
	road.curve.set_point_position(1, Vector3(0, 0, -20))
	await _wait_idle(isl)
	var img := isl.get_heightmap_image()
	check(isl.regenerate(), "regenerated")
	check(img.get_data() == isl.get_heightmap_image().get_data(), "the curve edit had already regenerated the island in the background")
	var moved := 0
	for x in [-10.0, 0.0, 10.0]:
		if absf(isl.get_height_at(x, -100) - plain.get_height_at(x, -100)) < 0.3:
			moved += 1
	check_eq(moved, 3, "the old corridor at the moved point is plain land again")
	# The new corridor is level across wherever it is on dry land.
	var checked := 0
	var worst := 0.0
	for c in _walk([Vector2(-200, -100), Vector2(0, -20), Vector2(150, -60)], 4.0):
		var p: Vector2 = c[0]
		if _near_water(isl, p, 8.0) or p.distance_to(Vector2(0, -20)) < 8.0:
			continue
		var nrm := Vector2(-c[1].y, c[1].x) * 3.0
		var hc := isl.get_height_at(p.x, p.y)
		for q in [p + nrm, p - nrm]:
			worst = maxf(worst, absf(isl.get_height_at(q.x, q.y) - hc))
		checked += 1
	check(checked > 20, "most of the moved road is on dry land (%d samples)" % checked)
	check(worst <= 0.2, "the moved road is level across within 0.2 m (worst %.3f m)" % worst)
	check(absf(a - isl.get_height_at(-100, -100)) < 50.0, "sanity")


func test_river_path_holds_water_on_a_falling_bed_to_the_sea() -> void:
	var plain := _isl()
	plain.regenerate()
	var zc := 0.0
	for k in range(0, 500):
		if plain.get_height_at(40.0, -float(k)) > 0.0:
			zc = -float(k)
	var isl := _isl()
	# Drawn from the sea end: the island finds the upper end by itself.
	isl.add_child(_path(IslandPath.KIND_RIVER, [Vector2(40, zc - 30.0), Vector2(40, -60)], {"width": 8.0, "depth": 3.0, "shoulder": 8.0}))
	check(isl.regenerate(), "generated with a river path")
	var total := 0
	var wet := 0
	var prev := INF
	var rises := 0
	var ended := false
	var z := -60.0
	while z > zc - 30.0:
		var h := isl.get_height_at(40.0, z)
		var lvl := isl.get_water_level_at(40.0, z)
		if h < 0.0 and lvl == 0.0:
			ended = true
			break
		total += 1
		if not is_nan(lvl):
			wet += 1
		if h > prev + 0.001:
			rises += 1
		prev = h
		z -= 2.0
	check(ended, "the river reaches the sea")
	check(total > 50, "a long river (%d samples)" % total)
	check(wet >= 0.9 * total, "%d of %d centreline samples are river water (≥ 90 %%)" % [wet, total])
	check_eq(rises, 0, "the bed never rises downstream")


func test_canal_splits_the_island_and_bad_paths_are_errors() -> void:
	var isl := _isl()
	var canal := _path(IslandPath.KIND_CANAL, [Vector2(-520, 0), Vector2(520, 0)], {"width": 16.0, "level": -3.0})
	isl.add_child(canal)
	check(isl.regenerate(), "generated with a canal")
	for x in [-300.0, -100.0, 0.0, 100.0, 300.0]:
		check_eq(isl.get_water_level_at(x, 0.0), 0.0, "sea in the canal at x %d" % int(x))
		check(isl.get_height_at(x, 0.0) < -2.0, "the canal's floor is below sea level at x %d" % int(x))
	check(isl.get_height_at(0, 60) > 0.0 and isl.get_height_at(0, -60) > 0.0, "land on both sides")
	var h := isl.get_height_at(0, 60)
	expect_error("paths")
	canal.width = 0.0
	await _wait_idle(isl)
	check(not isl.regenerate(), "a zero width is refused")
	check_eq(isl.get_height_at(0, 60), h, "the previous terrain stays")
	check(canal.get_warnings().size() > 0, "the path shows a configuration warning")
	var lone := IslandPath.new()
	add_child(lone)
	check(lone.get_warnings().size() >= 2, "outside an island and without a curve: warnings")
	lone.queue_free()
