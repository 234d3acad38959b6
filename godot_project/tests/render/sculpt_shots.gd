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

const RiverValley := preload("res://tests/river_valley.gd")


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


## The river valley the tests dam (`res://tests/river_valley.gd`); sets `_across`.
func _find_valley() -> Vector2:
	var v := RiverValley.find(_isl)
	if v.is_empty():
		return Vector2.ZERO
	var fall: Vector2 = v.fall
	_across = Vector2(-fall.y, fall.x)
	return v.centre


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
