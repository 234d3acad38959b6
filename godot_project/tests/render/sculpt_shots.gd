extends SceneTree
## Renders the sculpt sequence of docs/brush.md ("Sculpting the island") from one camera (needs
## a display: `xvfb-run -a`). Not part of the headless suite.
##
## After `--`: `--out=DIR`. Saves DIR/sculpt_before.png (the generated island),
## DIR/sculpt_ridge_lake.png (a ridge raised across a river valley: the lake behind it) and
## DIR/sculpt_channel.png (then a channel sketched across the island: two islands), each after
## the island regenerated with the edits, as a user sees them in the editor.

var _out := "."
var _cam: Camera3D
var _isl: ProceduralIsland
var _brush: TerrainBrush
var _frames := 0
var _step := 0
var _dam_at := Vector2.ZERO


func _initialize() -> void:
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--out="):
			_out = a.substr(6)
	var env := WorldEnvironment.new()
	var e := Environment.new()
	e.background_mode = Environment.BG_SKY
	e.sky = Sky.new()
	e.sky.sky_material = ProceduralSkyMaterial.new()
	e.tonemap_mode = Environment.TONE_MAPPER_FILMIC
	env.environment = e
	root.add_child(env)
	var sun := DirectionalLight3D.new()
	sun.rotation_degrees = Vector3(-50, -30, 0)
	sun.shadow_enabled = true
	root.add_child(sun)
	_cam = Camera3D.new()
	_cam.far = 6000
	root.add_child(_cam)
	_isl = ProceduralIsland.new()
	_isl.resolution = 257
	_isl.chunk_size = 64
	_isl.world_size = 1000.0
	_isl.seed = 2
	_isl.island_shape = ProceduralIsland.SHAPE_ROUND
	_isl.generate_on_ready = false
	root.add_child(_isl)
	_brush = TerrainBrush.new()
	_isl.add_child(_brush)
	_isl.regenerate()
	_dam_at = _find_valley()
	# From the south-east and above: the dam's valley in front, the channel's line behind.
	_cam.fov = 50.0
	_cam.look_at_from_position(Vector3(_dam_at.x + 300, 300, _dam_at.y + 380), Vector3(_dam_at.x - 90, 0, _dam_at.y - 110))


## The river valley the tests dam (test_sculpt.gd: the river sample with the most river
## upstream whose sides rise 12 m within 60 m).
func _find_valley() -> Vector2:
	var n := _isl.resolution
	var s := _isl.world_size / (n - 1)
	var water := _isl.get_water_image().get_data()
	var h := _isl.get_heightmap_image().get_data().to_float32_array()
	var best := Vector2.ZERO
	var best_up := -1
	var r := int(120.0 / s)
	for i in n * n:
		if water[i] != 1 or h[i] < 5.0:
			continue
		var x := i % n
		var z := i / n
		var up := 0
		var centroid := Vector2.ZERO
		for dz in range(-r, r + 1):
			for dx in range(-r, r + 1):
				var xx := x + dx
				var zz := z + dz
				if xx >= 0 and zz >= 0 and xx < n and zz < n and dx * dx + dz * dz <= r * r:
					var j := zz * n + xx
					if water[j] == 1 and h[j] > h[i]:
						up += 1
						centroid += Vector2(xx * s - 500.0, zz * s - 500.0)
		if up <= best_up:
			continue
		var c := Vector2(x * s - 500.0, z * s - 500.0)
		var fall := (c - centroid / up).normalized()
		var across := Vector2(-fall.y, fall.x)
		var a := c + across * 60.0
		var b := c - across * 60.0
		if _isl.get_height_at(a.x, a.y) > h[i] + 12.0 and _isl.get_height_at(b.x, b.y) > h[i] + 12.0:
			best_up = up
			best = c
			_across = across
	return best


var _across := Vector2.RIGHT


func _shot(name: String) -> void:
	var img := root.get_viewport().get_texture().get_image()
	var path := _out.path_join(name)
	print("saved ", path, " ", error_string(img.save_png(path)))


func _process(_delta: float) -> bool:
	_frames += 1
	if _isl.is_generating() or _frames < 20:
		return false
	match _step:
		0:
			_shot("sculpt_before.png")
			_brush.mode = TerrainBrush.MODE_SCULPT_RAISE
			_brush.radius = 14.0
			_brush.hardness = 0.5
			_brush.sculpt_height = 2.0
			_brush.spacing = 0.25
			_brush.begin_stroke()
			var a := _dam_at - _across * 75.0
			var b := _dam_at + _across * 75.0
			_brush.paint_stroke(Vector3(a.x, 0, a.y), Vector3(b.x, 0, b.y))
			_brush.end_stroke()
			_step = 1
			_frames = 0
		1:
			_shot("sculpt_ridge_lake.png")
			_brush.mode = TerrainBrush.MODE_SKETCH_SEA
			_brush.radius = 25.0
			_brush.hardness = 0.8
			_brush.strength = 1.0
			_brush.begin_stroke()
			_brush.paint_stroke(Vector3(-480, 0, -170), Vector3(480, 0, -120))
			_brush.end_stroke()
			_step = 2
			_frames = 0
		2:
			_shot("sculpt_channel.png")
			return true
	return false
