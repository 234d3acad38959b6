extends SceneTree
## IslandWorld streaming benchmark (issue 36): a target moves straight over a default world at a
## fixed speed (in real time: the world streams while it moves) and each frame is checked.
##
## usage: godot --headless --path PROJECT -s res://bench/world_bench.gd -- [SPEED_M_S] [DISTANCE_M]
## (defaults 30 and 20000). Starts with `load_now()` (the islands within collision_distance of
## the start, blocking, as behind a loading screen; its time is printed first). Prints, at the end:
##     world_bench  speed  distance_m  seconds  frames  world_frame_ms_max  world_frame_ms_p99
##       missing_frames  max_missing  late_colliders  islands_detailed  mem_2km  mem_end
##       worst_frame_phase  stream_ms_max  world_frame_cpu_ms_max
## `world_frame_ms_*`: the world node's and its islands' main-thread time per frame
## (`frame_ms_max` of `get_world_stats()`: streaming plus every island's `_process`);
## `worst_frame_phase` what the worst one did; `stream_ms_max` the world's own streaming alone;
## `world_frame_cpu_ms_max` the worst frame in main-thread CPU time (without the time the OS
## gave the generator's threads while the main thread waited).
## `missing_frames`: frames in which an island within 0.8 × view_distance was not loaded at any
## level (`max_missing`: the most in one frame); `late_colliders`: islands whose coast (map
## square) the target came within collision_distance / 2 of before they had colliders;
## `mem_*`: the world's memory estimate after 2 km and at the end.

var _world: IslandWorld
var _target: Node3D
var _speed := 30.0
var _distance := 20000.0
var _start := Vector3(1000.0, 0.0, 1000.0)
var _t0 := 0
var _last := 0
var _frames := 0
var _frame_ms := PackedFloat64Array()
var _missing_frames := 0
var _max_missing := 0
var _late := {}
var _mem_2km := -1
var _detailed_seen := {}
var _worst := 0.0
var _worst_phase := ""
var _stream_max := 0.0
var _cpu_max := 0.0


func _initialize() -> void:
	var a := OS.get_cmdline_user_args()
	if a.size() > 0:
		_speed = float(a[0])
	if a.size() > 1:
		_distance = float(a[1])
	_target = Node3D.new()
	root.add_child(_target)
	_target.position = _start
	_world = IslandWorld.new()
	root.add_child(_world)
	_world.targets = [_world.get_path_to(_target)]


func _process(_delta: float) -> bool:
	if _t0 == 0:
		# As a game would behind its loading screen (the nodes are in the tree by the first
		# frame): the ground under the target first.
		var t := Time.get_ticks_usec()
		var made := _world.load_now()
		print("world_bench_load_now\t%d islands\t%.0f ms" % [made, (Time.get_ticks_usec() - t) / 1000.0])
		_world.reset_frame_stats()
		_t0 = Time.get_ticks_msec()
		return false
	return _step()


func _step() -> bool:

	var now := Time.get_ticks_msec()
	var travelled := _speed * (now - _t0) / 1000.0
	_target.position = _start + Vector3(1.0, 0.0, 0.2).normalized() * travelled
	_frames += 1
	var s := _world.get_world_stats()
	_frame_ms.append(s.frame_ms_max)
	if s.frame_ms_max > _worst:
		_worst = s.frame_ms_max
		_worst_phase = s.frame_phase
	_stream_max = maxf(_stream_max, s.stream_ms_max)
	_cpu_max = maxf(_cpu_max, s.frame_cpu_ms_max)
	_world.reset_frame_stats()
	var p := _target.position
	var view := _world.view_distance
	# Islands that should be in view.
	if _frames > 120:
		var missing := 0
		for c in _world.find_islands(Rect2(p.x - view, p.z - view, 2.0 * view, 2.0 * view)):
			var info := _world.get_island_info(c)
			var ctr: Vector3 = info.center
			var h: float = info.world_size * 0.5
			var dx := maxf(0.0, maxf(ctr.x - h - p.x, p.x - ctr.x - h))
			var dz := maxf(0.0, maxf(ctr.z - h - p.z, p.z - ctr.z - h))
			var d := sqrt(dx * dx + dz * dz)
			if d <= 0.8 * view and _world.get_island_at(ctr.x, ctr.z) == null:
				missing += 1
			if d <= _world.collision_distance * 0.5 and not _late.has(c):
				var isl := _world.get_island_at(ctr.x, ctr.z)
				if isl == null or isl.name.ends_with("coarse") or not isl.is_collision_ready():
					_late[c] = true
					print("world_bench_late\tcell %s\tframe %d\t%.0f m from its coast\tloaded as %s\tstats %s" % [c, _frames, d, isl.name if isl != null else "nothing", _world.get_world_stats()])
		if missing > 0:
			_missing_frames += 1
			_max_missing = maxi(_max_missing, missing)
	if _mem_2km < 0 and travelled >= 2000.0:
		_mem_2km = s.memory_bytes
	if travelled >= _distance:
		var f := _frame_ms.duplicate()
		f.sort()
		var n := f.size()
		print("world_bench\t%.0f\t%.0f\t%.1f\t%d\t%.2f\t%.2f\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%.2f\t%.2f" % [_speed, _distance, (now - _t0) / 1000.0, _frames, f[n - 1], f[mini(n - 1, int(ceil(n * 0.99)) - 1)], _missing_frames, _max_missing, _late.size(), s.detailed, _mem_2km, s.memory_bytes, _worst_phase, _stream_max, _cpu_max])
		return true
	return false
