@tool
extends EditorPlugin
## Drives the REAL editor (under `xvfb-run`, see `run.sh`, which copies the project to a
## temporary folder and enables this plugin there) for the docs screenshots and the framing
## check. After `--`: `--outdir=DIR`. In one editor session it
##   1. opens res://shot_scene.tscn (an island away from the origin, with a brush), selects the
##      island, reports how many corners of its bounds the editor camera sees, sends F to the 3D
##      viewport (as a key press reaches it), reports again -> DIR/editor_framed.png;
##      then Godot's top view zoomed in close, the toolbar's "Frame island", reports again;
##   2. the inspector with the island's header -> DIR/inspector_header.png (right dock cropped);
##   3. the brush selected -> DIR/inspector_brush.png;
##   4. an invalid chunk_size -> DIR/editor_warning.png (the scene tree's warning triangle).
## Prints `SHOT ...` lines and quits.

var _outdir := ""
var _frames := 0
var _island: Node3D = null
var _step := 0
var _wait := 0


func _enter_tree() -> void:
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--outdir="):
			_outdir = a.substr(9)
	set_process(_outdir != "")


func _process(_delta: float) -> void:
	_frames += 1
	if _frames > 20000:
		_finish("SHOT FAIL timeout at step %d" % _step)
		return
	if _wait > 0:
		_wait -= 1
		return
	match _step:
		0:
			if _frames < 30:
				return
			EditorInterface.open_scene_from_path("res://shot_scene.tscn")
			_step = 1
			_wait = 30
		1:
			var root := EditorInterface.get_edited_scene_root()
			if root == null:
				return
			_island = root.get_node_or_null("Island")
			if _island == null or _island.call("is_generating") or _island.get_last_stats().is_empty():
				return
			EditorInterface.set_main_screen_editor("3D")
			_select(_island)
			_step = 2
			_wait = 30
		2:
			_report("before F")
			var surface := _surface()
			print("SHOT surface: ", surface)
			var ev := InputEventKey.new()
			ev.keycode = KEY_F
			ev.physical_keycode = KEY_F
			ev.pressed = true
			surface.gui_input.emit(ev)
			_step = 3
			_wait = 120
		3:
			_report("after F")
			_save("editor_framed.png", Rect2i())
			# From Godot's top view (keypad 7) and very close, the toolbar's Frame island must
			# bring the view back to an angle and fit the island again.
			_key(KEY_KP_7)
			# ... and from an orthogonal one (keypad 5 toggles it): framing goes perspective.
			_key(KEY_KP_5)
			var mag := InputEventMagnifyGesture.new()
			mag.factor = 20.0
			_surface().gui_input.emit(mag)
			_step = 30
			_wait = 60
		30:
			_report("top view, zoomed in")
			var button := EditorInterface.get_base_control().find_child("FrameIsland", true, false) as Button
			print("SHOT toolbar button: ", button, " visible ", button.is_visible_in_tree() if button else false)
			button.pressed.emit()
			_step = 31
			_wait = 150
		31:
			_report("after Frame island button")
			_step = 4
		4:
			_save("inspector_header.png", _inspector_rect())
			_select(_island.get_node("Brush"))
			_step = 5
			_wait = 30
		5:
			_save("inspector_brush.png", _inspector_rect())
			_select(_island)
			_island.set("chunk_size", 48)
			_island.call("update_configuration_warnings")
			print("SHOT warning text: ", _island.call("check_parameters"))
			_step = 6
			_wait = 30
		6:
			_save("editor_warning.png", Rect2i())
			_island.set("chunk_size", 64)
			_step = 7
			_wait = 60
		7:
			# Bake to scene…: the toolbar button opens the file dialog; choosing a file bakes.
			var bake := EditorInterface.get_base_control().find_child("BakeToScene", true, false) as Button
			print("SHOT bake button: ", bake, " disabled ", bake.disabled if bake else true)
			bake.pressed.emit()
			var dialog: EditorFileDialog = null
			for d in EditorInterface.get_base_control().find_children("*", "EditorFileDialog", true, false):
				if (d as EditorFileDialog).title == "Bake island to scene":
					dialog = d
			print("SHOT bake dialog: ", dialog, " visible ", dialog.visible if dialog else false)
			dialog.hide()
			dialog.file_selected.emit("res://baked_shot.tscn")
			_step = 8
			_wait = 60
		8:
			var ok := FileAccess.file_exists("res://baked_shot.tscn")
			var size := FileAccess.get_file_as_bytes("res://baked_shot.tscn").size() if ok else 0
			var scene := load("res://baked_shot.tscn") as PackedScene if ok else null
			var chunks := 0
			if scene != null:
				var inst := scene.instantiate()
				chunks = inst.get_node("Terrain").get_child_count() if inst.has_node("Terrain") else 0
				inst.free()
			print("SHOT bake file exists %s, %d bytes, %d terrain chunks" % [ok, size, chunks])
			_finish("SHOT done")


func _key(k: Key) -> void:
	var ev := InputEventKey.new()
	ev.keycode = k
	ev.physical_keycode = k
	ev.pressed = true
	_surface().gui_input.emit(ev)


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


func _report(when: String) -> void:
	var cam := EditorInterface.get_editor_viewport_3d(0).get_camera_3d()
	var back := cam.global_transform.basis.z
	print("SHOT camera %s: origin %s, pitch %.1f deg, %s, distance to island %.0f m, far %.0f, corners visible %d/8" % [
		when, cam.global_transform.origin, rad_to_deg(asin(back.y)), "orthogonal" if cam.projection == Camera3D.PROJECTION_ORTHOGONAL else "perspective",
		cam.global_transform.origin.distance_to(_island.global_position), cam.far, _corners_visible(cam)])


func _inspector_rect() -> Rect2i:
	var insp := EditorInterface.get_inspector()
	var r := insp.get_global_rect()
	# The dock from its tabs down: include the header above the property list.
	var top := maxi(0, int(r.position.y) - 70)
	return Rect2i(int(r.position.x) - 4, top, int(r.size.x) + 8, mini(620, int(r.end.y) - top))


func _save(file: String, crop: Rect2i) -> void:
	var img := EditorInterface.get_base_control().get_viewport().get_texture().get_image()
	if crop.size.x > 0:
		img = img.get_region(crop.intersection(Rect2i(Vector2i.ZERO, img.get_size())))
	var path := _outdir.path_join(file)
	print("SHOT saved ", path, " ", img.get_size(), " err=", img.save_png(path))


func _finish(msg: String) -> void:
	print(msg)
	_outdir = ""
	set_process(false)
	EditorInterface.get_base_control().get_tree().quit()


## How many of the island's 8 bound corners the camera sees.
func _corners_visible(cam: Camera3D) -> int:
	var aabb: AABB = _island.call("get_terrain_aabb")
	var n := 0
	for i in 8:
		if cam.is_position_in_frustum(_island.global_transform * aabb.get_endpoint(i)):
			n += 1
	return n
