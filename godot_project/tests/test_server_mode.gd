extends IslandTestCase
## server_mode (issues 36, 37): a dedicated server's island builds colliders and answers queries,
## but no chunk meshes, splat textures, water surfaces or scatter MultiMeshes; AUTO turns it on
## under the headless display server unless the project opts out (this project does: its tests
## inspect meshes).

const SETTING := "procedural_island/server_mode_when_headless"


func _props(mode: int) -> Dictionary:
	var layer := ScatterLayer.new()
	layer.builtin_mesh = ScatterLayer.ROCK
	layer.density = 30.0
	layer.min_height = 1.0
	layer.max_height = 400.0
	var layers: Array[ScatterLayer] = [layer]
	return {"seed": 11, "world_size": 512.0, "sea_enabled": true, "inland_water_enabled": true,
		"scatter_layers": layers, "server_mode": mode}


## Every node under `n` (internal children included).
func _all(n: Node, out: Array[Node] = []) -> Array[Node]:
	for c in n.get_children(true):
		out.append(c)
		_all(c, out)
	return out


func test_server_island_has_colliders_and_queries_but_nothing_drawn() -> void:
	var server := _island(129, 32, _props(ProceduralIsland.SERVER_MODE_ON))
	var full := _island(129, 32, _props(ProceduralIsland.SERVER_MODE_OFF))
	check(server.is_server_mode_active(), "server mode on")
	check(not full.is_server_mode_active(), "server mode off")
	var drawn := 0
	var multimeshes := 0
	var shapes := 0
	for n in _all(server):
		if n is MeshInstance3D and n.mesh != null and n.mesh.get_surface_count() > 0:
			drawn += 1
		if n is MultiMeshInstance3D:
			multimeshes += 1
		if n is CollisionShape3D and n.shape is HeightMapShape3D:
			shapes += 1
	check_eq(drawn, 0, "no mesh with a surface on the server island")
	check_eq(multimeshes, 0, "no scatter MultiMesh on the server island")
	check_eq(shapes, 16, "one collider per chunk (4 × 4)")
	# The full island does draw: the test would see meshes if server mode built them.
	var full_drawn := 0
	var full_mm := 0
	for n in _all(full):
		if n is MeshInstance3D and n.mesh != null and n.mesh.get_surface_count() > 0:
			full_drawn += 1
		if n is MultiMeshInstance3D:
			full_mm += 1
	check(full_drawn >= 16, "the full island draws its chunks and water (%d)" % full_drawn)
	check(full_mm > 0, "the full island has scatter MultiMeshes")
	# Same colliders, same queries.
	var a := _shape_node(_first_chunk(server))
	var b := _shape_node(_first_chunk(full))
	if check(a != null and b != null, "colliders on both"):
		check_eq((a.shape as HeightMapShape3D).map_data, (b.shape as HeightMapShape3D).map_data, "the server's collider heights are the full island's")
	var wet := 0
	for p in [Vector2(0, 0), Vector2(40, -75), Vector2(-130, 90), Vector2(-245, -245), Vector2(240, 10)]:
		check_eq(server.get_height_at(p.x, p.y), full.get_height_at(p.x, p.y), "height at %s" % p)
		var ws := server.get_water_level_at(p.x, p.y)
		var wf := full.get_water_level_at(p.x, p.y)
		check(is_nan(ws) == is_nan(wf) and (is_nan(ws) or ws == wf), "water at %s: %s / %s" % [p, ws, wf])
		if not is_nan(ws):
			wet += 1
	check(wet > 0, "the server answers water queries (sea at the map's edge)")
	check_eq(server.get_last_stats().land_fraction, full.get_last_stats().land_fraction, "same land")
	# A runtime crater on the server: the heights change, still nothing drawn.
	var brush := TerrainBrush.new()
	server.add_child(brush)
	brush.mode = TerrainBrush.MODE_SCULPT_LOWER
	brush.radius = 20.0
	brush.sculpt_height = 5.0
	var before := server.get_height_at(10, 10)
	check(brush.paint_at(server.to_global(Vector3(10, 0, 10))) > 0, "sculpt dab on the server island")
	var deadline := Time.get_ticks_msec() + 60000
	while server.is_generating() and Time.get_ticks_msec() < deadline:
		await get_tree().process_frame
	check(server.get_height_at(10, 10) < before - 1.0, "the crater is in the server's heights")
	brush.mode = TerrainBrush.MODE_PAINT
	check(brush.paint_at(server.to_global(Vector3(0, 0, 0))) > 0, "painting works on the server island")
	drawn = 0
	for n in _all(server):
		if n is MeshInstance3D and n.mesh != null and n.mesh.get_surface_count() > 0:
			drawn += 1
	check_eq(drawn, 0, "still nothing drawn after the edits")


func _first_chunk(isl: ProceduralIsland) -> Node:
	for c in isl.get_children(true):
		if c is MeshInstance3D and c.name.begins_with("Chunk_"):
			return c
	return null


func test_auto_follows_headless_and_the_project_setting() -> void:
	var had := ProjectSettings.has_setting(SETTING)
	var old: Variant = ProjectSettings.get_setting(SETTING) if had else null
	var isl := ProceduralIsland.new()
	isl.generate_on_ready = false
	add_child(isl)
	check_eq(isl.server_mode, ProceduralIsland.SERVER_MODE_AUTO, "AUTO by default")
	# This suite runs under the headless display server.
	check_eq(DisplayServer.get_name(), "headless", "headless run")
	ProjectSettings.set_setting(SETTING, true)
	check(isl.is_server_mode_active(), "AUTO under headless with the setting on: server")
	ProjectSettings.set_setting(SETTING, false)
	check(not isl.is_server_mode_active(), "AUTO with the setting off: full island")
	ProjectSettings.set_setting(SETTING, null)
	check(isl.is_server_mode_active(), "AUTO without the setting (a user's project): server")
	if had:
		ProjectSettings.set_setting(SETTING, old)
