@tool
extends Node3D
## Demo: an island from the ProceduralIsland node, a sea plane, sky, sun, an orbiting camera
## and a capsule character that falls onto the island and stands on its collider.
##
## Keys: R = the next seed's island (seed + 1: with the default AUTO shape this cycles through
## the shapes as docs/shapes.png shows them), Shift+R / Space = a random seed (both generated in
## the background), C = camera mode, WASD / arrows = walk.
## Command line (after `--`): `--screenshot=PATH` saves a PNG once the island is built and the
## character has landed, then quits; `--seed=N` picks the first island's seed;
## `--max-frames=N` bounds the wait for the screenshot; `--lake-screenshot=PATH` then also saves
## the lake view (`--view=lake`) from the same run, before quitting.

const SPAWN_HEIGHT := 20.0
## Rendered frames between aiming at the lake and its screenshot (`--lake-screenshot`). One is
## enough: the chunks and scatter are all built by then (the shots after 1 and after 3 frames
## were the same picture), and each frame costs seconds under software rendering.
const LAKE_VIEW_FRAMES := 1
## Rendered frames the character must stand on the ground before the screenshot (physics catches
## up with real time, so it lands in the first rendered frame of the island; 6 gave the same
## picture 30 s later under lavapipe).
const LANDED_FRAMES := 1

@onready var island: Node3D = $Island
@onready var character: CharacterBody3D = $Character
@onready var orbit_camera: Camera3D = $OrbitCamera
@onready var chase_camera: Camera3D = $Character/ChaseCamera
@onready var help: Label = $UI/Help
@onready var status_label: Label = $UI/Status

var orbit_angle := 0.6
var orbit_speed := 0.05 # rad/s
var _screenshot_path := ""
var _lake_screenshot_path := ""
var _max_frames := 3000
var _frames := 0
var _landed_frames := 0
var _island_ready := false
var _shot_taken := false
## `--view=lake`: the camera looks at the island's largest lake from its shore (else the orbit).
var _lake_view := false
var _lake_target := Vector3.ZERO


func _ready() -> void:
	if Engine.is_editor_hint():
		# Opened in the editor: only report it (`cargo xtask test` checks this line).
		set_process(false)
		set_process_unhandled_input(false)
		print("demo: scene opened in the editor, island node class %s" % island.get_class())
		return
	for arg in OS.get_cmdline_user_args():
		if arg.begins_with("--screenshot="):
			_screenshot_path = arg.get_slice("=", 1)
		elif arg.begins_with("--lake-screenshot="):
			_lake_screenshot_path = arg.get_slice("=", 1)
		elif arg.begins_with("--seed="):
			island.set("seed", int(arg.get_slice("=", 1)))
		elif arg == "--view=lake":
			_lake_view = true
		elif arg.begins_with("--max-frames="):
			_max_frames = int(arg.get_slice("=", 1))
	if not island.has_method("regenerate_async"):
		status_label.text = "ProceduralIsland class not loaded (build the addon: cargo xtask build)"
		push_error("demo: ProceduralIsland GDExtension class is not available")
		return
	island.connect("generation_finished", _on_generation_finished)
	island.connect("generation_failed", _on_generation_failed)
	if _screenshot_path != "":
		orbit_speed = 0.0
		# Software rendering can take seconds per frame: let physics catch up with real time
		# so the character lands within a few rendered frames.
		Engine.max_physics_steps_per_frame = 240
	# With default properties the node builds itself when it enters the tree (generate_on_ready);
	# a --seed argument or a node without generate_on_ready needs an explicit (async) build.
	var seed_arg := false
	for arg in OS.get_cmdline_user_args():
		seed_arg = seed_arg or arg.begins_with("--seed=")
	if seed_arg or not island.get("generate_on_ready"):
		_regenerate(int(island.get("seed")))
	elif island.call("is_generating"):
		status_label.text = "Generating…"
	else:
		_on_island_ready()
	_update_orbit(0.0)


func _regenerate(new_seed: int) -> void:
	island.set("seed", new_seed)
	_island_ready = false
	_landed_frames = 0
	status_label.text = "Generating island (seed %d)…" % new_seed
	island.call("regenerate_async")


func _on_generation_finished(_stats: Dictionary) -> void:
	_on_island_ready()


func _describe(stats: Dictionary) -> String:
	return "Seed %d — %d² — land %.0f %% — generated in %.0f ms (%s)" % [
		int(island.get("seed")), int(stats.get("resolution", 0)), 100.0 * float(stats.get("land_fraction", 0.0)),
		float(stats.get("total_ms", 0.0)), str(stats.get("backend", "?"))]


func _on_generation_failed(message: String) -> void:
	status_label.text = "Generation failed: " + message


func _on_island_ready() -> void:
	_island_ready = true
	_landed_frames = 0
	var stats: Dictionary = island.call("get_last_stats") if island.has_method("get_last_stats") else {}
	status_label.text = _describe(stats) if not stats.is_empty() else "Seed %d" % int(island.get("seed"))
	var ground: float = island.call("get_height_at", 0.0, 0.0)
	character.call("drop_at", Vector3(0.0, ground + SPAWN_HEIGHT, 0.0))
	# Paint snow on the peaks with the TerrainBrush rule fill: above 60 % of this island's
	# highest point, on slopes under 35 degrees (the masks fade over 8 m and 5 degrees).
	if _lake_view:
		_aim_at_lake()
	var snow := island.get_node_or_null("SnowBrush")
	if snow != null:
		snow.set("min_height", 0.6 * float(stats.get("max_height", 100.0)))
		snow.call("fill_by_rule")


func _unhandled_input(event: InputEvent) -> void:
	if Engine.is_editor_hint():
		return
	var key := event as InputEventKey
	if key == null or not key.pressed or key.echo:
		return
	match key.physical_keycode:
		KEY_R when not key.shift_pressed:
			_regenerate(int(island.get("seed")) + 1)
		KEY_R, KEY_SPACE:
			_regenerate(randi() % 1000000)
		KEY_C:
			var chase := not chase_camera.current
			chase_camera.current = chase
			orbit_camera.current = not chase
		KEY_ESCAPE:
			get_tree().quit()


func _process(delta: float) -> void:
	if Engine.is_editor_hint():
		return
	_update_orbit(delta)
	if _screenshot_path == "" or _shot_taken:
		return
	_frames += 1
	if _island_ready and character.is_on_floor():
		_landed_frames += 1
	# Once the island is built and the character has stood still for a while, save the frame.
	if _landed_frames >= LANDED_FRAMES or _frames >= _max_frames:
		_shot_taken = true
		if _landed_frames < LANDED_FRAMES:
			push_warning("demo: screenshot after %d frames without a landed character" % _frames)
		_save_screenshot.call_deferred()


func _update_orbit(delta: float) -> void:
	if _lake_view:
		return
	orbit_angle += orbit_speed * delta
	var size: float = float(island.get("world_size")) if island.get("world_size") != null else 1024.0
	var r := size * 0.5
	var h := size * 0.2
	orbit_camera.position = Vector3(sin(orbit_angle) * r, h, cos(orbit_angle) * r)
	orbit_camera.look_at(Vector3(0.0, -size * 0.03, 0.0), Vector3.UP)


func _save_screenshot() -> void:
	await RenderingServer.frame_post_draw
	if not _save_png(_screenshot_path):
		return
	if _lake_screenshot_path != "":
		# The lake view from the same run: aim, let the LOD follow the camera, save again.
		_lake_view = true
		_aim_at_lake()
		for i in LAKE_VIEW_FRAMES:
			await get_tree().process_frame
		await RenderingServer.frame_post_draw
		if not _save_png(_lake_screenshot_path):
			return
	get_tree().quit(0 if _landed_frames >= LANDED_FRAMES else 2)


## Save the viewport as a PNG at `target` (relative paths: from the working directory); false
## (and quit with 1) when it cannot be written.
func _save_png(target: String) -> bool:
	var img := get_viewport().get_texture().get_image()
	var path := target
	if not path.is_absolute_path() and not path.begins_with("res://") and not path.begins_with("user://"):
		path = OS.get_environment("PWD").path_join(path) if OS.get_environment("PWD") != "" else path
	var err := img.save_png(path)
	var p := character.global_position
	print("demo: character at (%.2f, %.2f, %.2f), ground %.2f, on_floor=%s" % [
		p.x, p.y, p.z, float(island.call("get_height_at", p.x, p.z)), character.is_on_floor()])
	if err != OK:
		push_error("demo: cannot save screenshot to %s (error %d)" % [path, err])
		get_tree().quit(1)
		return false
	print("demo: saved %s (%dx%d) after %d frames" % [path, img.get_width(), img.get_height(), _frames])
	return true


## Point the orbit camera at the largest lake: the lake sample with the most lake samples
## around it on a 4 m grid, seen from 110 m away and 40 m above its surface, looking across it
## from the side where the ground is lowest (usually down the valley, over the dam).
func _aim_at_lake() -> void:
	var size: float = float(island.get("world_size"))
	var step := 4.0
	var cells := int(size / step)
	var lake := {}
	for iz in cells:
		for ix in cells:
			var x := -size * 0.5 + (ix + 0.5) * step
			var z := -size * 0.5 + (iz + 0.5) * step
			var level: float = island.call("get_water_level_at", x, z)
			if not is_nan(level) and level > 0.5:
				lake[Vector2i(ix, iz)] = level
	if lake.is_empty():
		push_warning("demo: --view=lake but the island has no lake; keeping the orbit view")
		_lake_view = false
		return
	var best := Vector2i.ZERO
	var best_count := -1
	for c in lake:
		var count := 0
		for dz in range(-6, 7):
			for dx in range(-6, 7):
				if lake.has(c + Vector2i(dx, dz)):
					count += 1
		if count > best_count:
			best_count = count
			best = c
	var level: float = lake[best]
	_lake_target = Vector3(-size * 0.5 + (best.x + 0.5) * step, level, -size * 0.5 + (best.y + 0.5) * step)
	var eye := Vector3.ZERO
	var lowest := INF
	for k in 16:
		var a := TAU * k / 16.0
		var p := _lake_target + Vector3(cos(a), 0.0, sin(a)) * 110.0
		var g: float = island.call("get_height_at", p.x, p.z)
		if g < lowest:
			lowest = g
			eye = p
	eye.y = max(lowest, level) + 40.0
	orbit_camera.position = eye
	orbit_camera.look_at(_lake_target, Vector3.UP)
	print("demo: lake view at (%.0f, %.1f, %.0f), %d lake cells around it" % [
		_lake_target.x, level, _lake_target.z, best_count])
