@tool
extends EditorPlugin
## Editor plugin of the Procedural Island addon.
##
## The `ProceduralIsland` node itself is registered by the GDExtension
## (`procedural_island.gdextension`) and is available even without enabling this plugin; the
## plugin checks that the native library was loaded (and says how to build it if not) and adds:
## - terrain painting with a TerrainBrush in the 3D viewport (`editor/paint_tool.gd`);
## - the inspector header of ProceduralIsland and TerrainBrush (`editor/inspector_plugin.gd`);
## - "Frame island" (also F in the 3D viewport with an island or its brush selected) and
##   "Bake to scene…" in the 3D editor's toolbar (`editor/framing.gd`);
## - a newly created island (Create Node, paste, or a script adding one to the edited scene) is
##   framed once its first generation finishes, so the camera is not left under the terrain.

const PaintTool := preload("res://addons/procedural_island/editor/paint_tool.gd")
const InspectorPlugin := preload("res://addons/procedural_island/editor/inspector_plugin.gd")
const Framing := preload("res://addons/procedural_island/editor/framing.gd")

var _paint: PaintTool = null
var _inspector: EditorInspectorPlugin = null
var _toolbar: HBoxContainer = null
var _bake_button: Button = null
var _bake_dialog: EditorFileDialog = null
## The island being edited (selected, or the parent of the selected brush).
var _island: Node3D = null
var _viewport_index := 0


func _enter_tree() -> void:
	if not ClassDB.class_exists(&"ProceduralIsland"):
		push_warning("Procedural Island: the native library is missing. Build it with `cargo xtask build` " +
			"(it is copied to res://addons/procedural_island/bin/), then restart the editor.")
	_paint = PaintTool.new(self)
	_inspector = InspectorPlugin.new()
	add_inspector_plugin(_inspector)
	_build_toolbar()
	get_tree().node_added.connect(_on_node_added)


func _exit_tree() -> void:
	if get_tree().node_added.is_connected(_on_node_added):
		get_tree().node_added.disconnect(_on_node_added)
	if _paint != null:
		_paint.cleanup()
		_paint = null
	if _inspector != null:
		remove_inspector_plugin(_inspector)
		_inspector = null
	if _toolbar != null:
		remove_control_from_container(CONTAINER_SPATIAL_EDITOR_MENU, _toolbar)
		_toolbar.queue_free()
		_toolbar = null
	if _bake_dialog != null:
		_bake_dialog.queue_free()
		_bake_dialog = null
	_island = null


func _build_toolbar() -> void:
	_toolbar = HBoxContainer.new()
	_toolbar.name = "ProceduralIslandToolbar"
	_toolbar.add_child(VSeparator.new())
	var frame := Button.new()
	frame.name = "FrameIsland"
	frame.text = "Frame island"
	frame.flat = true
	frame.tooltip_text = "Show the whole island from above at an angle (F in the viewport does the same)."
	frame.pressed.connect(frame_island)
	_toolbar.add_child(frame)
	_bake_button = Button.new()
	_bake_button.name = "BakeToScene"
	_bake_button.text = "Bake to scene…"
	_bake_button.flat = true
	_bake_button.pressed.connect(_on_bake_pressed)
	_toolbar.add_child(_bake_button)
	add_control_to_container(CONTAINER_SPATIAL_EDITOR_MENU, _toolbar)
	_toolbar.visible = false


## The island that `obj` stands for: itself, or the island a TerrainBrush paints.
static func island_for(obj: Object) -> Node3D:
	if obj == null or not is_instance_valid(obj):
		return null
	if obj.is_class("ProceduralIsland"):
		return obj as Node3D
	if obj.is_class("TerrainBrush") and obj.has_method("get_island_node"):
		return obj.call("get_island_node") as Node3D
	return null


func _handles(object: Object) -> bool:
	return island_for(object) != null or (_paint != null and _paint.handles(object))


func _edit(object: Object) -> void:
	_island = island_for(object)
	if _paint != null:
		_paint.edit(object)
	_update_bake_button()


func _make_visible(visible: bool) -> void:
	if _paint != null:
		_paint.make_visible(visible)
	if _toolbar != null:
		_toolbar.visible = visible and _island != null


func _update_bake_button() -> void:
	if _bake_button == null:
		return
	var can_bake := _island != null and _island.has_method("bake")
	_bake_button.disabled = not can_bake
	_bake_button.tooltip_text = ("Save the generated island as a scene of plain MeshInstance3D, collider and material nodes that loads without this extension."
		if can_bake else "This version of the extension has no ProceduralIsland.bake().")


## A new island in the edited scene: the editor adds a created node before giving it an owner
## (a node of a scene being opened already has one), and it has not generated yet. Frame it
## when its first generation is in place.
func _on_node_added(n: Node) -> void:
	if not n.is_class("ProceduralIsland") or n.owner != null:
		return
	var root := EditorInterface.get_edited_scene_root()
	if root == null or not (root == n or root.is_ancestor_of(n)):
		return
	if not n.call("get_last_stats").is_empty():
		return
	n.connect("generation_finished", _frame_new_island.bind(n), CONNECT_ONE_SHOT)


func _frame_new_island(_stats: Dictionary, n: Node3D) -> void:
	# Only while it is still the selection (Create Node selects the new node): a user who went
	# on to something else keeps the view.
	if is_instance_valid(n) and n.is_inside_tree() and n.owner != null \
			and EditorInterface.get_selection().get_selected_nodes() == [n]:
		Framing.frame(n, _viewport_index)


## Frame the edited island in the 3D viewport last used (the toolbar button).
func frame_island() -> void:
	if _island != null and is_instance_valid(_island):
		Framing.frame(_island, _viewport_index)


func _on_bake_pressed() -> void:
	if _island == null or not _island.has_method("bake"):
		return
	if _bake_dialog == null:
		_bake_dialog = EditorFileDialog.new()
		_bake_dialog.file_mode = EditorFileDialog.FILE_MODE_SAVE_FILE
		_bake_dialog.access = EditorFileDialog.ACCESS_RESOURCES
		_bake_dialog.title = "Bake island to scene"
		_bake_dialog.add_filter("*.tscn", "Text scene")
		_bake_dialog.add_filter("*.scn", "Binary scene")
		_bake_dialog.file_selected.connect(_on_bake_path)
		EditorInterface.get_base_control().add_child(_bake_dialog)
	_bake_dialog.current_file = "%s_baked.tscn" % String(_island.name).to_snake_case()
	_bake_dialog.popup_file_dialog()


func _on_bake_path(path: String) -> void:
	if _island == null or not is_instance_valid(_island) or not _island.has_method("bake"):
		return
	var err: int = _island.call("bake", path)
	if err != OK:
		push_error("Procedural Island: baking to %s failed: %s" % [path, error_string(err)])
		return
	print("Procedural Island: baked %s to %s" % [_island.name, path])
	EditorInterface.get_resource_filesystem().scan()


## F (the editor's Focus Selection key) with an island or its brush selected frames the whole
## island; everything else goes to the paint tool (and on to the editor).
func _forward_3d_gui_input(viewport_camera: Camera3D, event: InputEvent) -> int:
	if Framing.sending:
		return AFTER_GUI_INPUT_PASS
	_viewport_index = Framing.viewport_index(viewport_camera)
	if _island != null and is_instance_valid(_island) and event is InputEventKey:
		var k := event as InputEventKey
		if k.pressed and not k.echo and k.keycode == KEY_F and not (k.ctrl_pressed or k.alt_pressed or k.meta_pressed or k.shift_pressed):
			# Framing runs Godot's own Focus Selection (pivot on the island), then sets the
			# pitch and the distance.
			frame_island.call_deferred()
			return AFTER_GUI_INPUT_STOP
	if _paint == null:
		return AFTER_GUI_INPUT_PASS
	return _paint.forward_3d_gui_input(viewport_camera, event)
