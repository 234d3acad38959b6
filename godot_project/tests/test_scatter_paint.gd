extends IslandTestCase
## TerrainBrush scatter modes: erasing and restoring a scatter layer's instances under the brush
## (with the height/slope masks), undo/redo snapshots, saving with the scene, regenerating,
## rebuilding only the touched chunks.

var timeout_s := 240.0

const WORLD := 512.0
const RES := 257
const SPACING := WORLD / (RES - 1)


func _layer() -> ScatterLayer:
	var l := ScatterLayer.new()
	l.builtin_mesh = ScatterLayer.ROCK
	l.density = 40.0
	l.min_distance = 3.0
	l.min_height = 1.0
	l.max_height = 200.0
	l.max_slope_degrees = 60.0
	return l


## An island (257² over 512 m, 2 m spacing, chunks of 32 cells) with two scatter layers and a
## brush child in MODE_SCATTER_ERASE on layer 0.
func _setup(parent: Node = self) -> Array:
	var isl := ProceduralIsland.new()
	isl.name = "Island"
	isl.resolution = RES
	isl.chunk_size = 32
	isl.world_size = WORLD
	isl.seed = 7
	isl.sea_enabled = false
	isl.inland_water_enabled = false
	var l1 := _layer()
	l1.seed_salt = 5
	var typed: Array[ScatterLayer] = [_layer(), l1]
	isl.scatter_layers = typed
	parent.add_child(isl)
	var brush := TerrainBrush.new()
	brush.name = "Brush"
	isl.add_child(brush)
	brush.mode = TerrainBrush.MODE_SCATTER_ERASE
	brush.scatter_layer = 0
	brush.radius = 40.0
	brush.spacing = 0.25
	return [isl, brush]


## Node-local (x, z) of the heightfield sample nearest to `p`.
func _sample_xz(p: Vector3) -> Vector2:
	var ix := clampi(roundi((p.x + WORLD * 0.5) / SPACING), 0, RES - 1)
	var iz := clampi(roundi((p.z + WORLD * 0.5) / SPACING), 0, RES - 1)
	return Vector2(ix * SPACING - WORLD * 0.5, iz * SPACING - WORLD * 0.5)


## Whether a dab of `radius` at `center` (x, z) with height mask <= `max_h` covers the instance at
## `p`: its nearest sample lies within the radius and that sample's height passes the mask.
func _under(isl: ProceduralIsland, p: Vector3, center: Vector2, radius: float, max_h: float) -> bool:
	var s := _sample_xz(p)
	if s.distance_squared_to(center) > radius * radius:
		return false
	return isl.get_height_at(s.x, s.y) <= max_h


func _multimesh_total(isl: Node, layer: int) -> int:
	var n := 0
	for c in isl.get_children(true):
		if c is MultiMeshInstance3D and String(c.name).begins_with("Scatter_%d_" % layer):
			if c.visible and c.multimesh != null:
				n += c.multimesh.instance_count
	return n


## The scatter node of layer `layer`, chunk (cx, cz), or null.
func _node(isl: Node, layer: int, cx: int, cz: int) -> MultiMeshInstance3D:
	for c in isl.get_children(true):
		if c is MultiMeshInstance3D and String(c.name) == "Scatter_%d_%d_%d" % [layer, cx, cz]:
			return c
	return null


## A centre near the middle of the instances of layer 0 (on land).
func _centre(isl: ProceduralIsland) -> Vector3:
	var pos := isl.get_scatter_positions(0)
	var best := pos[0]
	for p in pos:
		if Vector2(p.x, p.z).length() < Vector2(best.x, best.z).length():
			best = p
	return best


func test_erase_removes_exactly_the_instances_under_the_brush_within_the_masks() -> void:
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	var before := isl.get_scatter_positions(0)
	var other := isl.get_scatter_positions(1)
	check(before.size() > 500, "layer 0 places many instances (%d)" % before.size())
	var c := _centre(isl)
	# A height mask that cuts through the disc: only the lower instances go.
	brush.max_height = c.y + 1.0
	var centre := Vector2(c.x, c.z)
	var want := PackedVector3Array()
	var removed := 0
	var masked_out := 0
	for p in before:
		if _under(isl, p, centre, brush.radius, brush.max_height):
			removed += 1
		else:
			want.append(p)
			if _sample_xz(p).distance_to(centre) <= brush.radius:
				masked_out += 1
	check(removed > 10, "the brush covers instances (%d)" % removed)
	check(masked_out > 5, "the height mask keeps some instances under the brush (%d)" % masked_out)
	# A chunk far away: mark its MultiMesh with another mesh; a rebuild would put the layer's
	# mesh back.
	var far := _node(isl, 0, 0, 0)
	var far_cx := 0
	var far_cz := 0
	for cz in 8:
		for cx in 8:
			var n := _node(isl, 0, cx, cz)
			if n != null and n.visible and Vector2((cx + 0.5) * 64.0 - 256.0, (cz + 0.5) * 64.0 - 256.0).distance_to(centre) > 150.0:
				far = n
				far_cx = cx
				far_cz = cz
	check(far != null, "a far chunk with instances exists")
	var layer_mesh := far.multimesh.mesh
	var mark := BoxMesh.new()
	far.multimesh.mesh = mark
	var near := _node(isl, 0, int((c.x + 256.0) / 64.0), int((c.z + 256.0) / 64.0))
	check(near != null, "the chunk under the brush has a node")
	near.multimesh.mesh = mark
	var changed := brush.paint_at(isl.to_global(c))
	check(changed > 0, "samples erased (%d)" % changed)
	var after := isl.get_scatter_positions(0)
	check_eq(after.size(), before.size() - removed, "count drops by the covered instances")
	check(after == want, "exactly the covered instances are gone, the others unchanged and in order")
	check_eq(isl.get_scatter_count(0), after.size(), "get_scatter_count follows")
	check_eq(_multimesh_total(isl, 0), after.size(), "MultiMeshes hold the remaining instances")
	check(isl.get_scatter_positions(1) == other, "the other scatter layer is untouched")
	check(far.multimesh.mesh == mark, "a far chunk's MultiMesh was not rebuilt (%d, %d)" % [far_cx, far_cz])
	check(near.multimesh.mesh == layer_mesh, "the touched chunk was rebuilt")
	far.multimesh.mesh = layer_mesh
	check_eq((isl.get_last_stats().scatter_counts as PackedInt64Array)[0], after.size(), "stats scatter_counts follow")
	check(isl.splat_paint != null and isl.splat_paint.get_scatter_erased_samples(0) > 0, "kept in the SplatPaint")
	# Restoring brings the very same instances back.
	brush.mode = TerrainBrush.MODE_SCATTER_RESTORE
	brush.max_height = 10000.0
	check(brush.paint_at(isl.to_global(c)) > 0, "restored")
	check(isl.get_scatter_positions(0) == before, "restore brings back exactly the erased instances")
	check_eq(_multimesh_total(isl, 0), before.size(), "MultiMeshes refilled")
	check_eq(isl.splat_paint.get_scatter_erased_samples(0), 0, "nothing erased any more")


func test_stroke_undo_redo() -> void:
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	brush.radius = 15.0
	var before := isl.get_scatter_positions(0)
	var c := _centre(isl)
	check(brush.begin_stroke(), "begin_stroke")
	var n := brush.paint_stroke(isl.to_global(c - Vector3(60, 0, 0)), isl.to_global(c))
	n += brush.paint_stroke(isl.to_global(c), isl.to_global(c + Vector3(20, 0, 50)))
	check(n > 0, "the stroke erased samples")
	var snap := brush.end_stroke()
	var after := isl.get_scatter_positions(0)
	check(after.size() < before.size(), "the stroke removed instances (%d -> %d)" % [before.size(), after.size()])
	check(snap.has("scatter"), "snapshot has the scatter part")
	check(not snap.has("rect"), "no splat paint part for a scatter-only stroke")
	var entry: Dictionary = (snap.scatter as Array)[0]
	var r: Rect2i = entry.rect
	check(r.size.x < RES and r.size.y < RES, "snapshot holds only the touched region (%s)" % r)
	check_eq((entry.before as PackedByteArray).size(), r.size.x * r.size.y, "one byte per sample")
	check(brush.apply_snapshot(snap, false), "undo")
	check(isl.get_scatter_positions(0) == before, "undo restores the instances exactly")
	check_eq(_multimesh_total(isl, 0), before.size(), "undo refills the MultiMeshes")
	check(brush.apply_snapshot(snap, true), "redo")
	check(isl.get_scatter_positions(0) == after, "redo removes them again")
	check_eq(_multimesh_total(isl, 0), after.size(), "redo empties the MultiMeshes again")
	check(brush.apply_snapshot(snap, false), "undo again")
	check(isl.get_scatter_positions(0) == before, "undo again restores exactly")
	expect_error("scatter")
	var broken := snap.duplicate(true)
	(broken.scatter as Array)[0].before = PackedByteArray([1, 0, 1])
	check(not brush.apply_snapshot(broken, false), "bad scatter snapshot rejected")
	check(isl.get_scatter_positions(0) == before, "a rejected snapshot changes nothing")


func test_erased_area_survives_save_reload_and_regenerate() -> void:
	var root := Node3D.new()
	root.name = "Root"
	add_child(root)
	var pair := _setup(root)
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	isl.owner = root
	brush.owner = root
	var before := isl.get_scatter_positions(0)
	var c := _centre(isl)
	check(brush.paint_at(isl.to_global(c)) > 0, "erased")
	var erased := isl.get_scatter_positions(0)
	check(erased.size() < before.size(), "instances removed")
	# Regenerate (same seed) keeps the erased area, synchronously and in the background.
	check(isl.regenerate(), "regenerate")
	check(isl.get_scatter_positions(0) == erased, "regenerate keeps the erased area")
	isl.regenerate_async()
	await wait_signal(isl, "generation_finished", 120.0)
	check(isl.get_scatter_positions(0) == erased, "regenerate_async keeps the erased area")
	check_eq(_multimesh_total(isl, 0), erased.size(), "MultiMeshes after regenerate_async")
	# Save and reload.
	var packed := PackedScene.new()
	check_eq(packed.pack(root), OK, "pack")
	var path := "user://test_scatter_paint_scene.tscn"
	check_eq(ResourceSaver.save(packed, path), OK, "save")
	var loaded := ResourceLoader.load(path, "", ResourceLoader.CACHE_MODE_IGNORE) as PackedScene
	check(loaded != null, "load")
	var root2 := loaded.instantiate()
	add_child(root2)
	var isl2 := root2.get_node("Island") as ProceduralIsland
	check(isl2 != null and isl2.splat_paint != isl.splat_paint, "a fresh paint resource")
	check(isl2.get_scatter_positions(0) == erased, "the reloaded scene keeps the erased area")
	check_eq(_multimesh_total(isl2, 0), erased.size(), "reloaded MultiMeshes")
	check(isl2.get_scatter_positions(1) == isl.get_scatter_positions(1), "other layer identical")
	DirAccess.remove_absolute(ProjectSettings.globalize_path(path))


func test_fill_by_rule_and_bad_values() -> void:
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	var before := isl.get_scatter_positions(0)
	brush.min_height = 20.0
	check(brush.fill_by_rule() > 0, "fill_by_rule erases wherever the masks allow")
	var after := isl.get_scatter_positions(0)
	var bad := 0
	for p in after:
		var s := _sample_xz(p)
		if isl.get_height_at(s.x, s.y) >= 20.0:
			bad += 1
	check_eq(bad, 0, "no instance left where the mask allowed erasing")
	check(after.size() > 0 and after.size() < before.size(), "lower instances kept (%d of %d)" % [after.size(), before.size()])
	expect_error("scatter_layer 5 is out of range")
	brush.scatter_layer = 5
	check_eq(brush.paint_at(Vector3.ZERO), -1, "a scatter_layer the island does not have is an error")
	check(isl.get_scatter_positions(0) == after, "nothing changed")


func test_erasures_follow_their_layer_when_layers_are_reordered_or_removed() -> void:
	var pair := _setup()
	var isl: ProceduralIsland = pair[0]
	var brush: TerrainBrush = pair[1]
	# Re-placing runs chunk by chunk within the frame budget; let it finish within a frame here.
	isl.build_budget_ms = 1000.0
	var l0: ScatterLayer = isl.scatter_layers[0]
	var l1: ScatterLayer = isl.scatter_layers[1]
	var c := _centre(isl)
	check(brush.paint_at(isl.to_global(c)) > 0, "erased on layer 0")
	var erased0 := isl.get_scatter_positions(0)
	var full1 := isl.get_scatter_positions(1)
	var samples := isl.splat_paint.get_scatter_erased_samples(0)
	check(samples > 0 and isl.splat_paint.get_scatter_erased_samples(1) == 0, "only layer 0 has erasures")
	# Swap the two layers (what dragging them in the inspector's array does).
	var swapped: Array[ScatterLayer] = [l1, l0]
	isl.scatter_layers = swapped
	await wait_frames(3)
	check_eq(isl.splat_paint.get_scatter_erased_samples(1), samples, "the erasures moved with their layer to index 1")
	check_eq(isl.splat_paint.get_scatter_erased_samples(0), 0, "the other layer got none")
	check(isl.get_scatter_positions(1) == erased0, "the erased layer keeps its gap at its new index")
	check(isl.get_scatter_positions(0) == full1, "the other layer keeps all its instances")
	check_eq(_multimesh_total(isl, 1), erased0.size(), "MultiMeshes of the moved layer follow")
	# Remove the erased layer, then put it back (an undone removal): the erasures return.
	var only: Array[ScatterLayer] = [l1]
	isl.scatter_layers = only
	await wait_frames(3)
	check_eq(isl.splat_paint.get_scatter_erased_samples(0), 0, "layer 1 did not inherit the removed layer's erasures")
	check(isl.get_scatter_positions(0) == full1, "the remaining layer is whole")
	var back: Array[ScatterLayer] = [l0, l1]
	isl.scatter_layers = back
	await wait_frames(3)
	check_eq(isl.splat_paint.get_scatter_erased_samples(0), samples, "the erasures came back with the layer")
	check(isl.get_scatter_positions(0) == erased0, "and its instances are erased again")
	check(isl.get_scatter_positions(1) == full1, "the other layer is whole at its old index")
