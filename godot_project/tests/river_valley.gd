extends RefCounted
## The river valley the sculpt tests dam and the sculpt pictures show (test_sculpt.gd,
## render/sculpt_shots.gd): of the river samples at 5 m or higher, the one with the most river
## samples higher up within 120 m whose valley sides rise at least 12 m within 60 m on both
## sides of the river's direction (from those upstream samples towards it).


## `{"index": int, "upstream": int, "centre": Vector2 (node-local x, z), "fall": Vector2 (the
## river's direction)}`, or an empty Dictionary when the island has no such valley.
static func find(isl: ProceduralIsland) -> Dictionary:
	var n := isl.resolution
	var s := isl.world_size / (n - 1)
	var half := isl.world_size * 0.5
	var water := isl.get_water_image().get_data()
	var h := isl.get_heightmap_image().get_data().to_float32_array()
	var pos := func(i: int) -> Vector2: return Vector2((i % n) * s - half, (i / n) * s - half)
	var best := {}
	var best_up := -1
	var r := int(120.0 / s)
	for i in n * n:
		if water[i] != 1 or h[i] < 5.0:
			continue
		var up := PackedInt32Array()
		var x := i % n
		var z := i / n
		for dz in range(-r, r + 1):
			for dx in range(-r, r + 1):
				var xx := x + dx
				var zz := z + dz
				if xx >= 0 and zz >= 0 and xx < n and zz < n and dx * dx + dz * dz <= r * r:
					var j := zz * n + xx
					if water[j] == 1 and h[j] > h[i]:
						up.append(j)
		if up.size() <= best_up:
			continue
		var centroid := Vector2.ZERO
		for j in up:
			centroid += pos.call(j)
		var c: Vector2 = pos.call(i)
		var fall := (c - centroid / up.size()).normalized()
		var across := Vector2(-fall.y, fall.x)
		var a: Vector2 = c + across * 60.0
		var b: Vector2 = c - across * 60.0
		if isl.get_height_at(a.x, a.y) > h[i] + 12.0 and isl.get_height_at(b.x, b.y) > h[i] + 12.0:
			best_up = up.size()
			best = {"index": i, "upstream": up.size(), "centre": c, "fall": fall}
	return best
