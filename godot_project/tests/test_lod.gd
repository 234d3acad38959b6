extends IslandTestCase
## ProceduralIsland quadtree LOD: coverage, camera-driven selection, node pool reuse, seams,
## full-resolution heights and colliders.

var timeout_s := 240.0

const WORLD := 1024.0

var _cam: Camera3D


func before_each() -> void:
	_cam = Camera3D.new()
	add_child(_cam)
	_cam.make_current()


## 257² map in 32-cell chunks (8×8 full-resolution chunks), 3 LOD levels: 2×2 roots of 128 cells.
func _lod_island(props: Dictionary = {}) -> ProceduralIsland:
	var all := {"world_size": WORLD, "lod_enabled": true, "lod_levels": 3, "lod_distance": 300.0}
	all.merge(props, true)
	return _island(257, 32, all)


## Move the camera and wait until the LOD selection for it is fully shown.
func _fly_to(isl: ProceduralIsland, pos: Vector3) -> void:
	_cam.global_position = pos
	for i in 120:
		await get_tree().process_frame
		var s := isl.get_lod_stats()
		if i >= 1 and not s.pending and s.leaves > 0:
			return
	fail("LOD selection did not settle at %s" % pos)


func _area(chunks: Array) -> float:
	var a := 0.0
	for c in chunks:
		a += (c.rect as Rect2).get_area()
	return a


func test_lod_chunks_cover_the_island_and_follow_the_camera() -> void:
	var isl := _lod_island()
	await _fly_to(isl, Vector3(-450.0, 60.0, -450.0))
	var chunks := isl.get_lod_chunks()
	check(chunks.size() > 4, "more than the 4 roots near the camera (%d)" % chunks.size())
	check_near(_area(chunks), WORLD * WORLD, 1.0, "LOD chunks cover the island once")
	for c in chunks:
		var mi := c.node as MeshInstance3D
		check(mi.visible, "LOD chunk is visible")
		var v := (mi.mesh as ArrayMesh).surface_get_arrays(0)[Mesh.ARRAY_VERTEX] as PackedVector3Array
		check_eq(v.size(), 33 * 33, "every LOD chunk has 33² vertices (level %d)" % c.level)
		# Every vertex inside its rect.
		var r := (c.rect as Rect2).grow(0.01)
		check(r.has_point(Vector2(v[0].x, v[0].z)) and r.has_point(Vector2(v[v.size() - 1].x, v[v.size() - 1].z)), "vertices inside the chunk rect")
	# Full-resolution chunk meshes are hidden while LOD is on.
	var hidden := 0
	for mi in _mesh_instances(isl):
		if String(mi.name).begins_with("Chunk_"):
			check(not mi.visible, "full-resolution chunk %s is hidden" % mi.name)
			# Only the collider: a full-resolution surface per chunk would double the memory
			# (3.9 GB at 8193²).
			check_eq(mi.mesh.get_surface_count(), 0, "full-resolution chunk %s holds no surface with LOD on" % mi.name)
			hidden += 1
	check_eq(hidden, 64, "the 8×8 full-resolution chunks stay (for their colliders)")
	var near_levels := _level_at(chunks, Vector2(-450.0, -450.0))
	var far_levels := _level_at(chunks, Vector2(450.0, 450.0))
	check_eq(near_levels, 2, "finest level under the camera")
	check_eq(far_levels, 0, "coarsest level far away")
	var counts_a: PackedInt32Array = isl.get_lod_stats().level_counts
	await _fly_to(isl, Vector3(450.0, 60.0, 450.0))
	chunks = isl.get_lod_chunks()
	check_near(_area(chunks), WORLD * WORLD, 1.0, "still covered after moving")
	check_eq(_level_at(chunks, Vector2(450.0, 450.0)), 2, "finest level follows the camera")
	check_eq(_level_at(chunks, Vector2(-450.0, -450.0)), 0, "old position is coarse now")
	var counts_b: PackedInt32Array = isl.get_lod_stats().level_counts
	check_eq(counts_b.size(), 3, "3 levels in use")
	# High above the island: only the 4 roots.
	await _fly_to(isl, Vector3(0.0, 5000.0, 0.0))
	check_eq(isl.get_lod_chunks().size(), 4, "far camera: the 2×2 level-0 roots only")
	check(counts_a.size() == 3, "level counts reported")


func _level_at(chunks: Array, p: Vector2) -> int:
	for c in chunks:
		var r := c.rect as Rect2
		if p.x >= r.position.x and p.x < r.end.x and p.y >= r.position.y and p.y < r.end.y:
			return c.level
	return -1


func test_lod_nodes_are_pooled_not_recreated() -> void:
	var isl := _lod_island()
	var path := [Vector3(-450, 40, -450), Vector3(0, 40, 0), Vector3(450, 40, 450), Vector3(450, 40, -450), Vector3(-300, 40, 200)]
	for p in path:
		await _fly_to(isl, p)
	for i in range(path.size() - 1, -1, -1):
		await _fly_to(isl, path[i])
	var ids := {}
	for mi in _mesh_instances(isl):
		ids[mi.get_instance_id()] = true
	var pool: int = isl.get_lod_stats().pool_size
	var built: int = isl.get_lod_stats().meshes_built
	check(pool > 4, "pool holds the LOD chunk nodes (%d)" % pool)
	# Same flight again: no node is created or freed, only meshes are refilled.
	for p in path:
		await _fly_to(isl, p)
	for i in range(path.size() - 1, -1, -1):
		await _fly_to(isl, path[i])
	var ids2 := {}
	for mi in _mesh_instances(isl):
		ids2[mi.get_instance_id()] = true
	check_eq(isl.get_lod_stats().pool_size, pool, "pool size unchanged")
	check_eq(ids2.keys().size(), ids.keys().size(), "same number of MeshInstance3D children")
	var same := true
	for id in ids2:
		if not ids.has(id):
			same = false
	check(same, "the very same MeshInstance3D nodes are reused")
	check(isl.get_lod_stats().meshes_built > built, "meshes were rebuilt into pooled nodes while flying")
	var visible := 0
	for c in isl.get_lod_chunks():
		if (c.node as MeshInstance3D).visible:
			visible += 1
	var shown := 0
	for mi in _mesh_instances(isl):
		if mi.visible:
			shown += 1
	check_eq(shown, visible, "only the selected LOD chunks are visible")
	check_near(_area(isl.get_lod_chunks()), WORLD * WORLD, 1.0, "coverage after the round trips")


## Edge polyline of a chunk mesh: the vertices on `x == at` (axis 0) or `z == at` (axis 2),
## sorted along the other axis, as Vector2(along, height).
func _edge(mi: MeshInstance3D, axis: int, at: float) -> PackedVector2Array:
	var v := (mi.mesh as ArrayMesh).surface_get_arrays(0)[Mesh.ARRAY_VERTEX] as PackedVector3Array
	var pts: Array[Vector2] = []
	for p in v:
		var c := p.x if axis == 0 else p.z
		if absf(c - at) < 1e-3:
			pts.append(Vector2(p.z if axis == 0 else p.x, p.y))
	pts.sort_custom(func(a, b): return a.x < b.x)
	return PackedVector2Array(pts)


func _eval(edge: PackedVector2Array, t: float) -> float:
	for i in edge.size() - 1:
		var a := edge[i]
		var b := edge[i + 1]
		if t >= a.x - 1e-4 and t <= b.x + 1e-4:
			var f := clampf((t - a.x) / (b.x - a.x), 0.0, 1.0)
			return a.y + f * (b.y - a.y)
	return NAN


func test_lod_neighbour_edges_have_no_cracks() -> void:
	var isl := _lod_island({"seed": 7})
	var pairs := 0
	var mixed := 0
	var worst := 0.0
	for pos in [Vector3(-450, 30, -450), Vector3(100, 30, -20), Vector3(300, 80, 400)]:
		await _fly_to(isl, pos)
		var g := _edge_gaps(isl.get_lod_chunks(), 128)
		pairs += g.pairs
		mixed += g.mixed
		worst = maxf(worst, g.worst)
	check(pairs > 20, "neighbour pairs checked (%d)" % pairs)
	check(mixed > 4, "pairs of different levels checked (%d)" % mixed)
	check(worst <= 1e-3, "largest height gap along shared edges %s m" % worst)


func test_lod_keeps_full_resolution_heights_and_colliders() -> void:
	var isl := _lod_island({"seed": 3})
	await _fly_to(isl, Vector3(-450, 40, -450))
	var img := isl.get_heightmap_image()
	var cell := WORLD / 256.0
	# get_height_at is on the full-resolution surface, also where the mesh is coarse.
	for s: Vector2i in [Vector2i(200, 200), Vector2i(201, 37), Vector2i(129, 255)]:
		var x := s.x * cell - WORLD / 2.0
		var z := s.y * cell - WORLD / 2.0
		check_near(isl.get_height_at(x, z), img.get_pixel(s.x, s.y).r, 1e-3, "height at sample %s" % s)
	var enabled := 0
	for mi in _mesh_instances(isl):
		if not String(mi.name).begins_with("Chunk_"):
			continue
		var sn := _shape_node(mi)
		if not check(sn != null, "full-resolution chunk %s keeps its collider" % mi.name):
			continue
		check_eq((sn.shape as HeightMapShape3D).map_width, 33, "collider stays 33 samples wide")
		if not sn.disabled:
			enabled += 1
	check_eq(enabled, 64, "collision_mode ALL: every collider enabled")
	# A ray straight down onto a far (coarse) area hits the full-resolution surface.
	var space := isl.get_world_3d().direct_space_state
	var hx := 201 * cell - WORLD / 2.0 + 1.3
	var hz := 200 * cell - WORLD / 2.0 + 2.1
	await get_tree().physics_frame
	await get_tree().physics_frame
	var hit := space.intersect_ray(PhysicsRayQueryParameters3D.create(Vector3(hx, 1000, hz), Vector3(hx, -1000, hz)))
	if check(not hit.is_empty(), "ray hits the far collider"):
		check_near(hit.position.y, isl.get_height_at(hx, hz), 0.02, "collider height equals get_height_at")
	# NEAR: only chunks under finest-level LOD chunks collide.
	isl.collision_mode = 0
	await _fly_to(isl, Vector3(-450, 40, -451))
	await get_tree().process_frame
	var near_on := 0
	var far_on := 0
	for mi in _mesh_instances(isl):
		if not String(mi.name).begins_with("Chunk_"):
			continue
		var parts := String(mi.name).split("_")
		var on: bool = not _shape_node(mi).disabled
		if int(parts[1]) == 0 and int(parts[2]) == 0:
			check(on, "collider under the camera stays enabled")
		if on:
			near_on += 1
		if int(parts[1]) == 7 and int(parts[2]) == 7 and on:
			far_on += 1
	check(near_on > 0 and near_on < 64, "NEAR enables only some colliders (%d)" % near_on)
	check_eq(far_on, 0, "far collider disabled with NEAR")
	# LOD off again: full-resolution chunks visible, LOD nodes gone, colliders back.
	isl.lod_enabled = false
	# The chunks get their surfaces within the frame budget, then the LOD nodes go.
	check(await wait_until(func() -> bool: return isl.get_lod_chunks().is_empty(), 60), "LOD switched off")
	await get_tree().process_frame
	var lod_nodes := 0
	for mi in _mesh_instances(isl):
		if String(mi.name).begins_with("Chunk_"):
			check(mi.visible and not _shape_node(mi).disabled, "chunk %s visible with collider" % mi.name)
			_check_full_surface(isl, mi)
		elif not mi.is_queued_for_deletion():
			lod_nodes += 1
	check_eq(lod_nodes, 0, "LOD nodes removed when LOD is switched off")
	check_eq(isl.get_lod_chunks().size(), 0, "no LOD chunks when off")


## A full-resolution chunk drawn again after LOD: 33² vertices on the island's heights.
func _check_full_surface(isl: ProceduralIsland, mi: MeshInstance3D) -> void:
	if not check_eq(mi.mesh.get_surface_count(), 1, "chunk %s has its surface back" % mi.name):
		return
	var v := (mi.mesh as ArrayMesh).surface_get_arrays(0)[Mesh.ARRAY_VERTEX] as PackedVector3Array
	check_eq(v.size(), 33 * 33, "chunk %s at full resolution" % mi.name)
	var worst := 0.0
	for k in range(0, v.size(), 97):
		var p := mi.position + v[k]
		worst = maxf(worst, absf(p.y - isl.get_height_at(p.x, p.z)))
	check(worst < 1e-3, "chunk %s vertices on the island's heights (worst %f m)" % [mi.name, worst])


## Every pair of visible LOD chunks sharing an edge: the largest height gap along it (INF if an
## edge is missing), sampled at `steps` + 1 even points plus every vertex of both sides; also how
## many pairs there are and how many join different levels.
func _edge_gaps(chunks: Array, steps: int) -> Dictionary:
	var worst := 0.0
	var pairs := 0
	var mixed := 0
	for a in chunks:
		for b in chunks:
			var ra := a.rect as Rect2
			var rb := b.rect as Rect2
			var east := is_equal_approx(ra.end.x, rb.position.x) and maxf(ra.position.y, rb.position.y) < minf(ra.end.y, rb.end.y)
			var south := is_equal_approx(ra.end.y, rb.position.y) and maxf(ra.position.x, rb.position.x) < minf(ra.end.x, rb.end.x)
			if not east and not south:
				continue
			pairs += 1
			if a.level != b.level:
				mixed += 1
			var axis := 0 if east else 2
			var at := ra.end.x if east else ra.end.y
			var ea := _edge(a.node, axis, at)
			var eb := _edge(b.node, axis, at)
			var lo := maxf(ra.position.y, rb.position.y) if east else maxf(ra.position.x, rb.position.x)
			var hi := minf(ra.end.y, rb.end.y) if east else minf(ra.end.x, rb.end.x)
			var ts: Array[float] = []
			for s in steps + 1:
				ts.append(lerpf(lo, hi, float(s) / steps))
			for e in [ea, eb]:
				for p in e:
					if p.x >= lo and p.x <= hi:
						ts.append(p.x)
			for t in ts:
				var d := absf(_eval(ea, t) - _eval(eb, t))
				worst = maxf(worst, INF if is_nan(d) else d)
	return {"worst": worst, "pairs": pairs, "mixed": mixed}


## With a tiny per-frame budget every new selection is built one mesh per frame: on every frame
## of those transitions the visible chunks still cover the island exactly, without cracks, and
## the pool is pre-created over the frames after the first selection. No frame does more than one
## unit of work over the budget: at most one mesh build and at most one new pooled node.
func test_lod_deferred_budget_keeps_the_visible_set_closed() -> void:
	var isl := _lod_island({"seed": 11, "lod_budget_ms": 0.01})
	await _fly_to(isl, Vector3(-450, 30, -450))
	var first: int = isl.get_lod_stats().leaves
	var deferred := 0
	var frames := 0
	var worst := 0.0
	var area_ok := true
	var most_built := 0
	var most_nodes := 0
	var prev := isl.get_lod_stats()
	for pos in [Vector3(300, 30, 300), Vector3(-100, 60, 350), Vector3(450, 20, -450)]:
		_cam.global_position = pos
		for i in 200:
			await get_tree().process_frame
			var s := isl.get_lod_stats()
			var chunks := isl.get_lod_chunks()
			frames += 1
			most_built = maxi(most_built, s.meshes_built - prev.meshes_built)
			most_nodes = maxi(most_nodes, s.pool_size - prev.pool_size)
			prev = s
			if s.pending:
				deferred += 1
			area_ok = area_ok and absf(_area(chunks) - WORLD * WORLD) < 1.0
			var visible := 0
			for mi in _mesh_instances(isl):
				if mi.visible:
					visible += 1
			area_ok = area_ok and visible == chunks.size()
			worst = maxf(worst, _edge_gaps(chunks, 32).worst)
			if i >= 1 and not s.pending:
				break
	check(deferred >= 3, "transitions were spread over frames (%d pending frames of %d)" % [deferred, frames])
	check(area_ok, "every frame shows exactly one full cover of the island")
	check(worst <= 1e-3, "largest gap on any frame %s m" % worst)
	check(most_built == 1, "at most one mesh built per frame over the budget (most %d)" % most_built)
	check(most_nodes == 1, "at most one pooled node created per frame over the budget (most %d)" % most_nodes)
	check(isl.get_lod_stats().pool_size >= 2 * first + 8, "pool pre-created over the frames: %d nodes for %d leaves" % [isl.get_lod_stats().pool_size, first])


## An invalid lod_levels reports the error once and falls back to the full-resolution chunks
## (visible, every collider on, no LOD node drawn); a valid value turns LOD on again.
func test_invalid_lod_levels_fall_back_to_full_resolution() -> void:
	var isl := _lod_island({"seed": 5})
	await _fly_to(isl, Vector3(-450, 40, -450))
	check(isl.get_lod_stats().enabled, "LOD on")
	expect_error("invalid parameter `lod_levels`")
	isl.lod_levels = 9
	await wait_frames(3)
	check(not isl.get_lod_stats().enabled, "LOD off after lod_levels = 9")
	check_eq(isl.get_lod_chunks().size(), 0, "no LOD chunks")
	var chunks := 0
	for mi in _mesh_instances(isl):
		if String(mi.name).begins_with("Chunk_"):
			chunks += 1
			check(mi.visible, "chunk %s visible again" % mi.name)
			check(not _shape_node(mi).disabled, "chunk %s collider on" % mi.name)
			_check_full_surface(isl, mi)
		elif not mi.is_queued_for_deletion():
			check(not mi.visible, "LOD node %s not drawn" % mi.name)
	check_eq(chunks, 64, "the 8×8 full-resolution chunks")
	isl.lod_levels = 3
	await _fly_to(isl, Vector3(-450, 40, -450))
	check(isl.get_lod_stats().enabled, "LOD on again with lod_levels = 3")
	check(isl.get_lod_chunks().size() > 4, "LOD chunks again")


## Sculpting with LOD on: the shown LOD mesh over a dab follows it at once (the full-resolution
## chunks are hidden under LOD, so they alone would show nothing until the stroke ends).
func test_lod_meshes_follow_a_sculpt_dab() -> void:
	var isl := _lod_island()
	await _fly_to(isl, Vector3(-300.0, 80.0, -300.0))
	var brush := TerrainBrush.new()
	isl.add_child(brush)
	var at := Vector3(-380.0, 0.0, -380.0)
	var h0 := isl.get_height_at(at.x, at.z)
	brush.mode = TerrainBrush.MODE_SCULPT_RAISE
	brush.radius = 24.0
	brush.hardness = 0.8
	brush.sculpt_height = 6.0
	check(brush.begin_stroke(), "stroke")
	check(brush.paint_at(at) > 0, "dab")
	check_near(isl.get_height_at(at.x, at.z) - h0, 6.0, 0.01, "the shown heights are raised")
	# The LOD leaf under the dab: its vertex nearest the dab is raised by the dab too.
	var best := INF
	var top := -INF
	for c in isl.get_lod_chunks():
		if not (c.rect as Rect2).has_point(Vector2(at.x, at.z)):
			continue
		var mi: MeshInstance3D = c.node
		for v in mi.mesh.surface_get_arrays(0)[Mesh.ARRAY_VERTEX]:
			var d := Vector2(v.x - at.x, v.z - at.z).length()
			if d < best:
				best = d
				top = v.y
	check(best < 12.0, "a LOD vertex near the dab (%f m away)" % best)
	check(top > h0 + 4.0, "the LOD mesh over the dab is raised at once (%f m, was %f m)" % [top, h0])
	brush.end_stroke()
	if isl.is_generating():
		await wait_signal(isl, "generation_finished", 120.0)
	# LOD off after sculpting: the chunk under the dab is drawn at full resolution with the
	# sculpted heights (its surface is built from the current island, not the one LOD started on).
	await _fly_to(isl, Vector3(-300.0, 80.0, -301.0))
	isl.lod_enabled = false
	check(await wait_until(func() -> bool: return isl.get_lod_chunks().is_empty(), 60), "LOD switched off")
	var raised := -INF
	for mi in _mesh_instances(isl):
		if not String(mi.name).begins_with("Chunk_"):
			continue
		_check_full_surface(isl, mi)
		if mi.mesh.get_surface_count() == 0:
			continue
		for v in mi.mesh.surface_get_arrays(0)[Mesh.ARRAY_VERTEX]:
			if Vector2(v.x - at.x, v.z - at.z).length() < 3.0:
				raised = maxf(raised, v.y)
	check(raised > h0 + 4.0, "the full-resolution chunk over the dab is raised (%f m, was %f m)" % [raised, h0])


## A large island without LOD gets a configuration warning recommending it (no error, no
## generation needed); with LOD on, or at a small resolution, none.
func test_large_island_without_lod_is_advised_to_use_it() -> void:
	var isl := ProceduralIsland.new()
	isl.generate_on_ready = false
	isl.resolution = 4097
	add_child(isl)
	var w: PackedStringArray = isl.get_warnings()
	if check_eq(w.size(), 1, "one warning at 4097² without LOD"):
		check(w[0].contains("lod_enabled") and w[0].contains("17 M vertices"), w[0])
	isl.lod_enabled = true
	check_eq(isl.get_warnings().size(), 0, "none with LOD on")
	isl.lod_enabled = false
	isl.resolution = 2049
	check_eq(isl.get_warnings().size(), 0, "none at 2049²")
	isl.free()


## LOD switched on over an island drawn without it, with a budget that spreads the first
## selection over many frames: in every frame the island is drawn, by its full-resolution chunks
## until the whole first selection is shown, then by the LOD chunks alone.
func test_switching_lod_on_never_shows_an_empty_frame() -> void:
	var isl := _lod_island({"seed": 13, "lod_enabled": false, "lod_budget_ms": 0.01})
	_cam.global_position = Vector3(-450, 30, -450)
	await get_tree().process_frame
	isl.lod_enabled = true
	var frames := 0
	var empty := 0
	var both := 0
	for i in 400:
		await get_tree().process_frame
		frames += 1
		var base := 0
		var lod := 0
		for mi in _mesh_instances(isl):
			if not mi.visible or mi.is_queued_for_deletion() or mi.mesh == null or mi.mesh.get_surface_count() == 0:
				continue
			if String(mi.name).begins_with("Chunk_"):
				base += 1
			elif String(mi.name).begins_with("Lod_"):
				lod += 1
		if base == 0 and lod == 0:
			empty += 1
		if base > 0 and lod > 0:
			both += 1
		var s := isl.get_lod_stats()
		if s.leaves > 0 and not s.pending:
			break
	check(frames > 3, "the first selection took several frames (%d)" % frames)
	check_eq(empty, 0, "frames with nothing drawn")
	check_eq(both, 0, "frames drawing the full-resolution chunks and LOD chunks together")
	check(isl.get_lod_chunks().size() > 4, "LOD chunks shown at the end")
