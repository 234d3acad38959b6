//! The `IslandPath` node: a road, a river course, a ridge or a canal drawn with Godot's own
//! curve tools, that the island grows around.
//!
//! The shaping is engine-free (`island_core::paths`); this node turns its curve into a polyline
//! in the island's frame and tells its island when it changes.

use crate::island::layout_node::{layout_changed, parent_island};
use godot::classes::notify::Node3DNotification;
use godot::classes::{Curve3D, IPath3D, Path3D};
use godot::prelude::*;
use island_core::paths::{
    Crossing, PathKind, PathSpec, DEFAULT_DEPTH, DEFAULT_HEIGHT, DEFAULT_LEVEL, DEFAULT_MAX_GRADE,
    DEFAULT_SHOULDER, DEFAULT_WIDTH,
};

/// A road, a river course, a ridge or a canal that the island grows around. Add it as a child
/// of a [ProceduralIsland] and draw its curve with the editor's path tools (only the curve's x
/// and z count: the heights come from the land).
///
/// - **Road**: a corridor [member width] m wide, level across, no steeper than
///   [member max_grade] % along (it cuts through humps and dips into gullies; a road whose ends
///   alone need a steeper climb takes that grade, so lay switchbacks up a steep slope), shoulders
///   blending into the land over [member shoulder] m, painted with [member splat_layer], no
///   scatter on it. It is laid after the rivers and lakes are found and leaves their water
///   alone: where a river crosses, the river keeps its bed ([constant CROSSING_FORD]: the road
///   dips to meet it as far as the grade allows; [constant CROSSING_BRIDGE]: the road keeps its
///   level and leaves a gap for a bridge you place).
/// - **River**: a channel [member width] × [member depth] m from the curve's higher end to its
///   lower one, its bed never rising; river water along it down to the sea or a lake; other
///   rivers join it.
/// - **Ridge**: [member height] m raised along the curve.
/// - **Canal**: cut (or filled) to [member level] m above sea level; below 0 the sea fills it
///   and it can make two islands of one.
///
/// Ridges and canals enter the generator with the sculpt layer, before the erosion (after the
/// [IslandStamp]s, under the brush's strokes); rivers are laid on the eroded land before the
/// drainage, roads after it. They survive regenerate and seed changes. Editing the curve or a
/// property regenerates the island (in the editor: in the background at once, or 0.3 s after
/// the last of a run of changes such as a drag, with Godot's own undo; in a game: in the
/// background at the next frame).
#[derive(GodotClass)]
#[class(tool, base=Path3D)]
pub struct IslandPath {
    base: Base<Path3D>,
    /// What the path makes: [constant KIND_ROAD], [constant KIND_RIVER], [constant KIND_RIDGE],
    /// [constant KIND_CANAL].
    #[export]
    #[var(set = set_kind, hint = ENUM, hint_string = "Road:0,River:1,Ridge:2,Canal:3")]
    kind: i32,
    /// Corridor width: road surface, river channel, ridge crest, canal, metres.
    #[export(range = (0.5, 200.0, 0.1, or_greater, suffix = "m"))]
    #[var(set = set_width)]
    width: f32,
    /// Road verge, river bank, ridge flank, canal bank on each side: how far the path blends
    /// into the land, metres.
    #[export(range = (0.0, 200.0, 0.1, or_greater, suffix = "m"))]
    #[var(set = set_shoulder)]
    shoulder: f32,
    /// Road: the steepest grade along it, percent.
    #[export(range = (0.5, 100.0, 0.1, suffix = "%"))]
    #[var(set = set_max_grade)]
    max_grade: f32,
    /// River: channel depth below the ground, metres.
    #[export(range = (0.1, 50.0, 0.1, or_greater, suffix = "m"))]
    #[var(set = set_depth)]
    depth: f32,
    /// Ridge: how much it raises the land, metres.
    #[export(range = (-100.0, 500.0, 0.1, or_less, or_greater, suffix = "m"))]
    #[var(set = set_height)]
    height: f32,
    /// Canal: the floor's height above sea level, metres (below 0 the sea fills it).
    #[export(range = (-50.0, 500.0, 0.1, or_less, or_greater, suffix = "m"))]
    #[var(set = set_level)]
    level: f32,
    /// Road: where a river crosses, a ford ([constant CROSSING_FORD]) or a gap for a bridge
    /// ([constant CROSSING_BRIDGE]).
    #[export]
    #[var(set = set_crossing, hint = ENUM, hint_string = "Ford:0,Bridge:1")]
    crossing: i32,
    /// Road: the ground layer painted on it: a generated one (0 sand, 1 grass, 2 rock, 3 snow) or
    /// one of the paint layers 4..7 (4 forest, 5 dirt, 6 gravel, 7 meadow; restyled by
    /// [member ProceduralIsland.terrain_layers] entries 4..7, e.g. a cobblestone [TerrainLayer]),
    /// which then takes the road's share from the generated ones. Paint stays on top of it.
    #[export]
    #[var(
        set = set_splat_layer,
        hint = ENUM,
        hint_string = "Sand:0,Grass:1,Rock:2,Snow:3,Forest:4,Dirt:5,Gravel:6,Meadow:7"
    )]
    splat_layer: i32,
    /// Off: the island ignores the path.
    #[export]
    #[var(set = set_enabled)]
    enabled: bool,
    /// The curve whose `changed` signal is connected.
    watched: Option<Gd<Curve3D>>,
}

#[godot_api]
impl IPath3D for IslandPath {
    fn init(base: Base<Path3D>) -> Self {
        IslandPath {
            base,
            kind: 0,
            width: DEFAULT_WIDTH,
            shoulder: DEFAULT_SHOULDER,
            max_grade: DEFAULT_MAX_GRADE,
            depth: DEFAULT_DEPTH,
            height: DEFAULT_HEIGHT,
            level: DEFAULT_LEVEL,
            crossing: 0,
            splat_layer: 0,
            enabled: true,
            watched: None,
        }
    }

    fn ready(&mut self) {
        self.base_mut().set_notify_local_transform(true);
        let this = self.to_gd();
        let callable = Callable::from_object_method(&this, "_on_curve_changed");
        if !self.base().is_connected("curve_changed", &callable) {
            self.base_mut().connect("curve_changed", &callable);
        }
        self.watch_curve();
        self.changed();
    }

    fn on_notification(&mut self, what: Node3DNotification) {
        match what {
            Node3DNotification::LOCAL_TRANSFORM_CHANGED => self.changed(),
            Node3DNotification::EXIT_TREE => self.changed(),
            _ => {}
        }
    }

    fn get_configuration_warnings(&self) -> PackedStringArray {
        self.get_warnings()
    }
}

#[godot_api]
impl IslandPath {
    /// A level, grade-limited road.
    #[constant]
    pub const KIND_ROAD: i32 = 0;
    /// A river channel falling to its lower end, with river water.
    #[constant]
    pub const KIND_RIVER: i32 = 1;
    /// A raised ridge.
    #[constant]
    pub const KIND_RIDGE: i32 = 2;
    /// A canal cut to [member level].
    #[constant]
    pub const KIND_CANAL: i32 = 3;
    /// A river crossing the road meets it at a ford.
    #[constant]
    pub const CROSSING_FORD: i32 = 0;
    /// A river crossing the road leaves a gap at the road's level (place a bridge there).
    #[constant]
    pub const CROSSING_BRIDGE: i32 = 1;

    #[func]
    fn set_kind(&mut self, v: i32) {
        self.kind = v;
        self.changed();
    }
    #[func]
    fn set_width(&mut self, v: f32) {
        self.width = v;
        self.changed();
    }
    #[func]
    fn set_shoulder(&mut self, v: f32) {
        self.shoulder = v;
        self.changed();
    }
    #[func]
    fn set_max_grade(&mut self, v: f32) {
        self.max_grade = v;
        self.changed();
    }
    #[func]
    fn set_depth(&mut self, v: f32) {
        self.depth = v;
        self.changed();
    }
    #[func]
    fn set_height(&mut self, v: f32) {
        self.height = v;
        self.changed();
    }
    #[func]
    fn set_level(&mut self, v: f32) {
        self.level = v;
        self.changed();
    }
    #[func]
    fn set_crossing(&mut self, v: i32) {
        self.crossing = v;
        self.changed();
    }
    #[func]
    fn set_splat_layer(&mut self, v: i32) {
        self.splat_layer = v;
        self.changed();
    }
    #[func]
    fn set_enabled(&mut self, v: bool) {
        self.enabled = v;
        self.changed();
    }

    /// What is wrong with the path (its configuration warnings): not under a
    /// [ProceduralIsland], no curve of two points, or a value out of range. Empty when fine.
    #[func]
    pub fn get_warnings(&self) -> PackedStringArray {
        let mut w = PackedStringArray::new();
        if self.island().is_none() {
            w.push("IslandPath must be a child of a ProceduralIsland");
        }
        match self.path_spec() {
            None => {
                w.push("IslandPath needs a curve with at least two points (draw it with the path tools)");
            }
            Some(p) => {
                if let Err(e) = p.validate() {
                    w.push(&GString::from(&e.to_string()));
                }
            }
        }
        w
    }

    /// The curve (or the curve resource) changed.
    #[func]
    fn _on_curve_changed(&mut self) {
        self.watch_curve();
        self.changed();
    }
}

impl IslandPath {
    /// The parent island.
    fn island(&self) -> Option<Gd<Node>> {
        parent_island(&*self.base())
    }

    /// Whether the island uses this path.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Follow edits of the curve resource's points too (Path3D's own `curve_changed` fires
    /// when the resource is replaced; the resource's `changed` when a point moves).
    fn watch_curve(&mut self) {
        let curve = self.base().get_curve();
        if self.watched == curve {
            return;
        }
        let this = self.to_gd();
        let callable = Callable::from_object_method(&this, "_on_curve_changed");
        if let Some(mut old) = self.watched.take() {
            if old.is_connected("changed", &callable) {
                old.disconnect("changed", &callable);
            }
        }
        if let Some(mut c) = curve.clone() {
            if !c.is_connected("changed", &callable) {
                c.connect("changed", &callable);
            }
        }
        self.watched = curve;
    }

    /// The path in the island's frame (the node's local transform: it is the island's child),
    /// from the curve's baked points; `None` without a curve of two points.
    pub fn path_spec(&self) -> Option<PathSpec> {
        let curve = self.base().get_curve()?;
        if curve.get_point_count() < 2 {
            return None;
        }
        let t = self.base().get_transform();
        let baked = curve.get_baked_points();
        let points: Vec<[f32; 2]> = baked
            .as_slice()
            .iter()
            .map(|p| {
                let q = t * *p;
                [q.x, q.z]
            })
            .collect();
        if points.len() < 2 {
            return None;
        }
        let kind = usize::try_from(self.kind)
            .ok()
            .and_then(|k| PathKind::ALL.get(k).copied())
            .unwrap_or(PathKind::Road);
        Some(PathSpec {
            kind,
            points,
            width: self.width,
            shoulder: self.shoulder,
            max_grade: self.max_grade,
            depth: self.depth,
            height: self.height,
            level: self.level,
            crossing: if self.crossing == Self::CROSSING_BRIDGE {
                Crossing::Bridge
            } else {
                Crossing::Ford
            },
            splat_layer: u8::try_from(self.splat_layer).unwrap_or(u8::MAX),
        })
    }

    /// Tell the island (next frame, coalesced): in the editor its auto-regenerate notices the
    /// new request by itself; in a game it regenerates in the background.
    fn changed(&mut self) {
        layout_changed(&*self.base_mut());
    }
}
