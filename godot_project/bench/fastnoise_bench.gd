## Peer benchmark for `cargo xtask bench`: Godot's built-in FastNoiseLite.get_image.
##
## usage: godot --headless --path godot_project --script res://bench/fastnoise_bench.gd -- 1025,4097 [REPS]
##
## Perlin noise, fBm, 8 octaves, lacunarity 2, gain 0.5, first-octave wavelength 400 m on a
## 1024 m map (the island's default fBm), N x N pixels. Prints one tab-separated line per size:
##     fastnoise  N  median_ms  min_ms  reps
extends SceneTree

## The noise configuration (also timed by `regenerate_bench.gd`).
const Peer := preload("fastnoise_peer.gd")


func _init() -> void:
	var args := OS.get_cmdline_user_args()
	var sizes: Array[int] = [1025, 4097]
	var reps := 5
	if args.size() > 0:
		sizes.clear()
		for s in args[0].split(","):
			if not s.is_valid_int() or s.to_int() < 2:
				push_error("fastnoise_bench: bad size '%s'" % s)
				quit(2)
				return
			sizes.append(s.to_int())
	if args.size() > 1:
		reps = maxi(1, args[1].to_int())
	for n in sizes:
		var noise := Peer.make(n)
		var img := noise.get_image(n, n)  # warm-up
		if img == null or img.get_width() != n:
			push_error("fastnoise_bench: get_image failed at %d" % n)
			quit(1)
			return
		var times: Array[float] = []
		for i in reps:
			var t0 := Time.get_ticks_usec()
			img = noise.get_image(n, n)
			times.append((Time.get_ticks_usec() - t0) / 1000.0)
		times.sort()
		var m := times.size() / 2
		var med: float = times[m] if times.size() % 2 == 1 else 0.5 * (times[m - 1] + times[m])
		print("fastnoise\t%d\t%.4f\t%.4f\t%d" % [n, med, times[0], reps])
	quit(0)
