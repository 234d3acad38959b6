@tool
extends EditorPlugin
## Drives one whole session of the REAL windowed editor (under `xvfb-run`, started by
## `cargo xtask test`'s real-editor check, which unzips the packaged addon into a fresh
## project, copies this plugin there and enables it). What a user does, in order:
##   1. open res://session_scene.tscn (an island with a brush), wait for the island; create a
##      second island far away the way the Create Node dialog does (add, then set the owner,
##      through undo/redo) and check that the editor camera frames it once it has generated;
##   2. select the island (the inspector shows its resource pickers, which ask the editor's
##      preview thread for previews), create a TerrainLayer and give it an albedo texture,
##      create a ScatterLayer and change its density, each through the editor's undo/redo;
##   3. inspect both layers and ask the previewer for their previews and for the scene file's
##      thumbnail (the preview thread loads and instantiates the scene);
##   4. select the brush and paint a stroke with the mouse in the 3D viewport; then sculpt a
##      raise stroke the same way (the shown terrain must follow the mouse before the button is
##      released, the island regenerates on release) and undo it from the editor's history
##      (the heights must come back bit for bit);
##   4b. bake a navigation mesh of the island in the editor (a NavigationRegion3D that finds
##      the island by group, not saved with the scene): polygons on dry ground only;
##   4c. add an IslandPath (a road) and an IslandStamp (a crater) as the Create Node dialog does,
##      drag a curve point and move the stamp through undo/redo as the gizmos do (the island
##      follows each edit in the background; the time to the updated island and the editor's
##      slowest frame meanwhile are printed), then undo both moves from the history (the heights
##      must come back bit for bit); the path and the stamp are saved with the scene (step 5);
##   4d. time layout edits at 1025² with the Script screen in front (the 3D viewport is not
##      drawn, so lavapipe's second-long frames do not count): the island at 1025², the crater
##      selected (as when its gizmo is dragged) and moved four times (there and back), each from
##      the edit to the updated island, with the progress stages' times and the island's
##      statistics; every chunk mesh must then show the island exactly; then the resolution and
##      the 3D screen as they were (`ISLAND_SESSION_TIMING=N`: only this step, with 4c's
##      path and stamp, and N edits if more than 4);
##   5. change the seed (the island regenerates), save, close and reopen the scene, select the
##      island again, load the saved scene on a thread as a game's loading screen does
##      (`ResourceLoader.load_threaded_request`) and ask for the previews again;
##   6. run a scene from the editor (Run Custom Scene, as F6 does) and wait for the game
##      process to write a file: the editor must be able to launch its own executable;
##   6b. add an IslandWorld of small islands (streams around the editor camera), click the
##      island nearest the middle of its inspector map: the island's properties show read-only;
##      press "Pin this island": the pinned island is the scene's, selected, editable; undo it;
##      pin it again (redo), press "Unpin" on the pinned island and OK in its confirmation
##      dialog: the cell is the world's again;
##   7. print `SESSION quit` and quit.
## Prints `SESSION ...` lines; the check fails on any panic, error, leak or crash in the output
## and on an exit that takes longer than a few seconds after `SESSION quit`.

const SCENE := "res://session_scene.tscn"
## Written by the game that `session_game.tscn` runs.
const GAME_MARK := "user://session_game_ran.txt"
const TIMEOUT_FRAMES := 60000

var _active := false
var _frames := 0
var _step := 0
var _wait := 0
var _deadline := 0
var _island: Node3D = null
var _brush: Node3D = null
var _previews_asked := 0
var _threaded_deadline := 0
var _previews_done := 0
var _stroke_mouse := Vector2.ZERO
var _new_island: Node3D = null
var _game_deadline := 0
var _busy := false
var _textured_deadline := 0
var _frame_times := PackedFloat64Array()
var _last_frame_us := 0
var _low_processor := true
## `--shot=PATH`: a screenshot of the editor with its Output panel open, before quitting.
var _shot := ""
## `--timing-only`: only the layout timing of step 4d (with the path and stamp of 4c), then quit.
var _timing_only := false


func _enter_tree() -> void:
	_active = "--island-session" in OS.get_cmdline_user_args()
	_timing_only = "--timing-only" in OS.get_cmdline_user_args()
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--shot="):
			_shot = a.substr(7)
	set_process(_active)


## Open the editor's Output panel (a tab of the bottom panel in 4.6, a toggle button before),
## for the screenshot.
func _show_output_panel() -> void:
	var base := EditorInterface.get_base_control()
	for t in base.find_children("*", "TabBar", true, false):
		var bar := t as TabBar
		for i in bar.tab_count:
			if bar.get_tab_title(i) == "Output":
				bar.current_tab = i
				bar.tab_clicked.emit(i)
				return
	for b in base.find_children("*", "Button", true, false):
		if (b as Button).text == "Output" and (b as Button).toggle_mode:
			if not (b as Button).button_pressed:
				(b as Button).button_pressed = true
			return
	print("SESSION no Output panel button found")


func _process(_delta: float) -> void:
	# Saving shows a progress dialog that runs frames (and so this) from inside save_scene().
	if _busy:
		return
	_busy = true
	_step_once()
	_busy = false


func _step_once() -> void:
	_frames += 1
	if _frames > TIMEOUT_FRAMES:
		_finish("SESSION FAIL timeout at step %d" % _step)
		return
	if _wait > 0:
		_wait -= 1
		return
	match _step:
		0:
			if _frames < 10:
				return
			print("SESSION open ", SCENE)
			EditorInterface.open_scene_from_path(SCENE)
			_step = 1
			_wait = 2
		1:
			if not _find_island():
				return
			EditorInterface.set_main_screen_editor("3D")
			if _timing_only:
				_step = 65
				return
			_create_new_island()
			_step = 100
			_wait = 2
		100:
			if _new_island.call("is_generating") or _new_island.call("get_last_stats").is_empty():
				return
			_step = 101
			_wait = 50
		101:
			var seen := _corners_visible(_new_island)
			print("SESSION new island framed: %d/8 corners visible" % seen)
			if seen < 6:
				print("SESSION FAIL a new island is not framed (%d/8 corners visible)" % seen)
			_check_mask_texture_change(_new_island)
			_select(_island)
			print("SESSION island ready, selected")
			_textured_deadline = Time.get_ticks_msec() + 60000
			_step = 102
		102:
			# The scene's TerrainLayer has a NoiseTexture2D albedo (generated on a thread after
			# the scene opens): the layer is drawn with it once it is ready, with no error line.
			var slot := _albedo_slot0(_island)
			if slot != 0 and Time.get_ticks_msec() < _textured_deadline:
				return
			print("SESSION noise texture layer: albedo slot %d" % slot)
			if slot != 0:
				print("SESSION FAIL the NoiseTexture2D layer was never textured")
			_frame_times = PackedFloat64Array()
			_last_frame_us = 0
			# Every frame drawn while measuring (the editor otherwise draws only on changes).
			_low_processor = OS.low_processor_usage_mode
			OS.low_processor_usage_mode = false
			_step = 103
		103:
			# What a frame of the editor costs with the textured layer and the island in view.
			var now := Time.get_ticks_usec()
			if _last_frame_us > 0:
				_frame_times.append((now - _last_frame_us) / 1000.0)
			_last_frame_us = now
			if _frame_times.size() < 12:
				return
			OS.low_processor_usage_mode = _low_processor
			var s := _frame_times.duplicate()
			s.sort()
			print("SESSION editor frames with a textured layer: p50 %.0f ms, max %.0f ms (%d frames, %s)" % [
				s[s.size() / 2], s[s.size() - 1], s.size(), RenderingServer.get_video_adapter_name()])
			if _shot != "":
				var img := EditorInterface.get_base_control().get_viewport().get_texture().get_image()
				var p := _shot.get_basename() + "_textured.png"
				print("SESSION screenshot ", p, " ", error_string(img.save_png(p)))
			_step = 2
			_wait = 5
		2:
			_create_layers()
			_step = 3
			_wait = 10
		3:
			_ask_previews()
			_step = 4
		4:
			if not _previews_finished():
				return
			_select(_brush)
			_step = 50
			_wait = 5
		50:
			# F frames the island (the addon's framing), so the stroke lands on the terrain.
			var f := InputEventKey.new()
			f.keycode = KEY_F
			f.physical_keycode = KEY_F
			f.pressed = true
			_surface().gui_input.emit(f)
			_step = 5
			_wait = 50
		5:
			_frame_and_paint()
			_step = 6
			_wait = 5
		6:
			_step = 60 if _stroke_step() else 6
		60:
			_brush.set("mode", 5)
			_brush.set("sculpt_height", 2.0)
			_brush.set("radius", 12.0)
			_sculpt_before = _heights()
			_stroke_moves = 0
			_frame_and_paint()
			_step = 61
			_wait = 2
		61:
			if _stroke_moves < 12:
				_stroke_mouse += Vector2(10, 0)
				var ev := InputEventMouseMotion.new()
				ev.position = _stroke_mouse
				ev.global_position = _stroke_mouse
				ev.button_mask = MOUSE_BUTTON_MASK_LEFT
				_surface().gui_input.emit(ev)
				_stroke_moves += 1
				if _stroke_moves == 6:
					var changed := _count_changed(_sculpt_before, _heights())
					print("SESSION sculpt stroke: the shown terrain follows the mouse (%d samples raised before release)" % changed)
					if changed == 0:
						print("SESSION FAIL the terrain did not follow the sculpt stroke")
					if _shot != "":
						var img := EditorInterface.get_base_control().get_viewport().get_texture().get_image()
						var p := _shot.get_basename() + "_sculpt.png"
						print("SESSION screenshot ", p, " ", error_string(img.save_png(p)))
				return
			_mouse_button(false)
			print("SESSION sculpt stroke released, regenerating: ", _island.call("is_generating"))
			_step = 62
			_wait = 2
		62:
			if _island.call("is_generating"):
				return
			_sculpt_after = _heights()
			var changed := _count_changed(_sculpt_before, _sculpt_after)
			print("SESSION sculpt regenerated: %d samples changed, has_sculpt %s" % [changed, _island.call("has_sculpt")])
			if changed == 0:
				print("SESSION FAIL the sculpt stroke left no edit")
			var ur := get_undo_redo()
			var history := ur.get_history_undo_redo(ur.get_object_history_id(_brush))
			print("SESSION undo: ", history.get_current_action_name())
			history.undo()
			_step = 63
			_wait = 3
		63:
			if _island.call("is_generating"):
				return
			var same := _heights() == _sculpt_before
			print("SESSION sculpt undone: heights restored exactly: %s" % same)
			if not same:
				print("SESSION FAIL undo of a sculpt stroke did not restore the heights (%d samples differ)" % _count_changed(_sculpt_before, _heights()))
			_brush.set("mode", 0)
			_step = 64
		64:
			_bake_navigation_in_editor()
			_step = 65
		65:
			_add_path_and_stamp()
			_step = 66
			if _timing_only:
				_step = 67
				_wait = 30
		66:
			# Each layout edit: wait for the island to follow it, then the next edit.
			if not _layout_edit_done():
				return
			_layout_step += 1
			if _layout_step < 5:
				_layout_edit(_layout_step)
				return
			_step = 67
		67:
			EditorInterface.set_main_screen_editor("Script")
			_timing_res = int(_island.get("resolution"))
			_island.set("resolution", 1025)
			# As when the crater's gizmo is dragged: the stamp is the selected node.
			_select(_stamp)
			print("SESSION layout timing: the Script screen in front, the island at 1025², the stamp selected")
			_step = 68
			_wait = 2
		68:
			if _island.call("is_generating") or _heights().size() != 1025 * 1025:
				return
			_timing_edit(0)
			_step = 69
		69:
			_layout_frame()
			if _island.call("is_generating"):
				if _gen_seen_ms < 0:
					_gen_seen_ms = Time.get_ticks_msec() - _layout_t0
					_gen_seen_frames = _layout_frames
				return
			if _gen_seen_ms >= 0 and _gen_done_ms < 0:
				_gen_done_ms = Time.get_ticks_msec() - _layout_t0
				_gen_done_frames = _layout_frames
			var h := _heights()
			if h == _layout_before and Time.get_ticks_msec() - _layout_t0 < 30000:
				return
			var ms := Time.get_ticks_msec() - _layout_t0
			_timing_ms.append(ms)
			print("SESSION layout timing 1025: %s, island updated %d ms after the edit (%d editor frames, the slowest %.0f ms)" % [
				_timing_kind, ms, _layout_frames, _layout_frame_max])
			var st: Dictionary = _island.call("get_last_stats")
			print("SESSION layout timing 1025: generating from %d ms (frame %d) to %d ms (frame %d)" % [
				_gen_seen_ms, _gen_seen_frames, _gen_done_ms, _gen_done_frames])
			var keys := ["total_ms", "mesh_ms", "build_ms", "maps_ms", "regenerate_ms", "chunks", "kept_chunks", "encoded_surfaces", "node_frame_ms_max", "node_frame_cpu_ms_max", "node_frame_phase", "scatter_ms", "scatter_place_ms", "scatter_frame_ms_max"]
			var parts := []
			for k in keys:
				parts.append("%s %s" % [k, str(st.get(k, "-"))])
			print("SESSION layout timing 1025: the island's stats: %s" % ", ".join(parts))
			print("SESSION layout timing 1025: stages first seen (ms after the edit): %s" % str(_stage_ms))
			_timing_node_frames.append(Vector2(float(st.get("node_frame_ms_max", 0.0)), float(st.get("node_frame_cpu_ms_max", 0.0))))
			if _timing_ms.size() < maxi(4, int(OS.get_environment("ISLAND_SESSION_TIMING"))):
				_timing_edit(_timing_ms.size())
				return
			var sorted := _timing_ms.duplicate()
			sorted.sort()
			print("SESSION layout timing 1025: median %d ms, max %d ms over %d edits" % [
				sorted[sorted.size() / 2], sorted[sorted.size() - 1], sorted.size()])
			# The node's worst frame per edit (wall / main-thread CPU) against build_budget_ms.
			var frames := []
			for f in _timing_node_frames:
				frames.append("%.2f / %.2f" % [f.x, f.y])
			print("SESSION layout timing 1025: the node's worst frame per edit, wall / CPU ms (build_budget_ms %s): %s" % [
				str(_island.get("build_budget_ms")), ", ".join(frames)])
			# Kept chunks and rebuilt ones must show the island exactly.
			var worst := _chunks_off_the_island()
			print("SESSION layout timing 1025: chunk meshes against the island: worst %s m, AABBs hold their vertices: %s" % [worst.x, worst.y == 0.0])
			if worst.x != 0.0 or worst.y != 0.0:
				print("SESSION FAIL chunk meshes do not show the island after layout edits (worst %s m, AABB misses %d)" % [worst.x, int(worst.y)])
			_island.set("resolution", _timing_res)
			_select(_island)
			EditorInterface.set_main_screen_editor("3D")
			_step = 70
			_wait = 2
		70:
			if _island.call("is_generating") or _heights().size() != _timing_res * _timing_res:
				return
			if _timing_only:
				_finish("SESSION quit")
				return
			_step = 7
		7:
			var ur := get_undo_redo()
			ur.create_action("Change seed")
			ur.add_do_property(_island, "seed", int(_island.get("seed")) + 7)
			ur.add_undo_property(_island, "seed", _island.get("seed"))
			ur.commit_action()
			print("SESSION seed changed to ", _island.get("seed"))
			_step = 8
			_wait = 2
		8:
			if _island.call("is_generating"):
				return
			var err := EditorInterface.save_scene()
			print("SESSION saved: ", error_string(err))
			_step = 9
			_wait = 5
		9:
			# Reopen: close the scene tab and open the file again.
			EditorInterface.close_scene()
			_island = null
			_step = 10
			_wait = 10
		10:
			EditorInterface.open_scene_from_path(SCENE)
			_step = 11
			_wait = 2
		11:
			if not _find_island():
				return
			var layers: Array = _island.get("terrain_layers")
			var scatter: Array = _island.get("scatter_layers")
			var paint: Resource = _island.get("splat_paint")
			print("SESSION reopened: %d terrain layers, %d scatter layers, paint %s" % [
				layers.size(), scatter.size(), "saved" if paint != null and (paint.get("data") as PackedByteArray).size() > 0 else "MISSING"])
			var road := _island.get_node_or_null("Road")
			var crater := _island.get_node_or_null("Crater")
			var road_ok: bool = road != null and road.get("curve") != null and (road.get("curve") as Curve3D).point_count == 3 \
				and (road.get("curve") as Curve3D).get_point_position(1) == ROAD_POINTS[1]
			var crater_ok: bool = crater != null and crater.position == Vector3(150, 0, -150)
			print("SESSION reopened: road %s, crater %s" % ["saved" if road_ok else "MISSING", "saved" if crater_ok else "MISSING"])
			_select(_island)
			# A game's loading screen: the saved scene (island, layers with a texture, paint)
			# loaded on a WorkerThreadPool thread.
			print("SESSION threaded load of ", SCENE, ": ", error_string(
				ResourceLoader.load_threaded_request(SCENE, "", false, ResourceLoader.CACHE_MODE_IGNORE)))
			_threaded_deadline = Time.get_ticks_msec() + 60000
			_step = 111
		111:
			var status := ResourceLoader.load_threaded_get_status(SCENE)
			if status == ResourceLoader.THREAD_LOAD_IN_PROGRESS and Time.get_ticks_msec() < _threaded_deadline:
				return
			if status != ResourceLoader.THREAD_LOAD_LOADED:
				print("SESSION FAIL threaded load status ", status)
			else:
				var packed := ResourceLoader.load_threaded_get(SCENE) as PackedScene
				var root := packed.instantiate()
				var isl := root.get_node_or_null("Island")
				var n_layers := (isl.get("terrain_layers") as Array).size() if isl != null else -1
				var n_scatter := (isl.get("scatter_layers") as Array).size() if isl != null else -1
				var painted := isl != null and isl.get("splat_paint") != null
				print("SESSION threaded load: loaded, %d terrain layers, %d scatter layers, paint %s" % [
					n_layers, n_scatter, "saved" if painted else "MISSING"])
				root.free()
			_step = 12
			_wait = 10
		12:
			_ask_previews()
			_step = 13
		13:
			if not _previews_finished():
				return
			if _shot != "":
				# The Output panel of the whole session (running a scene clears it).
				_show_output_panel()
				_step = 131
				_wait = 10
				return
			_step = 132
		131:
			var img := EditorInterface.get_base_control().get_viewport().get_texture().get_image()
			print("SESSION screenshot ", _shot, " ", error_string(img.save_png(_shot)))
			_step = 132
		132:
			DirAccess.remove_absolute(GAME_MARK)
			print("SESSION running res://session_game.tscn from the editor")
			EditorInterface.play_custom_scene("res://session_game.tscn")
			_game_deadline = Time.get_ticks_msec() + 120000
			_step = 130
		130:
			if FileAccess.file_exists(GAME_MARK):
				print("SESSION game ran: ", FileAccess.get_file_as_string(GAME_MARK))
			elif Time.get_ticks_msec() < _game_deadline:
				return
			else:
				print("SESSION FAIL the game started from the editor did not run (editor executable %s)" % OS.get_executable_path())
			if EditorInterface.is_playing_scene():
				EditorInterface.stop_playing_scene()
			_step = 140
			_wait = 10
		140:
			_add_world()
			_step = 141
		141:
			if not _world_step_pick():
				return
			_step = 142
			_wait = 10
		142:
			if not _world_step_pin():
				return
			_step = 143
			_wait = 10
		143:
			_world_step_undo_pin()
			_step = 144
			_wait = 5
		144:
			var left: Array = _world.call("get_pinned_cells")
			if not left.is_empty():
				print("SESSION FAIL undoing the pin left pinned cells %s" % [left])
			else:
				print("SESSION world pin undone: no pinned cell")
			_world_step_redo_pin()
			_step = 145
			_wait = 10
		145:
			_world_step_unpin()
			_step = 146
			_wait = 10
		146:
			_world_step_confirm_unpin()
			_step = 147
			_wait = 10
		147:
			var pinned_left: Array = _world.call("get_pinned_cells")
			if not pinned_left.is_empty():
				print("SESSION FAIL Unpin + OK left pinned cells %s" % [pinned_left])
			else:
				print("SESSION world island unpinned through the dialog: no pinned cell")
			_world.queue_free()
			_world = null
			EditorInterface.set_main_screen_editor("3D")
			_step = 14
			_wait = 10
		14:
			_finish("SESSION quit")


var _path: Node3D = null
var _stamp: Node3D = null
var _layout_step := 0
var _layout_t0 := 0
var _layout_before := PackedFloat32Array()
var _layout_heights: Array = []
var _layout_frame_max := 0.0
var _layout_frames := 0
var _layout_last_us := 0
var _layout_seen_busy := false
const ROAD_POINTS := [Vector3(-300, 0, 120), Vector3(-120, 0, 60), Vector3(60, 0, 100)]


## Step 4c: an IslandPath (road) and an IslandStamp (crater) added as the Create Node dialog
## adds nodes (through undo/redo, owned by the scene root).
func _add_path_and_stamp() -> void:
	var root := EditorInterface.get_edited_scene_root()
	_path = ClassDB.instantiate("IslandPath")
	_path.name = "Road"
	_path.set("width", 10.0)
	var c := Curve3D.new()
	for q in ROAD_POINTS:
		c.add_point(q)
	_path.set("curve", c)
	_stamp = ClassDB.instantiate("IslandStamp")
	_stamp.name = "Crater"
	_stamp.set("kind", 1)
	_stamp.set("radius", 70.0)
	_stamp.set("height", 25.0)
	_stamp.position = Vector3(150, 0, -150)
	var ur := get_undo_redo()
	ur.create_action("Create Node")
	for n in [_path, _stamp]:
		ur.add_do_method(_island, "add_child", n, true)
		ur.add_do_method(n, "set_owner", root)
		ur.add_do_reference(n)
		ur.add_undo_method(_island, "remove_child", n)
	ur.commit_action()
	print("SESSION added an IslandPath (road) and an IslandStamp (crater)")
	_layout_started()


## Edit `k` of step 4c: 1 drag the road's middle point, 2 move the crater, 3 undo the crater
## move, 4 undo the point drag.
func _layout_edit(k: int) -> void:
	var ur := get_undo_redo()
	match k:
		1:
			var curve: Curve3D = _path.get("curve")
			ur.create_action("Set Curve Point Position")
			ur.add_do_method(curve, "set_point_position", 1, ROAD_POINTS[1] + Vector3(0, 0, -90))
			ur.add_undo_method(curve, "set_point_position", 1, ROAD_POINTS[1])
			ur.commit_action()
			print("SESSION dragged the road's middle point 90 m")
		2:
			ur.create_action("Move")
			ur.add_do_property(_stamp, "position", Vector3(-150, 0, -200))
			ur.add_undo_property(_stamp, "position", _stamp.position)
			ur.commit_action()
			print("SESSION moved the crater stamp")
		3, 4:
			var target: Object = _stamp if k == 3 else _path.get("curve")
			var history := ur.get_history_undo_redo(ur.get_object_history_id(target))
			print("SESSION undo: ", history.get_current_action_name())
			history.undo()
	_layout_started()


var _timing_res := 0
var _timing_ms: Array = []
var _timing_node_frames: Array[Vector2] = []
var _timing_kind := ""


## Timing edit `k` (step 4d): in turns of two, the crater 60 m south and back, as the gizmo
## moves it (an undoable "Move"), and the road's middle point 40 m north and back, as the curve
## editor drags it (an undoable "Set Curve Point Position").
func _timing_edit(k: int) -> void:
	var ur := get_undo_redo()
	var back := k % 2 == 1
	if (k / 2) % 2 == 0:
		_timing_kind = "crater moved"
		var to := _stamp.position + Vector3(0, 0, -60.0 if back else 60.0)
		ur.create_action("Move")
		ur.add_do_property(_stamp, "position", to)
		ur.add_undo_property(_stamp, "position", _stamp.position)
		ur.commit_action()
	else:
		_timing_kind = "road point moved"
		var curve: Curve3D = _path.get("curve")
		var at := curve.get_point_position(1)
		ur.create_action("Set Curve Point Position")
		ur.add_do_method(curve, "set_point_position", 1, at + Vector3(0, 0, 40.0 if back else -40.0))
		ur.add_undo_method(curve, "set_point_position", 1, at)
		ur.commit_action()
	_layout_started()
	_gen_seen_ms = -1
	_gen_done_ms = -1
	_stage_ms = {}
	if not _island.is_connected("generation_progress", _on_timing_progress):
		_island.connect("generation_progress", _on_timing_progress)


var _stage_ms := {}


## When each progress stage of a timed edit was first reported (ms after the edit).
func _on_timing_progress(_f: float, stage: String) -> void:
	if not _stage_ms.has(stage):
		_stage_ms[stage] = Time.get_ticks_msec() - _layout_t0


var _gen_seen_ms := -1
var _gen_seen_frames := 0
var _gen_done_ms := -1
var _gen_done_frames := 0


## The worst difference between a chunk mesh's vertex heights and the island's heightmap (x)
## and the number of vertices outside their mesh's AABB (y).
func _chunks_off_the_island() -> Vector2:
	var img: Image = _island.call("get_heightmap_image")
	var cs := int(_island.get("chunk_size"))
	var worst := Vector2.ZERO
	for c in _island.get_children(true):
		if not (c is MeshInstance3D) or not String(c.name).begins_with("Chunk_"):
			continue
		var mesh := (c as MeshInstance3D).mesh as ArrayMesh
		if mesh == null or mesh.get_surface_count() == 0:
			continue
		var parts := String(c.name).split("_")
		var x0 := int(parts[1]) * cs
		var z0 := int(parts[2]) * cs
		var verts := mesh.surface_get_arrays(0)[Mesh.ARRAY_VERTEX] as PackedVector3Array
		var box := mesh.get_aabb().grow(1e-3)
		for j in cs + 1:
			for i in cs + 1:
				var v := verts[j * (cs + 1) + i]
				worst.x = maxf(worst.x, absf(v.y - img.get_pixel(x0 + i, z0 + j).r))
				if not box.has_point(v):
					worst.y += 1.0
	return worst


func _layout_started() -> void:
	_layout_before = _heights()
	_layout_t0 = Time.get_ticks_msec()
	_layout_frame_max = 0.0
	_layout_frames = 0
	_layout_last_us = Time.get_ticks_usec()
	_layout_seen_busy = false


## One editor frame since the last layout edit: its length into the slowest one.
func _layout_frame() -> void:
	var now := Time.get_ticks_usec()
	_layout_frame_max = maxf(_layout_frame_max, (now - _layout_last_us) / 1000.0)
	_layout_last_us = now
	_layout_frames += 1


## Whether the island has followed the last layout edit (then prints what it took and checks
## the heights).
func _layout_edit_done() -> bool:
	_layout_frame()
	if _island.call("is_generating"):
		_layout_seen_busy = true
		return false
	var h := _heights()
	var waited := Time.get_ticks_msec() - _layout_t0
	if h == _layout_before and waited < 30000:
		return false
	var changed := _count_changed(_layout_before, h)
	print("SESSION layout edit %d: island updated %d ms after the edit, %d samples changed, slowest editor frame meanwhile %.0f ms" % [
		_layout_step, waited, changed, _layout_frame_max])
	if changed == 0:
		print("SESSION FAIL layout edit %d did not change the island" % _layout_step)
	_layout_heights.append(h)
	# Undoing the crater move gives the heights after the point drag, undoing the drag those
	# after adding the nodes.
	if _layout_step == 3 or _layout_step == 4:
		var want: PackedFloat32Array = _layout_heights[4 - _layout_step]
		var same := h == want
		print("SESSION layout undo %d: heights restored exactly: %s" % [_layout_step - 2, same])
		if not same:
			print("SESSION FAIL undo of a layout edit did not restore the heights (%d samples differ)" % _count_changed(want, h))
	return true


## The albedo slot of splat layer 0 on the island's chunk material (-1: drawn without a texture).
func _albedo_slot0(isl: Node) -> int:
	for c in isl.get_children(true):
		if c is MeshInstance3D and c.material_override is ShaderMaterial:
			var slots: Variant = (c.material_override as ShaderMaterial).get_shader_parameter("layer_albedo_slot")
			if slots is PackedInt32Array and (slots as PackedInt32Array).size() > 0:
				return (slots as PackedInt32Array)[0]
			return -1
	return -1


func _find_island() -> bool:
	var root := EditorInterface.get_edited_scene_root()
	if root == null:
		return false
	_island = root.get_node_or_null("Island")
	if _island == null or _island.call("is_generating") or _island.call("get_last_stats").is_empty():
		return false
	_brush = _island.get_node_or_null("Brush")
	return true


func _create_new_island() -> void:
	var root := EditorInterface.get_edited_scene_root()
	_new_island = ClassDB.instantiate("ProceduralIsland")
	_new_island.name = "NewIsland"
	_new_island.set("resolution", 129)
	_new_island.set("chunk_size", 32)
	_new_island.set("world_size", 1024.0)
	_new_island.position = Vector3(6000, 0, -5000)
	var ur := get_undo_redo()
	ur.create_action("Create Node")
	ur.add_do_method(root, "add_child", _new_island, true)
	ur.add_do_method(_new_island, "set_owner", root)
	ur.add_do_reference(_new_island)
	ur.add_undo_method(root, "remove_child", _new_island)
	ur.commit_action()
	_select(_new_island)  # as the Create Node dialog does
	print("SESSION new island created at ", _new_island.position)


## A drawn coast mask whose texture changes is read again (the node caches the converted mask
## per texture until `changed`). Needs a real renderer: headless, `ImageTexture.get_image()`
## keeps returning the first image.
func _check_mask_texture_change(isl: Node3D) -> void:
	var tex := ImageTexture.create_from_image(_mask_image(false))
	isl.set("coast_mask", tex)
	var disc_ok: bool = isl.call("regenerate")
	var disc_h: float = isl.call("get_height_at", 0.0, 0.0)
	tex.set_image(_mask_image(true))
	var ring_ok: bool = isl.call("regenerate")
	var ring_h: float = isl.call("get_height_at", 0.0, 0.0)
	print("SESSION coast mask texture: disc centre %.1f m, after set_image (ring) %.1f m" % [disc_h, ring_h])
	if not (disc_ok and ring_ok and disc_h > 0.0 and ring_h < 0.0):
		print("SESSION FAIL a changed coast_mask texture was not read again")
	isl.set("coast_mask", null)
	isl.call("regenerate")


## A 100² mask: a disc of land, or a ring of land around a sea centre.
func _mask_image(ring: bool) -> Image:
	var img := Image.create(100, 100, false, Image.FORMAT_RGB8)
	img.fill(Color.BLACK)
	for y in 100:
		for x in 100:
			var d := Vector2(x - 50.0, y - 50.0).length()
			if d < 30.0 and (not ring or d > 18.0):
				img.set_pixel(x, y, Color.WHITE)
	return img


func _corners_visible(isl: Node3D) -> int:
	var cam := EditorInterface.get_editor_viewport_3d(0).get_camera_3d()
	var aabb: AABB = isl.call("get_terrain_aabb")
	var n := 0
	for i in 8:
		if cam.is_position_in_frustum(isl.global_transform * aabb.get_endpoint(i)):
			n += 1
	return n


func _create_layers() -> void:
	var ur := get_undo_redo()
	var tex_img := Image.create(64, 64, false, Image.FORMAT_RGBA8)
	tex_img.fill(Color(0.35, 0.55, 0.2))
	for i in 64:
		tex_img.set_pixel(i, i, Color(0.2, 0.3, 0.1))
	var layer: Resource = ClassDB.instantiate("TerrainLayer")
	layer.set("name", "Moss")
	var layers: Array = (_island.get("terrain_layers") as Array).duplicate()
	layers.append(layer)
	ur.create_action("Add terrain layer")
	ur.add_do_property(_island, "terrain_layers", layers)
	ur.add_undo_property(_island, "terrain_layers", _island.get("terrain_layers"))
	ur.commit_action()
	EditorInterface.inspect_object(layer)
	ur.create_action("Set albedo texture")
	ur.add_do_property(layer, "albedo_texture", ImageTexture.create_from_image(tex_img))
	ur.add_undo_property(layer, "albedo_texture", null)
	ur.commit_action()
	var scatter: Resource = ClassDB.instantiate("ScatterLayer")
	scatter.set("mesh", BoxMesh.new())
	var sl: Array = (_island.get("scatter_layers") as Array).duplicate()
	sl.append(scatter)
	ur.create_action("Add scatter layer")
	ur.add_do_property(_island, "scatter_layers", sl)
	ur.add_undo_property(_island, "scatter_layers", _island.get("scatter_layers"))
	ur.commit_action()
	EditorInterface.inspect_object(scatter)
	ur.create_action("Change density")
	ur.add_do_property(scatter, "density", 3.0)
	ur.add_undo_property(scatter, "density", scatter.get("density"))
	ur.commit_action()
	print("SESSION layers created: terrain layer with albedo texture, scatter layer with a mesh")
	_select(_island)


func _ask_previews() -> void:
	var previewer := EditorInterface.get_resource_previewer()
	var res: Array[Resource] = []
	for l in _island.get("terrain_layers"):
		res.append(l)
	for l in _island.get("scatter_layers"):
		res.append(l)
	if _island.get("splat_paint") != null:
		res.append(_island.get("splat_paint"))
	for r in res:
		EditorInterface.inspect_object(r)
		previewer.queue_edited_resource_preview(r, self, "_on_preview", r.get_class())
		_previews_asked += 1
	# The scene file's thumbnail: the preview thread loads and instantiates the whole scene.
	previewer.queue_resource_preview(SCENE, self, "_on_preview", "scene thumbnail")
	_previews_asked += 1
	_deadline = _frames + 3000
	print("SESSION asked for %d previews" % _previews_asked)
	_select(_island)


func _previews_finished() -> bool:
	if _previews_done >= _previews_asked:
		print("SESSION previews done: %d" % _previews_done)
		return true
	if _frames > _deadline:
		print("SESSION previews: %d of %d answered, going on" % [_previews_done, _previews_asked])
		return true
	return false


func _on_preview(_path: String, _preview: Texture2D, _thumb: Texture2D, what: Variant) -> void:
	_previews_done += 1
	print("SESSION preview answered: ", what)


func _frame_and_paint() -> void:
	# Look straight at the island's centre from above at an angle, then drag across the middle.
	var cam := EditorInterface.get_editor_viewport_3d(0).get_camera_3d()
	var centre := _island.global_position + Vector3(0, 20, 0)
	print("SESSION camera at ", cam.global_position, " looking for the island at ", centre)
	var vp := EditorInterface.get_editor_viewport_3d(0)
	_stroke_mouse = vp.get_visible_rect().size * 0.5 - Vector2(60, 0)
	_mouse_button(true)


var _stroke_moves := 0
var _sculpt_before := PackedFloat32Array()
var _sculpt_after := PackedFloat32Array()


func _heights() -> PackedFloat32Array:
	var img: Image = _island.call("get_heightmap_image")
	return PackedFloat32Array() if img == null else img.get_data().to_float32_array()


## Bake a NavigationRegion3D over the island in the editor (the addon's source-geometry parser
## must give the dry terrain): polygons, none of their vertices over the sea.
func _bake_navigation_in_editor() -> void:
	var nm := NavigationMesh.new()
	nm.cell_size = 2.0
	nm.cell_height = 0.5
	nm.agent_radius = 2.0
	nm.agent_max_climb = 1.0
	nm.agent_max_slope = 40.0
	nm.geometry_source_geometry_mode = NavigationMesh.SOURCE_GEOMETRY_GROUPS_WITH_CHILDREN
	nm.geometry_source_group_name = &"session_navigation"
	var region := NavigationRegion3D.new()
	region.navigation_mesh = nm
	var root := EditorInterface.get_edited_scene_root()
	root.add_child(region)
	_island.add_to_group(&"session_navigation", false)
	var t := Time.get_ticks_msec()
	region.bake_navigation_mesh(false)
	var polys := nm.get_polygon_count()
	var wet := 0
	for v in nm.get_vertices():
		var local: Vector3 = _island.to_local(region.to_global(v))
		var s: Dictionary = _island.call("get_surface_at", local.x, local.z)
		if s.is_empty() or int(s.get("water", 0)) == 3 or local.y < 0.0:
			wet += 1
	print("SESSION navigation baked in the editor: %d polygons, %d vertices, %d over water, %d ms" % [polys, nm.get_vertices().size(), wet, Time.get_ticks_msec() - t])
	if polys < 50 or wet > 0:
		print("SESSION FAIL the editor's navigation bake of the island (%d polygons, %d vertices over water)" % [polys, wet])
	_island.remove_from_group(&"session_navigation")
	root.remove_child(region)
	region.free()


func _count_changed(a: PackedFloat32Array, b: PackedFloat32Array) -> int:
	if a.size() != b.size():
		return -1
	var c := 0
	for i in a.size():
		if a[i] != b[i]:
			c += 1
	return c


func _stroke_step() -> bool:
	if _stroke_moves < 12:
		_stroke_mouse += Vector2(10, 0)
		var ev := InputEventMouseMotion.new()
		ev.position = _stroke_mouse
		ev.global_position = _stroke_mouse
		ev.button_mask = MOUSE_BUTTON_MASK_LEFT
		_surface().gui_input.emit(ev)
		_stroke_moves += 1
		return false
	_mouse_button(false)
	var paint: Resource = _island.get("splat_paint")
	print("SESSION stroke painted, paint bytes %d" % (0 if paint == null else (paint.get("data") as PackedByteArray).size()))
	return true


func _mouse_button(pressed: bool) -> void:
	var ev := InputEventMouseButton.new()
	ev.button_index = MOUSE_BUTTON_LEFT
	ev.pressed = pressed
	ev.position = _stroke_mouse
	ev.global_position = _stroke_mouse
	if pressed:
		ev.button_mask = MOUSE_BUTTON_MASK_LEFT
	_surface().gui_input.emit(ev)


var _world: Node3D = null
var _world_deadline := 0


## Step 6b: an IslandWorld (small islands) added to the scene; it streams around the editor
## camera with the Script screen in front (lavapipe does not draw the 3D view meanwhile).
func _add_world() -> void:
	var root := EditorInterface.get_edited_scene_root()
	_world = ClassDB.instantiate("IslandWorld")
	_world.name = "World"
	for kv in [["world_seed", 42], ["cell_size", 2048.0], ["island_size_min", 512.0],
			["island_size_max", 1024.0], ["samples_per_metre", 0.25], ["view_distance", 3000.0],
			["detail_distance", 1500.0], ["collision_distance", 400.0], ["coarse_resolution", 65]]:
		_world.set(kv[0], kv[1])
	root.add_child(_world)
	_world.owner = root
	EditorInterface.set_main_screen_editor("Script")
	_select(_world)
	_world_deadline = Time.get_ticks_msec() + 240000
	print("SESSION world added")


## Once an island is detailed: click the island nearest the middle of the inspector's map
## (as the mouse does). False while waiting.
func _world_step_pick() -> bool:
	var s: Dictionary = _world.call("get_world_stats")
	var header := EditorInterface.get_inspector().find_child("IslandWorldHeader", true, false)
	if (int(s.detailed) < 1 or header == null) and Time.get_ticks_msec() < _world_deadline:
		return false
	if header == null:
		print("SESSION FAIL no IslandWorld header in the inspector (stats %s)" % s)
		return true
	var map := header.find_child("Map", true, false) as TextureRect
	var isl: Node = null
	var at := Vector2.ZERO
	for r in range(0, int(map.size.x * 0.5), 4):
		for a in 16:
			var p := map.size * 0.5 + Vector2.from_angle(a * TAU / 16.0) * r
			if isl == null:
				var found: Node = header.call("island_at_map", p)
				if found != null and found.has_meta(&"island_world_cell") and found.name.ends_with("detail"):
					isl = found
					at = p
	print("SESSION world stats %s, picked %s" % [s, isl])
	if isl == null:
		print("SESSION FAIL no detailed world island on the inspector's map")
		return true
	var ev := InputEventMouseButton.new()
	ev.button_index = MOUSE_BUTTON_LEFT
	ev.pressed = true
	ev.position = at
	map.gui_input.emit(ev)
	return true


## The picked world island shows read-only with a Pin button: press it.
func _world_step_pin() -> bool:
	var edited := EditorInterface.get_inspector().get_edited_object()
	var props := EditorInterface.get_inspector().find_children("*", "EditorProperty", true, false)
	var ro := _read_only_count(props)
	var is_world_island := edited != null and edited.has_meta(&"island_world_cell")
	print("SESSION world island inspected: %s, %d properties, %d read-only" % [is_world_island, props.size(), ro])
	if not is_world_island or ro == 0 or ro < props.size() / 2:
		print("SESSION FAIL the picked world island is not shown read-only")
		return true
	var pin := EditorInterface.get_inspector().find_child("Pin", true, false) as Button
	if pin == null:
		print("SESSION FAIL no Pin button")
		return true
	pin.pressed.emit()
	return true


## The pinned island is the scene's, selected and editable; then Ctrl+Z.
func _world_step_undo_pin() -> void:
	var edited := EditorInterface.get_inspector().get_edited_object()
	var pinned := edited != null and edited.has_meta(&"island_world_pin")
	var props := EditorInterface.get_inspector().find_children("*", "EditorProperty", true, false)
	var ro := _read_only_count(props)
	var cells: Array = _world.call("get_pinned_cells")
	var owned := pinned and (edited as Node).owner == EditorInterface.get_edited_scene_root()
	print("SESSION world island pinned: %s (cells %s, owned by the scene %s), %d properties, %d read-only" % [pinned, cells, owned, props.size(), ro])
	if not pinned or cells.size() != 1 or not owned or ro > 0:
		print("SESSION FAIL the pinned island is not the scene's editable island")
	var ur := EditorInterface.get_editor_undo_redo()
	ur.get_history_undo_redo(ur.get_object_history_id(_world)).undo()


## Pin the cell again (redo) and show the pinned island in the inspector.
func _world_step_redo_pin() -> void:
	var ur := EditorInterface.get_editor_undo_redo()
	ur.get_history_undo_redo(ur.get_object_history_id(_world)).redo()
	var cells: Array = _world.call("get_pinned_cells")
	if cells.size() != 1:
		print("SESSION FAIL redoing the pin gave pinned cells %s" % [cells])
		return
	var pinned: Node = _world.call("pin_island", cells[0])
	_select(pinned)


## The pinned island's inspector has an Unpin button: press it (a confirmation dialog opens).
func _world_step_unpin() -> void:
	var unpin := EditorInterface.get_inspector().find_child("Unpin", true, false) as Button
	if unpin == null:
		print("SESSION FAIL no Unpin button on the pinned island")
		return
	unpin.pressed.emit()


## The Unpin confirmation dialog is up: press its OK button.
func _world_step_confirm_unpin() -> void:
	var dialog := EditorInterface.get_base_control().find_child("UnpinIslandDialog*", false, false) as ConfirmationDialog
	if dialog == null or not dialog.visible:
		print("SESSION FAIL no Unpin confirmation dialog showing")
		return
	print("SESSION Unpin dialog: %s" % dialog.dialog_text.get_slice("\n", 0))
	dialog.get_ok_button().pressed.emit()


func _select(n: Node) -> void:
	var sel := EditorInterface.get_selection()
	sel.clear()
	sel.add_node(n)
	EditorInterface.edit_node(n)


func _surface() -> Control:
	var vp := EditorInterface.get_editor_viewport_3d(0)
	for c in vp.get_parent().get_parent().get_children(true):
		if c.get_class() == "Control":
			return c
	return null


func _finish(msg: String) -> void:
	print(msg)
	set_process(false)
	EditorInterface.get_base_control().get_tree().quit()


## How many of the inspector's property editors `props` are read-only.
func _read_only_count(props: Array[Node]) -> int:
	var ro := 0
	for p in props:
		if (p as EditorProperty).read_only:
			ro += 1
	return ro
