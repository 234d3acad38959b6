extends SceneTree
## Used by `cargo xtask test` (the bake check): generates a small island with sea, rivers and
## lakes, bakes it with `ProceduralIsland.bake()` into the folder given as `--out=DIR` (after
## `--`) and writes `expected.json` there: heights from `get_height_at` at sample points and
## between samples, the chunk count and the number of water surfaces. `bake_check.gd` then loads
## the baked scene in a fresh project without the extension and compares.

const RES := 65
const WORLD := 512.0


func _initialize() -> void:
	var out := ""
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--out="):
			out = a.substr(6)
	if out.is_empty():
		printerr("bake_export: pass --out=DIR after --")
		quit(1)
		return
	var isl := ProceduralIsland.new()
	isl.name = "BakedIsland"
	isl.resolution = RES
	isl.chunk_size = 32
	isl.world_size = WORLD
	isl.seed = 11
	isl.generate_on_ready = false
	isl.sea_enabled = true
	isl.inland_water_enabled = true
	root.add_child(isl)
	if not isl.regenerate():
		printerr("bake_export: regenerate failed")
		quit(1)
		return
	var err := isl.bake(out.path_join("baked_island.tscn"))
	if err != OK:
		printerr("bake_export: bake returned ", error_string(err))
		quit(1)
		return
	var step := WORLD / float(RES - 1)
	var grid := []
	var between := []
	for i in 48:
		# Spread over the island, including the chunk borders and the map edges.
		var ix := (i * 37 + 3) % RES
		var iz := (i * 53 + 11) % RES
		var x := -WORLD * 0.5 + ix * step
		var z := -WORLD * 0.5 + iz * step
		grid.append([x, z, isl.get_height_at(x, z)])
		var bx := clampf(x + step * 0.37, -WORLD * 0.5 + 0.01, WORLD * 0.5 - 0.01)
		var bz := clampf(z + step * 0.61, -WORLD * 0.5 + 0.01, WORLD * 0.5 - 0.01)
		between.append([bx, bz, isl.get_height_at(bx, bz)])
	var water := 0
	for c in isl.get_children(true):
		if c is MeshInstance3D and c.visible and (String(c.name) == "Sea" or String(c.name).begins_with("Water_")):
			water += 1
	var exp := {"grid": grid, "between": between, "chunks": 4, "water": water}
	var f := FileAccess.open(out.path_join("expected.json"), FileAccess.WRITE)
	f.store_string(JSON.stringify(exp))
	f.close()
	print("bake_export: baked ", isl.get_last_stats().get("chunks", 0), " chunks, ", water, " water surfaces")
	isl.free()
	quit(0)
