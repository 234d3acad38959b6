extends SceneTree
## Helper of test_island_world.gd (run as its own Godot process, e.g. with RAYON_NUM_THREADS=1):
## makes an IslandWorld from the JSON settings given, loads the island of one cell at full
## detail with `load_now()` and prints the SHA-256 of its heights, water and splat, and the
## number of generator threads:
##     godot --headless --path PROJECT -s res://tests/world/world_digest.gd -- --settings=KEY:VALUE,... --cell=I,J
##     -> WORLD_DIGEST threads HEIGHTS WATER SPLAT
## (numbers only, no quotes: the arguments pass through a shell). It quits by itself after
## 120 s whatever happens.

var _settings := {}
var _cell := Vector2i.ZERO


func _initialize() -> void:
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--settings="):
			for kv in a.trim_prefix("--settings=").split(","):
				var p := kv.split(":")
				if p.size() == 2:
					_settings[p[0]] = int(p[1]) if p[1].is_valid_int() else float(p[1])
		elif a.begins_with("--cell="):
			var p := a.trim_prefix("--cell=").split(",")
			_cell = Vector2i(int(p[0]), int(p[1]))
	create_timer(120.0).timeout.connect(func() -> void:
		print("WORLD_DIGEST timeout")
		quit(2))
	_run.call_deferred()


static func sha(img: Image) -> String:
	var h := HashingContext.new()
	h.start(HashingContext.HASH_SHA256)
	h.update(img.get_data())
	return h.finish().hex_encode()


func _run() -> void:
	var w := IslandWorld.new()
	for k in _settings:
		w.set(k, _settings[k])
	var target := Node3D.new()
	root.add_child(target)
	root.add_child(w)
	var info := w.get_island_info(_cell)
	if not info.exists:
		print("WORLD_DIGEST none")
		quit(1)
		return
	target.position = info.center
	w.targets = [w.get_path_to(target)]
	w.load_now()
	var isl := w.get_island_at(info.center.x, info.center.z)
	if isl == null:
		print("WORLD_DIGEST none")
		quit(1)
		return
	print("WORLD_DIGEST %d %s %s %s" % [w.get_world_stats().generator_threads, sha(isl.get_heightmap_image()), sha(isl.get_water_image()), sha(isl.get_splat_image())])
	quit(0)
