@tool
extends RefCounted
## "Frame island" for the editor's 3D viewport (F with an island or its brush selected, or the
## toolbar button): the whole island from above at an angle.
##
## Why Godot's own F does not do it: "Focus Selection" only moves the orbit pivot to the selected
## node's origin and keeps the view distance (and the island's chunks are internal children, so
## no bounds of the island reach the editor anyway); the default 4000 m Z-far also caps the orbit
## distance at 1000 m. Godot exposes no API to set the editor camera, so framing drives the
## viewport the way a user would, through its own input handler (the viewport's surface
## `gui_input`) and View menu: Focus Selection (pivot on the island), Perspective instead of
## an orthogonal view, the orbit shortcuts (keypad 8 / 2) to bring the pitch between 25° and
## 65°, a magnify gesture for the distance that fits every corner of the island's bounds
## ([method ProceduralIsland.get_terrain_aabb]), and a larger Z-far when needed.

## Pitch range considered "from above at an angle"; outside it the view is orbited to ~40°.
const PITCH_MIN := 25.0
const PITCH_MAX := 65.0
const PITCH_STEP := 15.0 # Godot's orbit shortcuts turn by 15°.
const MARGIN := 1.08

## Set while framing sends its own events through the viewport (plugin.gd passes them on).
static var sending := false


## Distance from `pivot` along `basis.z` at which a perspective camera with vertical field of view
## `fov_degrees` and `aspect` sees all eight corners of `aabb` (global), with a small margin.
static func fit_distance(aabb: AABB, pivot: Vector3, basis: Basis, fov_degrees: float, aspect: float) -> float:
	var tv := tan(deg_to_rad(clampf(fov_degrees, 1.0, 179.0)) * 0.5)
	var th := tv * maxf(aspect, 0.01)
	var d := 0.0
	for i in 8:
		var q := aabb.get_endpoint(i) - pivot
		var x := absf(basis.x.dot(q)) * MARGIN
		var y := absf(basis.y.dot(q)) * MARGIN
		var z := basis.z.dot(q)
		d = maxf(d, z + x / th)
		d = maxf(d, z + y / tv)
	return maxf(d, 1.0)


## Camera basis with `yaw` about Y and `pitch` (positive: looking down) in radians, as the
## editor builds it from its orbit cursor.
static func orbit_basis(yaw: float, pitch: float) -> Basis:
	return Basis(Vector3.UP, yaw) * Basis(Vector3.RIGHT, -pitch)


## The pitch (degrees, positive = from above) and yaw (radians) of a camera basis.
static func pitch_yaw(basis: Basis) -> Vector2:
	var back := basis.z.normalized()
	return Vector2(rad_to_deg(asin(clampf(back.y, -1.0, 1.0))), atan2(back.x, back.z))


## 15° orbit steps that bring `pitch` (degrees) into [PITCH_MIN, PITCH_MAX] (positive: raise the
## camera), 0 when it is already there.
static func pitch_steps(pitch: float) -> int:
	if pitch >= PITCH_MIN and pitch <= PITCH_MAX:
		return 0
	return roundi((40.0 - pitch) / PITCH_STEP)


## The global bounds of the island's terrain (the map square, y over its heights).
static func island_aabb(island: Node3D) -> AABB:
	var local: AABB = island.call("get_terrain_aabb")
	if local.size == Vector3.ZERO:
		var half: float = island.get("world_size") * 0.5
		local = AABB(Vector3(-half, 0.0, -half), Vector3(2.0 * half, island.get("max_height"), 2.0 * half))
	return island.global_transform * local


## Index of the editor 3D viewport whose camera is `camera` (0 when not found).
static func viewport_index(camera: Camera3D) -> int:
	for i in 4:
		var vp := EditorInterface.get_editor_viewport_3d(i)
		if vp != null and vp.get_camera_3d() == camera:
			return i
	return 0


## The input surface of editor 3D viewport `index` (the Control whose `gui_input` the editor's
## viewport handles), or null.
static func surface(index: int) -> Control:
	var vp := EditorInterface.get_editor_viewport_3d(index)
	if vp == null:
		return null
	var editor_viewport := vp.get_parent().get_parent() as Control
	if editor_viewport == null:
		return null
	for c in editor_viewport.get_children(true):
		if c.get_class() == "Control":
			return c
	return null


static func _send(target: Control, ev: InputEvent) -> void:
	sending = true
	target.gui_input.emit(ev)
	sending = false


static func _key(target: Control, key: Key) -> void:
	var ev := InputEventKey.new()
	ev.keycode = key
	ev.physical_keycode = key
	ev.pressed = true
	_send(target, ev)
	var up := ev.duplicate() as InputEventKey
	up.pressed = false
	_send(target, up)


## Godot's own View > Focus Selection of the editor viewport whose input surface is `target`
## (the pivot moves to the selected node's origin). False when the menu item was not found.
static func focus_selection(target: Control) -> bool:
	var menu := _view_menu(target)
	if menu == null:
		return false
	menu.id_pressed.emit(menu.get_item_id(_focus_item(menu)))
	return true


## The View menu of the editor viewport whose input surface is `target`: the popup holding
## Focus Selection (found by its F shortcut, or its English name).
static func _view_menu(target: Control) -> PopupMenu:
	for m in target.get_parent().find_children("*", "PopupMenu", true, false):
		if _focus_item(m as PopupMenu) >= 0:
			return m as PopupMenu
	return null


static func _focus_item(menu: PopupMenu) -> int:
	var f := InputEventKey.new()
	f.keycode = KEY_F
	for i in menu.item_count:
		var sc := menu.get_item_shortcut(i)
		if (sc != null and sc.matches_event(f)) or menu.get_item_text(i).begins_with("Focus Selection"):
			return i
	return -1


## View > Perspective of that viewport (the first radio item of its View menu, before
## Orthogonal): Godot's top/side views switch to orthogonal on their own (auto-orthogonal).
static func _perspective(target: Control) -> void:
	var menu := _view_menu(target)
	if menu != null:
		for i in menu.item_count:
			if menu.is_item_radio_checkable(i):
				menu.id_pressed.emit(menu.get_item_id(i))
				return
	_key(target, KEY_KP_5)


## Frame `island` in editor viewport `index`. Runs over a few frames; returns at once.
static func frame(island: Node3D, index: int = 0) -> void:
	var target := surface(index)
	var vp := EditorInterface.get_editor_viewport_3d(index)
	if target == null or vp == null or not is_instance_valid(island):
		push_warning("Procedural Island: no 3D viewport to frame the island in.")
		return
	if not focus_selection(target):
		push_warning("Procedural Island: Focus Selection not found; framing around the current pivot.")
	var tree := island.get_tree()
	# Orientation: bring the pitch into range with the 15° orbit shortcuts.
	var cam := vp.get_camera_3d()
	if cam.projection == Camera3D.PROJECTION_ORTHOGONAL:
		# The framing is a perspective view.
		_perspective(target)
	var py := pitch_yaw(cam.global_transform.basis)
	var steps := pitch_steps(py.x)
	for i in absi(steps):
		_key(target, KEY_KP_8 if steps > 0 else KEY_KP_2)
	var pitch := deg_to_rad(clampf(py.x + steps * PITCH_STEP, -89.0, 89.0))
	# Let the camera reach the new pivot and pitch (the editor interpolates), then zoom.
	for i in 12:
		await tree.process_frame
	if not is_instance_valid(island) or not is_instance_valid(cam):
		return
	var pivot := island.global_transform.origin
	var basis := orbit_basis(py.y, pitch)
	var size := Vector2(vp.size)
	var want := fit_distance(island_aabb(island), pivot, basis, cam.fov, size.x / maxf(size.y, 1.0))
	_ensure_far(cam, want)
	# The editor clamps the zoom with the camera's current Z-far and eases the camera towards
	# its cursor: zoom, wait, and correct what is left (at most three times).
	for attempt in 3:
		var have := cam.global_transform.origin.distance_to(pivot)
		if have <= 0.0 or absf(have / want - 1.0) < 0.02:
			break
		var mag := InputEventMagnifyGesture.new()
		mag.factor = have / want
		mag.position = target.size * 0.5
		_send(target, mag)
		for i in 12:
			await tree.process_frame
		if not is_instance_valid(island) or not is_instance_valid(cam):
			return


## The editor caps the orbit distance at a quarter of the view's Z-far (View > Settings):
## raise Z-far when the island needs more.
static func _ensure_far(cam: Camera3D, distance: float) -> void:
	var need := distance * 4.4
	if cam.far >= need:
		return
	var main := EditorInterface.get_editor_main_screen()
	for sb in main.find_children("*", "SpinBox", true, false):
		var s := sb as SpinBox
		if is_equal_approx(s.value, cam.far) and s.max_value >= need:
			s.value = ceilf(need)
			return
	push_warning("Procedural Island: raise the view's Z-far (View > Settings) to %d m to see the whole island." % ceili(need))
