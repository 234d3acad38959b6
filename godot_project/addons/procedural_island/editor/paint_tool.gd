@tool
extends RefCounted
## Terrain painting in the editor's 3D viewport, driven by the Procedural Island plugin
## (`plugin.gd` forwards `_handles`, `_edit`, `_make_visible` and `_forward_3d_gui_input`).
##
## With a TerrainBrush (or a ProceduralIsland that has one as a child) selected: left-drag over
## the terrain paints, a ring on the terrain shows the radius (green where the height/slope masks
## allow painting, red where they block). `[` / `]` shrink / grow the radius, Shift+`[` /
## Shift+`]` lower / raise the strength. The toolbar in the 3D editor's menu bar chooses the
## layer and mode and has "Fill by rule" and "Clear layer". Every stroke (and fill/clear) is one
## undo step holding only the touched region before and after. The hit point is found by
## ray-marching the heightfield (no physics). Camera navigation is never taken over: only a left
## click over the terrain with a brush selected is consumed, and never with Alt held.
##
## Classes are referred to by name (`is_class`) so the editor keeps working when the native
## library is missing.

const LAYER_NAMES := ["Sand", "Grass", "Rock", "Snow", "Forest", "Dirt", "Gravel", "Meadow"]
const MODE_NAMES := ["Paint", "Erase", "Smooth", "Erase scatter", "Restore scatter"]
## First mode that edits scatter instances instead of splat paint.
const FIRST_SCATTER_MODE := 3
const RADIUS_FACTOR := 1.2
const STRENGTH_STEP := 0.05

var plugin: EditorPlugin
var brush: Node3D = null
var toolbar: HBoxContainer
var _layer: OptionButton
var _mode: OptionButton
var _scatter_layer: SpinBox
var _radius: SpinBox
var _strength: SpinBox
var _painting := false
var _last_hit: Variant = null
var _cursor_on := false
var _syncing := false


func _init(p_plugin: EditorPlugin) -> void:
	plugin = p_plugin
	_build_toolbar()
	plugin.add_control_to_container(EditorPlugin.CONTAINER_SPATIAL_EDITOR_MENU, toolbar)
	toolbar.visible = false


## Remove the toolbar (plugin `_exit_tree`).
func cleanup() -> void:
	_stop()
	if toolbar != null:
		plugin.remove_control_from_container(EditorPlugin.CONTAINER_SPATIAL_EDITOR_MENU, toolbar)
		toolbar.queue_free()
		toolbar = null
	brush = null


## The brush to use for `obj`: the object itself or an island's first TerrainBrush child.
static func brush_for(obj: Object) -> Node3D:
	if obj == null or not is_instance_valid(obj):
		return null
	if obj.is_class("TerrainBrush"):
		return obj as Node3D
	if obj.is_class("ProceduralIsland"):
		for c in (obj as Node).get_children():
			if c.is_class("TerrainBrush"):
				return c as Node3D
	return null


func handles(obj: Object) -> bool:
	return brush_for(obj) != null


func edit(obj: Object) -> void:
	if brush != null and brush != brush_for(obj):
		_stop()
	brush = brush_for(obj)
	_sync_toolbar()


func make_visible(visible: bool) -> void:
	if toolbar != null:
		toolbar.visible = visible and brush != null
	if not visible:
		_stop()


func forward_3d_gui_input(camera: Camera3D, event: InputEvent) -> int:
	if brush == null or not is_instance_valid(brush) or not brush.is_inside_tree():
		return EditorPlugin.AFTER_GUI_INPUT_PASS
	if event is InputEventMouseMotion:
		var hit: Variant = _hit(camera, event.position)
		_show_cursor(hit)
		if _painting:
			if hit != null:
				if _last_hit != null:
					brush.paint_stroke(_last_hit, hit)
				else:
					brush.paint_at(hit)
				_last_hit = hit
			return EditorPlugin.AFTER_GUI_INPUT_STOP
		return EditorPlugin.AFTER_GUI_INPUT_PASS
	if event is InputEventMouseButton and event.button_index == MOUSE_BUTTON_LEFT:
		if event.pressed:
			if event.alt_pressed or event.ctrl_pressed or event.meta_pressed:
				return EditorPlugin.AFTER_GUI_INPUT_PASS
			var hit: Variant = _hit(camera, event.position)
			if hit == null:
				return EditorPlugin.AFTER_GUI_INPUT_PASS
			if not brush.begin_stroke():
				return EditorPlugin.AFTER_GUI_INPUT_PASS
			_painting = true
			brush.paint_at(hit)
			_last_hit = hit
			return EditorPlugin.AFTER_GUI_INPUT_STOP
		elif _painting:
			_finish_stroke("Paint terrain")
			return EditorPlugin.AFTER_GUI_INPUT_STOP
		return EditorPlugin.AFTER_GUI_INPUT_PASS
	if event is InputEventKey and event.pressed and not event.echo and _cursor_on:
		var k: int = event.keycode
		if k == KEY_BRACKETLEFT or k == KEY_BRACKETRIGHT:
			var up := k == KEY_BRACKETRIGHT
			if event.shift_pressed:
				brush.strength = clampf(brush.strength + (STRENGTH_STEP if up else -STRENGTH_STEP), 0.0, 1.0)
			else:
				brush.radius = maxf(0.1, brush.radius * (RADIUS_FACTOR if up else 1.0 / RADIUS_FACTOR))
			brush.notify_property_list_changed()
			_sync_toolbar()
			if _last_hit != null:
				brush.show_cursor(_last_hit)
			return EditorPlugin.AFTER_GUI_INPUT_STOP
	return EditorPlugin.AFTER_GUI_INPUT_PASS


func _hit(camera: Camera3D, pos: Vector2) -> Variant:
	return brush.raycast(camera.project_ray_origin(pos), camera.project_ray_normal(pos))


func _show_cursor(hit: Variant) -> void:
	if hit != null:
		brush.show_cursor(hit)
		_cursor_on = true
		if not _painting:
			_last_hit = hit
	else:
		brush.hide_cursor()
		_cursor_on = false


## End an open stroke and register it as one undo step.
func _finish_stroke(action: String) -> void:
	_painting = false
	_last_hit = null
	if brush == null or not is_instance_valid(brush):
		return
	var snap: Dictionary = brush.end_stroke()
	if snap.is_empty():
		return
	var ur := plugin.get_undo_redo()
	var what: String = ("scatter layer %d" % int(brush.get("scatter_layer"))) if int(brush.mode) >= FIRST_SCATTER_MODE \
		else LAYER_NAMES[clampi(brush.layer, 0, 7)]
	ur.create_action("%s (%s)" % [action, what], UndoRedo.MERGE_DISABLE, brush)
	ur.add_do_method(brush, &"apply_snapshot", snap, true)
	ur.add_undo_method(brush, &"apply_snapshot", snap, false)
	ur.commit_action(false)


func _stop() -> void:
	if _painting:
		_finish_stroke("Paint terrain")
	_painting = false
	_last_hit = null
	_cursor_on = false
	if brush != null and is_instance_valid(brush):
		brush.hide_cursor()


func _build_toolbar() -> void:
	toolbar = HBoxContainer.new()
	toolbar.name = "TerrainPaintToolbar"
	toolbar.add_child(VSeparator.new())
	var title := Label.new()
	title.text = "Terrain paint:"
	toolbar.add_child(title)
	_layer = OptionButton.new()
	for i in LAYER_NAMES.size():
		_layer.add_item("%d %s" % [i, LAYER_NAMES[i]], i)
	_layer.tooltip_text = "Splat layer to paint"
	_layer.item_selected.connect(func(i: int) -> void: _set_prop(&"layer", i))
	toolbar.add_child(_layer)
	_mode = OptionButton.new()
	for i in MODE_NAMES.size():
		_mode.add_item(MODE_NAMES[i], i)
	_mode.tooltip_text = "Paint / erase / smooth the splat layer, or erase / restore the instances of a scatter layer"
	_mode.item_selected.connect(func(i: int) -> void:
		_set_prop(&"mode", i)
		_update_mode_controls())
	toolbar.add_child(_mode)
	_scatter_layer = SpinBox.new()
	_scatter_layer.min_value = 0
	_scatter_layer.max_value = 63
	_scatter_layer.step = 1
	_scatter_layer.prefix = "scatter"
	_scatter_layer.tooltip_text = "Index in the island's scatter_layers erased or restored under the brush"
	_scatter_layer.value_changed.connect(func(v: float) -> void: _set_prop(&"scatter_layer", int(v)))
	_scatter_layer.visible = false
	toolbar.add_child(_scatter_layer)
	_radius = SpinBox.new()
	_radius.min_value = 0.1
	_radius.max_value = 10000.0
	_radius.step = 0.1
	_radius.suffix = "m"
	_radius.prefix = "r"
	_radius.tooltip_text = "Brush radius ([ and ])"
	_radius.value_changed.connect(func(v: float) -> void: _set_prop(&"radius", v))
	toolbar.add_child(_radius)
	_strength = SpinBox.new()
	_strength.min_value = 0.0
	_strength.max_value = 1.0
	_strength.step = 0.01
	_strength.prefix = "s"
	_strength.tooltip_text = "Brush strength (Shift+[ and Shift+])"
	_strength.value_changed.connect(func(v: float) -> void: _set_prop(&"strength", v))
	toolbar.add_child(_strength)
	var fill := Button.new()
	fill.text = "Fill by rule"
	fill.tooltip_text = "Apply the brush's layer, mode, strength and height/slope masks to the whole island"
	fill.pressed.connect(_whole_island.bind("fill"))
	toolbar.add_child(fill)
	var clear := Button.new()
	clear.text = "Clear layer"
	clear.tooltip_text = "Remove all paint of the selected layer"
	clear.pressed.connect(_whole_island.bind("clear"))
	toolbar.add_child(clear)


func _whole_island(what: String) -> void:
	if brush == null or not is_instance_valid(brush) or not brush.begin_stroke():
		return
	if what == "fill":
		brush.fill_by_rule()
		_finish_stroke("Fill terrain by rule")
	else:
		brush.clear_layer(brush.layer)
		_finish_stroke("Clear terrain layer")


func _set_prop(prop: StringName, value: Variant) -> void:
	if _syncing or brush == null or not is_instance_valid(brush):
		return
	brush.set(prop, value)
	brush.notify_property_list_changed()


func _sync_toolbar() -> void:
	if brush == null or not is_instance_valid(brush) or toolbar == null:
		return
	_syncing = true
	_layer.select(clampi(brush.layer, 0, 7))
	_mode.select(clampi(brush.mode, 0, MODE_NAMES.size() - 1))
	if brush.get("scatter_layer") != null:
		_scatter_layer.set_value_no_signal(int(brush.get("scatter_layer")))
	_update_mode_controls()
	_radius.set_value_no_signal(brush.radius)
	_strength.set_value_no_signal(brush.strength)
	_syncing = false


## The layer menu and "Clear layer" are for splat modes, the scatter layer index for scatter modes.
func _update_mode_controls() -> void:
	if toolbar == null:
		return
	var scatter := _mode.selected >= FIRST_SCATTER_MODE
	_scatter_layer.visible = scatter
	_layer.visible = not scatter
