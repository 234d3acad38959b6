extends IslandTestCase
## ProceduralIsland scatter layers: instances on the terrain, masks, spacing, MultiMesh nodes,
## determinism, seeds, regenerate, property changes, invalid values, async.

var timeout_s := 240.0


func _layer(props: Dictionary = {}) -> ScatterLayer:
	var l := ScatterLayer.new()
	l.builtin_mesh = ScatterLayer.ROCK
	l.density = 4.0
	l.min_distance = 3.0
	l.min_height = 2.0
	l.max_height = 30.0
	l.height_fade = 2.0
	l.max_slope_degrees = 30.0
	l.sink = 0.2
	for k in props:
		l.set(k, props[k])
	return l


func _scatter_island(layers: Array, props: Dictionary = {}) -> ProceduralIsland:
	var typed: Array[ScatterLayer] = []
	for l in layers:
		typed.append(l)
	var all := {"world_size": 512.0, "seed": 7, "scatter_layers": typed}
	all.merge(props, true)
	return _island(257, 32, all)


## MultiMeshInstance3D children of `isl` for layer `layer` (internal ones).
func _multimeshes(isl: Node, layer: int) -> Array[MultiMeshInstance3D]:
	var out: Array[MultiMeshInstance3D] = []
	for c in isl.get_children(true):
		if c is MultiMeshInstance3D and String(c.name).begins_with("Scatter_%d_" % layer):
			out.append(c)
	return out


func _multimesh_total(isl: Node, layer: int) -> int:
	var n := 0
	for mmi in _multimeshes(isl, layer):
		if mmi.visible and mmi.multimesh != null:
			n += mmi.multimesh.instance_count
	return n


func test_instances_lie_on_the_terrain_and_respect_the_masks() -> void:
	var l := _layer()
	var isl := _scatter_island([l])
	var pos := isl.get_scatter_positions(0)
	check(pos.size() > 50, "layer places instances (%d)" % pos.size())
	var worst := 0.0
	var bad_h := 0
	var bad_slope := 0
	for p in pos:
		var h := isl.get_height_at(p.x, p.z)
		worst = maxf(worst, absf(p.y - (h - l.sink)))
		if h < l.min_height or h > l.max_height:
			bad_h += 1
		# The core reads the slope at the nearest sample; the interpolated normal may differ a bit.
		var slope := rad_to_deg(acos(clampf(isl.get_normal_at(p.x, p.z).y, -1.0, 1.0)))
		if slope > l.max_slope_degrees + 8.0:
			bad_slope += 1
	check(worst <= 0.01, "every instance on the surface minus sink (worst %.4f m)" % worst)
	check_eq(bad_h, 0, "no instance outside the height range")
	check_eq(bad_slope, 0, "no instance on slopes steeper than the mask")


func test_min_distance_and_counts_match_the_multimeshes() -> void:
	var l := _layer({"density": 50.0, "min_distance": 4.0})
	var isl := _scatter_island([l])
	var pos := isl.get_scatter_positions(0)
	check(pos.size() > 100, "dense layer places many instances (%d)" % pos.size())
	check_eq(isl.get_scatter_count(0), pos.size(), "get_scatter_count matches the positions")
	check_eq(_multimesh_total(isl, 0), pos.size(), "MultiMesh instance counts sum to the count")
	check_eq((isl.get_last_stats().scatter_counts as PackedInt64Array)[0], pos.size(), "stats scatter_counts")
	check(isl.get_last_stats().has("scatter_ms"), "stats has scatter_ms")
	# Grid hash: compare only neighbours within one cell.
	var cell := l.min_distance
	var grid := {}
	for i in pos.size():
		var k := Vector2i(floori(pos[i].x / cell), floori(pos[i].z / cell))
		if not grid.has(k):
			grid[k] = []
		grid[k].append(i)
	var closest := INF
	for i in pos.size():
		var k := Vector2i(floori(pos[i].x / cell), floori(pos[i].z / cell))
		for dz in range(-1, 2):
			for dx in range(-1, 2):
				for j in grid.get(k + Vector2i(dx, dz), []):
					if j != i:
						var d := Vector2(pos[i].x - pos[j].x, pos[i].z - pos[j].z).length()
						closest = minf(closest, d)
	check(closest >= l.min_distance * 0.999, "no two instances closer than min_distance (closest %.3f m)" % closest)
	for mmi in _multimeshes(isl, 0):
		check(mmi.owner == null, "scatter nodes are not saved (no owner)")
		break


func test_deterministic_per_seed_and_new_seed_moves_them() -> void:
	var a := _scatter_island([_layer()])
	var b := _scatter_island([_layer()])
	check(a.get_scatter_positions(0).size() > 0, "instances placed")
	check_eq(a.get_scatter_positions(0), b.get_scatter_positions(0), "same seed, same instances")
	var before := a.get_scatter_positions(0)
	a.seed = 8
	check(a.regenerate(), "regenerate with a new seed")
	check(a.get_scatter_positions(0) != before, "a new seed moves the instances")
	check_eq(_multimesh_total(a, 0), a.get_scatter_count(0), "regenerate refreshes the MultiMeshes")
	a.seed = 7
	check(a.regenerate(), "regenerate with the first seed")
	check_eq(a.get_scatter_positions(0), before, "the first seed gives the first instances again")


func test_builtin_meshes_have_vertex_colours() -> void:
	var layers := []
	for m in 5:
		layers.append(_layer({"builtin_mesh": m, "seed_salt": m, "max_slope_degrees": 60.0}))
	var isl := _scatter_island(layers)
	for m in 5:
		var mms := _multimeshes(isl, m)
		check(mms.size() > 0, "layer %d has MultiMesh nodes" % m)
		if mms.is_empty():
			continue
		var mesh := mms[0].multimesh.mesh as ArrayMesh
		check(mesh != null, "built-in mesh is an ArrayMesh")
		if mesh == null:
			continue
		var arrays := mesh.surface_get_arrays(0)
		check((arrays[Mesh.ARRAY_COLOR] as PackedColorArray).size() > 0, "vertex colours (%d)" % m)
		var mat := mesh.surface_get_material(0) as StandardMaterial3D
		check(mat != null and mat.vertex_color_use_as_albedo, "material uses vertex colours")
	var custom := BoxMesh.new()
	var isl2 := _scatter_island([_layer({"mesh": custom})])
	var mms2 := _multimeshes(isl2, 0)
	check(mms2.size() > 0 and mms2[0].multimesh.mesh == custom, "a custom mesh is used as is")


func test_changing_a_layer_replaces_it() -> void:
	var l0 := _layer()
	var l1 := _layer({"builtin_mesh": ScatterLayer.GRASS, "seed_salt": 3})
	var isl := _scatter_island([l0, l1])
	var n0 := isl.get_scatter_count(0)
	var p1 := isl.get_scatter_positions(1)
	l0.density = 1.0
	await wait_frames(2)
	check(isl.get_scatter_count(0) < n0, "lower density places fewer (%d -> %d)" % [n0, isl.get_scatter_count(0)])
	check_eq(_multimesh_total(isl, 0), isl.get_scatter_count(0), "MultiMeshes follow the change")
	check_eq(isl.get_scatter_positions(1), p1, "the other layer is untouched")
	l0.visibility_range_end = 200.0
	l0.visibility_range_end_margin = 20.0
	await _wait_for_layer(isl, 0, func(mmi: MultiMeshInstance3D) -> bool: return mmi.visibility_range_end == 200.0)
	for mmi in _multimeshes(isl, 0):
		if mmi.visible:
			check_eq(mmi.visibility_range_end, 200.0, "visibility range applied")
			check_eq(mmi.visibility_range_fade_mode, GeometryInstance3D.VISIBILITY_RANGE_FADE_SELF, "far instances fade")
			check_eq(mmi.cast_shadow, GeometryInstance3D.SHADOW_CASTING_SETTING_ON, "instances cast shadows by default")
			break
	var shown := _multimesh_total(isl, 0)
	l0.cast_shadow = GeometryInstance3D.SHADOW_CASTING_SETTING_OFF
	await _wait_for_layer(isl, 0, func(mmi: MultiMeshInstance3D) -> bool: return mmi.cast_shadow == GeometryInstance3D.SHADOW_CASTING_SETTING_OFF)
	var seen := 0
	for mmi in _multimeshes(isl, 0):
		if mmi.visible:
			seen += 1
			check_eq(mmi.cast_shadow, GeometryInstance3D.SHADOW_CASTING_SETTING_OFF, "cast_shadow applied to every chunk")
	check(seen > 0, "layer 0 has visible chunks")
	check_eq(_multimesh_total(isl, 0), shown, "switching shadows keeps the instances")
	# Removing a layer frees its nodes.
	var typed: Array[ScatterLayer] = [l0]
	isl.scatter_layers = typed
	await wait_frames(2)
	check_eq(isl.get_scatter_count(1), 0, "removed layer has no instances")
	await wait_frames(1)
	check_eq(_multimeshes(isl, 1).size(), 0, "removed layer's nodes are freed")


## Wait until every visible MultiMesh of `layer` satisfies `done` (a layer's rebuild is
## portioned by time per frame).
func _wait_for_layer(isl: ProceduralIsland, layer: int, done: Callable) -> void:
	await wait_until(func() -> bool:
		return _multimeshes(isl, layer).all(func(mmi: MultiMeshInstance3D) -> bool:
			return not mmi.visible or done.call(mmi)))


func test_invalid_layer_values_give_an_error() -> void:
	expect_error("invalid scatter layer 0: `min_distance`")
	expect_error("invalid scatter layer 1: `min_height`")
	var bad := _layer({"min_distance": 0.0})
	expect_error("invalid scatter layer 3: `cast_shadow`")
	var bad2 := _layer({"min_height": 50.0, "max_height": 10.0})
	var good := _layer()
	var bad3 := _layer({"cast_shadow": 7})
	var isl := _scatter_island([bad, bad2, good, bad3])
	check_eq(isl.get_scatter_count(3), 0, "a layer with a bad cast_shadow places nothing")
	check(bad3.get_validation_error().contains("cast_shadow"), "get_validation_error names cast_shadow")
	check_eq(isl.get_scatter_count(0), 0, "invalid layer places nothing")
	check_eq(isl.get_scatter_count(1), 0, "invalid layer places nothing")
	check(isl.get_scatter_count(2) > 0, "valid layer beside them is placed")
	check(bad.get_validation_error().contains("min_distance"), "get_validation_error names the value")
	check_eq(good.get_validation_error(), "", "valid layer has no error")
	# Fixing it places it.
	bad.min_distance = 3.0
	await wait_frames(2)
	check(isl.get_scatter_count(0) > 0, "fixed layer is placed")
	check_eq(isl.get_scatter_count(99), 0, "out-of-range layer index gives 0")
	check_eq(isl.get_scatter_positions(-1).size(), 0, "negative layer index gives no positions")


func test_async_generation_places_scatter() -> void:
	var isl := _scatter_island([_layer()], {"generate_on_ready": false})
	isl.regenerate_async()
	var args := await wait_signal(isl, "generation_finished", 120.0)
	check(args.size() == 1, "generation finished")
	var stats: Dictionary = isl.get_last_stats()
	check(stats.has("scatter_counts"), "stats has scatter_counts")
	check(isl.get_scatter_count(0) > 0, "instances after regenerate_async (%d)" % isl.get_scatter_count(0))
	check_eq(_multimesh_total(isl, 0), isl.get_scatter_count(0), "MultiMeshes built")
	var sync := _scatter_island([_layer()])
	check_eq(isl.get_scatter_positions(0), sync.get_scatter_positions(0), "async and sync place the same")
	print("    scatter_ms %.2f (placement %.2f)" % [stats.scatter_ms, stats.scatter_place_ms])


func test_demo_layers() -> void:
	var layers := []
	for i in 5:
		var l := ScatterLayer.demo_layer(i)
		check(l != null, "demo layer %d" % i)
		layers.append(l)
	check(ScatterLayer.demo_layer(5) == null, "no demo layer 5")
	check_eq((layers[4] as ScatterLayer).cast_shadow, 0, "demo grass casts no shadows")
	check_eq((layers[1] as ScatterLayer).cast_shadow, 1, "demo trees cast shadows")
	var isl := _scatter_island(layers, {"world_size": 1024.0})
	var total := 0
	for i in 5:
		total += isl.get_scatter_count(i)
	check(total > 0, "demo layers place instances (%s)" % [isl.get_last_stats().scatter_counts])


func test_imported_heightmap_is_scattered() -> void:
	var isl := _scatter_island([_layer()])
	var n := isl.get_scatter_count(0)
	var before := {}
	for p in isl.get_scatter_positions(0):
		before[p] = true
	var path := "user://test_scatter_import.r32"
	check_eq(isl.export_heightmap(path), OK, "export heightmap")
	check_eq(isl.import_heightmap(path), OK, "import heightmap")
	# Imported islands have no biomes (every sample counts as biome 0) and no rivers or lakes
	# (only the sea): on the same heights every generated instance is placed again, plus those
	# the generated island's river and lake water kept out.
	var after := isl.get_scatter_positions(0)
	var kept := 0
	for p in after:
		if before.has(p):
			kept += 1
	check_eq(kept, n, "every instance of the generated island is placed again on its heights")
	check(after.size() >= n, "no instance lost (%d after, %d before)" % [after.size(), n])
	check_eq(_multimesh_total(isl, 0), after.size(), "MultiMeshes rebuilt after import")
	DirAccess.remove_absolute(ProjectSettings.globalize_path(path))


func test_layer_emits_changed_only_when_a_value_changes() -> void:
	var l := _layer()
	var fired := [0]
	l.changed.connect(func() -> void: fired[0] += 1)
	l.density = 9.0
	check_eq(fired[0], 1, "setting a new value emits changed")
	l.density = 9.0
	check_eq(fired[0], 1, "setting the same value does not")
	l.mesh = BoxMesh.new()
	l.visibility_range_end = 50.0
	l.set("sink", 0.7)
	check_eq(fired[0], 4, "every property emits it (mesh, visibility, set())")


func test_a_layer_edit_rebuilds_only_that_layer() -> void:
	var l0 := _layer()
	var l1 := _layer({"builtin_mesh": ScatterLayer.GRASS, "seed_salt": 3})
	var isl := _scatter_island([l0, l1])
	await wait_frames(2)
	var mark := BoxMesh.new()
	var marked := 0
	for layer in 2:
		for mmi in _multimeshes(isl, layer):
			if mmi.visible:
				mmi.multimesh.mesh = mark
				marked += 1
	check(marked > 4, "nodes marked (%d)" % marked)
	var n0 := isl.get_scatter_count(0)
	l0.density = 1.5
	for i in 60:
		await wait_frames(1)
		if isl.get_scatter_count(0) != n0 and _multimesh_total(isl, 0) == isl.get_scatter_count(0):
			break
	check(isl.get_scatter_count(0) < n0, "layer 0 re-placed (%d -> %d)" % [n0, isl.get_scatter_count(0)])
	var rebuilt0 := true
	for mmi in _multimeshes(isl, 0):
		if mmi.visible and mmi.multimesh.mesh == mark:
			rebuilt0 = false
	check(rebuilt0, "every visible chunk of the edited layer was rebuilt")
	var kept1 := true
	for mmi in _multimeshes(isl, 1):
		if mmi.visible and mmi.multimesh.mesh != mark:
			kept1 = false
	check(kept1, "the other layer's MultiMeshes were not touched")


func test_async_build_runs_chunk_by_chunk_within_the_budget() -> void:
	# One dense layer over 16 × 16 chunks and the smallest budget: its MultiMeshes appear over
	# several frames, a part of the layer at a time (not the whole layer in one frame).
	var l := _layer({"builtin_mesh": ScatterLayer.GRASS, "density": 30.0, "min_distance": 1.5})
	# The round outline: land over many chunks (an AUTO outline of this seed may be a few islets,
	# whose few chunks fit in one or two frames on a fast machine).
	var isl := _scatter_island([l], {"generate_on_ready": false, "chunk_size": 16, "build_budget_ms": 0.5,
		"island_shape": ProceduralIsland.SHAPE_ROUND})
	isl.regenerate_async()
	var partial := 0
	var frames := 0
	while isl.is_generating() and frames < 3000:
		await get_tree().process_frame
		frames += 1
		var t := _multimesh_total(isl, 0)
		if t > 0 and t < isl.get_scatter_count(0):
			partial += 1
	check(not isl.is_generating(), "generation finished")
	check(isl.get_scatter_count(0) > 1000, "dense layer (%d)" % isl.get_scatter_count(0))
	check_eq(_multimesh_total(isl, 0), isl.get_scatter_count(0), "all MultiMeshes built in the end")
	check(partial >= 2, "frames with the layer partly built: %d" % partial)


func _scatter_bodies(isl: Node, layer: int) -> Array[StaticBody3D]:
	var out: Array[StaticBody3D] = []
	for c in isl.get_children(true):
		if c is StaticBody3D and String(c.name).begins_with("ScatterBody_%d_" % layer):
			out.append(c)
	return out


func test_collision_near_camera() -> void:
	var l := _layer({"builtin_mesh": ScatterLayer.BROADLEAF, "density": 3.0, "min_distance": 5.0,
		"collision": ScatterLayer.COLLISION_NEAR_CAMERA, "collision_radius": 40.0})
	var isl := _scatter_island([l])
	var pos := isl.get_scatter_positions(0)
	check(pos.size() > 20, "trees placed (%d)" % pos.size())
	var target := pos[pos.size() / 2]
	var cam := Camera3D.new()
	add_child(cam)
	cam.global_position = isl.to_global(target + Vector3(0.0, 20.0, 0.0))
	cam.make_current()
	await wait_frames(3)
	await get_tree().physics_frame
	await get_tree().physics_frame
	var bodies := _scatter_bodies(isl, 0)
	check(bodies.size() > 0, "colliders near the camera (%d)" % bodies.size())
	var near := 0
	for p in pos:
		if isl.to_global(p).distance_to(cam.global_position) <= 40.0:
			near += 1
	check_eq(bodies.size(), near, "one collider per instance within collision_radius")
	var space := isl.get_world_3d().direct_space_state
	var q := PhysicsRayQueryParameters3D.create(isl.to_global(target + Vector3(0.0, 40.0, 0.0)), isl.to_global(target - Vector3(0.0, 1.0, 0.0)))
	var hit := space.intersect_ray(q)
	check(not hit.is_empty() and String((hit.collider as Node).name).begins_with("ScatterBody_0_"), "a ray down onto the tree under the camera hits its collider (%s)" % [hit.get("collider")])
	if not hit.is_empty():
		check(hit.position.y > isl.to_global(target).y + 1.0, "the collider stands above the ground (hit at %.2f, base %.2f)" % [hit.position.y, isl.to_global(target).y])
	# A far instance has no collider: the ray reaches the terrain.
	var far := Vector3.INF
	for p in pos:
		if Vector2(p.x - target.x, p.z - target.z).length() > 150.0:
			far = p
			break
	check(far != Vector3.INF, "a far instance exists")
	var q2 := PhysicsRayQueryParameters3D.create(isl.to_global(far + Vector3(0.0, 40.0, 0.0)), isl.to_global(far - Vector3(0.0, 1.0, 0.0)))
	var hit2 := space.intersect_ray(q2)
	check(hit2.is_empty() or not String((hit2.collider as Node).name).begins_with("ScatterBody_"), "a far tree has no collider")
	# Turning collision off frees the colliders.
	l.collision = ScatterLayer.COLLISION_NONE
	await wait_frames(3)
	check_eq(_scatter_bodies(isl, 0).size(), 0, "no colliders with collision NONE")
	cam.queue_free()


func _scene_nodes(isl: Node, layer: int) -> Array[Node3D]:
	var out: Array[Node3D] = []
	for c in isl.get_children(true):
		if c is Node3D and String(c.name).begins_with("ScatterScene_%d_" % layer) and not c.is_queued_for_deletion():
			out.append(c)
	return out


func test_scene_layer_instances_one_scene_per_instance() -> void:
	var proto := Node3D.new()
	proto.name = "Prop"
	var mi := MeshInstance3D.new()
	mi.name = "Mesh"
	mi.mesh = BoxMesh.new()
	proto.add_child(mi)
	mi.owner = proto
	var packed := PackedScene.new()
	check_eq(packed.pack(proto), OK, "pack the prop scene")
	proto.free()
	var l := _layer({"density": 2.0, "min_distance": 6.0, "scene": packed})
	var isl := _scatter_island([l])
	var pos := isl.get_scatter_positions(0)
	check(pos.size() > 10, "instances placed (%d)" % pos.size())
	var nodes := _scene_nodes(isl, 0)
	check_eq(nodes.size(), pos.size(), "one scene instance per placed instance")
	var same := nodes.size() == pos.size()
	for k in mini(nodes.size(), pos.size()):
		same = same and nodes[k].position.is_equal_approx(pos[k]) and nodes[k].get_node_or_null("Mesh") is MeshInstance3D
	check(same, "each scene instance stands at its instance's position, with its own nodes")
	check_eq(_multimesh_total(isl, 0), 0, "no MultiMesh drawn for a scene layer")
	l.scene = null
	await wait_until(func() -> bool:
		return _scene_nodes(isl, 0).is_empty() and _multimesh_total(isl, 0) == isl.get_scatter_count(0))
	check_eq(_scene_nodes(isl, 0).size(), 0, "clearing the scene frees the instances")
	check_eq(_multimesh_total(isl, 0), isl.get_scatter_count(0), "the MultiMesh draws the layer again")
