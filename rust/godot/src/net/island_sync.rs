//! The `IslandSync` node: the network carries seeds and edits, never terrain.
//!
//! Encoding, decoding and checking are engine-free (`island_core::sync`); this node moves those
//! bytes through the scene tree's `MultiplayerAPI` (RPCs on its own path, so any peer type
//! works: ENet, WebSocket, WebRTC) and applies the edits with an internal `TerrainBrush`.

use crate::brush::terrain_brush::TerrainBrush;
use crate::island::procedural_island::ProceduralIsland;
use crate::net::world_sync::WorldSync;
use crate::world::island_world::IslandWorld;
use godot::classes::multiplayer_peer::ConnectionStatus;
use godot::classes::node::InternalMode;
use godot::classes::{INode, MultiplayerApi, Node};
use godot::prelude::*;
use island_core::sync::{
    CellEdit, EditAction, EditBrush, EditCommand, EditLog, Fingerprint, ParamsMessage,
    WorldEditLog, WorldMessage, PROTOCOL_VERSION,
};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::time::Instant;

/// Most milliseconds one frame spends applying queued edits (a late joiner catching up).
const APPLY_BUDGET_MS: f64 = 8.0;
/// Own fingerprints kept, by edit count, for peers that report late.
const KEPT_FINGERPRINTS: usize = 64;

/// Keeps a [ProceduralIsland] (its parent, or the node at [member island]) identical on every
/// peer of the scene tree's [MultiplayerAPI] (ENet, WebSocket, WebRTC: any peer).
///
/// The authority (the server; a game without a network peer counts as one) sends each peer,
/// when the peer's `IslandSync` asks, the addon version, the island's generation parameters in
/// a compact, versioned byte form (never a heightmap: a few kB) and the edit log. The peer
/// generates the island itself, applies the log in order and answers with a fingerprint (a hash
/// of heights, water, splat and paint); the authority compares it with its own at the same edit
/// count: [signal peer_verified] or [signal peer_mismatch] (and [signal sync_failed] with an
/// error on the peer).
///
/// Edits are commands: make them with [method edit_dab], [method edit_stroke],
/// [method edit_fill] and [method edit_clear_layer], which take a [TerrainBrush]'s settings.
/// On the authority an edit enters the log and goes to every peer; on a client it is a request
/// that the authority accepts when [member allow_client_edits] is on and [member edit_filter]
/// agrees. Every peer applies the edits in the log's order, each when the island is idle (a
/// sculpt edit regenerates the island in the background first), so every peer ends
/// bit-identical. [method get_edit_log] / [method apply_edit_log] save and replay a session.
///
/// Malformed messages (wrong size, NaN, a radius over 4096 m, an unknown mode, another protocol
/// version), messages a client may not send (parameters, log entries) and more than
/// [member max_messages_per_second] from one peer are refused with an error naming the peer;
/// nothing changes.
///
/// With [member force_cpu_backend] on (the default) every peer generates on the CPU path, the
/// one that gives the same bits on every machine (the GPU path agrees only within a tolerance).
///
/// Under an [IslandWorld] (its child, or [member island] pointing at one) the world's layout
/// travels instead of an island's parameters, each edit names its cell (it applies to that
/// cell's detailed island, where the edit's position is), and every peer streams its own islands:
/// a cell's edits are applied whenever its detailed island is loaded (the world keeps them while
/// it is unloaded), and peers report one fingerprint per detailed cell, which the authority
/// compares for the cells it has loaded as well.
#[derive(GodotClass)]
#[class(base=Node)]
pub struct IslandSync {
    base: Base<Node>,
    /// The island to keep in sync; empty = the parent node.
    #[export]
    island: NodePath,
    /// Whether the authority accepts edits that clients ask for ([method edit_dab] and the
    /// others on a client). Off: client requests are refused (with [signal edit_rejected]).
    #[export]
    allow_client_edits: bool,
    /// Called on the authority for each client edit as `edit_filter.call(peer_id, edit)` with a
    /// Dictionary (`action`: `"stroke"`, `"fill"` or `"clear_layer"`, `mode`, `layer`,
    /// `scatter_layer`, `radius`, `strength`, `points`: PackedVector2Array of island-local
    /// x, z); returning false refuses the edit. Unset: every well-formed edit is accepted.
    /// Set from a script (a Callable is not an inspector property).
    #[var]
    edit_filter: Callable,
    /// Messages one client may send per second (edit requests, fingerprints); a flood beyond
    /// this is refused (burst: the same number).
    #[export(range = (1.0, 1000.0, 1.0, or_greater))]
    max_messages_per_second: f32,
    /// Generate on the CPU path on every peer (bit-identical everywhere). Off: the island's own
    /// `backend`, which the authority sends; a GPU-generated island shows as a mismatch.
    #[export]
    force_cpu_backend: bool,

    brush: Option<Gd<TerrainBrush>>,
    /// Every accepted edit, in order.
    log: EditLog,
    /// Accepted edits not applied yet.
    queue: VecDeque<EditCommand>,
    /// Edits applied to the island.
    applied: u32,
    /// Authority: the paint hash before the first edit.
    base_paint: Option<u64>,
    /// Authority: peers that got the parameters and log (they get every later edit).
    joined: HashSet<i32>,
    /// Authority: the last parameters sent, to send them again when they change.
    sent_params: Vec<u8>,
    /// Authority: own fingerprints by edit count.
    own: BTreeMap<u32, Fingerprint>,
    /// Authority: each peer's latest fingerprint not compared yet, with its backend.
    reported: HashMap<i32, (Fingerprint, String)>,
    /// Authority: the edit count each peer was last verified at.
    verified: HashMap<i32, u32>,
    /// Authority: message allowance per peer (tokens, last refill).
    buckets: HashMap<i32, (f64, Instant)>,
    /// Authority: when each flooding peer was last reported.
    flood_reported: HashMap<i32, Instant>,
    /// Payload bytes sent, per peer.
    bytes_sent: HashMap<i32, u64>,
    rejected: u64,
    /// Peer: asked the authority for the parameters.
    asked: bool,
    /// Peer: the parameters arrived and were taken.
    joined_self: bool,
    /// Peer: the edit count of the last fingerprint sent.
    reported_at: Option<u32>,
    /// Peer: the last verdict.
    verdict: Option<(bool, String)>,
    /// Frames for the parameter check (authority).
    param_check_at: Option<Instant>,
    /// The world's state when the subject is an `IslandWorld`.
    world: WorldSync,
}

#[godot_api]
impl INode for IslandSync {
    fn init(base: Base<Node>) -> Self {
        IslandSync {
            base,
            island: NodePath::default(),
            allow_client_edits: false,
            edit_filter: Callable::invalid(),
            max_messages_per_second: 30.0,
            force_cpu_backend: true,
            brush: None,
            log: EditLog::default(),
            queue: VecDeque::new(),
            applied: 0,
            base_paint: None,
            joined: HashSet::new(),
            sent_params: Vec::new(),
            own: BTreeMap::new(),
            reported: HashMap::new(),
            verified: HashMap::new(),
            buckets: HashMap::new(),
            flood_reported: HashMap::new(),
            bytes_sent: HashMap::new(),
            rejected: 0,
            asked: false,
            joined_self: false,
            reported_at: None,
            verdict: None,
            param_check_at: None,
            world: WorldSync::default(),
        }
    }

    fn ready(&mut self) {
        let mut brush = TerrainBrush::new_alloc();
        brush.set_name("SyncBrush");
        self.base_mut()
            .add_child_ex(&brush)
            .internal(InternalMode::FRONT)
            .done();
        if let Ok(isl) = self.island_node() {
            let path = brush.get_path_to(&isl);
            brush.set("island", &path.to_variant());
            if self.force_cpu_backend {
                let mut isl = isl;
                isl.set("backend", &ProceduralIsland::BACKEND_CPU.to_variant());
            }
        }
        if let Some(mut w) = self.world_node() {
            if self.force_cpu_backend {
                w.bind_mut()
                    .set_forced_backend(Some(ProceduralIsland::BACKEND_CPU));
            }
        }
        self.brush = Some(brush);
        if let Some(mut mp) = self.base().get_multiplayer() {
            let me = self.to_gd();
            mp.connect(
                "peer_disconnected",
                &Callable::from_object_method(&me, "_on_peer_disconnected"),
            );
        }
    }

    fn exit_tree(&mut self) {
        if let Ok(mut isl) = self.island_node() {
            isl.bind_mut().clear_net_params();
        }
    }

    fn process(&mut self, _delta: f64) {
        let Some(mp) = self.multiplayer() else {
            return;
        };
        let role = role(&mp);
        if self.base_paint.is_none() && role == Role::Authority {
            if let Ok(isl) = self.island_node() {
                self.base_paint = Some(isl.bind().paint_hash());
            }
        }
        match role {
            Role::Authority if self.world_node().is_some() => {
                self.apply_world();
                self.world_authority_frame();
            }
            Role::Client if self.world_node().is_some() => {
                self.world_peer_frame();
            }
            Role::Authority => {
                self.apply_queued();
                self.authority_frame();
            }
            Role::Client => {
                self.apply_queued();
                self.peer_frame();
            }
            // Connecting, or the connection is gone: wait.
            Role::Inactive => {}
        }
    }

    fn get_configuration_warnings(&self) -> PackedStringArray {
        let mut w = PackedStringArray::new();
        if self.world_node().is_none() {
            if let Err(e) = self.island_node() {
                w.push(&GString::from(&e));
            }
        }
        w
    }
}

#[godot_api]
impl IslandSync {
    /// Authority: a peer's fingerprint matches the authority's after the same edits.
    #[signal]
    fn peer_verified(peer_id: i64, fingerprint: GString);
    /// Authority: a peer ended with another island, or could not take the parameters (another
    /// addon version, another drawn coast mask or scene paint, a GPU-generated island ...).
    #[signal]
    fn peer_mismatch(peer_id: i64, reason: GString);
    /// Authority: an edit or message from a peer was refused (malformed, not allowed, vetoed,
    /// flooding).
    #[signal]
    fn edit_rejected(peer_id: i64, reason: GString);
    /// Every peer: the edit at `index` of the log was applied to the island.
    #[signal]
    fn edit_applied(index: i64);
    /// Peer: the authority confirmed this peer's island.
    #[signal]
    fn synced(fingerprint: GString);
    /// Peer: this peer's island differs from the authority's, or the parameters could not be
    /// taken.
    #[signal]
    fn sync_failed(reason: GString);

    /// One dab of `brush` (its mode, layer, radius, masks ...) at `world_position` (x, z).
    /// On the authority it is logged, sent to every peer and applied in order; on a client it
    /// is a request to the authority. Returns false (with an error) when the brush's settings
    /// cannot travel (see the class description) or there is no island.
    #[func]
    fn edit_dab(&mut self, brush: Gd<TerrainBrush>, world_position: Vector3) -> bool {
        let mut pts = PackedVector3Array::new();
        pts.push(world_position);
        self.edit_stroke(brush, pts)
    }

    /// One stroke of `brush` through `points` (global positions; dabs every
    /// `spacing × radius` along them), as [method edit_dab]. At most 1024 points.
    #[func]
    fn edit_stroke(&mut self, brush: Gd<TerrainBrush>, points: PackedVector3Array) -> bool {
        if self.world_node().is_some() {
            return self.submit_world("edit_stroke", &brush, Some(&points));
        }
        self.submit_from("edit_stroke", &brush, |s| {
            let isl = s.island_node()?;
            let pts = points
                .as_slice()
                .iter()
                .map(|p| {
                    let l = isl.to_local(*p);
                    [l.x, l.z]
                })
                .collect();
            Ok(EditAction::Stroke(pts))
        })
    }

    /// `brush.fill_by_rule()` as an edit (see [method edit_dab]).
    #[func]
    fn edit_fill(&mut self, brush: Gd<TerrainBrush>) -> bool {
        if self.world_node().is_some() {
            godot_error!(
                "IslandSync.edit_fill: a world has no whole-island fill; paint with edit_stroke"
            );
            return false;
        }
        self.submit_from("edit_fill", &brush, |_| Ok(EditAction::Fill))
    }

    /// `brush.clear_layer(layer)` as an edit (see [method edit_dab]).
    #[func]
    fn edit_clear_layer(&mut self, brush: Gd<TerrainBrush>, layer: i32) -> bool {
        let Ok(l) = u8::try_from(layer) else {
            godot_error!("IslandSync.edit_clear_layer: layer must be 0..7, got {layer}");
            return false;
        };
        if self.world_node().is_some() {
            godot_error!("IslandSync.edit_clear_layer: not available under an IslandWorld");
            return false;
        }
        let mut b = brush;
        let was = b.get("layer");
        b.set("layer", &(l as i32).to_variant());
        let ok = self.submit_from("edit_clear_layer", &b, |_| Ok(EditAction::ClearLayer));
        b.set("layer", &was);
        ok
    }

    /// The edit log: every accepted edit in order (bytes, a few dozen per edit). Save it
    /// with the game; [method apply_edit_log] replays it.
    #[func]
    fn get_edit_log(&self) -> PackedByteArray {
        if self.world_node().is_some() {
            return PackedByteArray::from(self.world.log().encode());
        }
        PackedByteArray::from(self.log.encode())
    }

    /// Replay a log from [method get_edit_log] on top of the current edits (authority only:
    /// the edits go to every peer as well). The whole log is checked first: a malformed one
    /// changes nothing and returns false with an error.
    #[func]
    fn apply_edit_log(&mut self, bytes: PackedByteArray) -> bool {
        if !self.is_authority() {
            godot_error!(
                "IslandSync.apply_edit_log: only the authority changes the log (this peer is a \
                 client); ask the server to replay it"
            );
            return false;
        }
        if self.world_node().is_some() {
            return match WorldEditLog::decode(bytes.as_slice()) {
                Ok(log) => {
                    for e in log.edits {
                        self.accept_cell(e);
                    }
                    true
                }
                Err(e) => {
                    godot_error!(
                        "IslandSync.apply_edit_log: not a valid world edit log, nothing applied: {e}"
                    );
                    false
                }
            };
        }
        match EditLog::decode(bytes.as_slice()) {
            Ok(log) => {
                for c in log.commands {
                    self.accept(c);
                }
                true
            }
            Err(e) => {
                godot_error!(
                    "IslandSync.apply_edit_log: not a valid edit log, nothing applied: {e}"
                );
                false
            }
        }
    }

    /// Edits in the log (accepted).
    #[func]
    fn get_edit_count(&self) -> i64 {
        if self.world_node().is_some() {
            return self.world.len() as i64;
        }
        self.log.commands.len() as i64
    }

    /// Edits applied to the island so far.
    #[func]
    fn get_applied_count(&self) -> i64 {
        if self.world_node().is_some() {
            return self.world.applied_total() as i64;
        }
        self.applied as i64
    }

    /// Under an [IslandWorld]: the fingerprint of `cell`'s detailed island (16 hex digits), empty
    /// when it is not loaded, not idle or misses edits.
    #[func]
    fn get_cell_fingerprint(&self, cell: Vector2i) -> GString {
        self.world_node()
            .and_then(|w| self.world.fingerprint(&w, [cell.x, cell.y]))
            .map_or(GString::new(), |f| GString::from(&f.hex()))
    }

    /// Whether every accepted edit is applied and the island is not generating.
    #[func]
    fn is_idle(&self) -> bool {
        if let Some(w) = self.world_node() {
            return self.world.idle(&w);
        }
        self.queue.is_empty()
            && self
                .island_node()
                .is_ok_and(|i| !i.bind().is_generating() && i.bind().island().is_some())
    }

    /// Whether this node is the authority (the server, or no network peer).
    #[func]
    fn is_authority(&self) -> bool {
        self.multiplayer()
            .is_none_or(|m| role(&m) == Role::Authority)
    }

    /// The fingerprint of the island as shown, 16 hex digits (empty while edits are pending
    /// or the island generates).
    #[func]
    fn get_fingerprint(&self) -> GString {
        if !self.is_idle() {
            return GString::new();
        }
        self.island_node()
            .ok()
            .and_then(|i| i.bind().fingerprint(self.applied))
            .map_or(GString::new(), |f| GString::from(&f.hex()))
    }

    /// Counters: `edits`, `applied`, `bytes_sent` (payload bytes sent, total),
    /// `bytes_sent_per_peer` (Dictionary peer id → bytes), `rejected` (refused messages),
    /// `verified` (Dictionary peer id → edit count last verified at), `joined` (peer: whether the
    /// parameters arrived), `verdict` (peer: the last verdict's reason, "ok" when verified).
    #[func]
    fn get_sync_stats(&self) -> VarDictionary {
        let mut d = VarDictionary::new();
        d.set("edits", self.log.commands.len() as i64);
        d.set("applied", self.applied as i64);
        let mut per = VarDictionary::new();
        for (p, b) in &self.bytes_sent {
            per.set(*p as i64, *b as i64);
        }
        d.set("bytes_sent", self.bytes_sent.values().sum::<u64>() as i64);
        d.set("bytes_sent_per_peer", &per);
        d.set("rejected", self.rejected as i64);
        let mut ver = VarDictionary::new();
        for (p, n) in &self.verified {
            ver.set(*p as i64, *n as i64);
        }
        // Under a world: peer id → number of cells verified.
        let mut counts: HashMap<i32, i64> = HashMap::new();
        for (p, _) in self.world.verified.keys() {
            *counts.entry(*p).or_default() += 1;
        }
        for (p, n) in counts {
            ver.set(p as i64, n);
        }
        d.set("verified", &ver);
        d.set("joined", self.joined_self);
        d.set(
            "verdict",
            &GString::from(self.verdict.as_ref().map_or("", |v| v.1.as_str())),
        );
        d.set("protocol_version", PROTOCOL_VERSION as i64);
        d
    }

    // ---- RPCs (names start with `_net_`; every one checks who sent it) ----

    /// Peer → authority: send me the parameters and the log.
    #[rpc(any_peer, reliable, call_remote)]
    fn _net_want_hello(&mut self) {
        let Some(peer) = self.allowed_client("_net_want_hello") else {
            return;
        };
        self.send_hello(peer);
    }

    /// Authority → peer: parameters and log.
    #[rpc(any_peer, reliable, call_remote)]
    fn _net_hello(&mut self, params: PackedByteArray, log: PackedByteArray) {
        if !self.sent_by_authority("_net_hello") {
            return;
        }
        let r = if self.world_node().is_some() {
            self.take_world_hello(params.as_slice(), log.as_slice())
        } else {
            self.take_hello(params.as_slice(), log.as_slice())
        };
        if let Err(e) = r {
            self.fail_here(&e);
        }
    }

    /// Authority → peer: the generation parameters changed (the authority regenerated).
    #[rpc(any_peer, reliable, call_remote)]
    fn _net_params(&mut self, params: PackedByteArray) {
        if !self.sent_by_authority("_net_params") || !self.joined_self {
            return;
        }
        match ParamsMessage::decode(params.as_slice()) {
            Ok(m) => {
                if let Ok(mut isl) = self.island_node() {
                    isl.bind_mut().set_net_params(&m);
                    isl.bind_mut().regenerate_async();
                    self.reported_at = None;
                }
            }
            Err(e) => self.fail_here(&format!("the authority's parameters: {e}")),
        }
    }

    /// Authority → peer: log entry `index`.
    #[rpc(any_peer, reliable, call_remote)]
    fn _net_edit(&mut self, index: i64, bytes: PackedByteArray) {
        if !self.sent_by_authority("_net_edit") {
            return;
        }
        if !self.joined_self {
            godot_error!("IslandSync: an edit arrived before the parameters; ignored");
            return;
        }
        if self.world_node().is_some() {
            if index != self.world.len() as i64 {
                self.fail_here(&format!(
                    "world edit {index} arrived, expected {}",
                    self.world.len()
                ));
                return;
            }
            match CellEdit::decode(bytes.as_slice()) {
                Ok(e) => self.world.push(e),
                Err(e) => self.fail_here(&format!("world edit {index} from the authority: {e}")),
            }
            return;
        }
        if index != self.log.commands.len() as i64 {
            self.fail_here(&format!(
                "edit {index} arrived, expected {} (lost or reordered messages: use a reliable \
                 ordered transport)",
                self.log.commands.len()
            ));
            return;
        }
        match EditCommand::decode(bytes.as_slice()) {
            Ok(c) => {
                self.log.commands.push(c.clone());
                self.queue.push_back(c);
            }
            Err(e) => self.fail_here(&format!("edit {index} from the authority: {e}")),
        }
    }

    /// Peer → authority: please make this edit.
    #[rpc(any_peer, reliable, call_remote)]
    fn _net_request_edit(&mut self, bytes: PackedByteArray) {
        let Some(peer) = self.allowed_client("_net_request_edit") else {
            return;
        };
        if !self.allow_client_edits {
            self.reject(peer, "client edits are off (allow_client_edits)".into());
            return;
        }
        if self.world_node().is_some() {
            let e = match CellEdit::decode(bytes.as_slice()) {
                Ok(e) => e,
                Err(e) => {
                    self.reject(peer, format!("malformed world edit: {e}"));
                    return;
                }
            };
            let mut d = edit_dictionary(peer, &e.command);
            d.set("cell", Vector2i::new(e.cell[0], e.cell[1]));
            if self.filter_allows(peer, d) {
                self.accept_cell(e);
            }
            return;
        }
        let c = match EditCommand::decode(bytes.as_slice()) {
            Ok(c) => c,
            Err(e) => {
                self.reject(peer, format!("malformed edit: {e}"));
                return;
            }
        };
        if self.filter_allows(peer, edit_dictionary(peer, &c)) {
            self.accept(c);
        }
    }

    /// Peer → authority: my fingerprint, and the backend that generated my island.
    #[rpc(any_peer, reliable, call_remote)]
    fn _net_fingerprint(&mut self, bytes: PackedByteArray, backend: GString) {
        // Not counted against the peer's allowance (a fingerprint only replaces the peer's
        // previous one): a peer that flooded edits still gets its verdict.
        let Some(peer) = self.client_sender("_net_fingerprint") else {
            return;
        };
        if self.world_node().is_some() {
            let b = bytes.as_slice();
            let parsed = if b.len() > 8 {
                let cx = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                let cz = i32::from_le_bytes([b[4], b[5], b[6], b[7]]);
                Fingerprint::decode(&b[8..]).map(|f| ([cx, cz], f))
            } else {
                Err(island_core::sync::SyncError(
                    "a cell fingerprint of 8 bytes or less".into(),
                ))
            };
            match parsed {
                Ok((cell, f)) if f.edits <= self.world.count_for(cell) => {
                    self.world.keep(peer, cell, f, backend.to_string())
                }
                Ok(_) => self.reject(
                    peer,
                    "a cell fingerprint after more edits than the log has".into(),
                ),
                Err(e) => self.reject(peer, format!("malformed cell fingerprint: {e}")),
            }
            return;
        }
        match Fingerprint::decode(bytes.as_slice()) {
            Ok(f) if f.edits as usize <= self.log.commands.len() => {
                self.reported.insert(peer, (f, backend.to_string()));
            }
            Ok(f) => self.reject(
                peer,
                format!(
                    "fingerprint after {} edits; the log has {}",
                    f.edits,
                    self.log.commands.len()
                ),
            ),
            Err(e) => self.reject(peer, format!("malformed fingerprint: {e}")),
        }
    }

    /// Peer → authority: I cannot take the parameters (version, coast mask, scene paint).
    #[rpc(any_peer, reliable, call_remote)]
    fn _net_problem(&mut self, reason: GString) {
        let Some(peer) = self.allowed_client("_net_problem") else {
            return;
        };
        let reason: String = reason.to_string().chars().take(500).collect();
        godot_error!("IslandSync: peer {peer} cannot sync: {reason}");
        self.signals()
            .peer_mismatch()
            .emit(peer as i64, &GString::from(&reason));
    }

    /// Authority → peer: the verdict on the last fingerprint.
    #[rpc(any_peer, reliable, call_remote)]
    fn _net_verdict(&mut self, ok: bool, reason: GString) {
        if !self.sent_by_authority("_net_verdict") {
            return;
        }
        let reason = reason.to_string();
        if ok {
            self.verdict = Some((true, "ok".into()));
            self.signals().synced().emit(&GString::from(&reason));
        } else {
            // The authority's own verdict: said here, not sent back.
            godot_error!("IslandSync: {reason}");
            self.verdict = Some((false, reason.clone()));
            self.signals().sync_failed().emit(&GString::from(&reason));
        }
    }

    #[func]
    fn _on_peer_disconnected(&mut self, id: i64) {
        let id = id as i32;
        self.joined.remove(&id);
        self.reported.remove(&id);
        self.buckets.remove(&id);
    }
}

/// Err (the reason) when the authority's addon version is not this one.
fn same_version(theirs: &str) -> Result<(), String> {
    let ours = env!("CARGO_PKG_VERSION");
    if theirs == ours {
        return Ok(());
    }
    Err(format!(
        "addon version {theirs} on the authority, {ours} here: install the same addon on every peer"
    ))
}

/// What this process is for the island.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Role {
    /// The server, or no network peer at all.
    Authority,
    /// A connected client.
    Client,
    /// Connecting, or disconnected: nothing is sent or applied.
    Inactive,
}

/// The role, asked without `MultiplayerAPI.is_server()`'s error while a peer is not connected.
fn role(mp: &Gd<MultiplayerApi>) -> Role {
    let Some(peer) = mp.get_multiplayer_peer() else {
        return Role::Authority;
    };
    if peer.get_connection_status() != ConnectionStatus::CONNECTED {
        return Role::Inactive;
    }
    if mp.is_server() {
        Role::Authority
    } else {
        Role::Client
    }
}

/// The edit as the `edit_filter` callable sees it.
fn edit_dictionary(peer: i32, c: &EditCommand) -> VarDictionary {
    let mut d = VarDictionary::new();
    d.set("peer_id", peer as i64);
    let (action, pts) = match &c.action {
        EditAction::Stroke(p) => ("stroke", p.as_slice()),
        EditAction::Fill => ("fill", &[][..]),
        EditAction::ClearLayer => ("clear_layer", &[][..]),
    };
    d.set("action", action);
    d.set("mode", c.brush.mode as i64);
    d.set("layer", c.brush.layer as i64);
    d.set("scatter_layer", c.brush.scatter_layer as i64);
    d.set("radius", c.brush.radius);
    d.set("strength", c.brush.strength);
    let mut v = PackedVector2Array::new();
    for p in pts {
        v.push(Vector2::new(p[0], p[1]));
    }
    d.set("points", &v);
    d
}

impl IslandSync {
    fn island_node(&self) -> Result<Gd<ProceduralIsland>, String> {
        let node = if self.island.is_empty() {
            self.base().get_parent()
        } else {
            self.base().get_node_or_null(&self.island)
        };
        node.ok_or_else(|| {
            "IslandSync needs an island: make it a child of a ProceduralIsland or set `island`"
                .to_string()
        })?
        .try_cast::<ProceduralIsland>()
        .map_err(|_| {
            "IslandSync: the `island` node (or the parent) is not a ProceduralIsland".into()
        })
    }

    /// The `IslandWorld` this node syncs, when its subject is a world.
    fn world_node(&self) -> Option<Gd<IslandWorld>> {
        let node = if self.island.is_empty() {
            self.base().get_parent()
        } else {
            self.base().get_node_or_null(&self.island)
        };
        node?.try_cast::<IslandWorld>().ok()
    }

    fn multiplayer(&self) -> Option<Gd<MultiplayerApi>> {
        if !self.base().is_inside_tree() {
            return None;
        }
        self.base().get_multiplayer()
    }

    /// The command from `brush` and `action`, submitted (see [method edit_dab]).
    fn submit_from(
        &mut self,
        what: &str,
        brush: &Gd<TerrainBrush>,
        action: impl FnOnce(&Self) -> Result<EditAction, String>,
    ) -> bool {
        let cmd = (|| -> Result<EditCommand, String> {
            let b: EditBrush = brush.bind().edit_brush()?;
            let c = EditCommand {
                brush: b,
                action: action(self)?,
            };
            c.validate().map_err(|e| e.to_string())?;
            Ok(c)
        })();
        match cmd {
            Ok(c) => self.submit(c),
            Err(e) => {
                godot_error!("IslandSync.{what}: {e}");
                false
            }
        }
    }

    fn submit(&mut self, c: EditCommand) -> bool {
        if self.is_authority() {
            self.accept(c);
            return true;
        }
        match c.encode() {
            Ok(bytes) => self.request_edit(bytes),
            Err(_) => false,
        }
    }

    /// Client: ask the authority for an edit (its encoded bytes); false when not connected.
    fn request_edit(&mut self, bytes: Vec<u8>) -> bool {
        if !self.connected() {
            godot_error!("IslandSync: not connected to the authority: the edit is dropped");
            return false;
        }
        self.send(
            1,
            "_net_request_edit",
            &[PackedByteArray::from(bytes).to_variant()],
        );
        true
    }

    /// Authority: whether [member edit_filter] (if set) accepts `peer`'s edit `d`; a refusal is
    /// rejected with the peer named.
    fn filter_allows(&mut self, peer: i32, d: VarDictionary) -> bool {
        if !self.edit_filter.is_valid() {
            return true;
        }
        let verdict = self
            .edit_filter
            .call(&[(peer as i64).to_variant(), d.to_variant()]);
        if verdict.try_to::<bool>().unwrap_or(false) {
            return true;
        }
        self.reject(peer, "refused by edit_filter".into());
        false
    }

    /// Authority: send log entry `index` (encoded) to every joined peer.
    fn broadcast_edit(&mut self, index: usize, bytes: PackedByteArray) {
        let peers: Vec<i32> = self.joined.iter().copied().collect();
        for p in peers {
            self.send(
                p,
                "_net_edit",
                &[(index as i64).to_variant(), bytes.clone().to_variant()],
            );
        }
    }

    /// Whether a network peer is connected (a client can reach the authority).
    fn connected(&self) -> bool {
        self.multiplayer()
            .is_some_and(|m| role(&m) != Role::Inactive)
    }

    /// Authority: log `c`, queue it and send it to every joined peer.
    fn accept(&mut self, c: EditCommand) {
        let index = self.log.commands.len();
        let bytes = PackedByteArray::from(c.encode().unwrap_or_default());
        self.log.commands.push(c.clone());
        self.queue.push_back(c);
        self.broadcast_edit(index, bytes);
    }

    /// Apply queued edits while the island is idle, within [`APPLY_BUDGET_MS`].
    fn apply_queued(&mut self) {
        let t = Instant::now();
        while let Some(c) = self.queue.front().cloned() {
            let Ok(isl) = self.island_node() else {
                return;
            };
            if isl.bind().is_generating() || isl.bind().island().is_none() {
                return;
            }
            // A peer applies nothing before the authority's parameters are in.
            if !self.is_authority() && !self.joined_self {
                return;
            }
            if t.elapsed().as_secs_f64() * 1000.0 > APPLY_BUDGET_MS {
                return;
            }
            self.queue.pop_front();
            let Some(mut brush) = self.brush.clone() else {
                return;
            };
            // The command was validated when it entered the log; a failure here (e.g. a
            // scatter layer the island lacks) is reported and counted as applied on every
            // peer alike.
            let r = brush.bind_mut().apply_edit(&c);
            if let Err(e) = r {
                godot_warn!("IslandSync: edit {} did nothing: {e}", self.applied);
            }
            let index = self.applied as i64;
            self.applied += 1;
            self.signals().edit_applied().emit(index);
        }
    }

    fn authority_frame(&mut self) {
        if !self.is_idle() {
            return;
        }
        let Ok(isl) = self.island_node() else {
            return;
        };
        // Parameters changed since they were sent (the game regenerated with a new seed):
        // send them again (checked twice a second).
        if !self.joined.is_empty()
            && self
                .param_check_at
                .is_none_or(|t| t.elapsed().as_secs_f64() > 0.5)
        {
            self.param_check_at = Some(Instant::now());
            if let Ok(bytes) = self.params_bytes() {
                if bytes != self.sent_params {
                    self.sent_params = bytes.clone();
                    let b = PackedByteArray::from(bytes);
                    let peers: Vec<i32> = self.joined.iter().copied().collect();
                    for p in peers {
                        self.send(p, "_net_params", &[b.clone().to_variant()]);
                    }
                }
            }
        }
        if self.reported.is_empty() {
            return;
        }
        let n = self.applied;
        if let std::collections::btree_map::Entry::Vacant(e) = self.own.entry(n) {
            let Some(f) = isl.bind().fingerprint(n) else {
                return;
            };
            e.insert(f);
            while self.own.len() > KEPT_FINGERPRINTS {
                self.own.pop_first();
            }
        }
        let own_backend = isl.bind().generated_backend();
        let ready: Vec<i32> = self
            .reported
            .iter()
            .filter(|(_, (f, _))| self.own.contains_key(&f.edits))
            .map(|(p, _)| *p)
            .collect();
        for peer in ready {
            let (theirs, backend) = self.reported.remove(&peer).expect("listed");
            let mine = self.own[&theirs.edits];
            let diffs = mine.differences(&theirs);
            if diffs.is_empty() {
                self.verified.insert(peer, theirs.edits);
                let hex = GString::from(&mine.hex());
                self.send(peer, "_net_verdict", &[true.to_variant(), hex.to_variant()]);
                self.signals().peer_verified().emit(peer as i64, &hex);
            } else {
                let mut reason = format!(
                    "after {} edits the peer's {} differ from the authority's",
                    theirs.edits,
                    diffs.join(", ")
                );
                if backend != own_backend {
                    reason += &format!(
                        " (the peer generated on the {backend} path, the authority on the \
                         {own_backend} path: only the CPU path is bit-identical across machines; \
                         turn force_cpu_backend on)"
                    );
                }
                godot_error!("IslandSync: peer {peer}: {reason}");
                let r = GString::from(&reason);
                self.send(peer, "_net_verdict", &[false.to_variant(), r.to_variant()]);
                self.signals().peer_mismatch().emit(peer as i64, &r);
            }
        }
    }

    fn peer_frame(&mut self) {
        if !self.asked {
            self.asked = true;
            self.send(1, "_net_want_hello", &[]);
            return;
        }
        if !self.joined_self || !self.is_idle() || self.reported_at == Some(self.applied) {
            return;
        }
        let Ok(isl) = self.island_node() else {
            return;
        };
        let Some(f) = isl.bind().fingerprint(self.applied) else {
            return;
        };
        let backend = GString::from(&isl.bind().generated_backend());
        self.reported_at = Some(self.applied);
        self.send(
            1,
            "_net_fingerprint",
            &[
                PackedByteArray::from(f.encode()).to_variant(),
                backend.to_variant(),
            ],
        );
    }

    fn params_bytes(&self) -> Result<Vec<u8>, String> {
        let isl = self.island_node()?;
        let base = self.base_paint.unwrap_or_else(|| isl.bind().paint_hash());
        let m = isl.bind().net_params_message(base)?;
        m.encode().map_err(|e| e.to_string())
    }

    fn send_hello(&mut self, peer: i32) {
        if let Some(w) = self.world_node() {
            let msg = w.bind().template_params_hash().and_then(|template_hash| {
                WorldMessage {
                    addon_version: env!("CARGO_PKG_VERSION").to_string(),
                    world: w.bind().world_params(),
                    template_hash,
                }
                .encode()
                .map_err(|e| e.to_string())
            });
            match msg {
                Ok(b) => {
                    let log = self.world.log().encode();
                    self.send(
                        peer,
                        "_net_hello",
                        &[
                            PackedByteArray::from(b).to_variant(),
                            PackedByteArray::from(log).to_variant(),
                        ],
                    );
                    self.joined.insert(peer);
                }
                Err(e) => godot_error!("IslandSync: cannot send the world to peer {peer}: {e}"),
            }
            return;
        }
        let params = match self.params_bytes() {
            Ok(b) => b,
            Err(e) => {
                godot_error!("IslandSync: cannot send the island's parameters to peer {peer}: {e}");
                return;
            }
        };
        self.sent_params = params.clone();
        let log = self.log.encode();
        self.send(
            peer,
            "_net_hello",
            &[
                PackedByteArray::from(params).to_variant(),
                PackedByteArray::from(log).to_variant(),
            ],
        );
        self.joined.insert(peer);
    }

    /// Peer: take the authority's parameters and log.
    fn take_hello(&mut self, params: &[u8], log: &[u8]) -> Result<(), String> {
        let m = ParamsMessage::decode(params)
            .map_err(|e| format!("the authority's parameters: {e}"))?;
        same_version(&m.addon_version)?;
        let log = EditLog::decode(log).map_err(|e| format!("the authority's edit log: {e}"))?;
        let mut isl = self.island_node()?;
        let mask = isl.bind().coast_mask_hash()?;
        if mask != m.coast_mask_hash {
            return Err(
                "this peer's island has another drawn coast mask than the authority's (the \
                 coast_mask texture must be the same image on every peer)"
                    .into(),
            );
        }
        if self.joined_self {
            return Err("the parameters arrived twice; ignored".into());
        }
        let paint = isl.bind().paint_hash();
        if paint != m.base_paint_hash {
            return Err(
                "this peer's island starts with other paint or sculpting than the authority's \
                 (the splat_paint saved in the scene differs)"
                    .into(),
            );
        }
        let mut m = m;
        if self.force_cpu_backend {
            m.backend = ProceduralIsland::BACKEND_CPU as u8;
        }
        isl.bind_mut().set_net_params(&m);
        isl.bind_mut().regenerate_async();
        self.joined_self = true;
        self.reported_at = None;
        self.queue.extend(log.commands.iter().cloned());
        self.log = log;
        Ok(())
    }

    /// Peer: take the authority's world and its log.
    fn take_world_hello(&mut self, world: &[u8], log: &[u8]) -> Result<(), String> {
        let m = WorldMessage::decode(world).map_err(|e| format!("the authority's world: {e}"))?;
        same_version(&m.addon_version)?;
        let log = WorldEditLog::decode(log)
            .map_err(|e| format!("the authority's world edit log: {e}"))?;
        let mut w = self.world_node().ok_or("no IslandWorld here")?;
        let template = w.bind().template_params_hash()?;
        if template != m.template_hash {
            return Err(
                "this peer's IslandWorld has another island template (island_scene) than the \
                 authority's: every peer needs the same island_scene"
                    .into(),
            );
        }
        if self.joined_self {
            return Err("the world arrived twice; ignored".into());
        }
        w.bind_mut().set_world_params(&m.world);
        self.world.set_log(log);
        self.joined_self = true;
        Ok(())
    }

    /// A world edit from `brush` at `points` (global): the cell and the island-local points of
    /// the detailed island there.
    fn submit_world(
        &mut self,
        what: &str,
        brush: &Gd<TerrainBrush>,
        points: Option<&PackedVector3Array>,
    ) -> bool {
        let edit = (|| -> Result<CellEdit, String> {
            let w = self.world_node().ok_or("no IslandWorld")?;
            let pts = points.map(|p| p.as_slice().to_vec()).unwrap_or_default();
            let first = *pts.first().ok_or("a stroke needs at least one point")?;
            let local0 = w.to_local(first);
            let cell = w.bind().cell_at(local0.x as f64, local0.z as f64);
            let isl = w
                .bind()
                .detail_island([cell.x as i64, cell.y as i64])
                .ok_or(format!(
                    "no detailed island loaded at ({:.0}, {:.0}) (cell ({}, {})): edits go to \
                     islands within detail_distance",
                    first.x, first.z, cell.x, cell.y
                ))?;
            let mut local = Vec::with_capacity(pts.len());
            for p in &pts {
                let wl = w.to_local(*p);
                let c = w.bind().cell_at(wl.x as f64, wl.z as f64);
                if c != cell {
                    return Err("a stroke must stay in one island's cell".into());
                }
                let l = isl.to_local(*p);
                local.push([l.x, l.z]);
            }
            let command = EditCommand {
                brush: brush.bind().edit_brush()?,
                action: EditAction::Stroke(local),
            };
            command.validate().map_err(|e| e.to_string())?;
            Ok(CellEdit {
                cell: [cell.x, cell.y],
                command,
            })
        })();
        let e = match edit {
            Ok(e) => e,
            Err(e) => {
                godot_error!("IslandSync.{what}: {e}");
                return false;
            }
        };
        if self.is_authority() {
            self.accept_cell(e);
            return true;
        }
        match e.encode() {
            Ok(bytes) => self.request_edit(bytes),
            Err(_) => false,
        }
    }

    /// Authority: log a world edit and send it to every joined peer.
    fn accept_cell(&mut self, e: CellEdit) {
        let index = self.world.len();
        let bytes = PackedByteArray::from(e.encode().unwrap_or_default());
        self.world.push(e);
        self.broadcast_edit(index, bytes);
    }

    /// Apply the world edits whose islands are loaded.
    fn apply_world(&mut self) {
        let (Some(w), Some(mut brush)) = (self.world_node(), self.brush.clone()) else {
            return;
        };
        let before = self.world.applied_total();
        self.world.apply(&w, &mut brush, APPLY_BUDGET_MS);
        for i in before..self.world.applied_total() {
            self.signals().edit_applied().emit(i as i64);
        }
    }

    fn world_authority_frame(&mut self) {
        let Some(w) = self.world_node() else {
            return;
        };
        for v in self.world.compare(&w) {
            match v.result {
                Ok(hex) => {
                    let h = GString::from(&hex);
                    let reason =
                        GString::from(&format!("cell ({}, {}) {hex}", v.cell[0], v.cell[1]));
                    self.send(
                        v.peer,
                        "_net_verdict",
                        &[true.to_variant(), reason.to_variant()],
                    );
                    self.signals().peer_verified().emit(v.peer as i64, &h);
                }
                Err(reason) => {
                    godot_error!("IslandSync: peer {}: {reason}", v.peer);
                    let r = GString::from(&reason);
                    self.send(
                        v.peer,
                        "_net_verdict",
                        &[false.to_variant(), r.to_variant()],
                    );
                    self.signals().peer_mismatch().emit(v.peer as i64, &r);
                }
            }
        }
    }

    fn world_peer_frame(&mut self) {
        if !self.asked {
            self.asked = true;
            self.send(1, "_net_want_hello", &[]);
            return;
        }
        if !self.joined_self {
            return;
        }
        self.apply_world();
        let Some(w) = self.world_node() else {
            return;
        };
        for (cell, f, backend) in self.world.reports(&w) {
            let mut b = Vec::with_capacity(50);
            b.extend_from_slice(&cell[0].to_le_bytes());
            b.extend_from_slice(&cell[1].to_le_bytes());
            b.extend_from_slice(&f.encode());
            let backend = GString::from(&backend);
            self.send(
                1,
                "_net_fingerprint",
                &[PackedByteArray::from(b).to_variant(), backend.to_variant()],
            );
        }
    }

    /// Peer: report a problem here (error, signal) and to the authority.
    fn fail_here(&mut self, reason: &str) {
        godot_error!("IslandSync: {reason}");
        self.verdict = Some((false, reason.to_string()));
        self.signals().sync_failed().emit(&GString::from(reason));
        if !self.is_authority() {
            let r = GString::from(reason);
            self.send(1, "_net_problem", &[r.to_variant()]);
        }
    }

    /// Whether an authority-only message came from the authority.
    fn sent_by_authority(&mut self, what: &str) -> bool {
        let Some(mp) = self.multiplayer() else {
            return false;
        };
        let sender = mp.get_remote_sender_id();
        if role(&mp) == Role::Authority {
            // A client tried to send parameters or log entries to the server.
            self.reject(
                sender,
                format!("{what} comes only from the authority; a client never changes parameters"),
            );
            return false;
        }
        if sender != 1 {
            godot_error!("IslandSync: {what} from peer {sender}, not from the authority: ignored");
            return false;
        }
        true
    }

    /// The sending client of a client → authority message, None (with the rejection) when this
    /// is not the authority or the client floods.
    fn allowed_client(&mut self, what: &str) -> Option<i32> {
        let sender = self.client_sender(what)?;
        let rate = self.max_messages_per_second.max(1.0) as f64;
        let now = Instant::now();
        let (tokens, last) = self.buckets.entry(sender).or_insert((rate, now));
        *tokens = (*tokens + now.duration_since(*last).as_secs_f64() * rate).min(rate);
        *last = now;
        if *tokens < 1.0 {
            self.reject(
                sender,
                format!("more than {rate} messages a second ({what}): flood refused"),
            );
            return None;
        }
        *tokens -= 1.0;
        Some(sender)
    }

    /// The sending client of a client → authority message (None on a client).
    fn client_sender(&self, what: &str) -> Option<i32> {
        let mp = self.multiplayer()?;
        let sender = mp.get_remote_sender_id();
        if role(&mp) != Role::Authority {
            godot_error!("IslandSync: {what} from peer {sender} on a client: ignored");
            return None;
        }
        (sender > 1).then_some(sender)
    }

    /// Refuse a peer's message: counted, signalled, and an error naming the peer (once a
    /// second per flooding peer).
    fn reject(&mut self, peer: i32, reason: String) {
        self.rejected += 1;
        let quiet = self
            .flood_reported
            .get(&peer)
            .is_some_and(|t| t.elapsed().as_secs_f64() < 1.0);
        if !quiet {
            godot_error!("IslandSync: refused a message from peer {peer}: {reason}");
            self.flood_reported.insert(peer, Instant::now());
        }
        self.signals()
            .edit_rejected()
            .emit(peer as i64, &GString::from(&reason));
    }

    /// Send an RPC to `peer`, counting the payload bytes.
    fn send(&mut self, peer: i32, method: &str, args: &[Variant]) {
        let bytes: u64 = args
            .iter()
            .map(|a| match a.try_to::<PackedByteArray>() {
                Ok(b) => b.len() as u64,
                Err(_) => 8,
            })
            .sum();
        *self.bytes_sent.entry(peer).or_default() += bytes + method.len() as u64;
        self.base_mut().rpc_id(peer as i64, method, args);
    }
}
