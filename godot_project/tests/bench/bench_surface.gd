extends SceneTree
## Cost of `ProceduralIsland.get_surface_at` called from GDScript (dictionary included), and of
## `find_points`, on a 1025² island. Run:
##   godot --headless --path godot_project -s res://tests/bench/bench_surface.gd


func _initialize() -> void:
	var isl := ProceduralIsland.new()
	isl.resolution = 1025
	isl.backend = ProceduralIsland.BACKEND_CPU
	isl.generate_on_ready = false
	root.add_child(isl)
	isl.regenerate()
	var t0 := Time.get_ticks_usec()
	isl.get_surface_at(0.0, 0.0)
	print("first get_surface_at (builds the maps): %.1f ms" % ((Time.get_ticks_usec() - t0) / 1000.0))
	var half: float = isl.world_size * 0.45
	var n := 100000
	var best := INF
	for rep in 5:
		t0 = Time.get_ticks_usec()
		for i in n:
			var x := fmod(i * 7.919, 2.0 * half) - half
			var z := fmod(i * 104.729, 2.0 * half) - half
			isl.get_surface_at(x, z)
		best = minf(best, float(Time.get_ticks_usec() - t0) / n)
	# The loop itself (two fmods and the call overhead of a trivial engine method).
	var loop := INF
	for rep in 5:
		t0 = Time.get_ticks_usec()
		for i in n:
			var x := fmod(i * 7.919, 2.0 * half) - half
			var z := fmod(i * 104.729, 2.0 * half) - half
			isl.get_height_at(x, z)
		loop = minf(loop, float(Time.get_ticks_usec() - t0) / n)
	print("get_surface_at from GDScript: %.2f µs per call (best of 5 × %d); get_height_at: %.2f µs" % [best, n, loop])
	t0 = Time.get_ticks_usec()
	var pts := isl.find_points(16, {"min_height": 2.0, "max_slope_degrees": 30.0, "min_distance": 40.0, "min_water_distance": 10.0})
	print("find_points(16): %d points in %.2f ms" % [pts.size(), (Time.get_ticks_usec() - t0) / 1000.0])
	isl.free()
	quit()
