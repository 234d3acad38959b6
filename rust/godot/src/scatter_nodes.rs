//! The island's scatter instances: one internal `MultiMeshInstance3D` per layer per chunk
//! (pooled, reused between regenerates, never saved), filled from
//! `island_core::scatter::place_all` (placement runs on the rayon pool over the island's plain
//! data; the main thread only builds the Godot objects).
//!
//! The node hands over its `scatter_layers` as [`LayerSpec`]s; a spec that differs from the one
//! the layer was placed with (a property changed, see [`ScatterNodes::sync`]) re-places that
//! layer alone.

use crate::scatter_layer::ScatterLayer;
use godot::classes::base_material_3d::Flags;
use godot::classes::geometry_instance_3d::VisibilityRangeFadeMode;
use godot::classes::mesh::{ArrayType, PrimitiveType};
use godot::classes::multi_mesh::TransformFormat;
use godot::classes::node::InternalMode;
use godot::classes::{ArrayMesh, Mesh, MultiMesh, MultiMeshInstance3D, Node3D, StandardMaterial3D};
use godot::prelude::*;
use island_core::paint::Rect;
use island_core::scatter::{self as core, EraseMask, Placement, ScatterInput};
use island_core::scatter_meshes::MeshKind;
use island_core::Island;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{channel, Receiver, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What one layer is placed and drawn with (compared to detect changes).
#[derive(Clone, Debug, PartialEq)]
pub struct LayerSpec {
    pub core: core::ScatterLayer,
    pub mesh: Option<Gd<Mesh>>,
    pub visibility: [f32; 4],
}

/// A layer of `scatter_layers`: null (`Ok(None)`, nothing placed), valid, or invalid (the
/// reason).
pub type SpecResult = Result<Option<LayerSpec>, String>;

/// The specs of `layers`.
pub fn specs(layers: &Array<Option<Gd<ScatterLayer>>>) -> Vec<SpecResult> {
    layers
        .iter_shared()
        .enumerate()
        .map(|(i, l)| {
            let Some(l) = l else { return Ok(None) };
            let b = l.bind();
            match b.to_core() {
                Ok(core) => Ok(Some(LayerSpec {
                    core,
                    mesh: b.custom_mesh(),
                    visibility: b.visibility(),
                })),
                Err(e) => Err(format!("invalid scatter layer {i}: {e}")),
            }
        })
        .collect()
}

#[derive(Default)]
struct LayerState {
    spec: Option<SpecResult>,
    placement: Option<Placement>,
    nodes: Vec<Option<Gd<MultiMeshInstance3D>>>,
}

/// What a layer's MultiMeshes draw.
struct Look {
    mesh: Gd<Mesh>,
    visibility: [f32; 4],
}

impl LayerState {
    /// Hide every node of the layer.
    fn hide_all(&mut self) {
        for node in self.nodes.iter_mut().flatten() {
            if node.is_instance_valid() {
                node.set_visible(false);
            }
        }
    }

    /// Build (or update) the MultiMesh of chunk `c` (index `cz · chunks_per_side + cx`) from the
    /// layer's placement.
    fn build_chunk(&mut self, parent: &mut Gd<Node3D>, i: usize, c: usize, look: &Look) {
        let Some(p) = &self.placement else { return };
        if c >= p.chunks.len() || c >= self.nodes.len() {
            return;
        }
        let (cx, cz) = (c % p.chunks_per_side, c / p.chunks_per_side);
        let n = p.chunks[c].len();
        let slot = &mut self.nodes[c];
        if slot.as_ref().is_some_and(|node| !node.is_instance_valid()) {
            *slot = None;
        }
        if n == 0 {
            if let Some(node) = slot.as_mut() {
                node.set_visible(false);
                if let Some(mut mm) = node.get_multimesh() {
                    mm.set_instance_count(0);
                }
            }
            return;
        }
        let node = slot.get_or_insert_with(|| {
            let mut mmi = MultiMeshInstance3D::new_alloc();
            mmi.set_name(&format!("Scatter_{i}_{cx}_{cz}"));
            let mut mm = MultiMesh::new_gd();
            mm.set_transform_format(TransformFormat::TRANSFORM_3D);
            mmi.set_multimesh(&mm);
            parent
                .add_child_ex(&mmi)
                .internal(InternalMode::BACK)
                .done();
            mmi
        });
        let vis = look.visibility;
        node.set_name(&format!("Scatter_{i}_{cx}_{cz}"));
        node.set_visible(true);
        node.set_visibility_range_begin(vis[0]);
        node.set_visibility_range_begin_margin(vis[1]);
        node.set_visibility_range_end(vis[2]);
        node.set_visibility_range_end_margin(vis[3]);
        node.set_visibility_range_fade_mode(if vis[3] > 0.0 || vis[1] > 0.0 {
            VisibilityRangeFadeMode::SELF
        } else {
            VisibilityRangeFadeMode::DISABLED
        });
        let mut mm = node.get_multimesh().unwrap_or_else(|| {
            let mut mm = MultiMesh::new_gd();
            mm.set_transform_format(TransformFormat::TRANSFORM_3D);
            node.set_multimesh(&mm);
            mm
        });
        mm.set_instance_count(0);
        mm.set_mesh(&look.mesh);
        mm.set_instance_count(n as i32);
        mm.set_buffer(&PackedFloat32Array::from(p.chunk_buffer(cx, cz)));
    }
}

/// The scatter nodes of one island (see the module doc).
#[derive(Default)]
pub struct ScatterNodes {
    layers: Vec<LayerState>,
    builtin: Vec<Option<Gd<ArrayMesh>>>,
    /// Milliseconds of the last placement (rayon) and node build (main thread).
    pub last_place_ms: f64,
    pub last_build_ms: f64,
    /// Seed and chunk size of the last full placement (used by [`Self::sync`]).
    seed: u64,
    chunk_size: usize,
    /// A placement running on a thread after `regenerate_async`, then its nodes being built.
    pending: Option<Pending>,
}

/// Placement result of the background thread: placements of the valid layers (in order) and
/// the milliseconds it took.
type Placed = (Result<Vec<Placement>, String>, f64);

/// A background placement and the build of its nodes (see [`ScatterNodes::start`]).
struct Pending {
    /// Generation serial it belongs to (a newer generation drops it).
    serial: u64,
    specs: Vec<SpecResult>,
    rx: Option<Receiver<Placed>>,
    placements: Vec<Option<Placement>>,
    /// Next layer whose nodes to build (once the placements arrived).
    next: usize,
    place_ms: f64,
    build_ms: f64,
}

/// What [`ScatterNodes::continue_build`] did.
pub enum Progress {
    /// Nothing pending.
    Idle,
    /// Still placing or building.
    Working,
    /// Every layer is in place.
    Finished,
}

impl ScatterNodes {
    /// Place every layer on `island` and build the nodes; errors of invalid layers are reported
    /// (those layers stay empty). Returns the per-layer counts.
    pub fn place_all(
        &mut self,
        parent: &mut Gd<Node3D>,
        island: &Island,
        seed: u64,
        chunk_size: usize,
        specs: Vec<SpecResult>,
        erase: Vec<Option<EraseMask>>,
    ) -> Vec<i64> {
        self.seed = seed;
        self.chunk_size = chunk_size;
        let valid: Vec<(usize, core::ScatterLayer)> = specs
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match s {
                Ok(Some(s)) => Some((i, s.core.clone())),
                _ => None,
            })
            .collect();
        let t = Instant::now();
        let cores: Vec<core::ScatterLayer> = valid.iter().map(|v| v.1.clone()).collect();
        let masks: Vec<Option<EraseMask>> = valid
            .iter()
            .map(|(i, _)| erase.get(*i).cloned().flatten())
            .collect();
        let placed = match with_input(island, |input| {
            place_all(input, &cores, &masks, seed, chunk_size)
        }) {
            Ok(p) => p,
            Err(e) => {
                godot_error!("ProceduralIsland: scatter: {e}");
                Vec::new()
            }
        };
        self.last_place_ms = t.elapsed().as_secs_f64() * 1e3;
        let mut placements: Vec<Option<Placement>> = (0..specs.len()).map(|_| None).collect();
        for ((i, _), p) in valid.iter().zip(placed) {
            placements[*i] = Some(p);
        }
        let t = Instant::now();
        self.truncate(specs.len());
        for (i, (spec, p)) in specs.into_iter().zip(placements).enumerate() {
            if let Err(e) = &spec {
                godot_error!("ProceduralIsland: {e}");
            }
            self.install(parent, i, spec, p);
        }
        self.last_build_ms = t.elapsed().as_secs_f64() * 1e3;
        self.counts()
    }

    /// Start placing every layer of `island` on a thread (plain data only: the island, the core
    /// layers); the nodes are then built by [`Self::continue_build`] within the frame budget.
    /// `serial` is the generation's; [`Self::continue_build`] drops the work when it changes.
    pub fn start(
        &mut self,
        island: Arc<Island>,
        seed: u64,
        chunk_size: usize,
        specs: Vec<SpecResult>,
        erase: Vec<Option<EraseMask>>,
        serial: u64,
    ) {
        self.seed = seed;
        self.chunk_size = chunk_size;
        let (cores, masks): (Vec<core::ScatterLayer>, Vec<Option<EraseMask>>) = specs
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match s {
                Ok(Some(s)) => Some((s.core.clone(), erase.get(i).cloned().flatten())),
                _ => None,
            })
            .unzip();
        let (tx, rx) = channel::<Placed>();
        let spawned = std::thread::Builder::new()
            .name("procedural_island_scatter".into())
            .spawn(move || {
                let t = Instant::now();
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    with_input(&island, |input| {
                        place_all(input, &cores, &masks, seed, chunk_size)
                    })
                }))
                .unwrap_or_else(|_| Err("internal error while placing".into()));
                let _ = tx.send((r, t.elapsed().as_secs_f64() * 1e3));
            });
        let rx = match spawned {
            Ok(h) => {
                crate::worker::track(Arc::new(AtomicBool::new(false)), h);
                Some(rx)
            }
            Err(e) => {
                godot_error!("ProceduralIsland: scatter thread: {e}");
                None
            }
        };
        let n = specs.len();
        self.pending = Some(Pending {
            serial,
            specs,
            rx,
            placements: (0..n).map(|_| None).collect(),
            next: 0,
            place_ms: 0.0,
            build_ms: 0.0,
        });
    }

    /// Whether a background placement or its node build is under way.
    pub fn is_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// Drop a background placement (a newer generation replaces it).
    pub fn abort(&mut self) {
        self.pending = None;
    }

    /// Collect the background placement and build its layers' nodes for up to `budget_ms`
    /// (at least one layer per call once placed).
    pub fn continue_build(
        &mut self,
        parent: &mut Gd<Node3D>,
        serial: u64,
        budget_ms: f32,
    ) -> Progress {
        let Some(mut p) = self.pending.take() else {
            return Progress::Idle;
        };
        if p.serial != serial {
            return Progress::Idle;
        }
        if let Some(rx) = &p.rx {
            match rx.try_recv() {
                Ok((r, ms)) => {
                    p.place_ms = ms;
                    p.rx = None;
                    match r {
                        Ok(placed) => {
                            let mut it = placed.into_iter();
                            for (i, s) in p.specs.iter().enumerate() {
                                if let Ok(Some(_)) = s {
                                    p.placements[i] = it.next();
                                }
                            }
                        }
                        Err(e) => godot_error!("ProceduralIsland: scatter: {e}"),
                    }
                }
                Err(TryRecvError::Empty) => {
                    self.pending = Some(p);
                    return Progress::Working;
                }
                Err(TryRecvError::Disconnected) => p.rx = None,
            }
        }
        let budget =
            Duration::try_from_secs_f64((budget_ms.max(0.0) as f64) / 1e3).unwrap_or(Duration::MAX);
        let t = Instant::now();
        if p.next == 0 {
            self.truncate(p.specs.len());
        }
        while p.next < p.specs.len() {
            let i = p.next;
            let spec = std::mem::replace(&mut p.specs[i], Ok(None));
            if let Err(e) = &spec {
                godot_error!("ProceduralIsland: {e}");
            }
            let placement = p.placements[i].take();
            self.install(parent, i, spec, placement);
            p.next += 1;
            if t.elapsed() >= budget {
                break;
            }
        }
        p.build_ms += t.elapsed().as_secs_f64() * 1e3;
        if p.next < p.specs.len() {
            self.pending = Some(p);
            return Progress::Working;
        }
        self.last_place_ms = p.place_ms;
        self.last_build_ms = p.build_ms;
        Progress::Finished
    }

    /// Re-place the layers whose spec changed since they were placed (and drop removed ones).
    /// Whether anything changed.
    pub fn sync(
        &mut self,
        parent: &mut Gd<Node3D>,
        island: &Island,
        specs: Vec<SpecResult>,
        erase_for: impl Fn(usize) -> Option<EraseMask>,
    ) -> bool {
        let (seed, chunk_size) = (self.seed, self.chunk_size);
        let mut changed = specs.len() != self.layers.len();
        self.truncate(specs.len());
        for (i, spec) in specs.into_iter().enumerate() {
            if self.layers.get(i).and_then(|l| l.spec.as_ref()) == Some(&spec) {
                continue;
            }
            changed = true;
            let p = match &spec {
                Ok(Some(s)) => {
                    let mask = erase_for(i);
                    let r = with_input(island, |input| {
                        core::try_place(input, &s.core, mask.as_ref(), seed, chunk_size)
                    });
                    match r {
                        Ok(p) => Some(p),
                        Err(e) => {
                            godot_error!("ProceduralIsland: scatter layer {i}: {e}");
                            None
                        }
                    }
                }
                Ok(None) => None,
                Err(e) => {
                    godot_error!("ProceduralIsland: {e}");
                    None
                }
            };
            self.install(parent, i, spec, p);
        }
        changed
    }

    /// Instances per layer.
    pub fn counts(&self) -> Vec<i64> {
        self.layers
            .iter()
            .map(|l| l.placement.as_ref().map_or(0, |p| p.len() as i64))
            .collect()
    }

    /// Instances of layer `i` (0 when out of range).
    pub fn count(&self, i: usize) -> i64 {
        self.counts().get(i).copied().unwrap_or(0)
    }

    /// Node-local positions of layer `i`'s instances.
    pub fn positions(&self, i: usize) -> PackedVector3Array {
        let Some(p) = self.layers.get(i).and_then(|l| l.placement.as_ref()) else {
            return PackedVector3Array::new();
        };
        p.iter()
            .map(|inst| Vector3::new(inst.position[0], inst.position[1], inst.position[2]))
            .collect()
    }

    /// Free every node (the island's chunk count changed or the node leaves).
    pub fn free_all(&mut self) {
        self.truncate(0);
    }

    fn truncate(&mut self, n: usize) {
        while self.layers.len() > n {
            if let Some(l) = self.layers.pop() {
                free_nodes(l.nodes);
            }
        }
        while self.layers.len() < n {
            self.layers.push(LayerState::default());
        }
    }

    fn install(
        &mut self,
        parent: &mut Gd<Node3D>,
        i: usize,
        spec: SpecResult,
        placement: Option<Placement>,
    ) {
        let look = self.look(&spec);
        let layer = &mut self.layers[i];
        let chunks = placement.as_ref().map_or(0, |p| p.chunks.len());
        if layer.nodes.len() > chunks {
            free_nodes(layer.nodes.split_off(chunks));
        }
        layer.nodes.resize_with(chunks, || None);
        layer.spec = Some(spec);
        layer.placement = placement;
        match (&look, layer.placement.is_some()) {
            (Some(look), true) => {
                for c in 0..chunks {
                    layer.build_chunk(parent, i, c, look);
                }
            }
            _ => layer.hide_all(),
        }
    }

    /// Mesh and visibility range a spec draws with (`None` for a null or invalid layer).
    fn look(&mut self, spec: &SpecResult) -> Option<Look> {
        match spec {
            Ok(Some(s)) => Some(Look {
                mesh: match &s.mesh {
                    Some(m) => m.clone(),
                    None => self.builtin_mesh(s.core.mesh).upcast(),
                },
                visibility: s.visibility,
            }),
            _ => None,
        }
    }

    /// After layer `i`'s erase mask changed in `rect` (samples): re-place the chunks that
    /// rectangle can touch ([`core::chunks_to_rebuild`]) with `mask` and rebuild only their
    /// MultiMeshes. Returns the number of chunks rebuilt (0 when the layer is not placed).
    pub fn refresh_erase(
        &mut self,
        parent: &mut Gd<Node3D>,
        island: &Island,
        i: usize,
        mask: Option<&EraseMask>,
        rect: Rect,
    ) -> usize {
        if rect.is_empty() || self.pending.is_some() {
            // A background placement started before this edit reads the mask it was given; the
            // edit is picked up by the next placement of the layer.
            return 0;
        }
        let (seed, chunk_size) = (self.seed, self.chunk_size);
        let Some(spec) = self
            .layers
            .get(i)
            .and_then(|l| l.spec.clone())
            .and_then(|s| s.ok().flatten())
        else {
            return 0;
        };
        let look = self.look(&Ok(Some(spec.clone())));
        let layer = &mut self.layers[i];
        let Some(p) = layer.placement.as_mut() else {
            return 0;
        };
        let chunks = core::chunks_to_rebuild(rect, island.field.resolution, chunk_size);
        let r = with_input(island, |input| {
            p.rebuild_chunks(input, &spec.core, mask, seed, &chunks)
        });
        if let Err(e) = r {
            godot_error!("ProceduralIsland: scatter layer {i}: {e}");
            return 0;
        }
        let cps = p.chunks_per_side;
        if let Some(look) = &look {
            for &(cx, cz) in &chunks {
                layer.build_chunk(parent, i, cz * cps + cx, look);
            }
        }
        chunks.len()
    }

    /// The built-in mesh `kind` as an ArrayMesh with vertex colours (built once).
    fn builtin_mesh(&mut self, kind: MeshKind) -> Gd<ArrayMesh> {
        let k = crate::scatter_layer::mesh_index(kind) as usize;
        if self.builtin.len() <= k {
            self.builtin.resize_with(k + 1, || None);
        }
        self.builtin[k]
            .get_or_insert_with(|| builtin_array_mesh(kind))
            .clone()
    }
}

/// `f` with the island's scatter input. An imported island has no biomes: every sample then
/// counts as biome 0 (the core would reject the empty map).
fn with_input<R>(island: &Island, f: impl FnOnce(&ScatterInput) -> R) -> R {
    let input = ScatterInput::from_island(island);
    let n = island.field.resolution;
    if input.biomes.len() == n * n {
        return f(&input);
    }
    let zeros = vec![0u8; n * n];
    f(&ScatterInput {
        biomes: &zeros,
        ..input
    })
}

/// `core::place_all` with one erase mask (or none) per layer; nothing to do (and no map read)
/// without layers.
fn place_all(
    input: &ScatterInput,
    layers: &[core::ScatterLayer],
    erase: &[Option<EraseMask>],
    seed: u64,
    chunk_size: usize,
) -> Result<Vec<Placement>, String> {
    if layers.is_empty() {
        return Ok(Vec::new());
    }
    let refs: Vec<Option<&EraseMask>> = erase.iter().map(Option::as_ref).collect();
    core::place_all(input, layers, &refs, seed, chunk_size)
}

fn free_nodes(nodes: Vec<Option<Gd<MultiMeshInstance3D>>>) {
    for mut n in nodes.into_iter().flatten() {
        if n.is_instance_valid() {
            if let Some(mut p) = n.get_parent() {
                p.remove_child(&n);
            }
            n.queue_free();
        }
    }
}

/// ArrayMesh of a built-in scatter mesh, with a material drawing its vertex colours.
pub fn builtin_array_mesh(kind: MeshKind) -> Gd<ArrayMesh> {
    let m = kind.mesh();
    let mut arrays = VarArray::new();
    arrays.resize(ArrayType::MAX.ord() as usize, &Variant::nil());
    let v: PackedVector3Array = m
        .positions
        .iter()
        .map(|p| Vector3::new(p[0], p[1], p[2]))
        .collect();
    let n: PackedVector3Array = m
        .normals
        .iter()
        .map(|p| Vector3::new(p[0], p[1], p[2]))
        .collect();
    let c: PackedColorArray = m
        .colors
        .iter()
        .map(|c| Color::from_rgba(c[0], c[1], c[2], c[3]))
        .collect();
    let idx: PackedInt32Array = m.indices.iter().map(|&i| i as i32).collect();
    arrays.set(ArrayType::VERTEX.ord() as usize, &v.to_variant());
    arrays.set(ArrayType::NORMAL.ord() as usize, &n.to_variant());
    arrays.set(ArrayType::COLOR.ord() as usize, &c.to_variant());
    arrays.set(ArrayType::INDEX.ord() as usize, &idx.to_variant());
    let mut mesh = ArrayMesh::new_gd();
    mesh.add_surface_from_arrays(PrimitiveType::TRIANGLES, &arrays);
    let mut mat = StandardMaterial3D::new_gd();
    mat.set_flag(Flags::ALBEDO_FROM_VERTEX_COLOR, true);
    // The built-in meshes' colours are authored in sRGB (like a colour picker's): convert them,
    // or they render washed out.
    mat.set_flag(Flags::SRGB_VERTEX_COLOR, true);
    mat.set_roughness(0.9);
    mesh.surface_set_material(0, &mat);
    mesh.set_name(kind.name());
    mesh
}
