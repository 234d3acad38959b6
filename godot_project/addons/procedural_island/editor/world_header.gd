@tool
extends VBoxContainer
## Inspector header of an IslandWorld (built by `inspector_plugin.gd`, freed with the
## inspector): a map of the cells around the editor camera (in a running game, the first
## target) from the node's `get_map_image` — every loaded island in relief, the islands not
## loaded yet as outlines, the targets as white dots — redrawn twice a second, and the world's
## numbers. Clicking an island on the map selects it for the inspector: its own properties,
## read-only (they come from the world; see `inspector_plugin.gd`).

const MAP_SIZE := 256
## The map shows this many times `view_distance` around its centre.
const MAP_EXTENT := 1.25

var world: Node = null
var map: TextureRect
var info: Label
var _poll := 0.0
## The node-local rectangle (metres) the map shows.
var _rect := Rect2()


## Whether `object` gets this header.
static func handles(object: Object) -> bool:
	return object != null and is_instance_valid(object) and object.is_class("IslandWorld")


## A header for `object` (an IslandWorld), or null for anything else.
static func create_for(object: Object) -> Control:
	if not handles(object):
		return null
	var h = load("res://addons/procedural_island/editor/world_header.gd").new()
	h._build(object as Node)
	return h


func _build(p_world: Node) -> void:
	world = p_world
	name = "IslandWorldHeader"
	add_theme_constant_override("separation", 4)
	var center := CenterContainer.new()
	add_child(center)
	map = TextureRect.new()
	map.name = "Map"
	map.custom_minimum_size = Vector2(MAP_SIZE, MAP_SIZE)
	map.expand_mode = TextureRect.EXPAND_IGNORE_SIZE
	map.stretch_mode = TextureRect.STRETCH_KEEP_ASPECT_CENTERED
	map.tooltip_text = "The cells around the camera: loaded islands in relief, the others outlined, targets as white dots. Click an island to inspect it."
	map.gui_input.connect(_on_map_input)
	center.add_child(map)
	info = Label.new()
	info.name = "Info"
	info.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
	info.custom_minimum_size.x = 120
	add_child(info)
	add_child(HSeparator.new())
	refresh()


func _process(delta: float) -> void:
	if world == null or not is_instance_valid(world):
		return
	_poll += delta
	if _poll < 0.5:
		return
	_poll = 0.0
	refresh()


## Where the map is centred (node-local x, z): the first target, else the editor's camera,
## else the world's origin.
func map_centre() -> Vector2:
	var at := Vector3.ZERO
	var found := false
	var targets: Array = world.get("targets")
	if not targets.is_empty():
		var t := world.get_node_or_null(targets[0]) as Node3D
		if t != null and t.is_inside_tree():
			at = t.global_position
			found = true
	if not found and Engine.is_editor_hint():
		var vp := EditorInterface.get_editor_viewport_3d(0)
		var cam := vp.get_camera_3d() if vp != null else null
		if cam != null:
			at = cam.global_position
			found = true
	if found and (world as Node3D).is_inside_tree():
		at = (world as Node3D).to_local(at)
	return Vector2(at.x, at.z)


## Redraw the map and the numbers.
func refresh() -> void:
	if not is_instance_valid(world) or not world.is_inside_tree():
		return
	var c := map_centre()
	var r := float(world.get("view_distance")) * MAP_EXTENT
	_rect = Rect2(c.x - r, c.y - r, 2.0 * r, 2.0 * r)
	var warnings: PackedStringArray = world.call("get_warnings")
	if not warnings.is_empty():
		map.texture = null
		info.text = "Nothing streams: " + "; ".join(warnings)
		return
	var img: Image = world.call("get_map_image", _rect, MAP_SIZE)
	map.texture = ImageTexture.create_from_image(img) if img != null else null
	info.text = world_text(world, _rect)


## "12 islands in view · 9 loaded (2 detailed), generating 1, queued 3" and the map's scale.
static func world_text(w: Node, rect: Rect2) -> String:
	var s: Dictionary = w.call("get_world_stats")
	var in_view: Array = w.call("find_islands", rect)
	var lines := PackedStringArray()
	lines.append("%d islands on the map  ·  %d loaded (%d detailed)" % [in_view.size(), int(s.get("loaded", 0)), int(s.get("detailed", 0))])
	lines.append("Generating %d, queued %d  ·  ~%.0f MB" % [int(s.get("generating", 0)), int(s.get("queued", 0)), float(s.get("memory_bytes", 0)) / 1048576.0])
	lines.append("Map: %.1f km across, centred on %s" % [rect.size.x / 1000.0, "the first target" if not (w.get("targets") as Array).is_empty() else "the editor camera"])
	return "\n".join(lines)


## The world island under map point `pos` (pixels of the map control), or null.
func island_at_map(pos: Vector2) -> Node:
	if map.size.x <= 0.0 or map.size.y <= 0.0 or _rect.size.x <= 0.0:
		return null
	# The map is square and drawn centred, keeping its aspect.
	var side := minf(map.size.x, map.size.y)
	var off := (map.size - Vector2(side, side)) * 0.5
	var uv := (pos - off) / side
	if uv.x < 0.0 or uv.y < 0.0 or uv.x > 1.0 or uv.y > 1.0:
		return null
	var x := _rect.position.x + uv.x * _rect.size.x
	var z := _rect.position.y + uv.y * _rect.size.y
	return world.call("get_island_at", x, z)


func _on_map_input(event: InputEvent) -> void:
	var mb := event as InputEventMouseButton
	if mb == null or not mb.pressed or mb.button_index != MOUSE_BUTTON_LEFT:
		return
	var isl := island_at_map(mb.position)
	if isl == null:
		info.text = world_text(world, _rect) + "\nNo island loaded there."
		return
	if Engine.is_editor_hint():
		EditorInterface.inspect_object(isl)
