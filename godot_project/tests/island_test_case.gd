class_name IslandTestCase
extends TestCase
## Base class of the ProceduralIsland tests: shared island fixtures on top of `TestCase`.


## A ProceduralIsland added under this test, with `props` set before it enters the tree (so with
## the default `generate_on_ready` it generates synchronously in `_ready`). The sea and the
## river/lake surfaces are off unless `props` turns them on (the chunk tests count the island's
## children; test_water.gd covers the water).
func _island(resolution: int = 65, chunk_size: int = 32, props: Dictionary = {}) -> ProceduralIsland:
	var isl := ProceduralIsland.new()
	isl.resolution = resolution
	isl.chunk_size = chunk_size
	isl.sea_enabled = false
	isl.inland_water_enabled = false
	for k in props:
		isl.set(k, props[k])
	add_child(isl)
	return isl


## Same size and bytes; also the same format unless `same_format` is false.
func _image_equal(a: Image, b: Image, same_format: bool = true) -> bool:
	return a != null and b != null and a.get_size() == b.get_size() \
		and (not same_format or a.get_format() == b.get_format()) and a.get_data() == b.get_data()


## Every MeshInstance3D child of `isl`, internal ones included (chunks and LOD nodes).
func _mesh_instances(isl: Node) -> Array[MeshInstance3D]:
	var out: Array[MeshInstance3D] = []
	for c in isl.get_children(true):
		if c is MeshInstance3D:
			out.append(c)
	return out


## How far the chunk nodes of `isl` (`cs` cells per chunk, no LOD) are from its heightmap: the
## worst difference of a mesh vertex's height (x) and of a collider sample (y), metres.
func _chunks_off_the_heightmap(isl: ProceduralIsland, cs: int) -> Vector2:
	var img := isl.get_heightmap_image()
	var worst := Vector2.ZERO
	for chunk in _mesh_instances(isl):
		if not String(chunk.name).begins_with("Chunk_"):
			continue
		var parts := String(chunk.name).split("_")
		var x0 := int(parts[1]) * cs
		var z0 := int(parts[2]) * cs
		var data := (_shape_node(chunk).shape as HeightMapShape3D).map_data
		var verts := (chunk.mesh as ArrayMesh).surface_get_arrays(0)[Mesh.ARRAY_VERTEX] as PackedVector3Array
		for j in cs + 1:
			for i in cs + 1:
				var h := img.get_pixel(x0 + i, z0 + j).r
				worst.x = maxf(worst.x, absf(verts[j * (cs + 1) + i].y - h))
				worst.y = maxf(worst.y, absf(data[j * (cs + 1) + i] - h))
	return worst


## How many of `isl`'s chunks have a collider (a CollisionShape3D under a StaticBody3D).
func _collider_count(isl: Node) -> int:
	var n := 0
	for c in _mesh_instances(isl):
		if _shape_node(c) != null:
			n += 1
	return n


## The CollisionShape3D under a chunk's StaticBody3D, or null.
func _shape_node(chunk: Node) -> CollisionShape3D:
	for b in chunk.get_children():
		if b is StaticBody3D:
			for s in b.get_children():
				if s is CollisionShape3D:
					return s
	return null


## The value the inspector's enum dropdown (EditorPropertyEnum) stores when `label` is picked:
## the number after `label:` in the hint string, else the item's position.
func _enum_pick(hint_string: String, label: String) -> int:
	var items := hint_string.split(",")
	var value := 0
	for item in items:
		var parts := item.split(":")
		if parts.size() > 1:
			value = int(parts[1])
		if parts[0] == label:
			return value
		value += 1
	return -1


## Collects engine warnings (`push_warning`, `godot_warn!`) in its `warnings` array.
const WARN_LOGGER_SOURCE := """
extends Logger
var warnings: PackedStringArray = PackedStringArray()
var _mutex := Mutex.new()

func _log_error(function: String, file: String, line: int, code: String, rationale: String, editor_notify: bool, error_type: int, script_backtraces: Array) -> void:
	if error_type == 1:
		_mutex.lock()
		warnings.append(rationale if rationale != "" else code)
		_mutex.unlock()

func _log_message(message: String, error: bool) -> void:
	pass
"""


## A warning collector added to the engine's loggers (Godot 4.5+ `Logger`); null on older
## engines. Remove it with `OS.call("remove_logger", logger)`.
func _add_warn_logger() -> Object:
	if not ClassDB.class_exists("Logger"):
		return null
	var script := GDScript.new()
	script.source_code = WARN_LOGGER_SOURCE
	script.reload()
	var logger: Object = script.new()
	OS.call("add_logger", logger)
	return logger


## A small, quick world: 2048 m cells, islands of 512..1024 m at 1 sample per 4 m (129..257²),
## rings 3000 / 900 / 400 m.
func _world(props: Dictionary = {}) -> IslandWorld:
	var w := IslandWorld.new()
	w.world_seed = 42
	w.cell_size = 2048.0
	w.island_size_min = 512.0
	w.island_size_max = 1024.0
	w.samples_per_metre = 0.25
	w.view_distance = 3000.0
	w.detail_distance = 900.0
	w.collision_distance = 400.0
	w.coarse_resolution = 65
	w.build_budget_ms = 50.0
	for k in props:
		w.set(k, props[k])
	return w


## The first cell (scanning out from the origin) with an island.
func _first_island(w: IslandWorld) -> Dictionary:
	for r in 6:
		for j in range(-r, r + 1):
			for i in range(-r, r + 1):
				var info := w.get_island_info(Vector2i(i, j))
				if info.exists:
					return info
	return {}
