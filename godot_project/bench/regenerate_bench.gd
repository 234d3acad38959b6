## Scene-side cost of ProceduralIsland.regenerate(): the default island built into a scene tree.
##
## usage: godot --headless --path godot_project -s res://bench/regenerate_bench.gd -- [RESOLUTION] [CHUNK] [REPS]
##   defaults: 1025 64 5
##
## Adds a ProceduralIsland with default parameters (collision on, LOD off) to the tree, then calls
## regenerate() REPS + 1 times (the first call creates the chunk nodes; later calls reuse them, as
## a game re-rolling its island does) and measures the wall time of each call around the call
## itself. The node's get_last_stats() splits it: `total_ms` (core generator), `mesh_ms` (chunk
## surfaces and collider heights on worker threads); the rest of the wall time is the scene side on
## the main thread (`scene_ms`: chunk meshes and colliders = `build_ms`, splat maps = `maps_ms`,
## signals).
##
## Each call is paired with the peer of the performance goal, Godot's `FastNoiseLite.get_image`
## (Perlin fBm, 8 octaves, N x N, `fastnoise_peer.gd`: the settings of `fastnoise_bench.gd`), timed right after
## it in the same process: on a shared VM whose speed drifts by tens of percent within minutes,
## the ratio of two timings taken a few hundred milliseconds apart is what can be compared across
## runs (the median of the per-call ratios). Prints one line per call:
##     regen  i  wall_ms  generator_ms  chunk_data_ms  scene_ms  chunks  build_ms  maps_ms  fastnoise_ms
## then the medians over the reused-node calls:
##     regenerate_bench  N  chunk  reps  wall_ms  generator_ms  chunk_data_ms  scene_ms  first_wall_ms  fastnoise_ms  ratio
## and exits with 1 when the median wall time exceeds 100 ms.
extends SceneTree

## The goal's peer, configured as in `fastnoise_bench.gd`.
const Peer := preload("fastnoise_peer.gd")


func _median(a: PackedFloat64Array) -> float:
	var s := a.duplicate()
	s.sort()
	return s[s.size() / 2] if s.size() > 0 else 0.0


func _initialize() -> void:
	var args := OS.get_cmdline_user_args()
	var res := 1025
	var chunk := 64
	var reps := 5
	if args.size() > 0:
		res = args[0].to_int()
	if args.size() > 1:
		chunk = args[1].to_int()
	if args.size() > 2:
		reps = maxi(1, args[2].to_int())
	var isl := ProceduralIsland.new()
	isl.generate_on_ready = false
	isl.resolution = res
	isl.chunk_size = chunk
	root.add_child(isl)
	var wall := PackedFloat64Array()
	var gen := PackedFloat64Array()
	var data := PackedFloat64Array()
	var scene := PackedFloat64Array()
	var peer := PackedFloat64Array()
	var ratio := PackedFloat64Array()
	var noise := Peer.make(res)
	noise.get_image(res, res)  # warm-up
	var first := 0.0
	for i in reps + 1:
		isl.seed = 1000 + i
		var t := Time.get_ticks_usec()
		var ok := isl.regenerate()
		var ms := (Time.get_ticks_usec() - t) / 1000.0
		if not ok:
			printerr("regenerate_bench: regenerate() failed")
			quit(2)
			return
		var s := isl.get_last_stats()
		var scene_ms: float = ms - s.total_ms - s.mesh_ms
		t = Time.get_ticks_usec()
		var img := noise.get_image(res, res)
		var peer_ms := (Time.get_ticks_usec() - t) / 1000.0
		if img == null or img.get_width() != res:
			printerr("regenerate_bench: FastNoiseLite.get_image failed")
			quit(2)
			return
		print("regen\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%d\t%.2f\t%.2f\t%.2f" % [i, ms, s.total_ms, s.mesh_ms, scene_ms, s.chunks, s.build_ms, s.get("maps_ms", 0.0), peer_ms])
		if i == 0:
			first = ms
			continue
		wall.append(ms)
		gen.append(s.total_ms)
		data.append(s.mesh_ms)
		scene.append(scene_ms)
		peer.append(peer_ms)
		ratio.append(ms / peer_ms)
	var w := _median(wall)
	print("regenerate_bench\t%d\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.4f" % [res, chunk, reps, w, _median(gen), _median(data), _median(scene), first, _median(peer), _median(ratio)])
	isl.free()
	if w > 100.0:
		printerr("regenerate_bench: median %.2f ms exceeds the 100 ms goal" % w)
		quit(1)
		return
	quit(0)
