extends IslandTestCase
## Island outlines (issue 22): every `island_shape` generates; a drawn `coast_mask` texture is
## followed; a mask that is all sea is refused with an error naming `coast_mask` and the previous
## island stays.


func _disc_texture(size: int, radius: float, land: bool = true) -> ImageTexture:
	var img := Image.create(size, size, false, Image.FORMAT_RGB8)
	img.fill(Color.BLACK)
	if land:
		for y in size:
			for x in size:
				var d := Vector2(x - size * 0.5, y - size * 0.5).length()
				if d < radius:
					img.set_pixel(x, y, Color.WHITE)
	return ImageTexture.create_from_image(img)


func test_every_shape_generates() -> void:
	var isl := _island(65, 32)
	for shape in [ProceduralIsland.SHAPE_AUTO, ProceduralIsland.SHAPE_ROUND,
			ProceduralIsland.SHAPE_ELONGATED, ProceduralIsland.SHAPE_CRESCENT,
			ProceduralIsland.SHAPE_ARCHIPELAGO, ProceduralIsland.SHAPE_ATOLL,
			ProceduralIsland.SHAPE_VOLCANIC]:
		isl.island_shape = shape
		check(isl.regenerate(), "shape %d generates" % shape)


func test_coast_mask_is_followed_and_bad_masks_are_refused() -> void:
	var isl := _island(129, 32)
	isl.coast_mask = _disc_texture(100, 30.0)
	check(isl.regenerate(), "generates with a drawn mask")
	check(isl.get_height_at(0.0, 0.0) > 0.0, "the disc's centre is land")
	check(isl.get_height_at(-400.0, -400.0) < 0.0, "outside the disc is sea")
	var h := isl.get_height_at(0.0, 0.0)
	isl.coast_mask = _disc_texture(100, 30.0, false)
	expect_error("coast_mask")
	check(not isl.regenerate(), "an all-sea mask is refused")
	check_eq(isl.get_height_at(0.0, 0.0), h, "the previous island stays")
	isl.coast_mask = null
	check(isl.regenerate(), "generated outline again")
