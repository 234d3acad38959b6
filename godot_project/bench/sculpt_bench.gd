## Sculpt benchmarks of ProceduralIsland + TerrainBrush.
##
## usage: godot --headless --path PROJECT -s res://bench/sculpt_bench.gd -- [RESOLUTION] [CHUNK] [DABS]
##
## A RESOLUTION² island (default 1025, chunks of 64, 1 km) generated with `regenerate()`, with a
## TerrainBrush child in MODE_SCULPT_RAISE (radius 20 m, 0.5 m per dab). One stroke of DABS
## `paint_at` dabs (default 120) along a line over the land: the main-thread time of each call
## (the dab into the sculpt layer, the preview heights and normals, the chunk meshes under the
## brush rebuilt). Then `end_stroke()` and the frames until `generation_finished`: the time from
## the release to the re-eroded island in the scene, and the node's worst frame meanwhile.
## Prints
##     sculpt_bench  dab  N  chunk  dabs  median_ms  p95_ms  max_ms
##     sculpt_bench  release  N  chunk  frames  total_ms  end_stroke_ms  node_frame_cpu_ms_max  node_frame_ms_max
extends SceneTree

var _isl: ProceduralIsland
var _brush: TerrainBrush
var _n := 1025
var _chunk := 64
var _t0 := 0
var _frames := 0
var _done := false


func _initialize() -> void:
	var a := OS.get_cmdline_user_args()
	_n = a[0].to_int() if a.size() > 0 else 1025
	_chunk = a[1].to_int() if a.size() > 1 else 64
	var dabs := a[2].to_int() if a.size() > 2 else 120
	_isl = ProceduralIsland.new()
	_isl.generate_on_ready = false
	_isl.resolution = _n
	_isl.chunk_size = _chunk
	_isl.world_size = 1000.0
	_isl.island_shape = ProceduralIsland.SHAPE_ROUND
	_isl.sea_enabled = false
	root.add_child(_isl)
	_brush = TerrainBrush.new()
	_isl.add_child(_brush)
	if not _isl.regenerate():
		print("sculpt_bench: regenerate failed")
		quit(1)
		return
	_dabs = dabs


var _dabs := 0
var _started := false


## The stroke, in the first frame (inside the tree: the release regenerates in the background).
func _stroke() -> void:
	_brush.mode = TerrainBrush.MODE_SCULPT_RAISE
	_brush.radius = 20.0
	_brush.sculpt_height = 0.5
	_brush.begin_stroke()
	var times := PackedFloat64Array()
	for k in _dabs:
		var x := -200.0 + 400.0 * k / _dabs
		var t := Time.get_ticks_usec()
		_brush.paint_at(Vector3(x, 0.0, 30.0))
		times.append((Time.get_ticks_usec() - t) / 1000.0)
	times.sort()
	print("sculpt_bench\tdab\t%d\t%d\t%d\t%.3f\t%.3f\t%.3f" % [_n, _chunk, _dabs, times[times.size() / 2], times[int(times.size() * 0.95)], times[times.size() - 1]])
	_isl.generation_finished.connect(func(_s: Dictionary) -> void: _done = true)
	_t0 = Time.get_ticks_usec()
	_brush.end_stroke()
	_end_ms = (Time.get_ticks_usec() - _t0) / 1000.0


var _end_ms := 0.0


func _process(_delta: float) -> bool:
	if not _started:
		_started = true
		_stroke()
		return false
	_frames += 1
	if _done:
		var total := (Time.get_ticks_usec() - _t0) / 1000.0
		var st := _isl.get_last_stats()
		print("sculpt_bench\trelease\t%d\t%d\t%d\t%.1f\t%.2f\t%.2f\t%.2f" % [_n, _chunk, _frames, total, _end_ms, st.get("node_frame_cpu_ms_max", NAN), st.get("node_frame_ms_max", NAN)])
		return true
	if _frames > 100000:
		print("sculpt_bench: no generation_finished")
		return true
	return false
