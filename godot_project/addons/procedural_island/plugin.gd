@tool
extends EditorPlugin
## Editor plugin of the Procedural Island addon.
##
## The `ProceduralIsland` node itself is registered by the GDExtension
## (`procedural_island.gdextension`) and is available even without enabling this plugin; the
## plugin only checks that the native library was loaded and says how to build it if not.


func _enter_tree() -> void:
	if not ClassDB.class_exists(&"ProceduralIsland"):
		push_warning("Procedural Island: the native library is missing. Build it with `cargo xtask build` " +
			"(it is copied to res://addons/procedural_island/bin/), then restart the editor.")


func _exit_tree() -> void:
	pass
