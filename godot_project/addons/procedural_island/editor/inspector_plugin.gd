@tool
extends EditorInspectorPlugin
## Inspector header of the Procedural Island nodes: for a ProceduralIsland a top-down relief
## preview, land %, highest peak, the last generation's time and backend and a progress bar
## while a generation runs; for a TerrainBrush the island it paints, the current layer's colour
## and its height/slope mask ranges; for an IslandWorld a map of the cells around the camera
## (click an island to inspect it). The numbers come from the nodes' own functions
## (`get_preview_image`, `get_last_stats`, `get_map_image`, `get_world_stats`); see
## `island_header.gd` and `world_header.gd`.
##
## An island of an IslandWorld (it carries the meta `island_world_cell`) shows its properties
## read-only (the node marks them so itself, `PROPERTY_USAGE_READ_ONLY`): the world sets them
## from its template and its cell, and makes the island again whenever it streams back in. Its "Pin this island" button customises it: the world's
## `pin_island` makes it a node of the scene (undoable), selected at once. A pinned island
## (meta `island_world_pin`) is edited as any island, with an "Unpin" button (confirmed, not
## undoable: its own settings are dropped) that gives the cell back to the world.
##
## Also labels the brush's `island` field, which is empty while the brush paints its parent.

const IslandHeader := preload("res://addons/procedural_island/editor/island_header.gd")
const WorldHeader := preload("res://addons/procedural_island/editor/world_header.gd")


func _can_handle(object: Object) -> bool:
	return IslandHeader.handles(object) or WorldHeader.handles(object)


func _parse_begin(object: Object) -> void:
	var header: Control = WorldHeader.create_for(object) if WorldHeader.handles(object) else IslandHeader.create_for(object)
	if header != null:
		add_custom_control(header)
	if is_world_island(object) or is_pinned_island(object):
		var box := VBoxContainer.new()
		var label := Label.new()
		label.text = world_island_text(object) if is_world_island(object) else pinned_island_text(object)
		label.add_theme_color_override("font_color", Color(1.0, 0.85, 0.5))
		label.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
		box.add_child(label)
		var button := Button.new()
		if is_world_island(object):
			button.name = "Pin"
			button.text = "Pin this island (customise it)"
			button.tooltip_text = "Make this island a node of the scene, saved with it and editable like any ProceduralIsland; the world leaves its cell to it. Undoable."
			button.pressed.connect(pin_from_inspector.bind(object))
		else:
			button.name = "Unpin"
			button.text = "Unpin (give the cell back to the world)"
			button.pressed.connect(_confirm_unpin.bind(object, button))
		box.add_child(button)
		add_custom_control(box)


## Whether `object` is an island made by an IslandWorld.
static func is_world_island(object: Object) -> bool:
	return object != null and object.is_class("ProceduralIsland") and object.has_meta(&"island_world_cell")


## Whether `object` is an island pinned to an IslandWorld's cell (`IslandWorld.pin_island`).
static func is_pinned_island(object: Object) -> bool:
	return object != null and object.is_class("ProceduralIsland") and object.has_meta(&"island_world_pin")


static func pinned_island_text(object: Object) -> String:
	var c: Vector2i = object.get_meta(&"island_world_pin")
	return "Pinned island of the IslandWorld's cell (%d, %d): a node of this scene, edited like any island; the world leaves this cell to it and it is always loaded." % [c.x, c.y]


## The world that made `island` (its parent), or null.
static func world_of(island: Object) -> Node:
	var n := island as Node
	if n == null or not is_instance_valid(n):
		return null
	var parent := n.get_parent()
	return parent if parent != null and parent.is_class("IslandWorld") else null


## Pin the world island `island` (the button's action): through the editor's undo history in
## the editor, directly otherwise. Returns the pinned island (selected in the editor) or null.
static func pin_from_inspector(island: Object) -> Node:
	var world := world_of(island)
	if world == null or not is_world_island(island):
		return null
	var cell: Vector2i = island.get_meta(&"island_world_cell")
	var pinned: Node = null
	if Engine.is_editor_hint():
		var ur := EditorInterface.get_editor_undo_redo()
		ur.create_action("Pin island of cell (%d, %d)" % [cell.x, cell.y], UndoRedo.MERGE_DISABLE, world)
		ur.add_do_method(world, &"pin_island", cell)
		ur.add_undo_method(world, &"unpin_island", cell)
		ur.commit_action()
		for n in world.get_children():
			if n.has_meta(&"island_world_pin") and n.get_meta(&"island_world_pin") == cell:
				pinned = n
		if pinned != null:
			EditorInterface.edit_node(pinned)
	else:
		pinned = world.call(&"pin_island", cell)
	return pinned


## Unpin the pinned island `island` (the dialog's action). Returns whether it was unpinned.
static func unpin_from_inspector(island: Object) -> bool:
	var world := world_of(island)
	if world == null or not is_pinned_island(island):
		return false
	var cell: Vector2i = island.get_meta(&"island_world_pin")
	if Engine.is_editor_hint():
		EditorInterface.edit_node(world)
	return world.call(&"unpin_island", cell)


## The confirmation dialog lives under the editor's base control, not under the button: the
## unpin re-targets the inspector, which frees the button (and anything under it) while the
## dialog's OK is still emitting (found driving the real editor). The unpin itself is deferred
## for the same reason.
func _confirm_unpin(island: Object, from: Control) -> void:
	var dialog := ConfirmationDialog.new()
	dialog.name = "UnpinIslandDialog"
	dialog.title = "Unpin island"
	dialog.dialog_text = "Give this cell back to the IslandWorld?\nThis island's own settings are dropped (not undoable); its paint and sculpt go back to the world if its size and resolution are unchanged."
	dialog.confirmed.connect(func(): unpin_from_inspector(island), CONNECT_DEFERRED)
	dialog.visibility_changed.connect(func(): if not dialog.visible: dialog.queue_free())
	var parent: Node = from
	if Engine.is_editor_hint():
		parent = EditorInterface.get_base_control()
	parent.add_child(dialog, true)
	dialog.popup_centered()


static func world_island_text(object: Object) -> String:
	var c: Vector2i = object.get_meta(&"island_world_cell")
	return "Island of the IslandWorld's cell (%d, %d): read-only. Its settings come from the world's island_scene and its cell (seed, size, position), and it is made again each time it streams in; change the template to change every island, or pin this one to customise it." % [c.x, c.y]


func _parse_property(object: Object, type: Variant.Type, name: String, hint: PropertyHint,
		hint_string: String, usage: int, wide: bool) -> bool:
	if name == "island" and object.is_class("TerrainBrush"):
		var label := Label.new()
		label.text = IslandHeader.paints_text(object)
		label.add_theme_color_override("font_color", Color(0.7, 0.8, 1.0))
		label.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
		add_custom_control(label)
	return false
