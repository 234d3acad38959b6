extends SceneTree
## Run by `cargo xtask test` in a fresh project WITHOUT the procedural_island addon or extension,
## holding only the scene written by `ProceduralIsland.bake()` and `expected.json` (see
## bake_export.gd). Loads the scene and checks the mesh vertex heights, the HeightMapShape3D
## colliders (ray casts) and the water surfaces against the original island. Prints BAKE_OK.

var _frames := 0
var _inst: Node3D
var _exp: Dictionary
var _failures := PackedStringArray()


func _fail(msg: String) -> void:
	_failures.append(msg)
	printerr("bake_check: ", msg)


func _initialize() -> void:
	if ClassDB.class_exists("ProceduralIsland"):
		_fail("the extension is loaded in the check project")
	var text := FileAccess.get_file_as_string("res://baked_island.tscn")
	# Self-contained: no external resource (the addon's shaders are embedded) and no class of the
	# extension (the comments of the embedded shader code may name them).
	if text.contains("[ext_resource"):
		_fail("the baked scene references external resources")
	for banned in ["ProceduralIsland", "SplatPaint", "TerrainLayer", "ScatterLayer", "TerrainBrush"]:
		if text.contains('type="%s"' % banned):
			_fail("the baked scene holds a " + banned)
	_exp = JSON.parse_string(FileAccess.get_file_as_string("res://expected.json"))
	var ps: PackedScene = load("res://baked_island.tscn")
	if ps == null:
		_fail("the baked scene does not load")
		_finish()
		return
	_inst = ps.instantiate()
	root.add_child(_inst)


func _physics_process(_delta: float) -> bool:
	if _inst == null:
		return false
	_frames += 1
	if _frames == 3:
		_check()
		_finish()
	return false


func _check() -> void:
	var terrain := _inst.get_node_or_null("Terrain")
	if terrain == null:
		_fail("no Terrain node")
		return
	var verts := {}
	var chunks := 0
	var shapes := 0
	for c in terrain.get_children():
		if not (c is MeshInstance3D) or c.mesh == null or c.mesh.get_surface_count() == 0:
			continue
		chunks += 1
		if c.material_override is ShaderMaterial:
			var sh: Shader = c.material_override.shader
			if sh == null or not sh.code.contains("splat_map_0"):
				_fail("the terrain material has no terrain shader code")
			if not (c.material_override.get_shader_parameter("splat_map_0") is Texture2D):
				_fail("the terrain material has no splat map")
			elif c.material_override.get_shader_parameter("splat_map_0").get_width() != 65:
				_fail("the splat map has the wrong size")
		else:
			_fail("chunk %s has no ShaderMaterial" % c.name)
		var arr: Array = c.mesh.surface_get_arrays(0)
		for v in arr[Mesh.ARRAY_VERTEX]:
			verts[Vector2i(roundi(v.x * 100.0), roundi(v.z * 100.0))] = v.y
		for b in c.get_children():
			if b is StaticBody3D:
				for s in b.get_children():
					if s is CollisionShape3D and s.shape is HeightMapShape3D:
						shapes += 1
						var hm: HeightMapShape3D = s.shape
						if hm.map_data.size() != hm.map_width * hm.map_depth or hm.map_width != 33:
							_fail("collider of %s: %d x %d, %d values" % [c.name, hm.map_width, hm.map_depth, hm.map_data.size()])
	if chunks != int(_exp.chunks):
		_fail("%d chunks, expected %d" % [chunks, int(_exp.chunks)])
	if shapes != chunks:
		_fail("%d HeightMapShape3D colliders for %d chunks" % [shapes, chunks])
	var checked := 0
	for p in _exp.grid:
		var key := Vector2i(roundi(p[0] * 100.0), roundi(p[1] * 100.0))
		if not verts.has(key):
			_fail("no vertex at (%.2f, %.2f)" % [p[0], p[1]])
			continue
		if absf(verts[key] - p[2]) > 1e-3:
			_fail("vertex at (%.2f, %.2f): %.4f, get_height_at %.4f" % [p[0], p[1], verts[key], p[2]])
		checked += 1
	var space := _inst.get_world_3d().direct_space_state
	var rays := 0
	for p in _exp.grid + _exp.between:
		var hit := space.intersect_ray(PhysicsRayQueryParameters3D.create(Vector3(p[0], 1000, p[1]), Vector3(p[0], -1000, p[1])))
		if hit.is_empty():
			_fail("no collider hit at (%.2f, %.2f)" % [p[0], p[1]])
			continue
		if absf(hit.position.y - p[2]) > 0.01:
			_fail("collider at (%.2f, %.2f): %.4f, get_height_at %.4f" % [p[0], p[1], hit.position.y, p[2]])
		rays += 1
	var water := 0
	var wnode := _inst.get_node_or_null("Water")
	if wnode != null:
		for w in wnode.get_children():
			if w is MeshInstance3D and w.mesh != null and w.mesh.get_surface_count() > 0:
				water += 1
				var m: Variant = w.material_override
				if not (m is ShaderMaterial) or m.shader == null or m.shader.code.is_empty():
					_fail("water %s has no embedded shader" % w.name)
	if water != int(_exp.water) or water == 0:
		_fail("%d water surfaces, expected %d (> 0)" % [water, int(_exp.water)])
	print("bake_check: %d chunks, %d vertex heights, %d ray casts, %d water surfaces" % [chunks, checked, rays, water])


func _finish() -> void:
	if _inst != null:
		_inst.queue_free()
	if _failures.is_empty():
		print("BAKE_OK")
		quit(0)
	else:
		quit(1)
