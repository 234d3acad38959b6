@tool
extends VBoxContainer
## The inspector header built by `inspector_plugin.gd` (one per inspected node; freed with the
## inspector). It follows the node: the island's generation signals (progress bar with the stage
## while a generation runs, picture and numbers refreshed when it finishes), and for a brush
## its layer, masks and island (checked a few times a second).
##
## The status line and the progress bar always take their place (the bar is only made
## transparent when idle), so the properties below never move under the mouse when a
## generation starts or ends. A failure stays shown until the next generation starts or the
## island has no configuration warning any more (the invalid value was reverted).

const PREVIEW_SIZE := 192
const LAYER_NAMES := ["Sand", "Grass", "Rock", "Snow", "Forest", "Dirt", "Gravel", "Meadow"]
## The built-in shader's layer colours (uniforms layer0_tint .. layer7_tint).
const SHADER_PATH := "res://addons/procedural_island/terrain.gdshader"

var node: Node = null
var preview: TextureRect
var info: Label
var progress: ProgressBar
var stage: Label
var swatch: ColorRect
var _signature := ""
var _poll := 0.0
## The stage line shows a failure (cleared when the node's warnings clear).
var _failed := false


## Whether `object` gets a header (the inspector plugin's `_can_handle`).
static func handles(object: Object) -> bool:
	return object != null and is_instance_valid(object) \
		and (object.is_class("ProceduralIsland") or object.is_class("TerrainBrush"))


## A header for `object` (a ProceduralIsland or a TerrainBrush), or null for anything else.
static func create_for(object: Object) -> Control:
	if not handles(object):
		return null
	var h = load("res://addons/procedural_island/editor/island_header.gd").new()
	h._build(object as Node)
	return h


func _build(p_node: Node) -> void:
	node = p_node
	name = "ProceduralIslandHeader"
	add_theme_constant_override("separation", 4)
	if node.is_class("ProceduralIsland"):
		var center := CenterContainer.new()
		add_child(center)
		preview = TextureRect.new()
		preview.name = "Preview"
		preview.custom_minimum_size = Vector2(PREVIEW_SIZE, PREVIEW_SIZE)
		preview.expand_mode = TextureRect.EXPAND_IGNORE_SIZE
		preview.stretch_mode = TextureRect.STRETCH_KEEP_ASPECT_CENTERED
		preview.tooltip_text = "Top view of the generated island (north-west light, sea by depth)."
		center.add_child(preview)
	else:
		var row := HBoxContainer.new()
		add_child(row)
		swatch = ColorRect.new()
		swatch.name = "Swatch"
		swatch.custom_minimum_size = Vector2(28, 28)
		swatch.size_flags_vertical = Control.SIZE_SHRINK_CENTER
		swatch.tooltip_text = "Colour of the brush's layer on this island."
		row.add_child(swatch)
		info = Label.new()
		info.name = "Info"
		info.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
		info.size_flags_horizontal = Control.SIZE_EXPAND_FILL
		info.custom_minimum_size.x = 120
		row.add_child(info)
	if info == null:
		info = Label.new()
		info.name = "Info"
		info.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
		info.custom_minimum_size.x = 120
		add_child(info)
	stage = Label.new()
	stage.name = "Stage"
	# One line whatever it says (a long failure is cut, whole in the tooltip and the node's
	# configuration warning), so the header keeps its height.
	stage.autowrap_mode = TextServer.AUTOWRAP_OFF
	stage.clip_text = true
	stage.text_overrun_behavior = TextServer.OVERRUN_TRIM_ELLIPSIS
	stage.custom_minimum_size.x = 120
	stage.visible = node.is_class("ProceduralIsland")
	add_child(stage)
	progress = ProgressBar.new()
	progress.name = "Progress"
	progress.min_value = 0.0
	progress.max_value = 1.0
	progress.step = 0.001
	# In the layout for an island even while idle (transparent then): no jump when it shows.
	progress.visible = node.is_class("ProceduralIsland")
	_show_progress(false)
	add_child(progress)
	add_child(HSeparator.new())
	if node.is_class("ProceduralIsland"):
		node.connect("generation_started", _on_started)
		node.connect("generation_progress", _on_progress)
		node.connect("generation_finished", _on_finished)
		node.connect("generation_failed", _on_failed)
		if node.call("is_generating"):
			_on_started()
	refresh()


func _exit_tree() -> void:
	if is_instance_valid(node) and node.is_class("ProceduralIsland"):
		for s in ["generation_started", "generation_progress", "generation_finished", "generation_failed"]:
			for c in node.get_signal_connection_list(s):
				if c["callable"].get_object() == self:
					node.disconnect(s, c["callable"])


func _process(delta: float) -> void:
	# Brush values change in the inspector without a signal, and a reverted invalid value
	# clears the island's warning without a new generation: look a few times a second.
	if node == null or not is_instance_valid(node):
		return
	_poll += delta
	if _poll < 0.25:
		return
	_poll = 0.0
	if node.is_class("TerrainBrush"):
		if brush_text(node) != _signature:
			refresh()
	elif _failed and String(node.call("check_parameters")).is_empty():
		_failed = false
		_set_idle_status()


## Whether the progress bar is showing (it keeps its place in the layout either way).
func is_progress_shown() -> bool:
	return progress != null and progress.modulate.a > 0.0


func _show_progress(on: bool) -> void:
	progress.modulate.a = 1.0 if on else 0.0
	progress.mouse_filter = Control.MOUSE_FILTER_PASS if on else Control.MOUSE_FILTER_IGNORE


## The status line while no generation runs (and none failed).
func _set_idle_status() -> void:
	if stage == null or not is_instance_valid(node) or not node.is_class("ProceduralIsland"):
		return
	if node.call("is_generating"):
		return
	stage.tooltip_text = ""
	stage.text = "Ready." if not node.call("get_last_stats").is_empty() else "Not generated yet."


## Update the picture and the numbers from the node.
func refresh() -> void:
	if not is_instance_valid(node):
		return
	if node.is_class("ProceduralIsland"):
		info.text = island_text(node)
		var img: Image = node.call("get_preview_image", PREVIEW_SIZE)
		preview.texture = ImageTexture.create_from_image(img) if img != null else null
		if not _failed:
			_set_idle_status()
	else:
		_signature = brush_text(node)
		info.text = _signature
		swatch.color = layer_color(node.get_island_node() if node.has_method("get_island_node") else null, node.get("layer"))


## "Land 31.4 % · peak 118.2 m", size and chunks, "Generated in 96 ms on CPU" from the last
## statistics, or a hint before the first generation.
static func island_text(island: Node) -> String:
	var s: Dictionary = island.call("get_last_stats")
	if s.is_empty():
		if island.call("is_generating"):
			return "Generating the first island…"
		return "Not generated yet (regenerate, or change a value with auto-regenerate on)."
	var lines := PackedStringArray()
	lines.append("Land %.1f %%  ·  peak %.1f m" % [100.0 * float(s.get("land_fraction", 0.0)), float(s.get("max_height", 0.0))])
	lines.append("%d² samples, %d chunks" % [int(s.get("resolution", 0)), int(s.get("chunks", 0))])
	# regenerate(): the whole call; regenerate_async(): generator + meshes + node build.
	var ms := float(s.get("total_ms", 0.0)) + float(s.get("mesh_ms", 0.0)) + float(s.get("build_ms", 0.0))
	if s.has("regenerate_ms"):
		ms = float(s["regenerate_ms"])
	var backend := str(s.get("backend", "?")).to_upper()
	if s.has("adapter"):
		backend += " (%s)" % s["adapter"]
	lines.append("Generated in %.0f ms on %s" % [ms, backend])
	if s.has("backend_reason"):
		lines.append("Backend: %s" % s["backend_reason"])
	return "\n".join(lines)


## Which island a brush paints, for the header and next to its `island` field.
static func paints_text(brush: Node) -> String:
	var isl: Node = brush.call("get_island_node") if brush.has_method("get_island_node") else null
	var path: NodePath = brush.get("island")
	if isl == null:
		if path.is_empty():
			return "Paints: nothing (the parent is not a ProceduralIsland; set `island`)"
		return "Paints: nothing (`%s` is not a ProceduralIsland)" % path
	if path.is_empty():
		return "Paints: %s (parent)" % isl.name
	return "Paints: %s" % isl.name


## The brush's summary: island, layer, masks.
static func brush_text(brush: Node) -> String:
	var layer: int = brush.get("layer")
	var lname: String = LAYER_NAMES[layer] if layer >= 0 and layer < LAYER_NAMES.size() else "?"
	var lines := PackedStringArray()
	lines.append(paints_text(brush))
	var mode: int = brush.get("mode")
	match mode:
		0, 1, 2:
			lines.append("Layer %d %s  ·  %s" % [layer, lname, ["Paint", "Erase", "Smooth"][mode]])
		3, 4:
			lines.append("%s scatter layer %d" % [["Erase", "Restore"][mode - 3], int(brush.get("scatter_layer"))])
		5, 6:
			lines.append("Sculpt %s  ·  %s m per dab" % [["raise", "lower"][mode - 5], _num(brush.get("sculpt_height"))])
		7:
			lines.append("Sculpt smooth  ·  strength %s" % _num(brush.get("strength")))
		8:
			lines.append("Sculpt flatten to %s m" % _num(brush.get("flatten_height")))
		9, 10:
			lines.append("Sketch %s" % ["land", "sea"][mode - 9])
		_:
			lines.append("Mode %d (invalid)" % mode)
	lines.append("Height %s … %s m (fade %s m)" % [_num(brush.get("min_height")), _num(brush.get("max_height")), _num(brush.get("height_fade"))])
	lines.append("Slope %s … %s° (fade %s°)" % [_num(brush.get("min_slope_degrees")), _num(brush.get("max_slope_degrees")), _num(brush.get("slope_fade"))])
	return "\n".join(lines)


static func _num(v: float) -> String:
	return ("%.0f" % v) if is_equal_approx(v, roundf(v)) else ("%.1f" % v)


## Colour of splat layer `layer` as the island draws it: the `layerN_tint` of its
## ShaderMaterial `terrain_material` if it has one, else the built-in shader's default.
static func layer_color(island: Node, layer: int) -> Color:
	var param := "layer%d_tint" % layer
	if island != null:
		var mat = island.get("terrain_material")
		if mat is ShaderMaterial:
			var v = (mat as ShaderMaterial).get_shader_parameter(param)
			if v is Color:
				return v
	var shader := load(SHADER_PATH) as Shader
	if shader != null:
		var d = RenderingServer.shader_get_parameter_default(shader.get_rid(), param)
		if d is Color:
			return d
		if d is Vector4:
			return Color(d.x, d.y, d.z, d.w)
		if d is Plane:
			return Color(d.x, d.y, d.z, d.d)
		# No rendering server defaults (headless): read the uniform's default from the source.
		var re := RegEx.create_from_string("uniform\\s+vec4\\s+%s\\b[^=;]*=\\s*vec4\\(([^)]*)\\)" % param)
		var m := re.search(shader.code)
		if m != null:
			var v := m.get_string(1).split_floats(",")
			if v.size() == 4:
				return Color(v[0], v[1], v[2], v[3])
	return Color.GRAY


func _on_started() -> void:
	_failed = false
	progress.value = 0.0
	_show_progress(true)
	stage.text = "Generating…"
	if info != null and is_instance_valid(node):
		info.text = island_text(node)


func _on_progress(fraction: float, p_stage: String) -> void:
	_show_progress(true)
	progress.value = fraction
	stage.text = "Generating: %s (%d %%)" % [stage_label(p_stage), roundi(fraction * 100.0)]


## What a progress stage is called in the status line.
static func stage_label(p_stage: String) -> String:
	match p_stage:
		"chunks":
			return "building chunks"
		"scatter":
			return "placing scatter"
	return p_stage


func _on_finished(_stats: Dictionary) -> void:
	_failed = false
	_show_progress(false)
	refresh()


func _on_failed(message: String) -> void:
	_show_progress(false)
	_failed = true
	stage.text = "Generation failed: " + message
	stage.tooltip_text = message
