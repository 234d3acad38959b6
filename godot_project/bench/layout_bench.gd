## Layout-edit benchmarks of ProceduralIsland with an IslandPath (road) and an IslandStamp.
##
## usage: godot --headless --path PROJECT -s res://bench/layout_bench.gd -- [RESOLUTION] [CHUNK] [REPS]
##
## A RESOLUTION² island (default 1025, chunks of 64, 1 km, round outline) with a road of three
## curve points and a plateau stamp, generated with `regenerate()`. Then, REPS times each (default
## 3), in a game (the editor adds its 0.3 s debounce before the same work):
##   - `peer`: `regenerate_async()` with nothing changed (what any background regeneration of the
##     island costs);
##   - `curve`: the road's middle point moved 40 m (as a drag ends), until `generation_finished`;
##   - `stamp`: the stamp moved 40 m.
## Each: the time from the edit to the updated island in the scene and the node's worst frame
## meanwhile. Prints
##     layout_bench  KIND  N  chunk  reps  median_ms  max_ms  node_frame_cpu_ms_max  node_frame_ms_max
extends SceneTree

var _isl: ProceduralIsland
var _road: IslandPath
var _stamp: IslandStamp
var _n := 1025
var _chunk := 64
var _reps := 3
var _kinds := ["peer", "curve", "stamp"]
var _kind := 0
var _rep := 0
var _t0 := 0
var _done := false
var _waiting := false
var _times := PackedFloat64Array()
var _cpu_max := 0.0
var _wall_max := 0.0


func _initialize() -> void:
	var a := OS.get_cmdline_user_args()
	_n = a[0].to_int() if a.size() > 0 else 1025
	_chunk = a[1].to_int() if a.size() > 1 else 64
	_reps = a[2].to_int() if a.size() > 2 else 3
	_isl = ProceduralIsland.new()
	_isl.generate_on_ready = false
	_isl.resolution = _n
	_isl.chunk_size = _chunk
	_isl.world_size = 1000.0
	_isl.island_shape = ProceduralIsland.SHAPE_ROUND
	root.add_child(_isl)
	_road = IslandPath.new()
	var c := Curve3D.new()
	for p in [Vector3(-250, 0, 40), Vector3(-50, 0, 0), Vector3(150, 0, 60)]:
		c.add_point(p)
	_road.curve = c
	_road.width = 8.0
	_isl.add_child(_road)
	_stamp = IslandStamp.new()
	_stamp.kind = IslandStamp.KIND_PLATEAU
	_stamp.radius = 50.0
	_stamp.height = 20.0
	_stamp.position = Vector3(80, 0, -120)
	_isl.add_child(_stamp)
	if not _isl.regenerate():
		print("layout_bench: regenerate failed")
		quit(1)
		return
	_isl.generation_finished.connect(func(_s: Dictionary) -> void: _done = true)


func _edit() -> void:
	_done = false
	_t0 = Time.get_ticks_usec()
	var dz := 40.0 if _rep % 2 == 0 else -40.0
	match _kinds[_kind]:
		"peer":
			_isl.regenerate_async()
		"curve":
			var p := _road.curve.get_point_position(1)
			_road.curve.set_point_position(1, p + Vector3(0, 0, dz))
		"stamp":
			_stamp.position += Vector3(0, 0, dz)
	_waiting = true


func _process(_delta: float) -> bool:
	if not _waiting:
		_edit()
		return false
	if not _done:
		if (Time.get_ticks_usec() - _t0) > 300_000_000:
			print("layout_bench: no generation_finished")
			return true
		return false
	_times.append((Time.get_ticks_usec() - _t0) / 1000.0)
	var st := _isl.get_last_stats()
	_cpu_max = maxf(_cpu_max, st.get("node_frame_cpu_ms_max", NAN))
	_wall_max = maxf(_wall_max, st.get("node_frame_ms_max", NAN))
	_waiting = false
	_rep += 1
	if _rep < _reps:
		return false
	var s := _times.duplicate()
	s.sort()
	print("layout_bench\t%s\t%d\t%d\t%d\t%.1f\t%.1f\t%.2f\t%.2f" % [_kinds[_kind], _n, _chunk, _reps, s[s.size() / 2], s[s.size() - 1], _cpu_max, _wall_max])
	_times = PackedFloat64Array()
	_cpu_max = 0.0
	_wall_max = 0.0
	_rep = 0
	_kind += 1
	return _kind >= _kinds.size()
