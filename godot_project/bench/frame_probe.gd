extends SceneTree
## What a rendered frame costs, part by part (issue 40.2): the editor session's kind of scene (a
## 513² island over 1024 m with the sea, rivers and lakes, one default ScatterLayer with a box
## mesh, optionally a textured TerrainLayer) seen as the editor frames a new island (from above
## at an angle, the whole map in view), under a sun with shadows, at 1600×900. Renders a few
## frames with everything, then with one part hidden at a time, and prints the median frame time
## of each:
##     frame_probe  <what>  frames  p50_ms  max_ms  objects  primitives  draw_calls
## Needs a display (`xvfb-run -a`). After `--`: `--frames=N` (default 4), `--textured` (add the
## textured layer), `--size=WxH`, `--parts=a,b` (only these variants).

var _frames_per := 4
var _textured := false
var _cam: Camera3D
var _sun: DirectionalLight3D
var _isl: ProceduralIsland
var _variants: Array = []
var _v := 0
var _frame := 0
var _last := 0
var _times := PackedFloat64Array()
var _settle := 0


func _initialize() -> void:
	var size := Vector2i(1600, 900)
	var parts := ""
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--frames="):
			_frames_per = int(a.substr(9))
		elif a == "--textured":
			_textured = true
		elif a.begins_with("--size="):
			var p := a.substr(7).split("x")
			size = Vector2i(int(p[0]), int(p[1]))
		elif a.begins_with("--parts="):
			parts = a.substr(8)
	root.size = size
	var env := WorldEnvironment.new()
	var e := Environment.new()
	e.background_mode = Environment.BG_SKY
	e.sky = Sky.new()
	e.sky.sky_material = ProceduralSkyMaterial.new()
	e.tonemap_mode = Environment.TONE_MAPPER_FILMIC
	env.environment = e
	root.add_child(env)
	_sun = DirectionalLight3D.new()
	_sun.rotation_degrees = Vector3(-60, 150, 0)
	_sun.shadow_enabled = true
	root.add_child(_sun)
	_cam = Camera3D.new()
	_cam.far = 4000.0
	root.add_child(_cam)
	_isl = ProceduralIsland.new()
	_isl.resolution = 513
	_isl.chunk_size = 64
	_isl.generate_on_ready = false
	var scatter := ScatterLayer.new()
	scatter.mesh = BoxMesh.new()
	scatter.density = 3.0
	_isl.scatter_layers = [scatter]
	if _textured:
		var noise := FastNoiseLite.new()
		noise.frequency = 0.02
		var img := noise.get_seamless_image(512, 512)
		img.convert(Image.FORMAT_RGBA8)
		var l := TerrainLayer.new()
		l.albedo_texture = ImageTexture.create_from_image(img)
		_isl.terrain_layers = [l]
	root.add_child(_isl)
	_isl.regenerate()
	# Like the editor framing a new island: the whole map in view from above at an angle.
	_cam.look_at_from_position(Vector3(0, 700, 900), Vector3(0, 0, 0))
	_variants = [
		["everything", func(): pass],
		["no_scatter", func(): _show("scatter", false)],
		["no_water", func(): _show("water", false)],
		["no_terrain", func(): _show("terrain", false)],
		["no_shadows", func(): _sun.shadow_enabled = false],
		["no_sky", func(): e.background_mode = Environment.BG_COLOR],
	]
	if parts != "":
		var keep := parts.split(",")
		_variants = _variants.filter(func(v): return v[0] == "everything" or keep.has(v[0]))


## Show or hide one kind of the island's internal nodes (by the kind of node and material).
func _show(kind: String, on: bool) -> void:
	for c in _all(_isl):
		var k := ""
		if c is MultiMeshInstance3D:
			k = "scatter"
		elif c is MeshInstance3D:
			var m: Material = (c as MeshInstance3D).material_override
			if m is ShaderMaterial and (m as ShaderMaterial).shader != null and (m as ShaderMaterial).shader.code.contains("water_depth"):
				k = "water"
			else:
				k = "terrain"
		if k == kind:
			(c as Node3D).visible = on


func _all(n: Node) -> Array:
	var out := []
	for c in n.get_children(true):
		out.append(c)
		out.append_array(_all(c))
	return out


func _reset() -> void:
	for k in ["scatter", "water", "terrain"]:
		_show(k, true)
	_sun.shadow_enabled = true


func _process(_delta: float) -> bool:
	if _isl.is_generating() or _isl.get_scatter_count(0) < 0:
		return false
	_settle += 1
	if _settle < 6:
		return false
	var now := Time.get_ticks_usec()
	if _frame == 0:
		_reset()
		_variants[_v][1].call()
		_times = PackedFloat64Array()
	elif _frame > 2:
		_times.append((now - _last) / 1000.0)
	_last = now
	_frame += 1
	if _times.size() >= _frames_per:
		var s := _times.duplicate()
		s.sort()
		print("frame_probe\t%s\t%d\t%.0f\t%.0f\t%d\t%d\t%d" % [_variants[_v][0], s.size(), s[s.size() / 2], s[s.size() - 1],
			RenderingServer.get_rendering_info(RenderingServer.RENDERING_INFO_TOTAL_OBJECTS_IN_FRAME),
			RenderingServer.get_rendering_info(RenderingServer.RENDERING_INFO_TOTAL_PRIMITIVES_IN_FRAME),
			RenderingServer.get_rendering_info(RenderingServer.RENDERING_INFO_TOTAL_DRAW_CALLS_IN_FRAME)])
		_v += 1
		_frame = 0
		if _v >= _variants.size():
			print("frame_probe\tscatter_instances\t%d\t%s" % [_isl.get_scatter_count(0), RenderingServer.get_video_adapter_name()])
			return true
	return false
