//! When an island runs without visuals: the rule behind `SERVER_MODE_AUTO`, shared by
//! `ProceduralIsland` and `IslandWorld`.

use godot::classes::Engine;
use godot::prelude::*;

/// What [constant ProceduralIsland.SERVER_MODE_AUTO] means here: a game (not the editor) under
/// the headless display server, unless the project setting
/// `procedural_island/server_mode_when_headless` is off.
pub(crate) fn auto_server_mode() -> bool {
    if Engine::singleton().is_editor_hint()
        || godot::classes::DisplayServer::singleton().get_name() != "headless"
    {
        return false;
    }
    let key = "procedural_island/server_mode_when_headless";
    let settings = godot::classes::ProjectSettings::singleton();
    !settings.has_setting(key) || settings.get_setting(key).booleanize()
}
