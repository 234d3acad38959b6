extends RefCounted
## The scene every process of the multiplayer test builds: /root/IslandNet with a 257² island
## (one scatter layer), its IslandSync and a control node for the test's own RPCs. The server
## gives the island its seed; clients start from another one and must take the server's.

const CONTROL := preload("res://tests/net/net_control.gd")


static func build(seed: int) -> Node:
	var net := Node.new()
	net.name = "IslandNet"
	var isl := ProceduralIsland.new()
	isl.name = "Island"
	isl.seed = seed
	isl.resolution = 257
	isl.chunk_size = 64
	isl.world_size = 1024.0
	isl.sea_enabled = false
	isl.inland_water_enabled = false
	var layer := ScatterLayer.new()
	layer.builtin_mesh = ScatterLayer.ROCK
	layer.density = 20.0
	layer.min_distance = 4.0
	layer.min_height = 1.0
	layer.max_height = 400.0
	layer.max_slope_degrees = 60.0
	var layers: Array[ScatterLayer] = [layer]
	isl.scatter_layers = layers
	net.add_child(isl)
	var sync := IslandSync.new()
	sync.name = "Sync"
	isl.add_child(sync)
	var brush := TerrainBrush.new()
	brush.name = "Brush"
	isl.add_child(brush)
	var control := CONTROL.new()
	control.name = "Control"
	net.add_child(control)
	return net


## A raw edit command (island_core::sync layout) for the hostile client: version, action 0
## (stroke), a paint brush with `radius`, one point.
static func raw_dab(radius: float, x: float, z: float, mode: int = 0, version: int = 1) -> PackedByteArray:
	var b := PackedByteArray()
	b.resize(2 + 52 + 2 + 8)
	b.encode_u8(0, version)
	b.encode_u8(1, 0)
	b.encode_u8(2, mode)
	b.encode_u8(3, 4)
	b.encode_u16(4, 0)
	# radius, strength, hardness, spacing, sculpt_height, flatten_height, height mask, slope mask
	var floats := [radius, 0.5, 0.5, 0.25, 1.0, 10.0, -1000.0, 10000.0, 0.0, 0.0, 90.0, 0.0]
	for i in floats.size():
		b.encode_float(6 + 4 * i, floats[i])
	b.encode_u16(54, 1)
	b.encode_float(56, x)
	b.encode_float(60, z)
	return b
