## Scatter benchmarks of ProceduralIsland with the demo's five scatter layers.
##
## usage: godot --headless --path PROJECT -s res://bench/scatter_bench.gd -- place [RESOLUTION] [CHUNK] [REPS]
##        godot --path PROJECT -s res://bench/scatter_bench.gd -- flyover [FRAMES] [TEXTURED]   (rendered; needs res://demo)
##
## `place` (headless): `regenerate()` REPS times (default 1025 64 5) and reads `scatter_place_ms`
## (placement of the five layers on the rayon pool) and the instance count; then one
## `regenerate_async()`, reading the wall time of every frame (headless: nothing is drawn, so
## it is the node's work plus the engine's idle overhead) while the island and its scatter nodes are
## built, and the node's own `scatter_frame_ms_max` (the most one frame spent building scatter
## nodes, measured inside the node). Prints
##     scatter_bench  place  N  chunk  reps  median_ms  min_ms  instances
##     scatter_bench  build  N  chunk  frames  scatter_frame_ms_max  frame_ms_max  frame_ms_max_scatter_phase  scatter_frame_cpu_ms_max  node_frame_ms_max  node_frame_cpu_ms_max  node_frame_phase
## (`node_frame_*`: the node's whole `_process` per frame while the island is installed: chunks,
## water, splat maps and scatter nodes; the phase is what the worst frame did).
## `flyover`: the demo scene (its island, sea, sky, sun shadows, character) with visibility ranges on
## every scatter layer (grass as the demo has it, 300 m + 60 m fade; rocks 600 m + 100 m; trees and
## palms 1500 m + 200 m); a camera flies a fixed path low over the island (corner to corner, then a
## circle) by FRAMES frames (default 240). TEXTURED (0 or 1..8, default 0): that many TerrainLayers
## with albedo and normal textures (512² procedural noise) on the island's most used splat layers
## (sand, grass, rock, forest, then dirt, gravel, meadow, snow), so the terrain shader samples
## them. Prints the wall time between frames (rendering included):
##     scatter_bench  flyover  frames  p50_ms  p99_ms  max_ms  instances  renderer  textured
extends SceneTree

var _mode := "place"
var _args: PackedStringArray
var _isl: ProceduralIsland
var _frame := 0
var _times := PackedFloat64Array()
var _last_us := 0
var _cam: Camera3D
var _path := PackedVector3Array()
var _frames := 240
var _length := 0.0
var _phase := 0
var _scatter_phase_max := 0.0
var _process_max := 0.0
var _build_frames := 0


func _initialize() -> void:
	_args = OS.get_cmdline_user_args()
	if _args.size() > 0:
		_mode = _args[0]
	if _mode == "flyover":
		_start_flyover()
	else:
		_run_place()


func _arg(i: int, d: int) -> int:
	return _args[i].to_int() if _args.size() > i else d


func _demo_layers() -> Array[ScatterLayer]:
	var out: Array[ScatterLayer] = []
	for i in 5:
		out.append(ScatterLayer.demo_layer(i))
	return out


## A 1024 m island of `res`² samples in chunks of `chunk` with the demo's layers, no sea, not
## generated yet, in the tree.
func _new_island(res: int, chunk: int) -> ProceduralIsland:
	var isl := ProceduralIsland.new()
	isl.resolution = res
	isl.chunk_size = chunk
	isl.world_size = 1024.0
	isl.sea_enabled = false
	isl.generate_on_ready = false
	isl.scatter_layers = _demo_layers()
	root.add_child(isl)
	return isl


func _run_place() -> void:
	var res := _arg(1, 1025)
	var chunk := _arg(2, 64)
	var reps := _arg(3, 5)
	_isl = _new_island(res, chunk)
	var ms := PackedFloat64Array()
	var count := 0
	for r in reps:
		_isl.regenerate()
		var st := _isl.get_last_stats()
		if not st.has("scatter_place_ms"):
			# No placement happened (e.g. the island is in server mode: a headless project
			# without `procedural_island/server_mode_when_headless = false`). Stop rather than
			# wait for a scatter phase that never comes.
			printerr("scatter_bench: regenerate() placed no scatter (server_mode %d: in a headless game AUTO is server mode unless procedural_island/server_mode_when_headless is false)" % _isl.server_mode)
			quit(1)
			return
		ms.append(st.scatter_place_ms)
		count = 0
		for i in 5:
			count += _isl.get_scatter_count(i)
	var sorted := ms.duplicate()
	sorted.sort()
	print("scatter_bench\tplace\t%d\t%d\t%d\t%.3f\t%.3f\t%d" % [res, chunk, reps, sorted[reps / 2], sorted[0], count])
	# A fresh node for the background build, so that its scatter counts are 0 until the placement
	# arrives (the scatter phase).
	_isl.queue_free()
	_isl = _new_island(res, chunk)
	_isl.generation_finished.connect(_on_async_done)
	_isl.regenerate_async()
	_phase = 1


func _on_async_done(_stats: Dictionary) -> void:
	_phase = 2


func _process(_delta: float) -> bool:
	if _mode == "flyover":
		return _flyover_frame()
	if _phase == 1:
		_build_frames += 1
		var now := Time.get_ticks_usec()
		var p := (now - _last_us) / 1000.0 if _last_us > 0 else 0.0
		_last_us = now
		_process_max = maxf(_process_max, p)
		if _isl.get_scatter_count(0) > 0:
			# The island is installed and the scatter nodes are being built.
			_scatter_phase_max = maxf(_scatter_phase_max, p)
		return false
	if _phase == 2:
		var s := _isl.get_last_stats()
		print("scatter_bench\tbuild\t%d\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%s" % [_isl.resolution, _isl.chunk_size, _build_frames, s.get("scatter_frame_ms_max", NAN), _process_max, _scatter_phase_max, s.get("scatter_frame_cpu_ms_max", NAN), s.get("node_frame_ms_max", NAN), s.get("node_frame_cpu_ms_max", NAN), s.get("node_frame_phase", "?")])
		return true
	return false


func _start_flyover() -> void:
	_frames = _arg(1, 240)
	var demo := (load("res://demo/demo.tscn") as PackedScene).instantiate()
	var isl := demo.get_node("Island") as ProceduralIsland
	var layers := isl.scatter_layers.duplicate(true)
	var ranges := [[1500.0, 200.0], [1500.0, 200.0], [600.0, 100.0], [1500.0, 200.0], [300.0, 60.0]]
	for i in layers.size():
		var l := layers[i] as ScatterLayer
		l.visibility_range_end = ranges[mini(i, 4)][0]
		l.visibility_range_end_margin = ranges[mini(i, 4)][1]
	isl.scatter_layers = layers
	_textured = clampi(_arg(2, 0), 0, 8)
	if _textured > 0:
		isl.terrain_layers = _textured_layers(_textured)
	root.add_child(demo) # the island generates synchronously in _ready
	_isl = isl
	_cam = Camera3D.new()
	_cam.far = 30000.0
	root.add_child(_cam)
	_cam.make_current()
	var h := 512.0
	_path.append(Vector3(-h + 50, 45, -h + 50))
	_path.append(Vector3(h - 50, 45, h - 50))
	for i in 33:
		var a := PI * 0.25 + TAU * i / 32.0
		_path.append(Vector3(cos(a) * 350.0, 55, sin(a) * 350.0))
	for i in _path.size() - 1:
		_length += _path[i].distance_to(_path[i + 1])


var _textured := 0


## `count` TerrainLayers with albedo and normal textures (procedural, 512²), on the splat layers
## a default island uses most first.
func _textured_layers(count: int) -> Array[TerrainLayer]:
	var order := [0, 1, 2, 4, 5, 6, 7, 3]
	var colors := [Color(0.86, 0.78, 0.58), Color(0.30, 0.48, 0.18), Color(0.42, 0.40, 0.38), Color(0.95, 0.96, 0.98), Color(0.13, 0.27, 0.10), Color(0.40, 0.30, 0.20), Color(0.30, 0.29, 0.28), Color(0.62, 0.58, 0.30)]
	var out: Array[TerrainLayer] = []
	out.resize(8)
	for k in count:
		var i: int = order[k]
		var n := FastNoiseLite.new()
		n.seed = 100 + i
		n.frequency = 0.02
		n.fractal_octaves = 4
		var img := n.get_seamless_image(512, 512)
		img.convert(Image.FORMAT_RGBA8)
		var albedo := img.duplicate() as Image
		var c: Color = colors[i]
		for y in 512:
			for x in 512:
				var v := albedo.get_pixel(x, y).r
				albedo.set_pixel(x, y, c.darkened(0.35).lerp(c.lightened(0.25), v))
		var normal := img.duplicate() as Image
		normal.bump_map_to_normal_map(4.0)
		var l := TerrainLayer.new()
		l.albedo_texture = ImageTexture.create_from_image(albedo)
		l.normal_texture = ImageTexture.create_from_image(normal)
		l.uv_scale = 6.0
		out[i] = l
	var trimmed: Array[TerrainLayer] = []
	for i in 8:
		trimmed.append(out[i])
	return trimmed


## Pipeline compilations Godot has made so far (draw-time ones stall the frame).
func _compilations() -> String:
	return "draw %d, specialization %d, surface %d, mesh %d" % [Performance.get_monitor(Performance.PIPELINE_COMPILATIONS_DRAW), Performance.get_monitor(Performance.PIPELINE_COMPILATIONS_SPECIALIZATION), Performance.get_monitor(Performance.PIPELINE_COMPILATIONS_SURFACE), Performance.get_monitor(Performance.PIPELINE_COMPILATIONS_MESH)]


func _point_at(dist: float) -> Vector3:
	var d := dist
	for i in _path.size() - 1:
		var seg := _path[i].distance_to(_path[i + 1])
		if d <= seg:
			return _path[i].lerp(_path[i + 1], d / seg)
		d -= seg
	return _path[_path.size() - 1]


func _flyover_frame() -> bool:
	_frame += 1
	var now := Time.get_ticks_usec()
	if _frame > 8:
		_times.append((now - _last_us) / 1000.0)
		if OS.get_environment("SCATTER_BENCH_TRACE") != "":
			printerr("scatter_bench: frame %d: %.0f ms at %s: objects %d, primitives %d, draw calls %d; %s" % [_frame, _times[_times.size() - 1], _cam.global_position, RenderingServer.get_rendering_info(RenderingServer.RENDERING_INFO_TOTAL_OBJECTS_IN_FRAME), RenderingServer.get_rendering_info(RenderingServer.RENDERING_INFO_TOTAL_PRIMITIVES_IN_FRAME), RenderingServer.get_rendering_info(RenderingServer.RENDERING_INFO_TOTAL_DRAW_CALLS_IN_FRAME), _compilations()])
		if _times[_times.size() - 1] > 5000.0:
			printerr("scatter_bench: slow frame %d: %.0f ms at %s; pipeline compilations so far: %s" % [_frame, _times[_times.size() - 1], _cam.global_position, _compilations()])
		if _times.size() % 10 == 0:
			printerr("scatter_bench: %d frames, last %.0f ms; compilations %s" % [_times.size(), _times[_times.size() - 1], _compilations()])
	_last_us = now
	var k := maxi(0, _frame - 8)
	var p := _point_at(_length * k / _frames)
	var ahead := _point_at(_length * (k + 4) / _frames)
	_cam.global_position = p
	if ahead.distance_to(p) > 0.01:
		_cam.look_at(Vector3(ahead.x, p.y - 15.0, ahead.z), Vector3.UP)
	if _times.size() >= _frames:
		var s := _times.duplicate()
		s.sort()
		var n := s.size()
		var count := 0
		for i in 5:
			count += _isl.get_scatter_count(i)
		print("scatter_bench\tflyover\t%d\t%.2f\t%.2f\t%.2f\t%d\t%s\t%d" % [n, s[n / 2], s[mini(n - 1, int(ceil(n * 0.99)) - 1)], s[n - 1], count, RenderingServer.get_video_adapter_name(), _textured])
		return true
	return false
