extends CharacterBody3D
## A capsule that falls under gravity and stands on the island's collider.
## Arrow keys / WASD walk relative to the active camera.

const WALK_SPEED := 6.0
const JUMP_SPEED := 6.0

var gravity: float = ProjectSettings.get_setting("physics/3d/default_gravity", 9.8)
## When not zero: walk this way (m/s, horizontal) instead of following the keys (a demo's
## autopilot).
var steer := Vector3.ZERO


func _physics_process(delta: float) -> void:
	if not is_on_floor():
		velocity.y -= gravity * delta
	var input := Vector2(
		float(Input.is_physical_key_pressed(KEY_D) or Input.is_physical_key_pressed(KEY_RIGHT))
			- float(Input.is_physical_key_pressed(KEY_A) or Input.is_physical_key_pressed(KEY_LEFT)),
		float(Input.is_physical_key_pressed(KEY_S) or Input.is_physical_key_pressed(KEY_DOWN))
			- float(Input.is_physical_key_pressed(KEY_W) or Input.is_physical_key_pressed(KEY_UP)))
	var dir := Vector3.ZERO
	var cam := get_viewport().get_camera_3d()
	if cam != null and input != Vector2.ZERO:
		var b := cam.global_basis
		var fwd := Vector3(b.z.x, 0.0, b.z.z).normalized()
		var right := Vector3(b.x.x, 0.0, b.x.z).normalized()
		dir = (right * input.x + fwd * input.y).normalized()
	velocity.x = dir.x * WALK_SPEED
	velocity.z = dir.z * WALK_SPEED
	if steer != Vector3.ZERO:
		velocity.x = steer.x
		velocity.z = steer.z
	move_and_slide()


## Teleport the capsule to `pos` (its centre) and stop it; it then falls under gravity.
func drop_at(pos: Vector3) -> void:
	global_position = pos
	velocity = Vector3.ZERO
