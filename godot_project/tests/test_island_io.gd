extends IslandTestCase
## ProceduralIsland heightmap export/import: R32, R16, PNG16, EXR round trips; bad files are
## rejected with an error code and change nothing.

const DIR := "user://procedural_island_tests"


func before_each() -> void:
	DirAccess.make_dir_recursive_absolute(DIR)


func after_each() -> void:
	var d := DirAccess.open(DIR)
	if d != null:
		for f in d.get_files():
			d.remove(f)


func _max_diff(a: Image, b: Image) -> float:
	if a == null or b == null or a.get_size() != b.get_size():
		return INF
	var m := 0.0
	for z in a.get_height():
		for x in a.get_width():
			m = maxf(m, absf(a.get_pixel(x, z).r - b.get_pixel(x, z).r))
	return m


## Max |collider map_data - heightmap| over every chunk (layout as in the stats).
func _collider_error(isl: ProceduralIsland) -> float:
	var img := isl.get_heightmap_image()
	var cs: int = isl.chunk_size
	var m := 0.0
	for chunk in isl.get_children(true):
		var parts := String(chunk.name).split("_")
		var cx := int(parts[1])
		var cz := int(parts[2])
		var shape: HeightMapShape3D = chunk.get_child(0).get_child(0).shape
		var w := cs + 1
		for j in w:
			for i in w:
				m = maxf(m, absf(shape.map_data[j * w + i] - img.get_pixel(cx * cs + i, cz * cs + j).r))
	return m


## Export `ext`, regenerate another island, import: heights come back within `tol`.
func _round_trip(ext: String, tol: float) -> void:
	var isl := _island()
	var original := isl.get_heightmap_image()
	var path := DIR.path_join("island." + ext)
	check_eq(isl.export_heightmap(path), OK, "%s export" % ext)
	check(FileAccess.file_exists(path), "%s file written" % ext)
	isl.seed = 4242
	check(isl.regenerate(), "regenerate another island")
	check(_max_diff(original, isl.get_heightmap_image()) > 1.0, "the other island differs")
	check_eq(isl.import_heightmap(path), OK, "%s import" % ext)
	var err := _max_diff(original, isl.get_heightmap_image())
	print("    %s round trip: max height error %.6f m" % [ext, err])
	check(err <= tol, "%s round trip within %s m (got %.6f)" % [ext, tol, err])
	check_eq(isl.get_last_stats().backend, "import", "stats say import")
	check_near(_collider_error(isl), 0.0, 1e-6, "%s: colliders rebuilt from the imported heights" % ext)
	var verts := (isl.get_child(0, true).mesh as ArrayMesh).surface_get_arrays(0)[Mesh.ARRAY_VERTEX] as PackedVector3Array
	check_near(verts[0].y, isl.get_heightmap_image().get_pixel(0, 0).r, 1e-6, "%s: meshes rebuilt" % ext)
	check_near(isl.get_height_at(-512.0, -512.0), isl.get_heightmap_image().get_pixel(0, 0).r, 1e-6, "%s: queries use the import" % ext)


func test_r32_round_trip_is_exact() -> void:
	_round_trip("r32", 0.0)


## Half a 16-bit step: 0..65535 spans -(sea_depth + 4·fine_amplitude) .. max_height +
## beach_height + 4·fine_amplitude of the current parameters.
func _half_step() -> float:
	var p := ProceduralIsland.new()
	var span: float = p.coast_sea_depth + p.max_height + p.coast_beach_height + 8.0 * p.coast_fine_amplitude
	p.free()
	return span / 65535.0 * 0.5 + 1e-5


func test_png16_round_trip() -> void:
	_round_trip("png", _half_step())


func test_r16_round_trip() -> void:
	_round_trip("r16", _half_step())


func test_exr_round_trip() -> void:
	_round_trip("exr", 1e-6)


func test_png16_is_a_real_16_bit_png() -> void:
	var isl := _island()
	var path := DIR.path_join("h.png")
	check_eq(isl.export_heightmap(path), OK, "export")
	var bytes := FileAccess.get_file_as_bytes(path)
	check(bytes.size() > 33, "file has content")
	if bytes.size() > 33:
		check_eq(bytes.slice(1, 4).get_string_from_ascii(), "PNG", "PNG signature")
		check_eq(bytes[24], 16, "bit depth 16")
		check_eq(bytes[25], 0, "greyscale")
		check_eq(bytes.decode_u32(16), 0x41000000, "width 65 (big-endian)")


func test_bad_files_are_rejected_and_change_nothing() -> void:
	var isl := _island()
	var before := isl.get_heightmap_image()
	var ids := isl.get_children(true).map(func(c: Node) -> int: return c.get_instance_id())
	# Wrong size: a 129² export imported into a 65² island.
	var big := _island(129, 32)
	var big_path := DIR.path_join("big.r32")
	check_eq(big.export_heightmap(big_path), OK, "export 129²")
	check_eq(big.export_heightmap(DIR.path_join("big.png")), OK, "export 129² png")
	big.free()
	var cases := {
		big_path: "R32 file has 66564 bytes, expected 16900",
		DIR.path_join("big.png"): "PNG is 129×129 pixels, expected 65×65",
		DIR.path_join("corrupt.png"): "not a readable PNG",
		DIR.path_join("short.r16"): "R16 file has 10 bytes",
		DIR.path_join("nan.r32"): "must be finite",
		DIR.path_join("missing.r32"): "file not found",
		DIR.path_join("island.jpg"): "unsupported heightmap extension",
	}
	var f := FileAccess.open(DIR.path_join("corrupt.png"), FileAccess.WRITE)
	f.store_buffer("this is not a png file at all".to_utf8_buffer())
	f.close()
	f = FileAccess.open(DIR.path_join("short.r16"), FileAccess.WRITE)
	f.store_buffer(PackedByteArray([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]))
	f.close()
	var nan_data := PackedFloat32Array()
	nan_data.resize(65 * 65)
	nan_data[100] = NAN
	f = FileAccess.open(DIR.path_join("nan.r32"), FileAccess.WRITE)
	f.store_buffer(nan_data.to_byte_array())
	f.close()
	for path: String in cases:
		expect_error(cases[path])
	for path: String in cases:
		var e := isl.import_heightmap(path)
		check(e != OK, "%s is rejected (error %d)" % [path.get_file(), e])
		check(_max_diff(before, isl.get_heightmap_image()) == 0.0, "%s: heights unchanged" % path.get_file())
		var now := isl.get_children(true).map(func(c: Node) -> int: return c.get_instance_id())
		check_eq(now, ids, "%s: chunks untouched" % path.get_file())
	check_eq(isl.import_heightmap(DIR.path_join("missing.r32")), ERR_FILE_NOT_FOUND, "missing file code")
	check_eq(isl.import_heightmap(DIR.path_join("island.jpg")), ERR_FILE_UNRECOGNIZED, "unknown extension code")
	check_eq(isl.import_heightmap(DIR.path_join("corrupt.png")), ERR_FILE_CORRUPT, "corrupt file code")


func test_export_without_island_fails() -> void:
	var isl := ProceduralIsland.new()
	isl.generate_on_ready = false
	add_child(isl)
	expect_error("no island generated yet")
	check(isl.export_heightmap(DIR.path_join("none.r32")) != OK, "nothing to export")
	check(isl.get_heightmap_image() == null, "no image before the first generation")
	check_eq(isl.get_height_at(0, 0), 0.0, "height 0 before the first generation")
	check_eq(isl.get_biome_at(0, 0), -1, "biome -1 before the first generation")


## Issue 12.4: import errors only suggest resolutions the node accepts.
func test_import_hints_name_only_valid_resolutions() -> void:
	var isl := _island()
	DirAccess.make_dir_recursive_absolute(DIR)
	var empty := DIR.path_join("empty.r32")
	FileAccess.open(empty, FileAccess.WRITE).close()
	expect_error("the file is empty")
	check_eq(isl.import_heightmap(empty), ERR_FILE_CORRUPT, "an empty .r32 is refused")
	var odd := DIR.path_join("odd.r16")
	var f := FileAccess.open(odd, FileAccess.WRITE)
	var zeros := PackedByteArray()
	zeros.resize(64 * 64 * 2)
	f.store_buffer(zeros)
	f.close()
	expect_error("not a resolution this node supports")
	check_eq(isl.import_heightmap(odd), ERR_FILE_CORRUPT, "a 64² .r16 is refused")
	var wide := DIR.path_join("wide.png")
	var img := Image.create(4096, 4096, false, Image.FORMAT_L8)
	img.save_png(wide)
	expect_error("4096×4096")
	check(isl.import_heightmap(wide) != OK, "a 4096² PNG is refused")


## Issue 12.3: a world too small for f32 heights is refused with a clear error; the island
## stays as it was (no NaN reaches the heights or the colliders).
func test_tiny_world_size_is_refused() -> void:
	var isl := _island()
	var h := isl.get_height_at(0.0, 0.0)
	for bad in [1e-30, 1e-18, 1e-3, 1e30]:
		isl.world_size = bad
		expect_error("world_size")
		check(not isl.regenerate(), "world_size %s refused" % bad)
		check_eq(isl.get_height_at(0.0, 0.0), h, "heights unchanged after world_size %s" % bad)
	check(not is_nan(isl.get_height_at(1.0, 1.0)), "no NaN")
