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
## read-only: the world sets them from its template and its cell, and makes the island again
## whenever it streams back in.
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
	if is_world_island(object):
		var label := Label.new()
		label.text = world_island_text(object)
		label.add_theme_color_override("font_color", Color(1.0, 0.85, 0.5))
		label.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
		add_custom_control(label)


## Whether `object` is an island made by an IslandWorld.
static func is_world_island(object: Object) -> bool:
	return object != null and object.is_class("ProceduralIsland") and object.has_meta(&"island_world_cell")


static func world_island_text(object: Object) -> String:
	var c: Vector2i = object.get_meta(&"island_world_cell")
	return "Island of the IslandWorld's cell (%d, %d): read-only. Its settings come from the world's island_scene and its cell (seed, size, position), and it is made again each time it streams in; change the template to change every island." % [c.x, c.y]


func _parse_property(object: Object, type: Variant.Type, name: String, hint: PropertyHint,
		hint_string: String, usage: int, wide: bool) -> bool:
	if name == "island" and object.is_class("TerrainBrush"):
		var label := Label.new()
		label.text = IslandHeader.paints_text(object)
		label.add_theme_color_override("font_color", Color(0.7, 0.8, 1.0))
		label.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
		add_custom_control(label)
	if is_world_island(object) and usage & PROPERTY_USAGE_EDITOR:
		var ed := EditorInspector.instantiate_property_editor(object, type, name, hint, hint_string, usage, wide)
		if ed != null:
			ed.read_only = true
			add_property_editor(name, ed)
			return true
	return false
