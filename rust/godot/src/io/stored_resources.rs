//! How a `ProceduralIsland` saves its `TerrainLayer`s, `ScatterLayer`s and `SplatPaint`: as plain
//! data (dictionaries of their saved properties), never as sub-resources of the scene.
//!
//! Why: those three classes are Rust classes, and godot-rust (without its
//! `experimental-threads` feature, which we do not enable) can construct them on the main thread
//! only. A scene that held them as sub-resources could not be loaded with
//! `ResourceLoader.load_threaded_request` (the loading-screen pattern): the loader thread
//! constructs every sub-resource, and the construction aborted the process. Stored as plain data,
//! the loader thread builds only dictionaries, arrays and Godot's own resources (textures,
//! meshes); the island builds our resources when it is instantiated, which happens on the main
//! thread.
//!
//! A resource saved in a file of its own (`.tres`) is stored by path and UID and loaded by the
//! island on the main thread, so it stays shared between the islands and scenes that use it.
//! A resource inside the scene is stored with the island that holds it: islands that shared one
//! get a copy each after loading (and after `Node.duplicate()`, which copies saved properties).
//!
//! Scenes saved before this (with `[sub_resource type="TerrainLayer"]` entries) still load on the
//! main thread and are saved in the new form.

use godot::classes::{Resource, ResourceLoader, ResourceUid};
use godot::obj::NewGd;
use godot::prelude::*;
use godot::register::info::PropertyUsageFlags;

/// Properties never copied: the script, and what identifies the resource rather than holds data.
const SKIPPED: [&str; 3] = ["script", "resource_path", "resource_scene_unique_id"];

/// Whether `path` names a resource file of its own (not a sub-resource `scene.tscn::id`).
fn is_own_file(path: &str) -> bool {
    !path.is_empty() && !path.contains("::")
}

/// The plain form of `res`: `{class, path, uid}` for a resource with a file of its own,
/// `{class, props}` (every saved property not at its default, values as they are saved)
/// otherwise.
pub fn to_plain<T>(res: &Gd<T>) -> VarDictionary
where
    T: GodotClass + Inherits<Resource> + NewGd,
{
    let res: Gd<Resource> = res.clone().upcast();
    let mut d = VarDictionary::new();
    let class = StringName::from(&res.get_class());
    d.set("class", &class);
    let path = res.get_path().to_string();
    if is_own_file(&path) {
        d.set("path", path.as_str());
        let uid = ResourceLoader::singleton().get_resource_uid(path.as_str());
        if uid != (ResourceUid::INVALID_ID as i64) {
            d.set("uid", &ResourceUid::singleton().id_to_text(uid));
        }
        return d;
    }
    // A fresh instance of the class holds the defaults (Godot has none for extension classes).
    let defaults: Gd<Object> = T::new_gd().upcast::<Resource>().upcast();
    let mut props = VarDictionary::new();
    let storage = PropertyUsageFlags::STORAGE.ord() as i64;
    for p in res.get_property_list().iter_shared() {
        let usage = p
            .get("usage")
            .and_then(|u| u.try_to::<i64>().ok())
            .unwrap_or(0);
        let Some(name) = p.get("name").and_then(|n| n.try_to::<GString>().ok()) else {
            continue;
        };
        if usage & storage == 0 || SKIPPED.contains(&name.to_string().as_str()) {
            continue;
        }
        let name = StringName::from(&name);
        let value = res.get(&name);
        // Like Godot's own scene format: a property at its class default is not written.
        if value != defaults.get(&name) {
            props.set(&name, &value);
        }
    }
    d.set("props", &props);
    d
}

/// The resource of class `T` described by `plain` (from [`to_plain`]); null stays null. `what`
/// names it in the error of a bad entry (reported, then treated as null).
pub fn from_plain<T>(plain: &Variant, what: &str) -> Option<Gd<T>>
where
    T: GodotClass + Inherits<Resource> + NewGd,
{
    if plain.is_nil() {
        return None;
    }
    let Ok(d) = plain.try_to::<VarDictionary>() else {
        godot_error!("ProceduralIsland: stored {what} is not a dictionary; left empty");
        return None;
    };
    let text = |k: &str| d.get(k).and_then(|v| name_of(&v)).unwrap_or_default();
    let class = text("class");
    if class != T::class_id().to_string() {
        godot_error!(
            "ProceduralIsland: stored {what} is a `{class}`, not a `{}`; left empty",
            T::class_id()
        );
        return None;
    }
    let (path, uid) = (text("path"), text("uid"));
    if !path.is_empty() {
        return load_file::<T>(&path, &uid, what);
    }
    let res = T::new_gd();
    if let Some(props) = d
        .get("props")
        .and_then(|p| p.try_to::<VarDictionary>().ok())
    {
        let mut obj = res.clone().upcast::<Resource>().upcast::<Object>();
        for (k, v) in props.iter_shared() {
            if let Some(name) = name_of(&k) {
                obj.set(name.as_str(), &v);
            }
        }
    }
    Some(res)
}

/// A `String` or `StringName` value as text (a hand-edited file may hold either).
fn name_of(v: &Variant) -> Option<String> {
    v.try_to::<StringName>()
        .map(|s| s.to_string())
        .or_else(|_| v.try_to::<GString>().map(|s| s.to_string()))
        .ok()
}

/// Load the resource file of a stored entry (by UID first, so a moved file is still found).
fn load_file<T>(path: &str, uid: &str, what: &str) -> Option<Gd<T>>
where
    T: GodotClass + Inherits<Resource>,
{
    let mut found = path.to_string();
    if !uid.is_empty() {
        let uids = ResourceUid::singleton();
        let id = uids.text_to_id(uid);
        if id != (ResourceUid::INVALID_ID as i64) && uids.has_id(id) {
            found = uids.get_id_path(id).to_string();
        }
    }
    let mut loader = ResourceLoader::singleton();
    let loaded = if loader.exists(found.as_str()) {
        loader.load(found.as_str())
    } else {
        None
    };
    match loaded.and_then(|r| r.try_cast::<T>().ok()) {
        Some(r) => Some(r),
        None => {
            godot_error!(
                "ProceduralIsland: stored {what}: `{found}` could not be loaded as a `{}`; left empty",
                T::class_id()
            );
            None
        }
    }
}

/// The plain form of a list of resources (null entries stay null).
pub fn list_to_plain<T>(list: &Array<Option<Gd<T>>>) -> VarArray
where
    T: GodotClass + Inherits<Resource> + NewGd,
{
    let mut out = VarArray::new();
    for r in list.iter_shared() {
        match r {
            Some(r) => out.push(&to_plain(&r).to_variant()),
            None => out.push(&Variant::nil()),
        }
    }
    out
}

/// The list of resources described by `plain` (from [`list_to_plain`]).
pub fn list_from_plain<T>(plain: &Variant, what: &str) -> Array<Option<Gd<T>>>
where
    T: GodotClass + Inherits<Resource> + NewGd,
{
    let mut out = Array::new();
    let Ok(items) = plain.try_to::<VarArray>() else {
        if !plain.is_nil() {
            godot_error!("ProceduralIsland: stored {what} is not an array; left empty");
        }
        return out;
    };
    for (i, item) in items.iter_shared().enumerate() {
        out.push(from_plain::<T>(&item, &format!("{what}[{i}]")).as_ref());
    }
    out
}
