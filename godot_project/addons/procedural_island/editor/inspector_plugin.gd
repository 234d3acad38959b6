@tool
extends EditorInspectorPlugin
## Inspector header of the Procedural Island nodes: for a ProceduralIsland a top-down relief
## preview, land %, highest peak, the last generation's time and backend and a progress bar
## while a generation runs; for a TerrainBrush the island it paints, the current layer's colour
## and its height/slope mask ranges. The numbers come from the node's own functions
## (`get_preview_image`, `get_last_stats`); see `island_header.gd`.
##
## Also labels the brush's `island` field, which is empty while the brush paints its parent.

const IslandHeader := preload("res://addons/procedural_island/editor/island_header.gd")


func _can_handle(object: Object) -> bool:
	return IslandHeader.handles(object)


func _parse_begin(object: Object) -> void:
	var header := IslandHeader.create_for(object)
	if header != null:
		add_custom_control(header)


func _parse_property(object: Object, _type: Variant.Type, name: String, _hint: PropertyHint,
		_hint_string: String, _usage: int, _wide: bool) -> bool:
	if name == "island" and object.is_class("TerrainBrush"):
		var label := Label.new()
		label.text = IslandHeader.paints_text(object)
		label.add_theme_color_override("font_color", Color(0.7, 0.8, 1.0))
		label.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
		add_custom_control(label)
	return false
