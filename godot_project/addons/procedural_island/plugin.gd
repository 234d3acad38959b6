@tool
extends EditorPlugin
## Editor plugin of the Procedural Island addon.
##
## The `ProceduralIsland` node itself is registered by the GDExtension
## (`procedural_island.gdextension`) and is available even without enabling this plugin; the
## plugin checks that the native library was loaded (and says how to build it if not) and adds
## terrain painting with a TerrainBrush in the 3D viewport (see `editor/paint_tool.gd`).

const PaintTool := preload("res://addons/procedural_island/editor/paint_tool.gd")

var _paint: PaintTool = null


func _enter_tree() -> void:
	if not ClassDB.class_exists(&"ProceduralIsland"):
		push_warning("Procedural Island: the native library is missing. Build it with `cargo xtask build` " +
			"(it is copied to res://addons/procedural_island/bin/), then restart the editor.")
	_paint = PaintTool.new(self)


func _exit_tree() -> void:
	if _paint != null:
		_paint.cleanup()
		_paint = null


func _handles(object: Object) -> bool:
	return _paint != null and _paint.handles(object)


func _edit(object: Object) -> void:
	if _paint != null:
		_paint.edit(object)


func _make_visible(visible: bool) -> void:
	if _paint != null:
		_paint.make_visible(visible)


func _forward_3d_gui_input(viewport_camera: Camera3D, event: InputEvent) -> int:
	if _paint == null:
		return AFTER_GUI_INPUT_PASS
	return _paint.forward_3d_gui_input(viewport_camera, event)
