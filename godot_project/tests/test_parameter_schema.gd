extends TestCase
## The `ProceduralIsland` node's generator properties agree with the core's parameter schema
## (issue 25): gdext reads the `#[export(range = ...)]` attributes of
## `rust/godot/src/island/procedural_island/table.rs` as literals, so they cannot be derived from the
## schema; this test pins them to it instead. `tests/data/parameter_schema.json` is written by
## `cargo xtask docs` from `island_core::schema` (and checked for staleness by `cargo xtask test`).
## A range hint, a default or a type that drifts from the schema fails here, and so does a new
## property that is neither in the schema nor in the node-only list below.

const SCHEMA_PATH := "res://tests/data/parameter_schema.json"

## Properties of the node that are not scalar generator parameters: node settings, resources,
## and the core parameters that are not scalars (checked by hand in `IslandParams::validate`).
const NOT_IN_SCHEMA := [
	"shaping_curve", "coast_mask", "river_enabled",
	"collision_enabled", "flat_shading", "terrain_material", "terrain_layers", "splat_paint",
	"sculpt_enabled", "backend", "auto_regenerate", "generate_on_ready", "build_budget_ms",
	"lod_enabled", "lod_levels", "lod_distance", "collision_mode", "lod_budget_ms",
	"sea_enabled", "inland_water_enabled", "water_material", "scatter_layers",
	"stored_resources", "server_mode",
]


func _schema() -> Array:
	var text := FileAccess.get_file_as_string(SCHEMA_PATH)
	var data: Variant = JSON.parse_string(text)
	if data == null or typeof(data) != TYPE_DICTIONARY:
		return []
	return data["properties"]


func _near(a: float, b: float) -> bool:
	return absf(a - b) <= 1e-6 * maxf(1.0, absf(b))


func test_range_hints_and_defaults_match_the_schema() -> void:
	var props := _schema()
	check(props.size() > 60, "%s lists the parameters (got %d)" % [SCHEMA_PATH, props.size()])
	var infos := {}
	for info in ClassDB.class_get_property_list("ProceduralIsland", true):
		if info["usage"] & PROPERTY_USAGE_EDITOR:
			infos[info["name"]] = info
	var isl := ProceduralIsland.new()
	var in_schema := {}
	for p in props:
		var name: String = p["property"]
		in_schema[name] = true
		if not check(infos.has(name), "the node has the schema's property `%s`" % name):
			continue
		var info: Dictionary = infos[name]
		var value: Variant = isl.get(name)
		var slider: Variant = p["slider"]
		if slider != null:
			check_eq(info["hint"], PROPERTY_HINT_RANGE, "`%s` has a range hint" % name)
			check_eq(info["hint_string"], slider["hint_string"], "`%s` range hint" % name)
		else:
			check(info["hint"] != PROPERTY_HINT_RANGE, "`%s` has no range hint in the schema" % name)
		match p["kind"]:
			"bool":
				check_eq(typeof(value), TYPE_BOOL, "`%s` is a bool" % name)
				check_eq(value, p["default"], "`%s` default" % name)
			"int":
				check_eq(typeof(value), TYPE_INT, "`%s` is an int" % name)
				check_eq(value, int(p["default"]), "`%s` default" % name)
			"float":
				check_eq(typeof(value), TYPE_FLOAT, "`%s` is a float" % name)
				check(_near(value, p["default"]), "`%s` default (got %s, schema %s)" % [name, value, p["default"]])
			"enum":
				check_eq(typeof(value), TYPE_INT, "`%s` is an int" % name)
				check_eq(value, int(p["default"]["value"]), "`%s` default" % name)
				check_eq(info["hint"], PROPERTY_HINT_ENUM, "`%s` has an enum hint" % name)
				var items: PackedStringArray = String(info["hint_string"]).split(",")
				var names: Array = p["default"]["names"]
				check_eq(items.size(), names.size(), "`%s` enum items" % name)
				for i in items.size():
					check_eq(int(items[i].get_slice(":", 1)), i, "`%s` item %d's number" % [name, i])
			_:
				fail("unknown kind %s" % p["kind"])
	for name in infos:
		if not in_schema.has(name) and not NOT_IN_SCHEMA.has(name) and not String(name).begins_with("metadata/"):
			fail("`%s` is neither in the parameter schema nor a node-only property" % name)
	isl.free()
