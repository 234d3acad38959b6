extends IslandTestCase
## The editor plugin's parts that run without the editor: the inspector header of
## ProceduralIsland and TerrainBrush (numbers, preview, progress bar, the brush's island),
## get_preview_image, get_terrain_aabb, and the framing math ("Frame island" / F) that must see
## every corner of the island. The editor itself (camera moved by F, screenshots) is checked by
## tests/editor_shots/run.sh under Xvfb.

const IslandHeader := preload("res://addons/procedural_island/editor/island_header.gd")
const Framing := preload("res://addons/procedural_island/editor/framing.gd")
const WorldHeader := preload("res://addons/procedural_island/editor/world_header.gd")
const InspectorPlugin := preload("res://addons/procedural_island/editor/inspector_plugin.gd")

var timeout_s := 240.0


## Whether a camera at `xf` (looking along -z) with vertical fov `fov` and `aspect` sees `p`.
func _sees(xf: Transform3D, fov: float, aspect: float, p: Vector3) -> bool:
	var l := xf.affine_inverse() * p
	var depth := -l.z
	var tv := tan(deg_to_rad(fov) * 0.5)
	return depth > 0.0 and absf(l.y) <= tv * depth * 1.0001 and absf(l.x) <= tv * aspect * depth * 1.0001


func _corners(isl: Node3D) -> Array[Vector3]:
	var out: Array[Vector3] = []
	var aabb: AABB = isl.get_terrain_aabb()
	for i in 8:
		out.append(isl.global_transform * aabb.get_endpoint(i))
	return out


func _label(root: Node, name: String) -> Label:
	return root.find_child(name, true, false) as Label


func test_preview_image_size_and_land_sea_pixels() -> void:
	var isl := ProceduralIsland.new()
	isl.resolution = 129
	isl.chunk_size = 32
	isl.world_size = 1024.0
	# The round outline (AUTO, the default, may put a bay or a lagoon at the centre).
	isl.island_shape = ProceduralIsland.SHAPE_ROUND
	isl.generate_on_ready = false
	add_child(isl)
	check(isl.get_preview_image(64) == null, "no preview before the first generation")
	check(isl.regenerate(), "generates")
	var img := isl.get_preview_image(64)
	check(img != null and img.get_size() == Vector2i(64, 64), "64×64 preview")
	check_eq(img.get_format(), Image.FORMAT_RGB8, "RGB8")
	# The centre of the round island is land, the corner deep sea.
	check(isl.get_height_at(0.0, 0.0) > 1.0 and isl.get_height_at(-500.0, -500.0) < -1.0, "land centre, sea corner")
	var sea := img.get_pixel(1, 1)
	var land := img.get_pixel(32, 32)
	check(sea.b > sea.r and sea.b > sea.g, "sea pixel is blue: %s" % sea)
	check(not (land.b > land.r and land.b > land.g), "land pixel is not blue: %s" % land)
	check(land != sea, "land and sea differ")
	# Full size: one pixel per sample.
	check_eq(isl.get_preview_image(129).get_size(), Vector2i(129, 129), "full-size preview")
	expect_error("get_preview_image(0)")
	check(isl.get_preview_image(0) == null, "size 0 is refused")


func test_terrain_aabb_spans_map_and_heights() -> void:
	var isl := _island(65, 32, {"world_size": 512.0})
	var aabb := isl.get_terrain_aabb()
	var s := isl.get_last_stats()
	check_near(aabb.position.x, -256.0, 1e-3, "x from -world_size/2")
	check_near(aabb.size.x, 512.0, 1e-3, "x span")
	check_near(aabb.size.z, 512.0, 1e-3, "z span")
	check_near(aabb.position.y, s["min_height"], 1e-3, "lowest height")
	check_near(aabb.end.y, s["max_height"], 1e-3, "highest height")


func test_frame_transform_sees_every_corner_from_above() -> void:
	var isl := _island(65, 32, {"world_size": 2048.0, "max_height": 300.0})
	isl.position = Vector3(500.0, -20.0, -300.0)
	isl.rotation_degrees = Vector3(0.0, 30.0, 0.0)
	for aspect in [16.0 / 9.0, 1.0, 0.5]:
		var xf := isl.get_frame_transform(70.0, aspect, 40.0)
		for c in _corners(isl):
			check(_sees(xf, 70.0, aspect, c), "aspect %.2f: corner %s in view" % [aspect, c])
		var back := xf.basis.z
		check_near(rad_to_deg(asin(back.y)), 40.0, 0.5, "pitched 40° down")
		# Not absurdly far: the island still fills a good part of the view.
		var d := xf.origin.distance_to(isl.global_transform * isl.get_terrain_aabb().get_center())
		check(d < 2048.0 * 2.5 / minf(aspect, 1.0), "distance %.0f is a framing, not a far-away dot" % d)


func test_editor_framing_distance_fits_every_corner() -> void:
	var isl := _island(65, 32, {"world_size": 1024.0})
	isl.position = Vector3(400.0, 0.0, -300.0)
	var pivot := isl.global_position
	for pitch_deg in [30.0, 45.0, 60.0]:
		for yaw in [0.0, 0.8, -2.0]:
			var basis := Framing.orbit_basis(yaw, deg_to_rad(pitch_deg))
			var d := Framing.fit_distance(Framing.island_aabb(isl), pivot, basis, 70.0, 16.0 / 9.0)
			var xf := Transform3D(basis, pivot + basis.z * d)
			var seen := 0
			for c in _corners(isl):
				if _sees(xf, 70.0, 16.0 / 9.0, c):
					seen += 1
			check_eq(seen, 8, "pitch %d yaw %.1f: all corners seen at %.0f m" % [pitch_deg, yaw, d])
			# Tight: 20 % closer loses a corner.
			var near := Transform3D(basis, pivot + basis.z * d * 0.8)
			var seen_near := 0
			for c in _corners(isl):
				if _sees(near, 70.0, 16.0 / 9.0, c):
					seen_near += 1
			check(seen_near < 8, "pitch %d yaw %.1f: the fit is tight" % [pitch_deg, yaw])
	# Pitch correction: a level or top-down view is orbited into 25..65°.
	check_eq(Framing.pitch_steps(40.0), 0, "40° is fine")
	check_eq(Framing.pitch_steps(0.0), 3, "level view: three 15° steps up")
	check_eq(Framing.pitch_steps(90.0), -3, "top view: three steps down")
	var py := Framing.pitch_yaw(Framing.orbit_basis(0.7, deg_to_rad(35.0)))
	check_near(py.x, 35.0, 1e-3, "pitch read back")
	check_near(py.y, 0.7, 1e-4, "yaw read back")


func test_inspector_header_shows_the_island_numbers() -> void:
	var isl := _island(129, 32, {"world_size": 1024.0})
	# inspector_plugin.gd's _can_handle (an EditorInspectorPlugin exists only in the editor).
	check(IslandHeader.handles(isl), "handles ProceduralIsland")
	var plain := Node3D.new()
	check(not IslandHeader.handles(plain), "not a plain Node3D")
	check(IslandHeader.create_for(plain) == null, "no header for it")
	plain.free()
	var header := IslandHeader.create_for(isl)
	add_child(header)
	var s := isl.get_last_stats()
	var text := _label(header, "Info").text
	check(text.contains("Land %.1f %%" % (100.0 * s["land_fraction"])), "land %%: %s" % text)
	check(text.contains("peak %.1f m" % s["max_height"]), "peak: %s" % text)
	check(text.contains("on %s" % str(s["backend"]).to_upper()), "backend: %s" % text)
	check(text.contains("%.0f ms" % s["regenerate_ms"]), "time of the last regenerate(): %s" % text)
	var tex := (header.find_child("Preview", true, false) as TextureRect).texture
	check(tex != null and tex.get_size() == Vector2(IslandHeader.PREVIEW_SIZE, IslandHeader.PREVIEW_SIZE), "preview picture")
	var progress := header.find_child("Progress", true, false) as ProgressBar
	check(not header.is_progress_shown(), "no progress bar while idle")
	check_eq(_label(header, "Stage").text, "Ready.", "idle status")
	await get_tree().process_frame
	var idle_height := header.size.y
	var heights := {}
	# A background generation: the bar shows the stages, then hides; the numbers follow.
	var seen := {"visible": false, "stage": ""}
	isl.generation_progress.connect(func(_f: float, st: String) -> void:
		if header.is_progress_shown():
			seen["visible"] = true
			seen["stage"] = _label(header, "Stage").text)
	isl.seed = 77
	isl.regenerate_async()
	check(header.is_progress_shown(), "progress bar shown when the generation starts")
	var t := 0
	while isl.is_generating() and t < 3000:
		await get_tree().process_frame
		heights[header.size.y] = true
		t += 1
	await get_tree().process_frame
	heights[header.size.y] = true
	check(seen["visible"], "progress bar visible during generation_progress")
	check(str(seen["stage"]).begins_with("Generating: "), "stage named: %s" % seen["stage"])
	check(not header.is_progress_shown(), "progress bar hidden when done")
	# The properties under the header do not move: its height is the same idle and busy.
	check_eq(heights.keys(), [idle_height], "header height constant through a generation")
	var s2 := isl.get_last_stats()
	check_eq(s2["seed"], 77, "new stats")
	check(_label(header, "Info").text.contains("Land %.1f %%" % (100.0 * s2["land_fraction"])), "numbers refreshed")
	header.queue_free()


func test_inspector_header_status_follows_first_generation_failure_and_revert() -> void:
	# A node that has never generated: the header says it is generating, not "Not generated".
	var isl: Node3D = ClassDB.instantiate("ProceduralIsland")
	isl.set("generate_on_ready", false)
	isl.set("resolution", 129)
	isl.set("chunk_size", 32)
	add_child(isl)
	var header := IslandHeader.create_for(isl)
	add_child(header)
	check(_label(header, "Info").text.begins_with("Not generated yet"), "before: %s" % _label(header, "Info").text)
	isl.regenerate_async()
	check(_label(header, "Info").text.begins_with("Generating the first island"), "during the first generation: %s" % _label(header, "Info").text)
	await wait_signal(isl, "generation_finished", 120.0)
	await get_tree().process_frame
	check(_label(header, "Info").text.begins_with("Land "), "after: %s" % _label(header, "Info").text)
	# An invalid value: the failure is shown; reverting it (no new generation: the island is
	# already the one asked for) clears it within a few polls.
	expect_error("invalid parameter `chunk_size`")
	isl.set("chunk_size", 7)
	check(not isl.regenerate(), "invalid chunk size rejected")
	check(_label(header, "Stage").text.begins_with("Generation failed"), "failure shown: %s" % _label(header, "Stage").text)
	isl.set("chunk_size", 32)
	isl.update_configuration_warnings()
	for i in 40:
		await get_tree().process_frame
	check_eq(isl.check_parameters(), "", "no problem (so no warning) after the revert")
	check_eq(_label(header, "Stage").text, "Ready.", "failure text cleared after the revert")
	header.queue_free()
	isl.queue_free()


func test_progress_covers_the_scatter_stage() -> void:
	var isl := _async_island_with_scatter()
	var progress: Array = []
	isl.generation_progress.connect(func(f: float, stage: String) -> void: progress.append([f, stage]))
	isl.seed = 5
	isl.regenerate_async()
	await wait_signal(isl, "generation_finished", 120.0)
	var stages := {}
	var monotonic := true
	for k in progress.size():
		stages[progress[k][1]] = true
		if k > 0 and progress[k][0] < progress[k - 1][0]:
			monotonic = false
	check(stages.has("scatter"), "the scatter is reported as its own stage: %s" % [stages.keys()])
	for p in progress:
		if p[1] == "chunks":
			check(p[0] <= 0.9 + 1e-9, "chunks end at 0.9 when scatter follows (%f)" % p[0])
	check(monotonic, "progress never goes backwards")
	check_eq(progress[-1], [1.0, "done"], "ends at done")
	isl.queue_free()


func _async_island_with_scatter() -> Node3D:
	var isl: Node3D = ClassDB.instantiate("ProceduralIsland")
	isl.set("generate_on_ready", false)
	isl.set("resolution", 257)
	isl.set("chunk_size", 32)
	isl.set("build_budget_ms", 0.5)
	var layer := ScatterLayer.new()
	layer.density = 20.0
	layer.max_height = 1000.0
	var typed: Array[ScatterLayer] = [layer]
	isl.set("scatter_layers", typed)
	add_child(isl)
	return isl


func test_brush_header_names_its_island_layer_and_masks() -> void:
	var isl := _island(65, 32)
	isl.name = "MyIsland"
	var brush := TerrainBrush.new()
	brush.name = "Brush"
	brush.layer = TerrainBrush.LAYER_ROCK
	brush.min_height = 40.0
	brush.max_height = 400.0
	brush.max_slope_degrees = 35.5
	isl.add_child(brush)
	check(IslandHeader.handles(brush), "handles TerrainBrush")
	check_eq(IslandHeader.paints_text(brush), "Paints: MyIsland (parent)", "names the parent")
	check(brush.island.is_empty(), "no island path stored for it")
	var header := IslandHeader.create_for(brush)
	add_child(header)
	var text := _label(header, "Info").text
	check(text.contains("Layer 2 Rock"), "layer: %s" % text)
	check(text.contains("Height 40 … 400 m"), "height range: %s" % text)
	check(text.contains("Slope 0 … 35.5°"), "slope range: %s" % text)
	var swatch := header.find_child("Swatch", true, false) as ColorRect
	check(swatch.color.is_equal_approx(Color(0.42, 0.40, 0.38, 1.0)), "rock's colour from the terrain shader: %s" % swatch.color)
	# A custom ShaderMaterial's tint wins.
	var mat := ShaderMaterial.new()
	mat.shader = load("res://addons/procedural_island/terrain.gdshader")
	mat.set_shader_parameter("layer2_tint", Color(1, 0, 0))
	isl.terrain_material = mat
	brush.layer = TerrainBrush.LAYER_ROCK
	header.refresh()
	check(swatch.color.is_equal_approx(Color(1, 0, 0)), "the island's own material tint")
	# Another layer is picked up without a signal (the header polls).
	brush.layer = TerrainBrush.LAYER_SNOW
	await wait_frames(2)
	await get_tree().create_timer(0.4).timeout
	check(_label(header, "Info").text.contains("Layer 3 Snow"), "follows the layer")
	# A brush elsewhere, painting through `island`.
	var other := TerrainBrush.new()
	add_child(other)
	check(IslandHeader.paints_text(other).begins_with("Paints: nothing"), "no island: says so")
	other.island = other.get_path_to(isl)
	check_eq(IslandHeader.paints_text(other), "Paints: MyIsland", "through its island path")
	header.queue_free()


func test_brush_icon_is_registered() -> void:
	var cfg := ConfigFile.new()
	check_eq(cfg.load("res://addons/procedural_island/procedural_island.gdextension"), OK, "reads the .gdextension")
	var icon: String = cfg.get_value("icons", "TerrainBrush", "")
	check(icon != "" and ResourceLoader.exists(icon), "TerrainBrush has an icon: %s" % icon)
	check(load(icon) is Texture2D, "the icon loads as a texture")


## The paint toolbar offers every brush mode, scatter modes included, in the brush's order.
func test_paint_toolbar_modes_match_the_brush_modes() -> void:
	var PaintTool: GDScript = load("res://addons/procedural_island/editor/paint_tool.gd")
	if not check(PaintTool != null and PaintTool.can_instantiate(), "paint_tool.gd compiles"):
		return
	var names: Array = PaintTool.get_script_constant_map()["MODE_NAMES"]
	var brush := ClassDB.instantiate("TerrainBrush") as Node3D
	var hint := ""
	for p in brush.get_property_list():
		if p["name"] == "mode":
			hint = p["hint_string"]
	brush.free()
	var modes := hint.split(",")
	check_eq(names.size(), modes.size(), "one toolbar entry per brush mode (%s)" % hint)
	check_eq(int(PaintTool.get_script_constant_map()["FIRST_SCATTER_MODE"]),
		int(ClassDB.class_get_integer_constant("TerrainBrush", "MODE_SCATTER_ERASE")),
		"the toolbar's first scatter mode is MODE_SCATTER_ERASE")


## The IslandWorld header: a map of the cells around the first target, the world's numbers, and
## a click on an island picks that island (in the editor the inspector then shows it read-only).
func test_world_header_maps_the_world_and_picks_islands() -> void:
	var w := _world()
	check(WorldHeader.handles(w), "handles IslandWorld")
	var plain := Node3D.new()
	check(not WorldHeader.handles(plain), "not a plain Node3D")
	plain.free()
	var info := _first_island(w)
	var c: Vector3 = info.center
	var target := Node3D.new()
	add_child(target)
	target.position = c
	add_child(w)
	w.targets = [w.get_path_to(target)]
	if not check(w.load_now() >= 1, "the island under the target loaded"):
		return
	var isl := w.get_island_at(c.x, c.z)
	check(InspectorPlugin.is_world_island(isl), "a world island is marked for the read-only inspector")
	check(InspectorPlugin.world_island_text(isl).contains("(%d, %d)" % [info.cell.x, info.cell.y]), "and names its cell")
	check(not InspectorPlugin.is_world_island(_island(33, 32)), "a lone island is not")
	check(_usage(isl, "seed") & PROPERTY_USAGE_READ_ONLY, "a world island's properties are read-only in the inspector")
	check(_usage(isl, "max_height") & PROPERTY_USAGE_READ_ONLY, "all of them")
	var header := WorldHeader.create_for(w)
	add_child(header)
	await wait_frames(2)
	var map := header.find_child("Map", true, false) as TextureRect
	check(map.texture != null and map.texture.get_size() == Vector2(WorldHeader.MAP_SIZE, WorldHeader.MAP_SIZE), "a %d² map" % WorldHeader.MAP_SIZE)
	var text := _label(header, "Info").text
	check(text.contains("1 loaded (1 detailed)") or text.contains("loaded ("), "the numbers: %s" % text)
	check(text.contains("first target"), "centred on the target: %s" % text)
	# The map is centred on the target: its middle is the island under it.
	var picked: Node = header.island_at_map(map.size * 0.5)
	check(picked == isl, "a click in the middle picks the island under the target (%s)" % picked)
	# Off the middle: the point of the world under that pixel.
	var side := minf(map.size.x, map.size.y)
	var metres := 2.0 * w.view_distance * WorldHeader.MAP_EXTENT
	for d in [Vector2(300, -200), Vector2(-1800, 2500), Vector2(3000, 3000)]:
		var at: Vector2 = map.size * 0.5 + d / metres * side
		check(header.island_at_map(at) == w.get_island_at(c.x + d.x, c.z + d.y), "a click %s m off the target picks what is there" % d)
	# The inspector's "Pin this island" (outside the editor it pins directly): the pinned island
	# is the scene's, marked as such, and a click on the map picks it; "Unpin" gives it back.
	var pinned: Node = InspectorPlugin.pin_from_inspector(isl)
	if check(pinned != null and InspectorPlugin.is_pinned_island(pinned), "the Pin button's action pins the island"):
		check(not InspectorPlugin.is_world_island(pinned), "a pinned island is edited, not read-only")
		check(InspectorPlugin.world_of(pinned) == w, "its world is found")
		check(not (_usage(pinned, "seed") & PROPERTY_USAGE_READ_ONLY), "a pinned island's properties are editable")
		check(InspectorPlugin.pinned_island_text(pinned).contains("(%d, %d)" % [info.cell.x, info.cell.y]), "the pinned line names its cell")
		await wait_until(func(): return not pinned.is_generating(), 3000)
		check(header.island_at_map(map.size * 0.5) == pinned, "the map picks the pinned island")
		check(InspectorPlugin.unpin_from_inspector(pinned), "the Unpin dialog's action unpins it")
		await wait_frames(2)
		check(not is_instance_valid(pinned) and w.get_pinned_cells().is_empty(), "the pinned island is gone")
	# Wrong settings: the header says why nothing streams (and raises no error itself).
	w.island_size_max = 4096.0
	header.refresh()
	check(_label(header, "Info").text.begins_with("Nothing streams"), "bad settings are shown: %s" % _label(header, "Info").text)
	header.queue_free()
	w.queue_free()
	target.queue_free()


## The usage flags of `object`'s property `prop` (0 when it has none).
func _usage(object: Object, prop: String) -> int:
	for p in object.get_property_list():
		if p.name == prop:
			return p.usage
	return 0
