@tool
extends RefCounted
## Terrain painting in the editor's 3D viewport, driven by the Procedural Island plugin
## (`plugin.gd` forwards `_handles`, `_edit`, `_make_visible` and `_forward_3d_gui_input`).
##
## With a TerrainBrush (or a ProceduralIsland that has one as a child) selected: left-drag over
## the terrain paints, a ring on the terrain shows the radius (green where the height/slope masks
## allow painting, red where they block). `[` / `]` shrink / grow the radius, Shift+`[` /
## Shift+`]` lower / raise the strength. The toolbar in the 3D editor's menu bar chooses the
## layer and mode and has "Fill by rule" and "Clear layer". In the sculpt modes the chunk meshes
## under the brush follow each dab and the island regenerates (erosion, water, splat, scatter)
## when the mouse is released; the toolbar then shows the height per dab (raise / lower) or the
## flatten height (Ctrl+click on the terrain picks it) and "Clear sculpt". Every stroke (and
## fill/clear) is one undo step holding only the touched region before and after. The hit point is found by
## ray-marching the heightfield (no physics). Camera navigation is never taken over: only a left
## click over the terrain with a brush selected is consumed, and never with Alt held.
##
## Classes are referred to by name (`is_class`) so the editor keeps working when the native
## library is missing.

const LAYER_NAMES := ["Sand", "Grass", "Rock", "Snow", "Forest", "Dirt", "Gravel", "Meadow"]
const MODE_NAMES := ["Paint", "Erase", "Smooth", "Erase scatter", "Restore scatter",
	"Sculpt raise", "Sculpt lower", "Sculpt smooth", "Sculpt flatten", "Sketch land", "Sketch sea"]
## First mode that edits scatter instances instead of splat paint.
const FIRST_SCATTER_MODE := 3
## First mode that sculpts the terrain (TerrainBrush.MODE_SCULPT_RAISE).
const FIRST_SCULPT_MODE := 5
const MODE_RAISE := 5
const MODE_LOWER := 6
const MODE_FLATTEN := 8
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
var _height: SpinBox
var _fill: Button
var _clear: Button
var _clear_sculpt: Button
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
			if event.ctrl_pressed and int(brush.mode) == MODE_FLATTEN:
				# Ctrl+click in flatten mode: take the flatten height from the terrain.
				var picked: Variant = _hit(camera, event.position)
				if picked == null:
					return EditorPlugin.AFTER_GUI_INPUT_PASS
				brush.pick_flatten_height(picked)
				brush.notify_property_list_changed()
				_sync_toolbar()
				return EditorPlugin.AFTER_GUI_INPUT_STOP
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
	var mode := int(brush.mode)
	var what: String = MODE_NAMES[mode].to_lower() if mode >= FIRST_SCULPT_MODE and mode < MODE_NAMES.size() \
		else ("scatter layer %d" % int(brush.get("scatter_layer"))) if mode >= FIRST_SCATTER_MODE \
		else LAYER_NAMES[clampi(brush.layer, 0, 7)]
	if mode >= FIRST_SCULPT_MODE:
		action = "Sculpt terrain"

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
	_height = SpinBox.new()
	_height.min_value = -1000.0
	_height.max_value = 10000.0
	_height.step = 0.1
	_height.suffix = "m"
	_height.value_changed.connect(func(v: float) -> void:
		_set_prop(&"flatten_height" if int(brush.mode) == MODE_FLATTEN else &"sculpt_height", v))
	_height.visible = false
	toolbar.add_child(_height)
	_fill = Button.new()
	_fill.text = "Fill by rule"
	_fill.tooltip_text = "Apply the brush's layer, mode, strength and height/slope masks to the whole island"
	_fill.pressed.connect(_whole_island.bind("fill"))
	toolbar.add_child(_fill)
	_clear = Button.new()
	_clear.text = "Clear layer"
	_clear.tooltip_text = "Remove all paint of the selected layer"
	_clear.pressed.connect(_whole_island.bind("clear"))
	toolbar.add_child(_clear)
	_clear_sculpt = Button.new()
	_clear_sculpt.text = "Clear sculpt"
	_clear_sculpt.tooltip_text = "Remove every sculpt and sketch edit of the island (undoable)"
	_clear_sculpt.pressed.connect(_clear_sculpt_edits)
	_clear_sculpt.visible = false
	toolbar.add_child(_clear_sculpt)


## Remove the island's sculpt layer as one undo step (undo puts the saved data back and
## regenerates).
func _clear_sculpt_edits() -> void:
	if brush == null or not is_instance_valid(brush):
		return
	var isl: Node = brush.get_island_node()
	if isl == null or not isl.has_sculpt():
		return
	var paint: Resource = isl.get("splat_paint")
	var old: PackedByteArray = paint.get("sculpt_data")
	var ur := plugin.get_undo_redo()
	ur.create_action("Clear sculpt", UndoRedo.MERGE_DISABLE, isl)
	ur.add_do_method(isl, &"clear_sculpt")
	ur.add_undo_method(paint, &"set_sculpt_data", old)
	ur.add_undo_method(isl, &"regenerate_async")
	ur.commit_action()


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
	var mode := int(brush.mode)
	if mode == MODE_FLATTEN:
		_height.set_value_no_signal(float(brush.get("flatten_height")))
	elif mode == MODE_RAISE or mode == MODE_LOWER:
		_height.set_value_no_signal(float(brush.get("sculpt_height")))
	_syncing = false


## The layer menu and "Clear layer" are for splat modes, the scatter layer index for scatter modes.
func _update_mode_controls() -> void:
	if toolbar == null:
		return
	var m := _mode.selected
	var sculpt := m >= FIRST_SCULPT_MODE
	var scatter := m >= FIRST_SCATTER_MODE and not sculpt
	_scatter_layer.visible = scatter
	_layer.visible = m < FIRST_SCATTER_MODE
	_clear.visible = m < FIRST_SCATTER_MODE
	_fill.visible = not sculpt
	_clear_sculpt.visible = sculpt
	# Raise / lower dab by metres, flatten to a height; the other modes by strength.
	_height.visible = m == MODE_RAISE or m == MODE_LOWER or m == MODE_FLATTEN
	_strength.visible = not (m == MODE_RAISE or m == MODE_LOWER)
	if m == MODE_FLATTEN:
		_height.prefix = "level"
		_height.min_value = -1000.0
		_height.tooltip_text = "Height the terrain is levelled to (Ctrl+click on the terrain picks it)"
	else:
		_height.prefix = "h"
		_height.min_value = 0.0
		_height.tooltip_text = "Metres raised or lowered per dab at the brush centre"
	if brush != null and is_instance_valid(brush):
		if m == MODE_FLATTEN:
			_height.set_value_no_signal(float(brush.get("flatten_height")))
		elif m == MODE_RAISE or m == MODE_LOWER:
			_height.set_value_no_signal(float(brush.get("sculpt_height")))
