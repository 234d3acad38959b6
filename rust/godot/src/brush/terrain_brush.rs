//! The `TerrainBrush` node: height- and slope-masked splat painting on a `ProceduralIsland`.
//!
//! All painting math is in [`island_core::paint`]; this node converts coordinates, keeps the
//! stroke/undo state and draws the cursor ring.

use crate::brush::splat_paint::SplatPaint;
use crate::island::procedural_island::ProceduralIsland;
use godot::classes::base_material_3d::{Flags as MatFlags, ShadingMode, Transparency};
use godot::classes::mesh::PrimitiveType;
use godot::classes::node::InternalMode;
use godot::classes::{INode3D, ImmediateMesh, MeshInstance3D, Node3D, StandardMaterial3D};
use godot::prelude::*;
use godot::register::info::PropertyInfo;
use island_core::paint::{self, Brush, Masks, Mode, PaintLayer, Rect, Surface, LAYERS};
use island_core::scatter::EraseMask;
use island_core::sculpt::{self, SculptBrush, SculptMode, StrokeBefore};
use island_core::sync::{EditAction, EditBrush, EditCommand};

/// Segments of the cursor ring.
const RING_SEGMENTS: usize = 64;
/// Cursor ring lift above the terrain, metres.
const RING_LIFT: f32 = 0.3;

/// Paints the eight splat layers of a [ProceduralIsland] (its parent, or the node at
/// [member island]) with a round brush masked by height and slope: e.g. snow only above 80 m
/// where the slope is under 35°. Works in the editor (with the addon's plugin: left-drag in the
/// 3D viewport) and from GDScript at runtime ([method paint_at], [method paint_stroke],
/// [method fill_by_rule]). The paint is kept in the island's [member ProceduralIsland.splat_paint]
/// resource (saved with the scene) on top of the generated splat.
///
/// Positions are global; heights are metres and slopes degrees in the island's local frame.
#[derive(GodotClass)]
#[class(tool, base=Node3D)]
pub struct TerrainBrush {
    base: Base<Node3D>,
    /// The island to paint; empty = the parent node.
    #[export]
    island: NodePath,
    /// Splat layer to paint: the generator's [constant LAYER_SAND], [constant LAYER_GRASS],
    /// [constant LAYER_ROCK], [constant LAYER_SNOW], or the user layers [constant LAYER_FOREST],
    /// [constant LAYER_DIRT], [constant LAYER_GRAVEL], [constant LAYER_MEADOW] (empty until
    /// painted); the names of the terrain shader's layer groups. When the island has
    /// [member ProceduralIsland.terrain_layers], the menu shows their names.
    #[export]
    #[var(hint = ENUM, hint_string = "Sand:0,Grass:1,Rock:2,Snow:3,Forest:4,Dirt:5,Gravel:6,Meadow:7")]
    layer: i32,
    /// [constant MODE_PAINT] adds the layer, [constant MODE_ERASE] removes it,
    /// [constant MODE_SMOOTH] blends all layers with their neighbourhood.
    /// [constant MODE_SCATTER_ERASE] removes the instances of scatter layer [member scatter_layer]
    /// under the brush, [constant MODE_SCATTER_RESTORE] brings them back (a hard disc: every
    /// instance whose nearest heightfield sample lies within [member radius] and passes the
    /// height and slope masks; strength and hardness do not apply).
    ///
    /// The sculpt modes change the terrain itself (kept as the island's sculpt layer, applied
    /// inside the generator before erosion and drainage, so rivers, lakes, splat and scatter
    /// follow, and kept when the island regenerates): [constant MODE_SCULPT_RAISE] /
    /// [constant MODE_SCULPT_LOWER] add / remove [member sculpt_height] metres per dab,
    /// [constant MODE_SCULPT_SMOOTH] evens the relief out, [constant MODE_SCULPT_FLATTEN] levels
    /// it to [member flatten_height] (the flattened area stays level through erosion),
    /// [constant MODE_SKETCH_LAND] / [constant MODE_SKETCH_SEA] redraw the coast: land rising
    /// from the sea floor with a beach, or sea (a bay, a channel). While a stroke is open the
    /// chunk meshes under the brush follow each dab; [method end_stroke] regenerates the island
    /// with the edits (erosion, water, splat, scatter) in the background.
    #[export]
    #[var(hint = ENUM, hint_string = "Paint:0,Erase:1,Smooth:2,Erase scatter:3,Restore scatter:4,Sculpt raise:5,Sculpt lower:6,Sculpt smooth:7,Sculpt flatten:8,Sketch land:9,Sketch sea:10")]
    mode: i32,
    /// Index into the island's [member ProceduralIsland.scatter_layers] that
    /// [constant MODE_SCATTER_ERASE] and [constant MODE_SCATTER_RESTORE] edit. The erased areas
    /// are kept in the island's [member ProceduralIsland.splat_paint] (saved with the scene,
    /// kept when the island regenerates).
    #[export(range = (0.0, 64.0, 1.0, or_greater))]
    scatter_layer: i32,
    /// Brush radius, metres.
    #[export(range = (0.1, 1000.0, 0.1, or_greater, suffix = "m"))]
    radius: f32,
    /// Amount per dab at the centre, 0..1.
    #[export(range = (0.0, 1.0, 0.01))]
    strength: f32,
    /// Falloff: 1 = hard disc, 0 = smooth from the centre.
    #[export(range = (0.0, 1.0, 0.01))]
    hardness: f32,
    /// Distance between the dabs of a stroke, as a fraction of the radius.
    #[export(range = (0.01, 4.0, 0.01, or_greater))]
    spacing: f32,
    /// [constant MODE_SCULPT_RAISE] / [constant MODE_SCULPT_LOWER]: metres added or removed per
    /// dab at the brush centre (times the falloff and masks).
    #[export_group(name = "Sculpt")]
    #[export(range = (0.0, 50.0, 0.01, or_greater, suffix = "m"))]
    sculpt_height: f32,
    /// [constant MODE_SCULPT_FLATTEN]: the height the terrain is levelled to, metres
    /// (-1000..10000). [method pick_flatten_height] takes it from the terrain (the editor: Ctrl+click
    /// in flatten mode).
    #[export(range = (-1000.0, 10000.0, 0.1, suffix = "m"))]
    flatten_height: f32,
    /// Lowest terrain height painted, metres.
    #[export_group(name = "Height Mask")]
    #[export(range = (-1000.0, 10000.0, 0.1, or_less, or_greater, suffix = "m"))]
    min_height: f32,
    /// Highest terrain height painted, metres.
    #[export(range = (-1000.0, 10000.0, 0.1, or_less, or_greater, suffix = "m"))]
    max_height: f32,
    /// Smooth fade inside both height limits, metres (0 = hard edge).
    #[export(range = (0.0, 100.0, 0.1, or_greater, suffix = "m"))]
    height_fade: f32,
    /// Flattest slope painted, degrees.
    #[export_group(name = "Slope Mask")]
    #[export(range = (0.0, 90.0, 0.1, suffix = "°"))]
    min_slope_degrees: f32,
    /// Steepest slope painted, degrees.
    #[export(range = (0.0, 90.0, 0.1, suffix = "°"))]
    max_slope_degrees: f32,
    /// Smooth fade inside both slope limits, degrees (0 = hard edge).
    #[export(range = (0.0, 45.0, 0.1, suffix = "°"))]
    slope_fade: f32,

    /// Paint before the current stroke (between begin_stroke and end_stroke).
    stroke_before: Option<PaintLayer>,
    stroke_rect: Rect,
    stroke_carry: Option<f32>,
    /// Scatter erase masks before the current stroke, per scatter layer touched (taken at the
    /// layer's first dab), with the touched rectangle.
    stroke_scatter: Vec<(usize, Option<EraseMask>, Rect)>,
    /// The sculpt layer before the current stroke (started at its first sculpt dab, the tiles
    /// copied as the dabs reach them), with the samples the stroke touched.
    stroke_sculpt: Option<(StrokeBefore, Rect)>,
    cursor: Option<(Gd<MeshInstance3D>, Gd<ImmediateMesh>)>,
    /// Whether the current stroke has warned that it sketches land into the sea border.
    border_warned: bool,
}

#[godot_api]
impl INode3D for TerrainBrush {
    fn init(base: Base<Node3D>) -> Self {
        let b = Brush::default();
        TerrainBrush {
            base,
            island: NodePath::default(),
            layer: 0,
            mode: 0,
            scatter_layer: 0,
            radius: b.radius,
            strength: b.strength,
            hardness: b.hardness,
            spacing: b.spacing,
            min_height: -1000.0,
            max_height: 10000.0,
            height_fade: 0.0,
            min_slope_degrees: 0.0,
            max_slope_degrees: 90.0,
            slope_fade: 0.0,
            stroke_before: None,
            stroke_rect: Rect::default(),
            stroke_carry: None,
            stroke_scatter: Vec::new(),
            stroke_sculpt: None,
            sculpt_height: 1.0,
            flatten_height: 10.0,
            cursor: None,
            border_warned: false,
        }
    }

    /// With `terrain_layers` set on the island, the `layer` menu shows the layers' names.
    fn on_validate_property(&self, property: &mut PropertyInfo) {
        if property.property_name != "layer" {
            return;
        }
        let Ok(isl) = self.island_node() else {
            return;
        };
        let names = isl.bind().layer_names();
        if let Some(names) = names {
            property.hint_info.hint_string =
                GString::from(&crate::island::terrain_layer::layer_hint(&names));
        }
    }
}

/// Failure of a brush operation, reported with `godot_error!`.
type BrushResult<T> = Result<T, String>;

#[godot_api]
impl TerrainBrush {
    /// Layer 0: sand (generated).
    #[constant]
    pub const LAYER_SAND: i32 = 0;
    /// Layer 1: grass (generated).
    #[constant]
    pub const LAYER_GRASS: i32 = 1;
    /// Layer 2: rock (generated).
    #[constant]
    pub const LAYER_ROCK: i32 = 2;
    /// Layer 3: snow (generated).
    #[constant]
    pub const LAYER_SNOW: i32 = 3;
    /// Layer 4: forest (painted only).
    #[constant]
    pub const LAYER_FOREST: i32 = 4;
    /// Layer 5: dirt (painted only).
    #[constant]
    pub const LAYER_DIRT: i32 = 5;
    /// Layer 6: gravel (painted only).
    #[constant]
    pub const LAYER_GRAVEL: i32 = 6;
    /// Layer 7: meadow (painted only).
    #[constant]
    pub const LAYER_MEADOW: i32 = 7;
    /// Mode: add the layer.
    #[constant]
    pub const MODE_PAINT: i32 = 0;
    /// Mode: remove the layer.
    #[constant]
    pub const MODE_ERASE: i32 = 1;
    /// Mode: blend towards the neighbourhood average.
    #[constant]
    pub const MODE_SMOOTH: i32 = 2;
    /// Mode: remove the instances of scatter layer [member scatter_layer] under the brush.
    #[constant]
    pub const MODE_SCATTER_ERASE: i32 = 3;
    /// Mode: bring back the erased instances of scatter layer [member scatter_layer].
    #[constant]
    pub const MODE_SCATTER_RESTORE: i32 = 4;
    /// Sculpt mode: raise the terrain by [member sculpt_height] metres per dab.
    #[constant]
    pub const MODE_SCULPT_RAISE: i32 = 5;
    /// Sculpt mode: lower the terrain by [member sculpt_height] metres per dab.
    #[constant]
    pub const MODE_SCULPT_LOWER: i32 = 6;
    /// Sculpt mode: blend the terrain towards its neighbourhood average ([member strength]).
    #[constant]
    pub const MODE_SCULPT_SMOOTH: i32 = 7;
    /// Sculpt mode: level the terrain to [member flatten_height] ([member strength] per dab).
    #[constant]
    pub const MODE_SCULPT_FLATTEN: i32 = 8;
    /// Sketch mode: make the sea under the brush land ([member strength] per dab).
    #[constant]
    pub const MODE_SKETCH_LAND: i32 = 9;
    /// Sketch mode: make the land under the brush sea ([member strength] per dab).
    #[constant]
    pub const MODE_SKETCH_SEA: i32 = 10;

    /// One dab centred on the terrain below `world_position` (only x and z matter). Returns the
    /// number of texels whose paint changed (in the scatter modes: heightfield samples whose
    /// erase flag changed), or -1 (with an error) when the brush values are invalid or there is
    /// no generated island.
    #[func]
    pub fn paint_at(&mut self, world_position: Vector3) -> i64 {
        self.report("paint_at", |s| {
            let isl = s.island_node()?;
            let c = s.to_local_xz(&isl, world_position);
            s.dab_local(c)
        })
    }

    /// Dabs every [member spacing] × [member radius] metres along the segment. Inside a stroke
    /// ([method begin_stroke]) the spacing continues across consecutive segments and the first
    /// dab of a new segment is not repeated at `from`. Returns the texels changed (summed over
    /// dabs) or -1 on error.
    #[func]
    pub fn paint_stroke(&mut self, from: Vector3, to: Vector3) -> i64 {
        self.report("paint_stroke", |s| {
            let isl = s.island_node()?;
            let a = s.to_local_xz(&isl, from);
            let b = s.to_local_xz(&isl, to);
            s.segment_local(a, b)
        })
    }

    /// Apply the brush's mode, layer, strength and masks to the whole island at once (no radius,
    /// no falloff): e.g. snow wherever the height and slope masks allow (in the scatter modes:
    /// erase or restore the scatter layer wherever the masks allow). Returns the texels changed
    /// or -1 on error.
    #[func]
    pub fn fill_by_rule(&mut self) -> i64 {
        self.report("fill_by_rule", |s| {
            if s.sculpt_mode().is_some() {
                return Err("the sculpt modes have no fill by rule".into());
            }
            let mut isl = s.island_node()?;
            let brush = s.brush()?;
            if let Some(erase) = s.scatter_mode() {
                let size = isl.bind().island().map_or(0.0, |i| i.field.world_size);
                return s.scatter_dabs(&mut isl, &[[0.0, 0.0]], size, &brush.masks, erase);
            }
            let (changed, rect) = with_paint(&mut isl, true, |layer, surf| {
                paint::fill_by_rule(layer, surf, &brush).map(|ch| (ch.texels, ch.rect))
            })?;
            s.note(rect);
            Ok(changed as i64)
        })
    }

    /// Remove all paint of `layer` (0..7) from the island; the generated splat shows through
    /// again. Returns the texels changed or -1 on error.
    #[func]
    pub fn clear_layer(&mut self, layer: i32) -> i64 {
        self.report("clear_layer", |s| {
            let mut isl = s.island_node()?;
            let l = usize::try_from(layer)
                .ok()
                .filter(|&l| l < LAYERS)
                .ok_or(format!("layer must be 0..7, got {layer}"))?;
            let (changed, rect) = with_paint(&mut isl, true, |p, _| {
                let n = p.resolution;
                p.clear_layer(l).map(|c| (c, Rect::full(n)))
            })?;
            s.note(rect);
            Ok(changed as i64)
        })
    }

    /// Start a stroke: remembers the paint so that [method end_stroke] can return the touched
    /// region before and after (one undo step). A stroke still open is ended (and its snapshot
    /// dropped).
    #[func]
    pub fn begin_stroke(&mut self) -> bool {
        let r = self.report("begin_stroke", |s| {
            let mut isl = s.island_node()?;
            let (before, _) = with_paint(&mut isl, false, |p, _| Ok((p.clone(), Rect::default())))?;
            s.stroke_before = Some(before);
            s.stroke_rect = Rect::default();
            s.stroke_carry = None;
            s.stroke_scatter.clear();
            s.stroke_sculpt = None;
            s.border_warned = false;
            Ok(1)
        });
        r == 1
    }

    /// Whether a stroke is open.
    #[func]
    pub fn is_stroke_active(&self) -> bool {
        self.stroke_before.is_some()
    }

    /// End the stroke and return its snapshot: `{"rect": Rect2i (texels), "resolution": int,
    /// "before": PackedByteArray, "after": PackedByteArray}` (8 bytes per texel, row by row;
    /// the whole map when the island's resolution changed during the stroke) for the splat
    /// paint, and for the scatter modes `"scatter"`: an Array of `{"layer": int, "rect": Rect2i,
    /// "before": PackedByteArray, "after": PackedByteArray}` (one byte per sample: 1 = erased),
    /// one per scatter layer the stroke touched; an empty Dictionary when nothing was touched or
    /// no stroke was open. Pass it to [method apply_snapshot] to undo or redo.
    #[func]
    pub fn end_stroke(&mut self) -> VarDictionary {
        let Some(before) = self.stroke_before.take() else {
            return VarDictionary::new();
        };
        let rect = std::mem::take(&mut self.stroke_rect);
        let scatter = std::mem::take(&mut self.stroke_scatter);
        self.stroke_carry = None;
        let sculpted = self.stroke_sculpt.take().filter(|s| !s.1.is_empty());
        let sculpt_entry = match sculpted.map(|(before, r)| self.end_sculpt_stroke(before, r)) {
            Some(Ok(e)) => Some(e),
            Some(Err(e)) => {
                godot_error!("TerrainBrush.end_stroke: {e}");
                None
            }
            None => None,
        };
        if rect.is_empty() && scatter.iter().all(|s| s.2.is_empty()) {
            let mut d = VarDictionary::new();
            if let Some(e) = sculpt_entry {
                d.set("sculpt", &e);
            }
            return d;
        }
        let res = (|| -> BrushResult<VarDictionary> {
            let mut isl = self.island_node()?;
            let n = isl
                .bind()
                .island()
                .map(|i| i.field.resolution)
                .ok_or("the island has no terrain any more")?;
            let full = Rect::full(n);
            let mut d = VarDictionary::new();
            d.set("resolution", n as i64);
            if !rect.is_empty() {
                // A stroke that spans a resolution change (the island regenerated at another
                // resolution mid-stroke): its rectangles mix two grids, so the undo step covers
                // the whole map, with the paint from before the stroke as the island now shows
                // it.
                let (before, rect) = if before.resolution == n {
                    (before, rect)
                } else {
                    (before.resample(n), full)
                };
                let (after, _) =
                    with_paint(&mut isl, false, |p, _| p.region(rect).map(|v| (v, rect)))?;
                let before = before.region(rect).map_err(|e| e.to_string())?;
                d.set("rect", rect2i(rect));
                d.set("before", &PackedByteArray::from(before));
                d.set("after", &PackedByteArray::from(after));
            }
            let mut entries = VarArray::new();
            for (layer, before, r) in scatter {
                if r.is_empty() {
                    continue;
                }
                let (before, r) = match before {
                    Some(m) if m.resolution() != n => (m.resample(n), full),
                    Some(m) => (m, r),
                    None => (EraseMask::new(n), r),
                };
                let now = isl
                    .bind()
                    .splat_paint_ref()
                    .and_then(|p| p.bind().erase_mask_for(layer, n))
                    .unwrap_or_else(|| EraseMask::new(n));
                let mut e = VarDictionary::new();
                e.set("layer", layer as i64);
                e.set("rect", rect2i(r));
                e.set("before", &PackedByteArray::from(before.region(r)?));
                e.set("after", &PackedByteArray::from(now.region(r)?));
                entries.push(&e.to_variant());
            }
            if !entries.is_empty() {
                d.set("scatter", &entries);
            }
            if let Some(e) = &sculpt_entry {
                d.set("sculpt", e);
            }
            Ok(d)
        })();
        res.unwrap_or_else(|e| {
            godot_error!("TerrainBrush.end_stroke: {e}");
            VarDictionary::new()
        })
    }

    /// Restore a stroke snapshot from [method end_stroke]: its "before" state when `redo` is
    /// false (undo), its "after" state when true (splat paint and erased scatter instances; the
    /// touched scatter chunks are rebuilt). Returns false (with an error, changing nothing) when
    /// the snapshot does not fit the island's paint or was taken at another resolution.
    #[func]
    pub fn apply_snapshot(&mut self, snapshot: VarDictionary, redo: bool) -> bool {
        let r = self.report("apply_snapshot", |s| {
            let key = if redo { "after" } else { "before" };
            let mut isl = s.island_node()?;
            // The sculpt part, checked before anything changes and applied last.
            let sculpt = match snapshot.get("sculpt") {
                Some(v) => Some(sculpt_region(&isl, v, key)?),
                None => None,
            };
            if !snapshot.contains_key("rect") && !snapshot.contains_key("scatter") {
                if let Some(sc) = sculpt {
                    apply_sculpt_region(&mut isl, sc)?;
                    return Ok(1);
                }
            }
            let n = isl.bind().island().map_or(0, |i| i.field.resolution);
            if let Some(at) = snapshot
                .get("resolution")
                .and_then(|v| v.try_to::<i64>().ok())
            {
                if at != n as i64 {
                    return Err(format!(
                        "the snapshot was taken at resolution {at}, the island now has {n}: \
                         regenerate at {at} to undo or redo it"
                    ));
                }
            }
            // Scatter entries, all checked before anything changes.
            let mut scatter: Vec<(usize, Rect, PackedByteArray)> = Vec::new();
            if let Some(v) = snapshot.get("scatter") {
                let entries: VarArray = v.try_to().map_err(|_| "`scatter` is not an Array")?;
                for e in entries.iter_shared() {
                    let e: VarDictionary = e
                        .try_to()
                        .map_err(|_| "a `scatter` entry is not a Dictionary")?;
                    let layer = e
                        .get("layer")
                        .and_then(|v| v.try_to::<i64>().ok())
                        .and_then(|l| usize::try_from(l).ok())
                        .ok_or("a `scatter` entry has no valid `layer`")?;
                    let r = rect_of(&e)?;
                    let bytes: PackedByteArray = e
                        .get(key)
                        .and_then(|v| v.try_to().ok())
                        .ok_or(format!("a `scatter` entry has no `{key}`"))?;
                    if r.x0 + r.w > n || r.z0 + r.h > n || bytes.len() != r.w * r.h {
                        return Err(format!(
                            "a `scatter` entry needs {} bytes inside the {n}² map",
                            r.w * r.h
                        ));
                    }
                    scatter.push((layer, r, bytes));
                }
            }
            if snapshot.contains_key("rect") || scatter.is_empty() {
                let r = rect_of(&snapshot)?;
                let bytes: PackedByteArray = snapshot
                    .get(key)
                    .and_then(|v| v.try_to().ok())
                    .ok_or(format!("snapshot has no `{key}`"))?;
                with_paint(&mut isl, true, |p, _| {
                    p.set_region(r, bytes.as_slice()).map(|_| ((), r))
                })?;
            }
            for (layer, r, bytes) in scatter {
                let mut res = isl.bind_mut().paint_resource();
                let changed = res
                    .bind_mut()
                    .erase_mask_mut(layer, n)
                    .set_region(r, bytes.as_slice())?;
                if !changed.is_empty() {
                    isl.bind_mut().scatter_erase_changed(layer, changed);
                }
            }
            if let Some(sc) = sculpt {
                apply_sculpt_region(&mut isl, sc)?;
            }
            Ok(1)
        });
        r == 1
    }

    /// First hit of a ray (global origin and direction) with the island's terrain, found by
    /// ray-marching the heightfield (no physics), as a global position; null when it misses or
    /// there is no island.
    #[func]
    pub fn raycast(&self, origin: Vector3, direction: Vector3) -> Variant {
        let Ok(isl) = self.island_node() else {
            return Variant::nil();
        };
        let xf = isl.get_global_transform();
        let o = xf.affine_inverse() * origin;
        let d = xf.basis.inverse() * direction;
        let b = isl.bind();
        let Some(island) = b.island() else {
            return Variant::nil();
        };
        let far = island.field.world_size * 4.0 + (o.length());
        match paint::ray_march(&island.field, [o.x, o.y, o.z], [d.x, d.y, d.z], far) {
            Some(p) => (xf * Vector3::new(p[0], p[1], p[2])).to_variant(),
            None => Variant::nil(),
        }
    }

    /// Mask weight 0..1 (height × slope masks) of the terrain under `world_position`; 0 when
    /// there is no island.
    #[func]
    pub fn get_mask_at(&self, world_position: Vector3) -> f32 {
        let Ok(isl) = self.island_node() else {
            return 0.0;
        };
        let Ok(brush) = self.brush() else { return 0.0 };
        let c = self.to_local_xz(&isl, world_position);
        let b = isl.bind();
        let Some(island) = b.island() else {
            return 0.0;
        };
        let f = &island.field;
        let h = f.height_at(c[0], c[1]);
        let n = f.normal_at(c[0], c[1]);
        brush
            .masks
            .weight(h, island_core::normals::slope_degrees(n))
    }

    /// The brush falloff (1 at the centre, 0 at the rim) at `distance / radius` for the current
    /// [member hardness].
    #[func]
    pub fn get_falloff(&self, normalized_distance: f32) -> f32 {
        paint::falloff(normalized_distance, self.hardness)
    }

    /// Show the cursor ring (radius [member radius]) on the terrain around `world_position`:
    /// green where the masks allow painting at the centre, red where they block; in
    /// [constant MODE_SKETCH_LAND] orange where the dab reaches the map's sea border, with the
    /// border's inner edge drawn as a red line (land never appears beyond it).
    #[func]
    pub fn show_cursor(&mut self, world_position: Vector3) {
        let Ok(isl) = self.island_node() else { return };
        let mask = self.get_mask_at(world_position);
        let c = self.to_local_xz(&isl, world_position);
        let xf = isl.get_global_transform();
        let pts: Vec<Vector3> = {
            let b = isl.bind();
            let Some(island) = b.island() else {
                return;
            };
            (0..=RING_SEGMENTS)
                .map(|k| {
                    let a = k as f32 / RING_SEGMENTS as f32 * std::f32::consts::TAU;
                    let (x, z) = (c[0] + self.radius * a.cos(), c[1] + self.radius * a.sin());
                    xf * Vector3::new(x, island.field.height_at(x, z) + RING_LIFT, z)
                })
                .collect()
        };
        // Sketch land near the sea border: the ring turns orange and the border's inner edge
        // is drawn (on the sea surface), where land stops.
        let reach = (self.mode == Self::MODE_SKETCH_LAND)
            .then(|| self.sea_border_reach(&isl, &[c], self.radius))
            .flatten();
        let border = match reach {
            Some((_, _, reach)) => {
                let b = isl.bind();
                let window = self.radius * 3.0 + reach;
                b.island()
                    .map(|island| Self::border_lines(&isl, island, c, window))
                    .unwrap_or_default()
            }
            None => Vec::new(),
        };
        let (mut inst, mut mesh) = self.cursor_nodes();
        let color = if !border.is_empty() {
            Color::from_rgb(1.0, 0.55, 0.1)
        } else if mask > 0.0 {
            Color::from_rgb(0.2, 1.0, 0.3)
        } else {
            Color::from_rgb(1.0, 0.2, 0.2)
        };
        mesh.clear_surfaces();
        mesh.surface_begin(PrimitiveType::LINE_STRIP);
        for p in pts {
            mesh.surface_set_color(color);
            mesh.surface_add_vertex(p);
        }
        mesh.surface_end();
        for line in border {
            mesh.surface_begin(PrimitiveType::LINE_STRIP);
            for p in line {
                mesh.surface_set_color(Color::from_rgb(1.0, 0.15, 0.1));
                mesh.surface_add_vertex(p);
            }
            mesh.surface_end();
        }
        inst.set_visible(true);
    }

    /// How far, in metres, a [constant MODE_SKETCH_LAND] dab of [member radius] at
    /// `world_position` reaches into the island's sea border, the ring along the map's edge
    /// where land never appears (the coast shelf plus two samples wide): 0 when the dab stays
    /// inside the land area (or the island is not generated). Sketching there still works for
    /// the part inside, and warns once per stroke.
    #[func]
    pub fn get_sea_border_overlap(&self, world_position: Vector3) -> f32 {
        let Ok(isl) = self.island_node() else {
            return 0.0;
        };
        let c = self.to_local_xz(&isl, world_position);
        self.sea_border_reach(&isl, &[c], self.radius)
            .map_or(0.0, |(_, _, r)| r)
    }

    /// Hide the cursor ring.
    #[func]
    pub fn hide_cursor(&mut self) {
        if let Some((inst, _)) = self.cursor.as_mut() {
            if inst.is_instance_valid() {
                inst.set_visible(false);
            }
        }
    }

    /// Set [member flatten_height] to the terrain height under `world_position` (only x and z
    /// matter) and return it; NaN (with an error) when there is no generated island or the
    /// position is not finite.
    #[func]
    pub fn pick_flatten_height(&mut self, world_position: Vector3) -> f32 {
        let r = (|| -> BrushResult<f32> {
            if !world_position.is_finite() {
                return Err(format!("the position must be finite, got {world_position}"));
            }
            let isl = self.island_node()?;
            let c = self.to_local_xz(&isl, world_position);
            let b = isl.bind();
            let island = b.island().ok_or("the island has not been generated yet")?;
            Ok(island.field.height_at(c[0], c[1]))
        })();
        match r {
            Ok(h) => {
                self.flatten_height = h;
                h
            }
            Err(e) => {
                godot_error!("TerrainBrush.pick_flatten_height: {e}");
                f32::NAN
            }
        }
    }

    /// The island this brush paints (its parent or [member island]), or null.
    #[func]
    pub fn get_island_node(&self) -> Option<Gd<ProceduralIsland>> {
        self.island_node().ok()
    }
}

/// A `Rect` as a `Rect2i`.
fn rect2i(r: Rect) -> Rect2i {
    Rect2i::from_components(r.x0 as i32, r.z0 as i32, r.w as i32, r.h as i32)
}

/// The `rect` of a snapshot (or scatter entry), non-negative.
fn rect_of(d: &VarDictionary) -> BrushResult<Rect> {
    let rect: Rect2i = d
        .get("rect")
        .and_then(|v| v.try_to().ok())
        .ok_or("snapshot has no `rect`")?;
    if rect.position.x < 0 || rect.position.y < 0 || rect.size.x < 0 || rect.size.y < 0 {
        return Err("negative snapshot rect".into());
    }
    Ok(Rect {
        x0: rect.position.x as usize,
        z0: rect.position.y as usize,
        w: rect.size.x as usize,
        h: rect.size.y as usize,
    })
}

impl TerrainBrush {
    /// [method paint_at] at island-local `c` (x, z metres).
    fn dab_local(&mut self, c: [f32; 2]) -> BrushResult<i64> {
        let mut isl = self.island_node()?;
        if let Some(m) = self.sculpt_mode() {
            let r = self.sculpt_dabs(&mut isl, &[c], m)?;
            if self.stroke_before.is_some() {
                self.stroke_carry = Some(0.0);
            }
            return Ok(r);
        }
        let brush = self.brush()?;
        if let Some(erase) = self.scatter_mode() {
            let r = self.scatter_dabs(&mut isl, &[c], brush.radius, &brush.masks, erase)?;
            if self.stroke_before.is_some() {
                self.stroke_carry = Some(0.0);
            }
            return Ok(r);
        }
        let carry_active = self.stroke_before.is_some();
        let (changed, rect) = with_paint(&mut isl, true, |layer, surf| {
            paint::stamp(layer, surf, &brush, c).map(|ch| (ch.texels, ch.rect))
        })?;
        if carry_active {
            self.stroke_carry = Some(0.0);
        }
        self.note(rect);
        Ok(changed as i64)
    }

    /// [method paint_stroke] between island-local `a` and `b` (x, z metres).
    fn segment_local(&mut self, a: [f32; 2], b: [f32; 2]) -> BrushResult<i64> {
        let mut isl = self.island_node()?;
        let brush = self.brush()?;
        let carry = if self.stroke_before.is_some() {
            self.stroke_carry
        } else {
            None
        };
        if let Some(m) = self.sculpt_mode() {
            let (pts, carry) = paint::stroke_points(a, b, brush.step(), carry);
            let r = self.sculpt_dabs(&mut isl, &pts, m)?;
            if self.stroke_before.is_some() {
                self.stroke_carry = Some(carry);
            }
            return Ok(r);
        }
        if let Some(erase) = self.scatter_mode() {
            let (pts, carry) = paint::stroke_points(a, b, brush.step(), carry);
            let r = self.scatter_dabs(&mut isl, &pts, brush.radius, &brush.masks, erase)?;
            if self.stroke_before.is_some() {
                self.stroke_carry = Some(carry);
            }
            return Ok(r);
        }
        let ((changed, carry), rect) = with_paint(&mut isl, true, |layer, surf| {
            paint::stroke(layer, surf, &brush, a, b, carry).map(|(ch, c)| ((ch.texels, c), ch.rect))
        })?;
        if self.stroke_before.is_some() {
            self.stroke_carry = Some(carry);
        }
        self.note(rect);
        Ok(changed as i64)
    }

    /// The brush's settings as a network edit's brush (see [`island_core::sync`]).
    pub fn edit_brush(&self) -> BrushResult<EditBrush> {
        let u8_of = |v: i32, what: &str| {
            u8::try_from(v).map_err(|_| format!("{what} {v} does not fit an edit command"))
        };
        let b = EditBrush {
            mode: u8_of(self.mode, "mode")?,
            layer: u8_of(self.layer, "layer")?,
            scatter_layer: u16::try_from(self.scatter_layer)
                .map_err(|_| format!("scatter_layer {} is out of range", self.scatter_layer))?,
            radius: self.radius,
            strength: self.strength,
            hardness: self.hardness,
            spacing: self.spacing,
            sculpt_height: self.sculpt_height,
            flatten_height: self.flatten_height,
            height_mask: [self.min_height, self.max_height, self.height_fade],
            slope_mask: [
                self.min_slope_degrees,
                self.max_slope_degrees,
                self.slope_fade,
            ],
        };
        b.validate().map_err(|e| e.to_string())?;
        Ok(b)
    }

    /// Take every setting from an edit's brush.
    pub fn set_edit_brush(&mut self, b: &EditBrush) {
        self.mode = b.mode as i32;
        self.layer = b.layer as i32;
        self.scatter_layer = b.scatter_layer as i32;
        self.radius = b.radius;
        self.strength = b.strength;
        self.hardness = b.hardness;
        self.spacing = b.spacing;
        self.sculpt_height = b.sculpt_height;
        self.flatten_height = b.flatten_height;
        [self.min_height, self.max_height, self.height_fade] = b.height_mask;
        [
            self.min_slope_degrees,
            self.max_slope_degrees,
            self.slope_fade,
        ] = b.slope_mask;
    }

    /// Apply one edit command with this brush (its settings are set from the command first):
    /// a stroke is one stroke from [method begin_stroke] to [method end_stroke] (a sculpt
    /// stroke regenerates the island at its end, in the background). Returns what the brush
    /// returns (changed texels or samples).
    pub fn apply_edit(&mut self, c: &EditCommand) -> BrushResult<i64> {
        c.validate().map_err(|e| e.to_string())?;
        self.set_edit_brush(&c.brush);
        match &c.action {
            EditAction::Stroke(points) => {
                if !self.begin_stroke() {
                    return Err("cannot start a stroke".into());
                }
                let mut n = 0;
                let r = (|| {
                    n += self.dab_local(points[0])?;
                    for w in points.windows(2) {
                        n += self.segment_local(w[0], w[1])?;
                    }
                    Ok(n)
                })();
                self.end_stroke();
                r
            }
            EditAction::Fill => match self.fill_by_rule() {
                -1 => Err("fill by rule failed".into()),
                n => Ok(n),
            },
            EditAction::ClearLayer => match self.clear_layer(c.brush.layer as i32) {
                -1 => Err("clear layer failed".into()),
                n => Ok(n),
            },
        }
    }

    /// `p` (global) in the frame of the brush's island, x and z (for an edit command).
    pub fn island_local_xz(&self, p: Vector3) -> BrushResult<[f32; 2]> {
        let isl = self.island_node()?;
        Ok(self.to_local_xz(&isl, p))
    }

    /// The sculpt mode, `None` in the paint and scatter modes.
    fn sculpt_mode(&self) -> Option<SculptMode> {
        Some(match self.mode {
            Self::MODE_SCULPT_RAISE => SculptMode::Raise,
            Self::MODE_SCULPT_LOWER => SculptMode::Lower,
            Self::MODE_SCULPT_SMOOTH => SculptMode::Smooth,
            Self::MODE_SCULPT_FLATTEN => SculptMode::Flatten,
            Self::MODE_SKETCH_LAND => SculptMode::SketchLand,
            Self::MODE_SKETCH_SEA => SculptMode::SketchSea,
            _ => return None,
        })
    }

    /// Sculpt dabs at the node-local `centers` into the island's sculpt layer, with the shown
    /// chunk meshes following. Inside a stroke the layer before it is kept for
    /// [method end_stroke]; a dab outside a stroke regenerates the island at once (in the
    /// background inside the tree). Returns the samples considered. Everything is checked
    /// before anything changes.
    fn sculpt_dabs(
        &mut self,
        isl: &mut Gd<ProceduralIsland>,
        centers: &[[f32; 2]],
        mode: SculptMode,
    ) -> BrushResult<i64> {
        let base = self.brush()?;
        let b = SculptBrush {
            mode,
            radius: base.radius,
            strength: match mode {
                SculptMode::Raise | SculptMode::Lower => self.sculpt_height,
                _ => base.strength,
            },
            hardness: base.hardness,
            flatten_height: self.flatten_height,
            masks: base.masks,
            preview_land_height: isl
                .bind()
                .island()
                .map_or(0.0, |i| i.params.coast.beach_height),
        };
        b.validate().map_err(|e| e.to_string())?;
        if let Some(c) = centers
            .iter()
            .find(|c| !(c[0].is_finite() && c[1].is_finite()))
        {
            return Err(format!(
                "the brush position must be finite, got ({}, {})",
                c[0], c[1]
            ));
        }
        let in_stroke = self.stroke_before.is_some();
        if mode == SculptMode::SketchLand && !(in_stroke && self.border_warned) {
            if let Some((world, margin, reach)) = self.sea_border_reach(isl, centers, b.radius) {
                // Once per stroke (every call outside one): the dabs still go in (the part
                // inside the land area makes land), but nothing appears in the ring.
                self.border_warned = in_stroke;
                godot_warn!(
                    "TerrainBrush: sketch land reaches {reach:.1} m into the map's sea border, \
                     where no land appears: the outer {margin:.1} m of the {world:.0} m map (the \
                     coast shelf plus two samples) always stays sea. Sketch further in, or make \
                     world_size larger"
                );
            }
        }
        let rect = {
            let mut ib = isl.bind_mut();
            let (n, world) = ib
                .island()
                .map(|i| (i.field.resolution, i.field.world_size))
                .ok_or("the island has not been generated yet")?;
            let mut res: Gd<SplatPaint> = ib.paint_resource();
            if in_stroke && self.stroke_sculpt.is_none() {
                let before = StrokeBefore::start(res.bind().sculpt(), n, world);
                self.stroke_sculpt = Some((before, Rect::default()));
                ib.sculpt_stroke_started();
            }
            let mut pb = res.bind_mut();
            let layer = pb.sculpt_mut(n, world)?;
            let before = self.stroke_sculpt.as_mut().filter(|_| in_stroke);
            let ((), rect) = ib.edit_shown_heights(|field| {
                let mut r = Rect::default();
                let mut before = before;
                for &c in centers {
                    if let Some((sb, _)) = before.as_mut() {
                        sb.keep(layer, paint::disc_rect(field, c, b.radius));
                    }
                    r = r.union(&sculpt::stamp(layer, field, &b, c).map_err(|e| e.to_string())?);
                }
                Ok(((), r))
            })?;
            rect
        };
        if let Some(s) = self.stroke_sculpt.as_mut().filter(|_| in_stroke) {
            s.1 = s.1.union(&rect);
        } else if !rect.is_empty() {
            let mut ib = isl.bind_mut();
            ib.sculpt_colliders(rect);
            ib.sculpt_changed();
        }
        Ok((rect.w * rect.h) as i64)
    }

    /// The `sculpt` entry of a stroke's snapshot (see [method end_stroke]), after giving the
    /// touched colliders the shown heights and starting the island's regeneration.
    fn end_sculpt_stroke(
        &mut self,
        before: StrokeBefore,
        rect: Rect,
    ) -> BrushResult<VarDictionary> {
        let mut isl = self.island_node()?;
        let paint = isl
            .bind()
            .splat_paint_ref()
            .cloned()
            .ok_or("the island has no sculpt layer any more")?;
        let pb = paint.bind();
        let now = pb
            .sculpt()
            .ok_or("the island has no sculpt layer any more")?;
        let (n, world) = (now.resolution(), now.world_size());
        // The whole layer when the first dab moved it to the island's grid.
        let region = before.region(now, rect).map_err(|e| e.to_string());
        let (r, before_bytes) = match region {
            Ok(v) => v,
            Err(e) => {
                drop(pb);
                // The edits stay and the island still regenerates with them.
                let mut ib = isl.bind_mut();
                ib.sculpt_colliders(rect);
                ib.sculpt_changed();
                return Err(e);
            }
        };
        let mut e = VarDictionary::new();
        e.set("rect", rect2i(r));
        e.set("resolution", n as i64);
        e.set("world_size", world);
        e.set("before", &PackedByteArray::from(before_bytes));
        e.set(
            "after",
            &PackedByteArray::from(now.region(r).map_err(|e| e.to_string())?),
        );
        drop(pb);
        {
            let mut ib = isl.bind_mut();
            ib.sculpt_colliders(rect);
            ib.sculpt_changed();
        }
        Ok(e)
    }

    /// `Some(true)` in [constant MODE_SCATTER_ERASE], `Some(false)` in
    /// [constant MODE_SCATTER_RESTORE], `None` in the splat modes.
    fn scatter_mode(&self) -> Option<bool> {
        match self.mode {
            Self::MODE_SCATTER_ERASE => Some(true),
            Self::MODE_SCATTER_RESTORE => Some(false),
            _ => None,
        }
    }

    /// Erase (or restore) scatter layer [member scatter_layer] in discs of `radius` around the
    /// node-local `centers`, within `masks`; rebuilds the touched chunks. Returns the samples
    /// whose flag changed.
    fn scatter_dabs(
        &mut self,
        isl: &mut Gd<ProceduralIsland>,
        centers: &[[f32; 2]],
        radius: f32,
        masks: &Masks,
        erase: bool,
    ) -> BrushResult<i64> {
        let layer = usize::try_from(self.scatter_layer)
            .map_err(|_| format!("scatter_layer must be >= 0, got {}", self.scatter_layer))?;
        let count = isl.bind().scatter_layer_count();
        if layer >= count {
            return Err(format!(
                "scatter_layer {layer} is out of range: the island has {count} scatter layers"
            ));
        }
        let (changed, rect) = {
            let mut b = isl.bind_mut();
            if b.island().is_none() {
                return Err("the island has not been generated yet".into());
            }
            let mut res: Gd<SplatPaint> = b.paint_resource();
            let island = b.island().expect("checked above");
            let n = island.field.resolution;
            let mut pb = res.bind_mut();
            if self.stroke_before.is_some() && !self.stroke_scatter.iter().any(|e| e.0 == layer) {
                let before = pb.erase_mask_for(layer, n);
                self.stroke_scatter.push((layer, before, Rect::default()));
            }
            let m = pb.erase_mask_mut(layer, n);
            let mut total = (0usize, Rect::default());
            for &c in centers {
                let (k, r) = m.paint_masked(&island.field, c, radius, masks, erase);
                total = (total.0 + k, total.1.union(&r));
            }
            total
        };
        if !rect.is_empty() {
            isl.bind_mut().scatter_erase_changed(layer, rect);
            if let Some(e) = self.stroke_scatter.iter_mut().find(|e| e.0 == layer) {
                e.2 = e.2.union(&rect);
            }
        }
        Ok(changed as i64)
    }

    /// `(world_size, border margin, reach)` when a disc of `radius` around one of the
    /// node-local `centers` reaches `reach` metres into the island's sea border (see
    /// [`sculpt::sea_border_overlap`]); None when every disc stays inside the land area or the
    /// island has not been generated.
    fn sea_border_reach(
        &self,
        isl: &Gd<ProceduralIsland>,
        centers: &[[f32; 2]],
        radius: f32,
    ) -> Option<(f32, f32, f32)> {
        let b = isl.bind();
        let island = b.island()?;
        let world = island.field.world_size;
        let margin = island_core::params::border_margin(&island.params);
        let reach = centers
            .iter()
            .map(|&c| sculpt::sea_border_overlap(world, margin, c, radius))
            .fold(0.0f32, f32::max);
        (reach > 0.0).then_some((world, margin, reach))
    }

    /// The inner edge of the sea border near the node-local `c` (the sides of the square within
    /// `window` metres of it), as polylines over the terrain or the sea surface, in world
    /// coordinates.
    fn border_lines(
        isl: &Gd<ProceduralIsland>,
        island: &island_core::Island,
        c: [f32; 2],
        window: f32,
    ) -> Vec<Vec<Vector3>> {
        let world = island.field.world_size;
        let inner = world * 0.5 - island_core::params::border_margin(&island.params);
        let xf = isl.get_global_transform();
        let lift = |x: f32, z: f32| {
            let h = island.field.height_at(x, z).max(0.0) + RING_LIFT;
            xf * Vector3::new(x, h, z)
        };
        let mut lines = Vec::new();
        if inner <= 0.0 {
            return lines;
        }
        // Each side: fixed coordinate (axis 0: x = ±inner, else z = ±inner), running along the
        // other from -inner to inner.
        for (axis, side) in [(0, -1.0f32), (0, 1.0), (1, -1.0), (1, 1.0)] {
            let (fixed, along) = if axis == 0 {
                (c[0], c[1])
            } else {
                (c[1], c[0])
            };
            if (fixed - side * inner).abs() > window {
                continue;
            }
            let (a, b) = ((along - window).max(-inner), (along + window).min(inner));
            if a >= b {
                continue;
            }
            let steps = RING_SEGMENTS;
            let pts = (0..=steps)
                .map(|k| {
                    let t = a + (b - a) * k as f32 / steps as f32;
                    if axis == 0 {
                        lift(side * inner, t)
                    } else {
                        lift(t, side * inner)
                    }
                })
                .collect();
            lines.push(pts);
        }
        lines
    }

    fn brush(&self) -> BrushResult<Brush> {
        let layer = usize::try_from(self.layer)
            .map_err(|_| format!("layer must be 0..7, got {}", self.layer))?;
        let mode = if self.scatter_mode().is_some() || self.sculpt_mode().is_some() {
            // The scatter and sculpt modes use the brush's radius, spacing and masks here.
            Mode::Paint
        } else {
            Mode::from_index(self.mode as i64)
                .ok_or(format!("mode must be 0..10, got {}", self.mode))?
        };
        let b = Brush {
            layer,
            mode,
            radius: self.radius,
            strength: self.strength,
            hardness: self.hardness,
            spacing: self.spacing,
            masks: Masks {
                min_height: self.min_height,
                max_height: self.max_height,
                height_fade: self.height_fade,
                min_slope: self.min_slope_degrees,
                max_slope: self.max_slope_degrees,
                slope_fade: self.slope_fade,
            },
        };
        b.validate().map_err(|e| e.to_string())?;
        Ok(b)
    }

    fn island_node(&self) -> BrushResult<Gd<ProceduralIsland>> {
        let node = if self.island.is_empty() {
            self.base().get_parent()
        } else {
            self.base().get_node_or_null(&self.island)
        };
        node.ok_or_else(|| {
            "no island: set `island` or make the brush a child of a ProceduralIsland".to_string()
        })?
        .try_cast::<ProceduralIsland>()
        .map_err(|_| {
            "no island: the `island` node (or the parent) is not a ProceduralIsland".to_string()
        })
    }

    fn to_local_xz(&self, isl: &Gd<ProceduralIsland>, p: Vector3) -> [f32; 2] {
        let l = if isl.is_inside_tree() {
            isl.to_local(p)
        } else {
            isl.get_transform().affine_inverse() * p
        };
        [l.x, l.z]
    }

    fn note(&mut self, rect: Rect) {
        if self.stroke_before.is_some() {
            self.stroke_rect = self.stroke_rect.union(&rect);
        }
    }

    fn report(&mut self, what: &str, f: impl FnOnce(&mut Self) -> BrushResult<i64>) -> i64 {
        match f(self) {
            Ok(v) => v,
            Err(e) => {
                godot_error!("TerrainBrush.{what}: {e}");
                -1
            }
        }
    }

    fn cursor_nodes(&mut self) -> (Gd<MeshInstance3D>, Gd<ImmediateMesh>) {
        if let Some((i, m)) = &self.cursor {
            if i.is_instance_valid() {
                return (i.clone(), m.clone());
            }
        }
        let mut inst = MeshInstance3D::new_alloc();
        inst.set_name("BrushCursor");
        let mesh = ImmediateMesh::new_gd();
        inst.set_mesh(&mesh);
        let mut mat = StandardMaterial3D::new_gd();
        mat.set_shading_mode(ShadingMode::UNSHADED);
        mat.set_flag(MatFlags::ALBEDO_FROM_VERTEX_COLOR, true);
        mat.set_flag(MatFlags::DISABLE_DEPTH_TEST, true);
        mat.set_transparency(Transparency::DISABLED);
        inst.set_material_override(&mat);
        inst.set_as_top_level(true);
        inst.set_cast_shadows_setting(
            godot::classes::geometry_instance_3d::ShadowCastingSetting::OFF,
        );
        self.base_mut()
            .add_child_ex(&inst)
            .internal(InternalMode::BACK)
            .done();
        self.cursor = Some((inst.clone(), mesh.clone()));
        (inst, mesh)
    }
}

/// The sculpt part of a snapshot, checked against the island's sculpt layer: its rectangle and
/// the bytes of `key` ("before" or "after").
fn sculpt_region(
    isl: &Gd<ProceduralIsland>,
    v: Variant,
    key: &str,
) -> BrushResult<(Rect, PackedByteArray)> {
    let e: VarDictionary = v.try_to().map_err(|_| "`sculpt` is not a Dictionary")?;
    let r = rect_of(&e)?;
    let n = e
        .get("resolution")
        .and_then(|v| v.try_to::<i64>().ok())
        .ok_or("`sculpt` has no `resolution`")?;
    let world = e
        .get("world_size")
        .and_then(|v| v.try_to::<f32>().ok())
        .ok_or("`sculpt` has no `world_size`")?;
    let bytes: PackedByteArray = e
        .get(key)
        .and_then(|v| v.try_to().ok())
        .ok_or(format!("`sculpt` has no `{key}`"))?;
    let b = isl.bind();
    let paint = b.splat_paint_ref().map(|p| p.bind());
    let layer = paint.as_ref().and_then(|p| p.sculpt());
    match layer {
        Some(l) if l.fits(n as usize, world) => {}
        Some(l) => {
            return Err(format!(
                "the snapshot was taken on a {n}² sculpt layer over {world} m, the island's is \
                 {}² over {} m",
                l.resolution(),
                l.world_size()
            ))
        }
        None => return Err("the island has no sculpt layer".into()),
    }
    if r.x0 + r.w > n as usize
        || r.z0 + r.h > n as usize
        || bytes.len() != r.w * r.h * sculpt::REGION_BYTES
    {
        return Err(format!(
            "`sculpt` needs {} bytes inside the {n}² layer",
            r.w * r.h * sculpt::REGION_BYTES
        ));
    }
    Ok((r, bytes))
}

/// Put a checked [`sculpt_region`] into the island's sculpt layer and regenerate.
fn apply_sculpt_region(
    isl: &mut Gd<ProceduralIsland>,
    (r, bytes): (Rect, PackedByteArray),
) -> BrushResult<()> {
    let mut ib = isl.bind_mut();
    let mut res = ib.paint_resource();
    {
        let mut pb = res.bind_mut();
        let (n, world) = pb
            .sculpt()
            .map(|l| (l.resolution(), l.world_size()))
            .ok_or("the island has no sculpt layer")?;
        pb.sculpt_mut(n, world)?
            .set_region(r, bytes.as_slice())
            .map_err(|e| e.to_string())?;
    }
    ib.sculpt_changed();
    Ok(())
}

/// Run `f` on the island's paint at the island's resolution and its surface. When `mutates`,
/// `f` edits the paint itself (created, or moved to the island's resolution, when needed), which
/// is then marked changed and the splat maps updated in the rectangle `f` returns; otherwise `f`
/// reads a copy of what the island shows (the painted data is not touched). Returns `f`'s value
/// and rectangle.
fn with_paint<T>(
    isl: &mut Gd<ProceduralIsland>,
    mutates: bool,
    f: impl FnOnce(&mut PaintLayer, &Surface) -> Result<(T, Rect), paint::PaintError>,
) -> BrushResult<(T, Rect)> {
    let mut b = isl.bind_mut();
    if b.island().is_none() {
        return Err("the island has not been generated yet".into());
    }
    let mut res: Gd<SplatPaint> = b.paint_resource();
    let (out, rect) = {
        let island = b.island().expect("checked above");
        let n = island.field.resolution;
        let surf = Surface {
            field: &island.field,
            base: island.base_splat(),
        };
        let mut pb = res.bind_mut();
        if mutates {
            let layer = pb.layer_mut(n);
            let r = f(layer, &surf).map_err(|e| e.to_string())?;
            pb.touched();
            r
        } else {
            pb.prepare_view(n);
            let mut copy = pb
                .layer_for(n)
                .cloned()
                .unwrap_or_else(|| PaintLayer::new(n));
            f(&mut copy, &surf).map_err(|e| e.to_string())?
        }
    };
    if mutates && !rect.is_empty() {
        b.update_splat_maps(Some(rect));
    }
    Ok((out, rect))
}

// The `layer` enum and the LAYER_* constants name every layer of the core (and the shader).
const _: () = assert!(TerrainBrush::LAYER_MEADOW as usize + 1 == LAYERS);
