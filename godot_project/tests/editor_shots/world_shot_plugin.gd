@tool
extends EditorPlugin
## Drives the REAL editor (under `xvfb-run`, see `run_world.sh`) with an IslandWorld: opens
## res://world_shot_scene.tscn, selects the world and waits for islands to stream in around the
## editor camera, saves the inspector with the world's map (DIR/inspector_world.png), clicks the
## island in the middle of the map and reports how the inspector shows it (read-only properties)
## -> DIR/inspector_world_island.png, presses its "Pin this island" button and reports the
## pinned island (a node of the scene, editable) -> DIR/inspector_pinned_island.png, then undoes
## the pin. Prints `SHOT ...` lines and quits.

var _outdir := ""
var _frames := 0
var _step := 0
var _wait := 0
var _world: Node3D = null


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
			EditorInterface.open_scene_from_path("res://world_shot_scene.tscn")
			_step = 1
			_wait = 30
		1:
			var root := EditorInterface.get_edited_scene_root()
			if root == null:
				return
			_world = root.get_node_or_null("World")
			if _world == null:
				return
			EditorInterface.set_main_screen_editor("3D")
			# Look at the island of the world's first cell with one, from above.
			var cam := EditorInterface.get_editor_viewport_3d(0).get_camera_3d()
			print("SHOT editor camera at ", cam.global_position)
			_select(_world)
			_step = 2
			_wait = 30
		2:
			var s: Dictionary = _world.call("get_world_stats")
			if int(s.detailed) < 1 and _frames < 15000:
				return
			print("SHOT world stats: ", s)
			_step = 3
			_wait = 90
		3:
			var header := EditorInterface.get_inspector().get_parent().find_child("IslandWorldHeader", true, false)
			if header == null:
				header = EditorInterface.get_base_control().find_child("IslandWorldHeader", true, false)
			print("SHOT world header: ", header, " info: ", (header.find_child("Info", true, false) as Label).text if header else "none")
			_save("inspector_world.png", _inspector_rect())
			if header == null:
				_finish("SHOT FAIL no world header")
				return
			var map := header.find_child("Map", true, false) as TextureRect
			# The island nearest the map's middle (the editor camera).
			var isl: Node = null
			var at := Vector2.ZERO
			for r in range(0, int(map.size.x * 0.5), 4):
				for a in 16:
					var p := map.size * 0.5 + Vector2.from_angle(a * TAU / 16.0) * r
					if isl == null:
						isl = header.call("island_at_map", p)
						at = p
			print("SHOT island picked at map pixel %s: %s" % [at, isl])
			if isl == null:
				_finish("SHOT FAIL no island on the map")
				return
			# A click as the mouse gives it.
			var ev := InputEventMouseButton.new()
			ev.button_index = MOUSE_BUTTON_LEFT
			ev.pressed = true
			ev.position = at
			map.gui_input.emit(ev)
			_step = 4
			_wait = 60
		4:
			var edited := EditorInterface.get_inspector().get_edited_object()
			print("SHOT inspector edits: ", edited, " world island: ", edited != null and edited.has_meta(&"island_world_cell"))
			var props := EditorInterface.get_inspector().find_children("*", "EditorProperty", true, false)
			var ro := _read_only_count(props)
			print("SHOT inspector properties: %d, read-only: %d" % [props.size(), ro])
			_save("inspector_world_island.png", _inspector_rect())
			# Press "Pin this island" as the mouse would.
			var pin := EditorInterface.get_inspector().find_child("Pin", true, false) as Button
			print("SHOT pin button: ", pin, " text: ", pin.text if pin else "none")
			if pin == null:
				_finish("SHOT FAIL no Pin button")
				return
			pin.pressed.emit()
			_step = 5
			_wait = 60
		5:
			var edited := EditorInterface.get_inspector().get_edited_object()
			var pinned := edited != null and edited.has_meta(&"island_world_pin")
			var root := EditorInterface.get_edited_scene_root()
			var node: Node = null
			for n in _world.get_children():
				if n.has_meta(&"island_world_pin"):
					node = n
			print("SHOT after Pin: inspector edits ", edited, " pinned: ", pinned, " node: ", node,
				" owner is the scene root: ", node != null and node.owner == root)
			var props := EditorInterface.get_inspector().find_children("*", "EditorProperty", true, false)
			var ro := _read_only_count(props)
			print("SHOT pinned inspector properties: %d, read-only: %d" % [props.size(), ro])
			print("SHOT world stats after Pin: ", _world.call("get_world_stats"))
			_save("inspector_pinned_island.png", _inspector_rect())
			# Ctrl+Z: the pin is undone.
			var ur := EditorInterface.get_editor_undo_redo()
			var undone := ur.get_history_undo_redo(ur.get_object_history_id(_world)).undo()
			print("SHOT undo: ", undone)
			_step = 6
			_wait = 30
		6:
			print("SHOT after undo: pinned cells ", _world.call("get_pinned_cells"))
			_finish("SHOT done")


func _select(n: Node) -> void:
	var sel := EditorInterface.get_selection()
	sel.clear()
	sel.add_node(n)
	EditorInterface.edit_node(n)


func _inspector_rect() -> Rect2i:
	var insp := EditorInterface.get_inspector()
	var r := insp.get_global_rect()
	var top := maxi(0, int(r.position.y) - 70)
	return Rect2i(int(r.position.x) - 4, top, int(r.size.x) + 8, mini(760, int(r.end.y) - top))


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


## How many of the inspector's property editors `props` are read-only.
func _read_only_count(props: Array[Node]) -> int:
	var ro := 0
	for p in props:
		if (p as EditorProperty).read_only:
			ro += 1
	return ro
