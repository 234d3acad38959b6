extends IslandTestCase
## ProceduralIsland: scene output (chunks, colliders), determinism, validation, queries, pooling.

var timeout_s := 240.0


func test_chunk_count_and_collider_layout() -> void:
	_check_chunks_and_colliders(_island(129, 32, {"world_size": 512.0}))


## The GPU path hands its heights over before the island is finished (the colliders are built
## from them while another thread runs the GPU's last stages): the colliders and meshes are the
## finished island's heights exactly, as on the CPU path.
func test_gpu_island_colliders_are_its_heights() -> void:
	var isl := _island(129, 32, {"world_size": 512.0, "backend": ProceduralIsland.BACKEND_GPU, "seed": 5})
	var st := isl.get_last_stats()
	if st.backend != "gpu":
		print("    no usable GPU adapter: %s" % st.get("backend_reason", ""))
		check(String(st.get("backend_reason", "")).begins_with("gpu requested; the GPU failed"), "the fallback says why")
	_check_chunks_and_colliders(isl)
	var worst := _chunks_off_the_heightmap(isl, 32).x
	check(worst <= 1e-6, "mesh vertex heights are the heightfield's (max error %f m)" % worst)
	check_eq(st.get("stage_ms", {}).size(), 15 if st.backend == "gpu" else 13, "every stage timed")


func _check_chunks_and_colliders(isl: ProceduralIsland) -> void:
	var chunks := _mesh_instances(isl)
	check_eq(chunks.size(), 16, "129² with chunk_size 32 gives 4×4 chunks")
	check_eq(isl.get_child_count(), 0, "generated chunks are internal children")
	check_eq(isl.get_child_count(true), 16, "one internal child per chunk")
	var img := isl.get_heightmap_image()
	check_eq(img.get_format(), Image.FORMAT_RF, "heightmap format")
	check_eq(img.get_size(), Vector2i(129, 129), "heightmap size")
	var cell := 512.0 / 128.0
	var checked := 0
	var max_err := 0.0
	for chunk in chunks:
		check(chunk.owner == null, "chunk has no owner (not saved into the scene)")
		var mesh := chunk.mesh as ArrayMesh
		check(mesh != null and mesh.get_surface_count() == 1, "chunk has one surface")
		var arrays := mesh.surface_get_arrays(0)
		check_eq((arrays[Mesh.ARRAY_VERTEX] as PackedVector3Array).size(), 33 * 33, "smooth chunk has 33² vertices")
		check_eq((arrays[Mesh.ARRAY_COLOR] as PackedColorArray).size(), 33 * 33, "splat vertex colours")
		check_eq((arrays[Mesh.ARRAY_TEX_UV] as PackedVector2Array).size(), 33 * 33, "uvs")
		var sn := _shape_node(chunk)
		if not check(sn != null, "chunk %s has a collider" % chunk.name):
			continue
		var shape := sn.shape as HeightMapShape3D
		check(shape != null, "collider is a HeightMapShape3D")
		check_eq(shape.map_width, 33, "map_width")
		check_eq(shape.map_depth, 33, "map_depth")
		check(sn.scale.is_equal_approx(Vector3(cell, 1.0, cell)), "collider scale is (cell, 1, cell): %s" % sn.scale)
		check(sn.rotation.is_equal_approx(Vector3.ZERO), "collider is not rotated: %s" % sn.rotation)
		# Chunk (cx, cz) from its name; its centre is the collider position.
		var parts := String(chunk.name).split("_")
		var cx := int(parts[1])
		var cz := int(parts[2])
		var centre := Vector3((cx * 32 + 16) * cell - 256.0, 0.0, (cz * 32 + 16) * cell - 256.0)
		check(sn.position.is_equal_approx(centre), "collider position %s is the chunk centre %s" % [sn.position, centre])
		var data := shape.map_data
		# map_data row j, column i is sample (i, j) of the chunk.
		for j in 33:
			for i in 33:
				var e := absf(data[j * 33 + i] - img.get_pixel(cx * 32 + i, cz * 32 + j).r)
				max_err = maxf(max_err, e)
				checked += 1
	check_eq(checked, 16 * 33 * 33, "every collider sample compared")
	check_eq(max_err, 0.0, "collider heights equal the heightfield exactly")


## Height on the other cell diagonal, (ix+1, iz)-(ix, iz+1), as a probe of the engine's split.
func _anti_diagonal_height(img: Image, spacing: float, half: float, x: float, z: float) -> float:
	var gx := (x + half) / spacing
	var gz := (z + half) / spacing
	var ix := mini(int(gx), img.get_width() - 2)
	var iz := mini(int(gz), img.get_height() - 2)
	var fx := gx - ix
	var fz := gz - iz
	var h00 := img.get_pixel(ix, iz).r
	var h10 := img.get_pixel(ix + 1, iz).r
	var h01 := img.get_pixel(ix, iz + 1).r
	var h11 := img.get_pixel(ix + 1, iz + 1).r
	if fx + fz <= 1.0:
		return h00 + fx * (h10 - h00) + fz * (h01 - h00)
	return h11 + (1.0 - fx) * (h01 - h11) + (1.0 - fz) * (h10 - h11)


func test_raycast_on_collider_matches_height_at() -> void:
	# 8 m cells make any disagreement between the collider's and height_at's triangles visible.
	var isl := _island(65, 16, {"world_size": 512.0, "max_height": 160.0})
	await get_tree().physics_frame
	await get_tree().physics_frame
	var space := isl.get_world_3d().direct_space_state
	var img := isl.get_heightmap_image()
	var rng := RandomNumberGenerator.new()
	rng.seed = 1234
	var max_err := 0.0
	var max_err_anti := 0.0
	var misses := 0
	var n := 400
	for k in n:
		var x := rng.randf_range(-250.0, 250.0)
		var z := rng.randf_range(-250.0, 250.0)
		var q := PhysicsRayQueryParameters3D.create(Vector3(x, 1000.0, z), Vector3(x, -1000.0, z))
		var hit := space.intersect_ray(q)
		if hit.is_empty():
			misses += 1
			continue
		max_err = maxf(max_err, absf(hit.position.y - isl.get_height_at(x, z)))
		max_err_anti = maxf(max_err_anti, absf(hit.position.y - _anti_diagonal_height(img, 8.0, 256.0, x, z)))
	print("    physics engine setting: %s, max |ray - height_at| over %d points: %.5f m, vs other diagonal: %.5f m" % [
		ProjectSettings.get_setting("physics/3d/physics_engine"), n, max_err, max_err_anti])
	check_eq(misses, 0, "every ray hits the terrain")
	check(max_err <= 0.01, "ray hits within 1 cm of get_height_at (max error %.4f m)" % max_err)


func test_same_seed_same_image_other_seed_differs() -> void:
	var a := _island(129, 32, {"seed": 77})
	var b := _island(129, 32, {"seed": 77})
	var c := _island(129, 32, {"seed": 78})
	check(_image_equal(a.get_heightmap_image(), b.get_heightmap_image()), "same seed: identical heightmap")
	check(_image_equal(a.get_splat_image(), b.get_splat_image()), "same seed: identical splat")
	check(not _image_equal(a.get_heightmap_image(), c.get_heightmap_image()), "other seed: different heightmap")
	# Regenerating in place with the first seed gives the first image back.
	c.seed = 77
	check(c.regenerate(), "regenerate with seed 77")
	check(_image_equal(a.get_heightmap_image(), c.get_heightmap_image()), "regenerate is deterministic")


func test_every_algorithm_generates() -> void:
	var isl := _island(65, 32)
	var images := []
	for alg in [ProceduralIsland.ALGORITHM_FBM, ProceduralIsland.ALGORITHM_VALUE_NOISE,
			ProceduralIsland.ALGORITHM_DIAMOND_SQUARE, ProceduralIsland.ALGORITHM_GAUSSIAN_ISLANDS]:
		isl.algorithm = alg
		check(isl.regenerate(), "algorithm %d generates" % alg)
		var img := isl.get_heightmap_image()
		for other in images:
			check(not _image_equal(other, img), "algorithm %d differs from the previous ones" % alg)
		images.append(img)


func test_invalid_values_fail_and_keep_the_island() -> void:
	var isl := _island(65, 32)
	var before := isl.get_heightmap_image()
	var stats_before := isl.get_last_stats()
	var failed: Array = []
	isl.generation_failed.connect(func(msg: String) -> void: failed.append(msg))
	var cases := [
		["resolution", 0, "resolution"],
		["resolution", 100000, "resolution"],
		["chunk_size", 7, "chunk_size"],
		["max_height", NAN, "max_height"],
		["algorithm", 9, "algorithm"],
		["fbm_octaves", -1, "fbm_octaves"],
		["coast_sea_depth", -5.0, "sea_depth"],
		["world_size", -500.0, "world_size"],
		["world_size", 0.0, "world_size"],
	]
	expect_error("more than 16384")  # declared first: the runner matches patterns in order
	for c in cases:
		expect_error("invalid parameter `%s" % c[2] if c[2] != "sea_depth" else "invalid parameter `coast.sea_depth`")
	for c in cases:
		var old: Variant = isl.get(c[0])
		isl.set(c[0], c[1])
		check(not isl.regenerate(), "%s = %s is rejected" % [c[0], c[1]])
		check_eq(failed.size(), 1, "generation_failed emitted for %s" % c[0])
		if failed.size() > 0:
			check(String(failed[0]).contains(c[2]), "message names the field: %s" % failed[0])
		failed.clear()
		check(_image_equal(before, isl.get_heightmap_image()), "heightmap unchanged after invalid %s" % c[0])
		check_eq(_mesh_instances(isl).size(), 4, "chunks unchanged after invalid %s" % c[0])
		check_eq(isl.get_last_stats(), stats_before, "stats unchanged after invalid %s" % c[0])
		isl.set(c[0], old)
	# More chunk nodes than the node accepts (8193² in 16-cell chunks = 262144 nodes).
	isl.resolution = 8193
	isl.chunk_size = 16
	check(not isl.regenerate(), "too many chunks is rejected before generating")
	check(_image_equal(before, isl.get_heightmap_image()), "heightmap unchanged after too many chunks")
	isl.resolution = 65
	isl.chunk_size = 32
	failed.clear()
	# The async path rejects the same way, without starting anything.
	isl.resolution = 0
	isl.regenerate_async()
	check(not isl.is_generating(), "invalid async request does not start")
	check_eq(failed.size(), 1, "invalid async request emits generation_failed")
	isl.resolution = 65
	check(isl.regenerate(), "valid again")
	check(_image_equal(before, isl.get_heightmap_image()), "same island after restoring the values")


func test_world_size_is_not_clamped_by_the_inspector() -> void:
	# The inspector clamps a typed value to the range's ends unless the hint says `or_less`: a
	# negative world size must reach the node (which rejects it with a warning) instead of
	# silently becoming the slider's minimum.
	var isl: Node3D = ClassDB.instantiate("ProceduralIsland")
	var hint := ""
	for p in isl.get_property_list():
		if p["name"] == "world_size":
			hint = p["hint_string"]
	check(hint.contains("or_less"), "world_size hint lets values below the slider through: %s" % hint)
	isl.free()


func test_queries() -> void:
	var isl := _island(65, 32)
	var img := isl.get_heightmap_image()
	var spacing := 1024.0 / 64.0
	for p: Vector2i in [Vector2i(0, 0), Vector2i(32, 32), Vector2i(10, 50), Vector2i(64, 64)]:
		var x := p.x * spacing - 512.0
		var z := p.y * spacing - 512.0
		check_eq(isl.get_height_at(x, z), img.get_pixel(p.x, p.y).r, "height_at on grid vertex %s equals the sample" % p)
	# Mid-cell on the cell's diagonal (ix+1, iz)-(ix, iz+1), the split shared by the mesh and
	# Godot's HeightMapShape3D: mean of the diagonal's end samples.
	var h0 := img.get_pixel(21, 30).r
	var h1 := img.get_pixel(20, 31).r
	check_near(isl.get_height_at(20.5 * spacing - 512.0, 30.5 * spacing - 512.0), (h0 + h1) * 0.5, 1e-3, "diagonal midpoint")
	var nrm := isl.get_normal_at(10.0, -20.0)
	check_near(nrm.length(), 1.0, 1e-4, "normal is unit length")
	check(nrm.y > 0.0, "normal points up")
	var biome := isl.get_biome_at(0.0, 0.0)
	check(biome >= 0 and biome < 5, "biome index in the default table: %d" % biome)
	var splat := isl.get_splat_image()
	check_eq(splat.get_format(), Image.FORMAT_RGBA8, "splat format")
	check_eq(splat.get_size(), Vector2i(65, 65), "splat size")
	var c := splat.get_pixel(32, 32)
	check_near(c.r + c.g + c.b + c.a, 1.0, 0.02, "splat weights sum to 1")
	# Outside the map the height clamps to the border.
	check_eq(isl.get_height_at(-1.0e6, -1.0e6), img.get_pixel(0, 0).r, "clamped outside the map")


func test_stats() -> void:
	var isl := _island(129, 64)
	var s := isl.get_last_stats()
	for key in ["backend", "resolution", "chunks", "land_fraction", "total_ms", "stage_ms", "min_height", "max_height"]:
		check(s.has(key), "stats has %s" % key)
	check_eq(s.backend, "cpu", "backend")
	check_eq(s.resolution, 129, "resolution")
	check_eq(s.chunks, 4, "chunks")
	check(s.land_fraction > 0.05 and s.land_fraction < 0.95, "land fraction is plausible: %s" % s.land_fraction)
	check(s.min_height < 0.0 and s.max_height > 0.0, "island crosses sea level")
	check(s.stage_ms is Dictionary and s.stage_ms.has("base") and s.stage_ms.has("splat"), "stage timings")
	check(s.total_ms > 0.0, "total_ms")
	var img := isl.get_heightmap_image()
	var lo := INF
	var hi := -INF
	for z in 129:
		for x in 129:
			var h := img.get_pixel(x, z).r
			lo = minf(lo, h)
			hi = maxf(hi, h)
	check_near(s.min_height, lo, 1e-4, "min_height matches the image")
	check_near(s.max_height, hi, 1e-4, "max_height matches the image")


func test_flat_shading_and_collision_toggle() -> void:
	var isl := _island(65, 32, {"flat_shading": true, "collision_enabled": false})
	var chunks := _mesh_instances(isl)
	check_eq(chunks.size(), 4, "chunks")
	var verts := (chunks[0].mesh as ArrayMesh).surface_get_arrays(0)[Mesh.ARRAY_VERTEX] as PackedVector3Array
	check_eq(verts.size(), 32 * 32 * 6, "flat chunk: 6 vertices per cell")
	for c in chunks:
		check(_shape_node(c) == null, "no collider when collision is off")
	isl.collision_enabled = true
	isl.flat_shading = false
	check(isl.regenerate(), "regenerate with collision")
	for c in _mesh_instances(isl):
		check(_shape_node(c) != null, "collider added when collision is turned on")
	verts = (_mesh_instances(isl)[0].mesh as ArrayMesh).surface_get_arrays(0)[Mesh.ARRAY_VERTEX] as PackedVector3Array
	check_eq(verts.size(), 33 * 33, "smooth again")


## Turning collision_enabled on or off on a generated island adds or removes the colliders over
## the next frames, within the frame budget, without regenerating: the new colliders are the
## island's heights.
func test_collision_toggle_follows_without_regenerating() -> void:
	var isl := _island(513, 32, {"collision_enabled": false, "build_budget_ms": 0.5})
	var started := [0]
	isl.generation_started.connect(func(): started[0] += 1)
	var chunks := _mesh_instances(isl)
	check_eq(chunks.size(), 256, "chunks")
	check(not isl.is_collision_ready(), "not collision-ready while collision is off")
	for c in chunks:
		check(_shape_node(c) == null, "no collider when generated without")
	var before := isl.get_heightmap_image().get_data()
	isl.collision_enabled = true
	# `process_frame` comes before the nodes' `_process`: two awaits are one island frame.
	await wait_frames(2)
	var after_one := _collider_count(isl)
	check(after_one >= 1 and after_one < 256, "a few colliders a frame within a 0.5 ms budget (%d after one frame)" % after_one)
	var ok := await wait_until(func(): return isl.is_collision_ready(), 600)
	check(ok, "every chunk gets its collider")
	var off := _chunks_off_the_heightmap(isl, 32)
	check_eq(off.y, 0.0, "the added colliders are the heightmap's heights")
	check_eq(started[0], 0, "no regeneration")
	check(isl.get_heightmap_image().get_data() == before, "the island is unchanged")
	# A ray through the physics space hits the added collider at get_height_at.
	await wait_frames(2)
	var p := Vector3(13.0, 0.0, -21.0)
	var q := PhysicsRayQueryParameters3D.create(p + Vector3(0, 500, 0), p + Vector3(0, -500, 0))
	var hit := isl.get_world_3d().direct_space_state.intersect_ray(q)
	if check(not hit.is_empty(), "a ray hits an added collider"):
		check_near(hit.position.y, isl.get_height_at(p.x, p.z), 0.05, "at get_height_at")
	# Off again: every collider goes, still without regenerating.
	isl.collision_enabled = false
	ok = await wait_until(func(): return _collider_count(isl) == 0, 600)
	check(ok, "every collider removed")
	check(not isl.is_collision_ready(), "not collision-ready")
	check_eq(started[0], 0, "still no regeneration")
	# A regeneration while it is off builds none; turned on in the middle of a background
	# generation, the new island has them all.
	isl.seed += 1
	isl.regenerate_async()
	isl.collision_enabled = true
	ok = await wait_until(func(): return not isl.is_generating() and isl.is_collision_ready(), 1200)
	check(ok, "colliders after a generation during which collision was turned on")
	off = _chunks_off_the_heightmap(isl, 32)
	check_eq(off.y, 0.0, "at the new island's heights")


func test_chunk_nodes_are_pooled() -> void:
	var isl := _island(65, 16)
	var ids := _mesh_instances(isl).map(func(c: Node) -> int: return c.get_instance_id())
	isl.seed = 5
	check(isl.regenerate(), "regenerate, same chunk count")
	var ids2 := _mesh_instances(isl).map(func(c: Node) -> int: return c.get_instance_id())
	check_eq(ids2, ids, "same chunk nodes reused")
	# The reused colliders and meshes hold the new island (colliders are set from the heights
	# before the island is finished): every sample equals the new heightmap.
	var worst := _chunks_off_the_heightmap(isl, 16)
	check_eq(worst.y, 0.0, "reused colliders hold the new heights")
	check_eq(worst.x, 0.0, "reused meshes hold the new heights")
	isl.chunk_size = 32
	check(isl.regenerate(), "regenerate, other chunk count")
	await wait_frames(2)
	check_eq(_mesh_instances(isl).size(), 4, "old chunks removed, new ones built")
	for id in ids:
		check(not is_instance_id_valid(id), "old chunk %d freed" % id)


func test_shaping_curve_and_material() -> void:
	var isl := _island(65, 32)
	var default_img := isl.get_heightmap_image()
	var mat := _mesh_instances(isl)[0].material_override as ShaderMaterial
	check(mat != null and mat.shader != null, "default material is the terrain ShaderMaterial")
	if mat != null and mat.shader != null:
		check(mat.shader.code.contains("shader_type spatial"), "terrain shader code loaded")
	var curve := Curve.new()
	curve.add_point(Vector2(0, 0), 0, 1, Curve.TANGENT_LINEAR, Curve.TANGENT_LINEAR)
	curve.add_point(Vector2(1, 1), 1, 0, Curve.TANGENT_LINEAR, Curve.TANGENT_LINEAR)
	isl.shaping_curve = curve
	check(isl.regenerate(), "regenerate with a linear shaping curve")
	check(not _image_equal(default_img, isl.get_heightmap_image()), "the curve changes the heights")
	isl.shaping_curve = null
	check(isl.regenerate(), "regenerate without curve")
	check(_image_equal(default_img, isl.get_heightmap_image()), "null curve = core default")
	var own := StandardMaterial3D.new()
	isl.terrain_material = own
	await wait_frames(2)
	for c in _mesh_instances(isl):
		check(c.material_override == own, "terrain_material applied to %s" % c.name)


func test_property_hints() -> void:
	var isl := ProceduralIsland.new()
	var found := {}
	for p in isl.get_property_list():
		found[p.name] = p
	for name in ["seed", "resolution", "world_size", "max_height", "chunk_size", "algorithm", "shaping_curve",
			"collision_enabled", "flat_shading", "backend", "auto_regenerate", "terrain_material",
			"fbm_octaves", "value_noise_scale", "diamond_square_roughness", "gaussian_cells", "detail_strength",
			"mask_radius", "coast_sea_depth", "river_width", "biome_grid", "splat_rock_slope"]:
		check(found.has(name), "property %s exists" % name)
	if found.has("algorithm"):
		check_eq(found.algorithm.hint, PROPERTY_HINT_ENUM, "algorithm is an enum")
		check(String(found.algorithm.hint_string).contains("Gaussian islands:3"), "algorithm menu shows readable names: %s" % found.algorithm.hint_string)
		check(not String(found.algorithm.hint_string).contains("_"), "no SHOUTED_NAMES in the algorithm menu")
	if found.has("backend"):
		check(String(found.backend.hint_string).contains("GPU"), "backend enum names")
	if found.has("max_height"):
		check_eq(found.max_height.hint, PROPERTY_HINT_RANGE, "max_height has a range")
	check_eq(isl.resolution, 1025, "core default resolution")
	check_eq(isl.chunk_size, 64, "core default chunk size")
	check_eq(isl.max_height, 120.0, "core default max height")
	check_eq(isl.fbm_octaves, 8, "core default fbm octaves")
	isl.free()


func test_stats_report_backend_reason() -> void:
	var cpu := _island(65, 32, {"backend": ProceduralIsland.BACKEND_CPU})
	check_eq(cpu.get_last_stats().get("backend_reason", ""), "cpu requested", "CPU: the reason")
	check(not cpu.get_last_stats().has("gpu_dispatches"), "no GPU counters on the CPU")
	var gpu := _island(65, 32, {"backend": ProceduralIsland.BACKEND_GPU})
	var st := gpu.get_last_stats()
	if st.backend == "gpu":
		check_eq(st.get("backend_reason", ""), "gpu requested", "GPU: the reason")
		for k in ["gpu_dispatches", "gpu_submissions", "gpu_host_waits", "gpu_bytes_read_back", "gpu_bytes_uploaded"]:
			check(int(st.get(k, 0)) > 0, "GPU counter %s: %s" % [k, st.get(k)])
		print("    GPU counters at 65²: %d dispatches, %d submissions, %d host waits, %d B read back, %d B uploaded" % [
			st.gpu_dispatches, st.gpu_submissions, st.gpu_host_waits, st.gpu_bytes_read_back, st.gpu_bytes_uploaded])
	else:
		check(String(st.get("backend_reason", "")).begins_with("gpu requested; the GPU failed"), "GPU fallback: %s" % st.get("backend_reason"))
	var auto := _island(65, 32, {"backend": ProceduralIsland.BACKEND_AUTO})
	var reason := String(auto.get_last_stats().get("backend_reason", ""))
	print("    AUTO: %s" % reason)
	check(reason.begins_with("auto: %s (" % auto.get_last_stats().backend), "AUTO says why: %s" % reason)


func test_gpu_backend_matches_cpu() -> void:
	var gpu := _island(129, 32, {"backend": ProceduralIsland.BACKEND_GPU, "seed": 77})
	var st := gpu.get_last_stats()
	check_eq(st.requested_backend, "gpu", "requested backend recorded")
	if st.backend == "gpu":
		check(String(st.get("adapter", "")) != "", "GPU stats name the adapter")
		print("    GPU adapter: %s" % st.adapter)
	else:
		check_eq(st.backend, "cpu", "without a usable adapter the CPU does the job")
		print("    no usable GPU adapter: the GPU request ran on the CPU")
	var cpu := _island(129, 32, {"backend": ProceduralIsland.BACKEND_CPU, "seed": 77})
	check_eq(cpu.get_last_stats().backend, "cpu", "CPU backend")
	var a := gpu.get_heightmap_image()
	var b := cpu.get_heightmap_image()
	var worst := 0.0
	for z in 129:
		for x in 129:
			worst = maxf(worst, absf(a.get_pixel(x, z).r - b.get_pixel(x, z).r))
	print("    max |GPU - CPU| height: %.6f m" % worst)
	check(worst <= 1e-3 * cpu.max_height, "GPU heights within 1e-3 x max_height of the CPU (%.6f m)" % worst)
	var auto := _island(65, 32, {"backend": ProceduralIsland.BACKEND_AUTO})
	check(auto.get_last_stats().backend in ["gpu", "cpu"], "AUTO picks a backend")


func test_generated_children_are_not_saved() -> void:
	var root3d := Node3D.new()
	var isl := ProceduralIsland.new()
	isl.inland_water_enabled = false  # counts chunks + sea only (test_water.gd covers rivers)
	isl.resolution = 65
	isl.chunk_size = 32
	isl.seed = 31
	root3d.add_child(isl)
	isl.owner = root3d
	add_child(root3d)
	check_eq(isl.get_child_count(true), 4 + 1, "island generated on ready (4 chunks and the sea)")
	var packed := PackedScene.new()
	check_eq(packed.pack(root3d), OK, "pack the scene")
	var state := packed.get_state()
	check_eq(state.get_node_count(), 2, "only the root and the island are saved, no chunks, no sea")
	var copy := packed.instantiate() as Node3D
	var isl2 := copy.get_child(0) as ProceduralIsland
	check_eq(isl2.get_child_count(true), 0, "no chunks before the copy enters the tree")
	check_eq(isl2.seed, 31, "parameters are saved")
	add_child(copy)
	check_eq(isl2.get_child_count(true), 4 + 1, "the copy rebuilds its chunks and sea on ready")
	check(isl.get_heightmap_image().get_data() == isl2.get_heightmap_image().get_data(), "and the same island")


func test_regenerate_outside_the_tree() -> void:
	var isl := ProceduralIsland.new()
	isl.inland_water_enabled = false  # counts chunks + sea only (test_water.gd covers rivers)
	isl.resolution = 33
	isl.chunk_size = 16
	check(isl.regenerate(), "regenerate works before entering the tree")
	check_eq(isl.get_child_count(true), 4 + 1, "chunks and the sea built")
	check_eq(isl.get_last_stats().chunks, 4, "stats recorded")
	check_eq(isl.get_height_at(32.0, -256.0), isl.get_heightmap_image().get_pixel(17, 8).r, "queries work")
	isl.free()


## Chunk surfaces encoded on the worker threads (Godot's storage layout, set in one call) carry
## exactly the island: positions on the heightfield, normals, UVs, splat colours, the shared
## triangle list and the AABB; a second island of the same shape reuses the pooled nodes.
func test_encoded_chunk_surfaces_match_the_island() -> void:
	var isl := _island(129, 32, {"world_size": 512.0})
	var s0 := isl.get_last_stats()
	check_eq(int(s0.encoded_surfaces) + int(s0.array_surfaces), 16, "every chunk surface counted")
	check(int(s0.array_surfaces) <= 1, "at most the first chunk of the shape goes through add_surface_from_arrays: %s" % s0)
	var ids := _mesh_instances(isl).map(func(c: Node) -> int: return c.get_instance_id())
	isl.seed += 1
	check(isl.regenerate(), "regenerate")
	var s := isl.get_last_stats()
	check_eq(int(s.encoded_surfaces), 16, "same shape again: every chunk from the encoded bytes")
	check_eq(int(s.array_surfaces), 0, "no add_surface_from_arrays")
	check_eq(_mesh_instances(isl).map(func(c: Node) -> int: return c.get_instance_id()), ids, "the pooled chunk nodes are reused")
	var splat := isl.get_splat_image()
	var worst_h := 0.0
	var worst_n := 1.0
	var worst_c := 0.0
	var worst_uv := 0.0
	var boxes_ok := true
	for chunk in _mesh_instances(isl):
		var mesh := chunk.mesh as ArrayMesh
		var a := mesh.surface_get_arrays(0)
		var v := a[Mesh.ARRAY_VERTEX] as PackedVector3Array
		var nrm := a[Mesh.ARRAY_NORMAL] as PackedVector3Array
		var col := a[Mesh.ARRAY_COLOR] as PackedColorArray
		var uv := a[Mesh.ARRAY_TEX_UV] as PackedVector2Array
		var idx := a[Mesh.ARRAY_INDEX] as PackedInt32Array
		check_eq(idx.size(), 32 * 32 * 6, "triangle list size")
		check_eq(idx.slice(0, 6), PackedInt32Array([0, 1, 33, 1, 34, 33]), "first cell split along (i+1, j)-(i, j+1)")
		var box := mesh.get_aabb().grow(1e-3)
		for k in v.size():
			var p := v[k]
			boxes_ok = boxes_ok and box.has_point(p)
			worst_h = maxf(worst_h, absf(p.y - isl.get_height_at(p.x, p.z)))
			worst_n = minf(worst_n, nrm[k].dot(isl.get_normal_at(p.x, p.z)))
			var want_uv := Vector2((p.x + 256.0) / 512.0, (p.z + 256.0) / 512.0)
			worst_uv = maxf(worst_uv, (uv[k] - want_uv).length())
			var px := splat.get_pixel(roundi(want_uv.x * 128.0), roundi(want_uv.y * 128.0))
			var d := Vector4(col[k].r - px.r, col[k].g - px.g, col[k].b - px.b, col[k].a - px.a)
			worst_c = maxf(worst_c, maxf(maxf(absf(d.x), absf(d.y)), maxf(absf(d.z), absf(d.w))))
	check(worst_h <= 1e-3, "vertices lie on the heightfield (worst %s m)" % worst_h)
	check(worst_n >= 0.9999, "normals are the island's (worst cos %s)" % worst_n)
	check(worst_uv <= 1e-5, "uvs span the island (worst %s)" % worst_uv)
	check(worst_c <= 0.5 / 255.0, "vertex colours are the splat weights (worst %s)" % worst_c)
	check(boxes_ok, "every vertex inside its mesh AABB")


func test_size_dropdowns_store_the_picked_size() -> void:
	var isl := _island(65, 32, {"generate_on_ready": false})
	var found := {}
	for p in isl.get_property_list():
		found[p.name] = p
	for name in ["resolution", "chunk_size"]:
		check_eq(found[name].hint, PROPERTY_HINT_ENUM, "%s is a dropdown" % name)
	# Pick 129 and 32 as the inspector does: through the hint's item values.
	isl.set("resolution", _enum_pick(found.resolution.hint_string, "129"))
	isl.set("chunk_size", _enum_pick(found.chunk_size.hint_string, "32"))
	check_eq(isl.resolution, 129, "picking 129 stores 129")
	check_eq(isl.chunk_size, 32, "picking 32 stores 32")
	check(isl.regenerate(), "regenerates at the picked sizes")
	check_eq(isl.get_last_stats().get("resolution"), 129, "generated at 129²")
	check_eq(isl.get_heightmap_image().get_width(), 129, "heightmap is 129 wide")
	check_eq(_mesh_instances(isl).size(), 16, "129² in 32-cell chunks: 4×4 chunks")
	# Every item of both dropdowns stores its own number.
	for name in ["resolution", "chunk_size"]:
		for item in String(found[name].hint_string).split(","):
			var label := item.split(":")[0]
			check_eq(_enum_pick(found[name].hint_string, label), int(label), "%s item %s" % [name, label])


## The inspector group each ProceduralIsland property is shown in: a group with a prefix ends at
## the first property that does not start with it (EditorInspector).
func _inspector_groups(obj: Object) -> Dictionary:
	var out := {}
	var group := ""
	var prefix := ""
	var own := false
	for p in obj.get_property_list():
		if p.usage & PROPERTY_USAGE_CATEGORY:
			own = p.name == "ProceduralIsland"
			group = ""
			prefix = ""
		elif p.usage & PROPERTY_USAGE_GROUP:
			group = p.name
			prefix = p.hint_string
		elif own and p.usage & PROPERTY_USAGE_EDITOR:
			if prefix != "" and not String(p.name).begins_with(prefix):
				group = ""
				prefix = ""
			out[p.name] = group
	return out


func test_every_property_sits_in_its_inspector_group() -> void:
	var isl := ProceduralIsland.new()
	var groups := _inspector_groups(isl)
	check(groups.size() > 50, "ProceduralIsland properties found (%d)" % groups.size())
	for name in groups:
		check(groups[name] != "", "%s is inside a group" % name)
	for name in ["lod_enabled", "lod_levels", "lod_distance", "collision_mode", "lod_budget_ms"]:
		check_eq(groups.get(name, "?"), "LOD", "%s is in the LOD group" % name)
	check_eq(groups.get("backend", "?"), "Generation", "backend is in the Generation group")
	isl.free()


## Stats reach generation_finished complete (regenerate_ms included), get_last_stats() hands
## out a copy, and an import is announced with generation_started like any generation.
func test_stats_are_complete_and_copied() -> void:
	var isl := _island(65, 32, {"generate_on_ready": false})
	var got: Array = []
	var started := [0]
	isl.generation_started.connect(func() -> void: started[0] += 1)
	isl.generation_finished.connect(func(stats: Dictionary) -> void: got.append(stats))
	check(isl.regenerate(), "regenerate")
	check_eq(got.size(), 1, "one generation_finished")
	if got.size() == 1:
		check(got[0].has("regenerate_ms"), "regenerate_ms is in the stats generation_finished carries")
		got[0]["land_fraction"] = -1.0
	var a := isl.get_last_stats()
	check(a.get("land_fraction", -1.0) >= 0.0, "a handler editing its stats does not change the node's")
	a["land_fraction"] = -2.0
	(a["stage_ms"] as Dictionary).clear()
	var b := isl.get_last_stats()
	check(b.get("land_fraction", -2.0) >= 0.0, "editing get_last_stats() does not change the node's")
	check(not (b["stage_ms"] as Dictionary).is_empty(), "nor its nested stage times")
	var path := "user://stats_import_test.r32"
	check_eq(isl.export_heightmap(path), OK, "export")
	started[0] = 0
	got.clear()
	check_eq(isl.import_heightmap(path), OK, "import")
	check_eq(started[0], 1, "import emits generation_started")
	check_eq(got.size(), 1, "and generation_finished once")
	DirAccess.remove_absolute(path)


## Issue 15.2: check_parameters() (also the node's configuration warning, the scene tree's
## yellow triangle) names the problem while a value is invalid, and is empty once fixed.
func test_invalid_value_gives_a_configuration_warning() -> void:
	var isl := _island(65, 32)
	check_eq(isl.check_parameters(), "", "no problem with valid values")
	isl.world_size = -5.0
	check(isl.check_parameters().contains("world_size"), "names the property: %s" % isl.check_parameters())
	isl.resolution = 100
	check(isl.check_parameters().contains("resolution"), "the first problem: %s" % isl.check_parameters())
	isl.resolution = 65
	isl.world_size = 1024.0
	check_eq(isl.check_parameters(), "", "empty once fixed")
