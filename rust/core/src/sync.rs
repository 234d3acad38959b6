//! What peers exchange so that every one of them ends with the same island: the generation
//! parameters in a compact, versioned byte form (never a heightmap), the edits as commands
//! (a brush's settings and where it went), the edit log, and a fingerprint of the result.
//!
//! The network itself is the engine's (Godot's `IslandSync` node sends these bytes through the
//! `MultiplayerAPI`); this module only encodes, decodes and checks. Every decoder treats its
//! input as hostile: wrong size, wrong magic or version, NaN or infinite numbers, a radius
//! beyond [`MAX_EDIT_RADIUS`], an unknown mode or layer, too many points: a [`SyncError`]
//! naming what is wrong, never a panic.
//!
//! The byte layouts (little-endian) are documented on each type; [`PROTOCOL_VERSION`] changes
//! whenever one of them does.

use crate::paint::PaintLayer;
use crate::pipeline::Island;
use crate::scatter::EraseMask;
use crate::sculpt::SculptLayer;
use crate::IslandParams;
use std::fmt;

/// Version of every layout of this module. A peer with another version is refused.
pub const PROTOCOL_VERSION: u16 = 1;
/// Largest brush radius an edit command may carry, metres (a whole 4 km island in one dab).
pub const MAX_EDIT_RADIUS: f32 = 4096.0;
/// Most points in one stroke command.
pub const MAX_STROKE_POINTS: usize = 1024;
/// Largest coordinate of a stroke point, metres from the island's centre.
pub const MAX_COORDINATE: f32 = 1.0e6;
/// Most commands in one edit log.
pub const MAX_LOG_COMMANDS: usize = 1 << 20;
/// Largest parameter block accepted, bytes.
pub const MAX_PARAMS_BYTES: usize = 1 << 20;
/// Highest brush mode (the `TerrainBrush.MODE_*` numbers: paint 0 ... sketch sea 10).
pub const MAX_MODE: u8 = 10;
/// Splat layers a command may name (0..=7).
pub const MAX_LAYER: u8 = 7;
/// Scatter layers a command may name (0..=63).
pub const MAX_SCATTER_LAYER: u16 = 63;

const PARAMS_MAGIC: [u8; 4] = *b"ISPR";
const LOG_MAGIC: [u8; 4] = *b"ISLG";
const FINGERPRINT_MAGIC: [u8; 4] = *b"ISFP";
const WORLD_LOG_MAGIC: [u8; 4] = *b"ISWL";
const WORLD_MAGIC: [u8; 4] = *b"ISWP";

/// A malformed or unacceptable message.
#[derive(Clone, Debug, PartialEq)]
pub struct SyncError(pub String);

impl fmt::Display for SyncError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SyncError {}

fn fail<T>(msg: impl Into<String>) -> Result<T, SyncError> {
    Err(SyncError(msg.into()))
}

/// A brush's settings, as `TerrainBrush` holds them. Units as there: metres, degrees, 0..1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EditBrush {
    /// `TerrainBrush.MODE_*` (0..=[`MAX_MODE`]).
    pub mode: u8,
    /// Splat layer (0..=7).
    pub layer: u8,
    /// Scatter layer of the scatter modes (0..=63).
    pub scatter_layer: u16,
    /// Radius, m (0 < r ≤ [`MAX_EDIT_RADIUS`]).
    pub radius: f32,
    /// Amount per dab, 0..=1.
    pub strength: f32,
    /// Falloff, 0..=1.
    pub hardness: f32,
    /// Dab spacing as a fraction of the radius (0.01..=100).
    pub spacing: f32,
    /// Sculpt raise / lower per dab, m (0..=1000).
    pub sculpt_height: f32,
    /// Flatten level, m (-1000..=10000).
    pub flatten_height: f32,
    /// Height mask: lowest, highest, fade (m).
    pub height_mask: [f32; 3],
    /// Slope mask: flattest, steepest, fade (degrees, 0..=90).
    pub slope_mask: [f32; 3],
}

/// Bytes of an encoded [`EditBrush`].
const BRUSH_BYTES: usize = 4 + 12 * 4;

impl EditBrush {
    /// Check every field (see the field docs).
    pub fn validate(&self) -> Result<(), SyncError> {
        if self.mode > MAX_MODE {
            return fail(format!("unknown brush mode {}", self.mode));
        }
        if self.layer > MAX_LAYER {
            return fail(format!("splat layer {} is not 0..=7", self.layer));
        }
        if self.scatter_layer > MAX_SCATTER_LAYER {
            return fail(format!(
                "scatter layer {} is not 0..={MAX_SCATTER_LAYER}",
                self.scatter_layer
            ));
        }
        let floats = [
            ("radius", self.radius),
            ("strength", self.strength),
            ("hardness", self.hardness),
            ("spacing", self.spacing),
            ("sculpt_height", self.sculpt_height),
            ("flatten_height", self.flatten_height),
            ("min_height", self.height_mask[0]),
            ("max_height", self.height_mask[1]),
            ("height_fade", self.height_mask[2]),
            ("min_slope", self.slope_mask[0]),
            ("max_slope", self.slope_mask[1]),
            ("slope_fade", self.slope_mask[2]),
        ];
        if let Some((name, v)) = floats.iter().find(|(_, v)| !v.is_finite()) {
            return fail(format!("brush {name} is not finite ({v})"));
        }
        let range = |name: &str, v: f32, lo: f32, hi: f32| {
            if v < lo || v > hi {
                fail(format!("brush {name} {v} is outside {lo}..={hi}"))
            } else {
                Ok(())
            }
        };
        if self.radius <= 0.0 {
            return fail(format!("brush radius {} must be > 0", self.radius));
        }
        range("radius", self.radius, 0.0, MAX_EDIT_RADIUS)?;
        range("strength", self.strength, 0.0, 1.0)?;
        range("hardness", self.hardness, 0.0, 1.0)?;
        range("spacing", self.spacing, 0.01, 100.0)?;
        range("sculpt_height", self.sculpt_height, 0.0, 1000.0)?;
        range("flatten_height", self.flatten_height, -1000.0, 10000.0)?;
        for (i, v) in self.height_mask.iter().enumerate() {
            range(
                ["min_height", "max_height", "height_fade"][i],
                *v,
                -1.0e5,
                1.0e5,
            )?;
        }
        for (i, v) in self.slope_mask.iter().enumerate() {
            range(["min_slope", "max_slope", "slope_fade"][i], *v, 0.0, 90.0)?;
        }
        Ok(())
    }

    fn write(&self, out: &mut Vec<u8>) {
        out.push(self.mode);
        out.push(self.layer);
        out.extend_from_slice(&self.scatter_layer.to_le_bytes());
        for v in [
            self.radius,
            self.strength,
            self.hardness,
            self.spacing,
            self.sculpt_height,
            self.flatten_height,
        ]
        .iter()
        .chain(&self.height_mask)
        .chain(&self.slope_mask)
        {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }

    fn read(r: &mut Reader<'_>) -> Result<EditBrush, SyncError> {
        let mode = r.u8()?;
        let layer = r.u8()?;
        let scatter_layer = r.u16()?;
        let mut f = [0f32; 12];
        for v in f.iter_mut() {
            *v = r.f32()?;
        }
        Ok(EditBrush {
            mode,
            layer,
            scatter_layer,
            radius: f[0],
            strength: f[1],
            hardness: f[2],
            spacing: f[3],
            sculpt_height: f[4],
            flatten_height: f[5],
            height_mask: [f[6], f[7], f[8]],
            slope_mask: [f[9], f[10], f[11]],
        })
    }
}

/// What an edit does with its brush.
#[derive(Clone, Debug, PartialEq)]
pub enum EditAction {
    /// One stroke through the points (island-local x, z in metres): one dab for one point,
    /// dabs every `spacing × radius` along the polyline for more; a sculpt stroke regenerates
    /// the island once at its end.
    Stroke(Vec<[f32; 2]>),
    /// `TerrainBrush.fill_by_rule()`: the brush's mode and masks over the whole island.
    Fill,
    /// `TerrainBrush.clear_layer(layer)`: the paint of the brush's splat layer removed.
    ClearLayer,
}

/// One edit: a brush and what it did. Encoded as `[version u8, action u8, brush (52 bytes),
/// point count u16, points (2 × f32 each)]`; actions 0 stroke, 1 fill, 2 clear layer.
#[derive(Clone, Debug, PartialEq)]
pub struct EditCommand {
    /// The brush's settings.
    pub brush: EditBrush,
    /// What it did.
    pub action: EditAction,
}

impl EditCommand {
    /// Check the brush and the points.
    pub fn validate(&self) -> Result<(), SyncError> {
        self.brush.validate()?;
        if let EditAction::Stroke(points) = &self.action {
            if points.is_empty() {
                return fail("a stroke without points");
            }
            if points.len() > MAX_STROKE_POINTS {
                return fail(format!(
                    "a stroke of {} points (at most {MAX_STROKE_POINTS})",
                    points.len()
                ));
            }
            for p in points {
                if !(p[0].is_finite() && p[1].is_finite())
                    || p[0].abs() > MAX_COORDINATE
                    || p[1].abs() > MAX_COORDINATE
                {
                    return fail(format!("stroke point ({}, {}) is out of range", p[0], p[1]));
                }
            }
        }
        if matches!(self.action, EditAction::Fill) && self.brush.mode >= 5 {
            return fail("the sculpt modes have no fill by rule");
        }
        Ok(())
    }

    /// The command's bytes (it is validated first).
    pub fn encode(&self) -> Result<Vec<u8>, SyncError> {
        self.validate()?;
        let points: &[[f32; 2]] = match &self.action {
            EditAction::Stroke(p) => p,
            _ => &[],
        };
        let mut out = Vec::with_capacity(2 + BRUSH_BYTES + 2 + points.len() * 8);
        out.push(PROTOCOL_VERSION as u8);
        out.push(match self.action {
            EditAction::Stroke(_) => 0,
            EditAction::Fill => 1,
            EditAction::ClearLayer => 2,
        });
        self.brush.write(&mut out);
        out.extend_from_slice(&(points.len() as u16).to_le_bytes());
        for p in points {
            out.extend_from_slice(&p[0].to_le_bytes());
            out.extend_from_slice(&p[1].to_le_bytes());
        }
        Ok(out)
    }

    /// Decode and validate one command; the bytes must be exactly one command.
    pub fn decode(bytes: &[u8]) -> Result<EditCommand, SyncError> {
        let mut r = Reader::new(bytes);
        let version = r.u8()?;
        if version as u16 != PROTOCOL_VERSION {
            return fail(format!(
                "edit command of protocol version {version}, this addon speaks {PROTOCOL_VERSION}"
            ));
        }
        let action = r.u8()?;
        let brush = EditBrush::read(&mut r)?;
        let n = r.u16()? as usize;
        if n > MAX_STROKE_POINTS {
            return fail(format!(
                "a stroke of {n} points (at most {MAX_STROKE_POINTS})"
            ));
        }
        let mut points = Vec::with_capacity(n);
        for _ in 0..n {
            points.push([r.f32()?, r.f32()?]);
        }
        r.end()?;
        let action = match (action, n) {
            (0, _) => EditAction::Stroke(points),
            (1, 0) => EditAction::Fill,
            (2, 0) => EditAction::ClearLayer,
            (1 | 2, _) => return fail("a fill or clear command carries no points"),
            (a, _) => return fail(format!("unknown edit action {a}")),
        };
        let c = EditCommand { brush, action };
        c.validate()?;
        Ok(c)
    }
}

/// Every edit since the island was generated, in the order all peers applied them.
/// Encoded as `["ISLG", version u16, count u32, then per command: length u16, command]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EditLog {
    /// The commands, oldest first.
    pub commands: Vec<EditCommand>,
}

impl EditLog {
    /// The log's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(10 + self.commands.len() * 64);
        out.extend_from_slice(&LOG_MAGIC);
        out.extend_from_slice(&PROTOCOL_VERSION.to_le_bytes());
        out.extend_from_slice(&(self.commands.len() as u32).to_le_bytes());
        for c in &self.commands {
            // Commands in a log were validated when they entered it.
            let b = c.encode().unwrap_or_default();
            out.extend_from_slice(&(b.len() as u16).to_le_bytes());
            out.extend_from_slice(&b);
        }
        out
    }

    /// Decode and validate a whole log (all or nothing).
    pub fn decode(bytes: &[u8]) -> Result<EditLog, SyncError> {
        let mut r = Reader::new(bytes);
        if r.take(4)? != LOG_MAGIC {
            return fail("not an edit log (wrong magic)");
        }
        let version = r.u16()?;
        if version != PROTOCOL_VERSION {
            return fail(format!(
                "edit log of protocol version {version}, this addon speaks {PROTOCOL_VERSION}"
            ));
        }
        let n = r.u32()? as usize;
        if n > MAX_LOG_COMMANDS {
            return fail(format!(
                "an edit log of {n} commands (at most {MAX_LOG_COMMANDS})"
            ));
        }
        // Each command takes at least its length and a brush: a short buffer cannot claim more.
        if n > r.left() / (2 + 2 + BRUSH_BYTES) {
            return fail(format!(
                "an edit log of {n} commands in {} bytes",
                bytes.len()
            ));
        }
        let mut commands = Vec::with_capacity(n);
        for i in 0..n {
            let len = r.u16()? as usize;
            let c = EditCommand::decode(r.take(len)?)
                .map_err(|e| SyncError(format!("command {i}: {e}")))?;
            commands.push(c);
        }
        r.end()?;
        Ok(EditLog { commands })
    }
}

/// What the authority sends on connect, besides the edit log: its addon version, the generation
/// parameters and hashes of what the peers must already share (the drawn coast mask and the
/// paint and sculpt saved in the scene). Encoded as `["ISPR", version u16, addon version (u8
/// length + UTF-8), flags u8 (bit 0: sculpt layer on), backend u8, coast mask hash u64, base
/// paint hash u64, parameters (u32 length + JSON of IslandParams)]`.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamsMessage {
    /// The addon version of the sender.
    pub addon_version: String,
    /// The generation parameters (their coast mask and sculpt layer travel as hashes only).
    pub params: IslandParams,
    /// Whether the sculpt layer takes part in generation.
    pub sculpt_enabled: bool,
    /// The `ProceduralIsland.BACKEND_*` the sender generates with.
    pub backend: u8,
    /// [`hash_bytes`] of the coast mask's luminance bytes, 0 without a drawn mask.
    pub coast_mask_hash: u64,
    /// [`paint_hash`] of the island's paint before the first logged edit.
    pub base_paint_hash: u64,
}

impl ParamsMessage {
    /// The message's bytes.
    pub fn encode(&self) -> Result<Vec<u8>, SyncError> {
        let json = serde_json_bytes(&self.params)?;
        let v = self.addon_version.as_bytes();
        if v.len() > 255 {
            return fail("addon version longer than 255 bytes");
        }
        let mut out = Vec::with_capacity(32 + v.len() + json.len());
        out.extend_from_slice(&PARAMS_MAGIC);
        out.extend_from_slice(&PROTOCOL_VERSION.to_le_bytes());
        out.push(v.len() as u8);
        out.extend_from_slice(v);
        out.push(self.sculpt_enabled as u8);
        out.push(self.backend);
        out.extend_from_slice(&self.coast_mask_hash.to_le_bytes());
        out.extend_from_slice(&self.base_paint_hash.to_le_bytes());
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(&json);
        Ok(out)
    }

    /// Decode; the parameters are validated (`IslandParams::validate`).
    pub fn decode(bytes: &[u8]) -> Result<ParamsMessage, SyncError> {
        if bytes.len() > MAX_PARAMS_BYTES {
            return fail(format!("a parameter block of {} bytes", bytes.len()));
        }
        let mut r = Reader::new(bytes);
        if r.take(4)? != PARAMS_MAGIC {
            return fail("not a parameter block (wrong magic)");
        }
        let version = r.u16()?;
        if version != PROTOCOL_VERSION {
            return fail(format!(
                "parameters of protocol version {version}, this addon speaks {PROTOCOL_VERSION}"
            ));
        }
        let vlen = r.u8()? as usize;
        let addon_version = String::from_utf8(r.take(vlen)?.to_vec())
            .map_err(|_| SyncError("the addon version is not UTF-8".into()))?;
        let flags = r.u8()?;
        let backend = r.u8()?;
        if backend > 2 {
            return fail(format!("unknown backend {backend}"));
        }
        let coast_mask_hash = r.u64()?;
        let base_paint_hash = r.u64()?;
        let len = r.u32()? as usize;
        let json = r.take(len)?;
        r.end()?;
        let params: IslandParams = serde_json_parse(json)?;
        params
            .validate()
            .map_err(|e| SyncError(format!("the parameters are invalid: {e}")))?;
        Ok(ParamsMessage {
            addon_version,
            params,
            sculpt_enabled: flags & 1 != 0,
            backend,
            coast_mask_hash,
            base_paint_hash,
        })
    }
}

fn serde_json_bytes(p: &IslandParams) -> Result<Vec<u8>, SyncError> {
    serde_json::to_vec(p).map_err(|e| SyncError(format!("cannot encode the parameters: {e}")))
}

fn serde_json_parse(json: &[u8]) -> Result<IslandParams, SyncError> {
    serde_json::from_slice(json)
        .map_err(|e| SyncError(format!("the parameters do not decode: {e}")))
}

/// Hashes of what a peer ended with, compared between peers at the same edit count.
/// Encoded as `["ISFP", version u16, edits u32, heights, water, splat, paint (u64 each)]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    /// Edits of the log applied when it was taken.
    pub edits: u32,
    /// The final heights (bits).
    pub heights: u64,
    /// Water levels (bits) and kinds.
    pub water: u64,
    /// The generated splat weights.
    pub splat: u64,
    /// The paint, scatter erase masks and sculpt layer ([`paint_hash`]).
    pub paint: u64,
}

impl Fingerprint {
    /// The fingerprint of `island` with its paint hash (see [`paint_hash`]) after `edits` edits.
    pub fn of(island: &Island, paint: u64, edits: u32) -> Fingerprint {
        let f32s = |v: &[f32]| hash_bytes(bytemuck::cast_slice(v));
        let water = hash_pair(f32s(&island.water.level), hash_bytes(&island.water.kind));
        Fingerprint {
            edits,
            heights: f32s(&island.field.heights),
            water,
            splat: hash_bytes(bytemuck::cast_slice(&island.splat)),
            paint,
        }
    }

    /// The fingerprint's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(42);
        out.extend_from_slice(&FINGERPRINT_MAGIC);
        out.extend_from_slice(&PROTOCOL_VERSION.to_le_bytes());
        out.extend_from_slice(&self.edits.to_le_bytes());
        for h in [self.heights, self.water, self.splat, self.paint] {
            out.extend_from_slice(&h.to_le_bytes());
        }
        out
    }

    /// Decode a fingerprint.
    pub fn decode(bytes: &[u8]) -> Result<Fingerprint, SyncError> {
        let mut r = Reader::new(bytes);
        if r.take(4)? != FINGERPRINT_MAGIC {
            return fail("not a fingerprint (wrong magic)");
        }
        let version = r.u16()?;
        if version != PROTOCOL_VERSION {
            return fail(format!("fingerprint of protocol version {version}"));
        }
        let f = Fingerprint {
            edits: r.u32()?,
            heights: r.u64()?,
            water: r.u64()?,
            splat: r.u64()?,
            paint: r.u64()?,
        };
        r.end()?;
        Ok(f)
    }

    /// What differs from `other`, in words (empty when equal).
    pub fn differences(&self, other: &Fingerprint) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.edits != other.edits {
            v.push("edit count");
        }
        if self.heights != other.heights {
            v.push("heights");
        }
        if self.water != other.water {
            v.push("water");
        }
        if self.splat != other.splat {
            v.push("splat");
        }
        if self.paint != other.paint {
            v.push("paint and sculpt");
        }
        v
    }

    /// The fingerprint as 16 hex digits (heights, water, splat and paint folded).
    pub fn hex(&self) -> String {
        let h = hash_pair(
            hash_pair(self.heights, self.water),
            hash_pair(self.splat, self.paint),
        );
        format!("{h:016x}")
    }
}

/// One edit of an island world: the cell whose island it changes and the command (its points in
/// that island's frame).
#[derive(Clone, Debug, PartialEq)]
pub struct CellEdit {
    /// The world cell (`island_core::world` cell coordinates).
    pub cell: [i32; 2],
    /// The edit.
    pub command: EditCommand,
}

impl CellEdit {
    /// `[cell x i32, cell z i32, command]`.
    pub fn encode(&self) -> Result<Vec<u8>, SyncError> {
        let c = self.command.encode()?;
        let mut out = Vec::with_capacity(8 + c.len());
        out.extend_from_slice(&self.cell[0].to_le_bytes());
        out.extend_from_slice(&self.cell[1].to_le_bytes());
        out.extend_from_slice(&c);
        Ok(out)
    }

    /// Decode and validate.
    pub fn decode(bytes: &[u8]) -> Result<CellEdit, SyncError> {
        let mut r = Reader::new(bytes);
        let cx = r.u32()? as i32;
        let cz = r.u32()? as i32;
        let command = EditCommand::decode(&bytes[8..])?;
        Ok(CellEdit {
            cell: [cx, cz],
            command,
        })
    }
}

/// Every edit of an island world, in order. Encoded as `["ISWL", version u16, count u32, then
/// per edit: length u16, [`CellEdit`]]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorldEditLog {
    /// The edits, oldest first.
    pub edits: Vec<CellEdit>,
}

impl WorldEditLog {
    /// The log's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(10 + self.edits.len() * 72);
        out.extend_from_slice(&WORLD_LOG_MAGIC);
        out.extend_from_slice(&PROTOCOL_VERSION.to_le_bytes());
        out.extend_from_slice(&(self.edits.len() as u32).to_le_bytes());
        for e in &self.edits {
            let b = e.encode().unwrap_or_default();
            out.extend_from_slice(&(b.len() as u16).to_le_bytes());
            out.extend_from_slice(&b);
        }
        out
    }

    /// Decode and validate a whole log (all or nothing).
    pub fn decode(bytes: &[u8]) -> Result<WorldEditLog, SyncError> {
        let mut r = Reader::new(bytes);
        if r.take(4)? != WORLD_LOG_MAGIC {
            return fail("not a world edit log (wrong magic)");
        }
        let version = r.u16()?;
        if version != PROTOCOL_VERSION {
            return fail(format!(
                "world edit log of protocol version {version}, this addon speaks {PROTOCOL_VERSION}"
            ));
        }
        let n = r.u32()? as usize;
        if n > MAX_LOG_COMMANDS || n > r.left() / (2 + 8 + 2 + BRUSH_BYTES) {
            return fail(format!(
                "a world edit log of {n} edits in {} bytes",
                bytes.len()
            ));
        }
        let mut edits = Vec::with_capacity(n);
        for i in 0..n {
            let len = r.u16()? as usize;
            let e =
                CellEdit::decode(r.take(len)?).map_err(|e| SyncError(format!("edit {i}: {e}")))?;
            edits.push(e);
        }
        r.end()?;
        Ok(WorldEditLog { edits })
    }

    /// How many edits of the log belong to `cell`.
    pub fn count_for(&self, cell: [i32; 2]) -> usize {
        self.edits.iter().filter(|e| e.cell == cell).count()
    }
}

/// What the authority of an island world sends on connect: its addon version, the world's
/// parameters and a hash of its island template's parameters (every peer must have the same
/// `island_scene`). `["ISWP", version u16, addon version (u8 length + UTF-8), template hash u64,
/// u32 length + JSON of WorldParams]`.
#[derive(Clone, Debug, PartialEq)]
pub struct WorldMessage {
    /// The sender's addon version.
    pub addon_version: String,
    /// The world's layout.
    pub world: crate::world::WorldParams,
    /// [`hash_bytes`] of the template island's parameters (JSON).
    pub template_hash: u64,
}

impl WorldMessage {
    /// The message's bytes.
    pub fn encode(&self) -> Result<Vec<u8>, SyncError> {
        let json = serde_json::to_vec(&self.world)
            .map_err(|e| SyncError(format!("cannot encode the world: {e}")))?;
        let v = self.addon_version.as_bytes();
        if v.len() > 255 {
            return fail("addon version longer than 255 bytes");
        }
        let mut out = Vec::with_capacity(24 + v.len() + json.len());
        out.extend_from_slice(&WORLD_MAGIC);
        out.extend_from_slice(&PROTOCOL_VERSION.to_le_bytes());
        out.push(v.len() as u8);
        out.extend_from_slice(v);
        out.extend_from_slice(&self.template_hash.to_le_bytes());
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(&json);
        Ok(out)
    }

    /// Decode; the world is validated.
    pub fn decode(bytes: &[u8]) -> Result<WorldMessage, SyncError> {
        if bytes.len() > MAX_PARAMS_BYTES {
            return fail(format!("a world block of {} bytes", bytes.len()));
        }
        let mut r = Reader::new(bytes);
        if r.take(4)? != WORLD_MAGIC {
            return fail("not a world block (wrong magic)");
        }
        let version = r.u16()?;
        if version != PROTOCOL_VERSION {
            return fail(format!(
                "world of protocol version {version}, this addon speaks {PROTOCOL_VERSION}"
            ));
        }
        let vlen = r.u8()? as usize;
        let addon_version = String::from_utf8(r.take(vlen)?.to_vec())
            .map_err(|_| SyncError("the addon version is not UTF-8".into()))?;
        let template_hash = r.u64()?;
        let len = r.u32()? as usize;
        let json = r.take(len)?;
        r.end()?;
        let world: crate::world::WorldParams = serde_json::from_slice(json)
            .map_err(|e| SyncError(format!("the world does not decode: {e}")))?;
        world
            .validate()
            .map_err(|e| SyncError(format!("the world is invalid: {e}")))?;
        Ok(WorldMessage {
            addon_version,
            world,
            template_hash,
        })
    }
}

/// [`hash_bytes`] of an island template's parameters (as JSON; coast mask and sculpt layer
/// skipped, as on the network).
pub fn params_hash(p: &IslandParams) -> u64 {
    hash_bytes(&serde_json::to_vec(p).unwrap_or_default())
}

/// One hash of the paint a peer holds: the paint layer, each scatter layer's erase mask and the
/// sculpt layer. An all-zero paint layer, a mask with nothing erased and an empty sculpt layer
/// count as absent, so an island that was never painted and one whose paint was cleared agree.
pub fn paint_hash(
    paint: Option<&PaintLayer>,
    erase: &[Option<EraseMask>],
    sculpt: Option<&SculptLayer>,
) -> u64 {
    let mut h = 0x9e37_79b9_7f4a_7c15u64;
    if let Some(p) = paint.filter(|p| !p.is_empty()) {
        h = hash_pair(h, hash_bytes(&p.encode()));
    }
    for (i, m) in erase.iter().enumerate() {
        if let Some(m) = m {
            let n = m.resolution();
            if (0..n * n).any(|k| m.is_erased(k)) {
                let bits: Vec<u8> = (0..n * n).map(|k| m.is_erased(k) as u8).collect();
                h = hash_pair(h, hash_pair(i as u64 + 1, hash_bytes(&bits)));
            }
        }
    }
    if let Some(s) = sculpt.filter(|s| !s.is_empty()) {
        h = hash_pair(h, hash_bytes(&s.encode()));
    }
    h
}

/// A 64-bit hash of bytes (8 bytes a step, multiply-rotate; not cryptographic: it tells peers
/// that computed the same thing from peers that did not).
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9fb2_1c65_1e98_df25;
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ (bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        h = (h ^ w).wrapping_mul(K).rotate_left(29);
    }
    let mut last = [0u8; 8];
    let rest = chunks.remainder();
    last[..rest.len()].copy_from_slice(rest);
    h = (h ^ u64::from_le_bytes(last)).wrapping_mul(K);
    h ^= h >> 32;
    h = h.wrapping_mul(K);
    h ^ (h >> 29)
}

fn hash_pair(a: u64, b: u64) -> u64 {
    hash_bytes(&[a.to_le_bytes(), b.to_le_bytes()].concat())
}

/// A bounds-checked little-endian reader.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn new(b: &'a [u8]) -> Self {
        Reader { b, at: 0 }
    }
    fn left(&self) -> usize {
        self.b.len() - self.at
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], SyncError> {
        if n > self.left() {
            return fail(format!(
                "message too short: {} bytes, needs at least {}",
                self.b.len(),
                self.at + n
            ));
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, SyncError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, SyncError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2")))
    }
    fn u32(&mut self) -> Result<u32, SyncError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4")))
    }
    fn u64(&mut self) -> Result<u64, SyncError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8")))
    }
    fn f32(&mut self) -> Result<f32, SyncError> {
        Ok(f32::from_le_bytes(self.take(4)?.try_into().expect("4")))
    }
    fn end(&self) -> Result<(), SyncError> {
        if self.left() != 0 {
            return fail(format!("message too long: {} bytes left over", self.left()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brush() -> EditBrush {
        EditBrush {
            mode: 6,
            layer: 1,
            scatter_layer: 0,
            radius: 12.0,
            strength: 0.5,
            hardness: 0.3,
            spacing: 0.25,
            sculpt_height: 2.0,
            flatten_height: 10.0,
            height_mask: [-1000.0, 10000.0, 0.0],
            slope_mask: [0.0, 90.0, 0.0],
        }
    }

    fn stroke(points: Vec<[f32; 2]>) -> EditCommand {
        EditCommand {
            brush: brush(),
            action: EditAction::Stroke(points),
        }
    }

    #[test]
    fn commands_and_logs_round_trip() {
        let cmds = vec![
            stroke(vec![[1.5, -2.0]]),
            stroke(vec![[0.0, 0.0], [30.0, 12.5], [60.0, 0.0]]),
            EditCommand {
                brush: EditBrush { mode: 0, ..brush() },
                action: EditAction::Fill,
            },
            EditCommand {
                brush: EditBrush {
                    mode: 0,
                    layer: 4,
                    ..brush()
                },
                action: EditAction::ClearLayer,
            },
        ];
        for c in &cmds {
            let b = c.encode().unwrap();
            assert_eq!(&EditCommand::decode(&b).unwrap(), c);
        }
        // A dab is 58 bytes: compact enough that 100 edits are a few kB.
        assert_eq!(cmds[0].encode().unwrap().len(), 2 + BRUSH_BYTES + 2 + 8);
        let log = EditLog { commands: cmds };
        let bytes = log.encode();
        assert_eq!(EditLog::decode(&bytes).unwrap(), log);
        assert_eq!(
            EditLog::decode(&EditLog::default().encode())
                .unwrap()
                .commands
                .len(),
            0
        );
    }

    #[test]
    fn hostile_commands_are_errors() {
        let good = stroke(vec![[1.0, 2.0]]).encode().unwrap();
        // Every truncation and an extra byte.
        for n in 0..good.len() {
            assert!(EditCommand::decode(&good[..n]).is_err(), "truncated to {n}");
        }
        let mut long = good.clone();
        long.push(0);
        assert!(EditCommand::decode(&long)
            .unwrap_err()
            .0
            .contains("too long"));
        // Wrong version, unknown action, unknown mode, bad layer.
        let mut b = good.clone();
        b[0] = 9;
        assert!(EditCommand::decode(&b)
            .unwrap_err()
            .0
            .contains("protocol version 9"));
        let mut b = good.clone();
        b[1] = 7;
        assert!(EditCommand::decode(&b).is_err());
        let mut b = good.clone();
        b[2] = 11;
        assert!(EditCommand::decode(&b)
            .unwrap_err()
            .0
            .contains("unknown brush mode 11"));
        let mut b = good.clone();
        b[3] = 8;
        assert!(EditCommand::decode(&b)
            .unwrap_err()
            .0
            .contains("splat layer 8"));
        // NaN and a huge radius (the radius is the first float, at byte 6).
        for (v, what) in [(f32::NAN, "not finite"), (1.0e9, "outside"), (-1.0, "> 0")] {
            let mut b = good.clone();
            b[6..10].copy_from_slice(&v.to_le_bytes());
            let e = EditCommand::decode(&b).unwrap_err().0;
            assert!(e.contains(what), "{e}");
        }
        // A NaN point.
        let mut b = good.clone();
        let at = b.len() - 8;
        b[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
        assert!(EditCommand::decode(&b)
            .unwrap_err()
            .0
            .contains("out of range"));
        // Encoding refuses what decoding would refuse.
        let mut c = stroke(vec![[1.0, 2.0]]);
        c.brush.radius = f32::INFINITY;
        assert!(c.encode().is_err());
        assert!(stroke(vec![]).encode().is_err());
        assert!(stroke(vec![[0.0, 0.0]; MAX_STROKE_POINTS + 1])
            .encode()
            .is_err());
        let sculpt_fill = EditCommand {
            brush: brush(),
            action: EditAction::Fill,
        };
        assert!(sculpt_fill.encode().is_err());
    }

    #[test]
    fn hostile_logs_are_errors() {
        let log = EditLog {
            commands: vec![stroke(vec![[1.0, 2.0]]); 3],
        };
        let good = log.encode();
        for n in 0..good.len() {
            assert!(EditLog::decode(&good[..n]).is_err(), "truncated to {n}");
        }
        let mut b = good.clone();
        b[0] = b'X';
        assert!(EditLog::decode(&b).unwrap_err().0.contains("magic"));
        // A count that the bytes cannot hold is refused before anything is allocated.
        let mut b = good.clone();
        b[6..10].copy_from_slice(&(MAX_LOG_COMMANDS as u32).to_le_bytes());
        assert!(EditLog::decode(&b).is_err());
        let mut b = good.clone();
        b[6..10].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(EditLog::decode(&b).is_err());
        // A bad command inside names its index.
        let mut b = good.clone();
        let second = 10 + (2 + good.len() - 10) / 3;
        b[second + 2 + 2] = 42;
        assert!(EditLog::decode(&b).unwrap_err().0.starts_with("command 1:"));
    }

    #[test]
    fn params_round_trip_and_refuse_bad_blocks() {
        let mut params = IslandParams {
            seed: 77,
            resolution: 257,
            world_size: 512.0,
            ..IslandParams::default()
        };
        params.fbm.octaves = 5;
        params.shaping_curve = vec![0.0, 0.2, 1.0];
        let m = ParamsMessage {
            addon_version: "0.1.0".into(),
            params,
            sculpt_enabled: true,
            backend: 2,
            coast_mask_hash: 0,
            base_paint_hash: 99,
        };
        let b = m.encode().unwrap();
        assert_eq!(ParamsMessage::decode(&b).unwrap(), m);
        // Far smaller than a heightmap of the same island (257² f32 = 264 kB).
        assert!(b.len() < 8192, "{}", b.len());
        for n in [0, 3, 10, b.len() - 1] {
            assert!(ParamsMessage::decode(&b[..n]).is_err());
        }
        // Invalid parameters inside a well-formed block.
        let mut bad = m.clone();
        bad.params.resolution = 100;
        let e = ParamsMessage::decode(&bad.encode().unwrap()).unwrap_err().0;
        assert!(e.contains("invalid"), "{e}");
        let mut b2 = b.clone();
        b2[4] = 2;
        assert!(ParamsMessage::decode(&b2)
            .unwrap_err()
            .0
            .contains("protocol version 2"));
    }

    #[test]
    fn fingerprints_tell_islands_apart() {
        let p = IslandParams {
            resolution: 65,
            world_size: 256.0,
            ..IslandParams::default()
        };
        let a = crate::pipeline::generate(&p).unwrap();
        let b = crate::pipeline::generate(&p).unwrap();
        let fa = Fingerprint::of(&a, 1, 0);
        assert_eq!(fa, Fingerprint::of(&b, 1, 0));
        assert_eq!(Fingerprint::decode(&fa.encode()).unwrap(), fa);
        let c = crate::pipeline::generate(&IslandParams {
            seed: 2,
            ..p.clone()
        })
        .unwrap();
        let fc = Fingerprint::of(&c, 1, 0);
        assert!(fc.differences(&fa).contains(&"heights"));
        assert_ne!(fc.hex(), fa.hex());
        let mut d = a.clone();
        d.field.heights[100] = f32::from_bits(d.field.heights[100].to_bits() ^ 1);
        assert_eq!(Fingerprint::of(&d, 1, 0).differences(&fa), vec!["heights"]);
        assert_eq!(
            Fingerprint::of(&a, 2, 0).differences(&fa),
            vec!["paint and sculpt"]
        );
    }

    #[test]
    fn paint_hash_ignores_empty_paint_only() {
        let none = paint_hash(None, &[], None);
        let mut layer = PaintLayer::new(33);
        assert_eq!(
            paint_hash(Some(&layer), &[None, Some(EraseMask::new(33))], None),
            none
        );
        let mut m = EraseMask::new(33);
        m.set(5, true);
        assert_ne!(paint_hash(None, &[Some(m.clone())], None), none);
        // The same mask on another scatter layer is another paint.
        assert_ne!(
            paint_hash(None, &[None, Some(m.clone())], None),
            paint_hash(None, &[Some(m)], None)
        );
        layer
            .set_region(crate::paint::Rect::full(33), &vec![1u8; 33 * 33 * 8])
            .unwrap();
        assert_ne!(paint_hash(Some(&layer), &[], None), none);
    }

    #[test]
    fn hash_bytes_sees_every_byte() {
        let base = vec![7u8; 37];
        let h = hash_bytes(&base);
        for i in 0..base.len() {
            let mut b = base.clone();
            b[i] ^= 1;
            assert_ne!(hash_bytes(&b), h, "byte {i}");
        }
        assert_ne!(hash_bytes(&base[..36]), h);
    }
    #[test]
    fn world_messages_round_trip_and_refuse_bad_bytes() {
        let log = WorldEditLog {
            edits: vec![
                CellEdit {
                    cell: [-3, 7],
                    command: stroke(vec![[1.0, 2.0]]),
                },
                CellEdit {
                    cell: [0, 0],
                    command: stroke(vec![[5.0, 6.0], [7.0, 8.0]]),
                },
            ],
        };
        let b = log.encode();
        assert_eq!(WorldEditLog::decode(&b).unwrap(), log);
        assert_eq!(log.count_for([-3, 7]), 1);
        for n in 0..b.len() {
            assert!(WorldEditLog::decode(&b[..n]).is_err(), "truncated to {n}");
        }
        let one = log.edits[0].encode().unwrap();
        assert_eq!(CellEdit::decode(&one).unwrap(), log.edits[0]);
        assert!(CellEdit::decode(&one[..6]).is_err());
        let m = WorldMessage {
            addon_version: "0.1.0".into(),
            world: crate::world::WorldParams {
                world_seed: 9,
                ..Default::default()
            },
            template_hash: params_hash(&IslandParams::default()),
        };
        let mb = m.encode().unwrap();
        assert_eq!(WorldMessage::decode(&mb).unwrap(), m);
        let mut bad = m.clone();
        bad.world.cell_size = -1.0;
        assert!(WorldMessage::decode(&bad.encode().unwrap())
            .unwrap_err()
            .0
            .contains("invalid"));
        assert_ne!(
            params_hash(&IslandParams::default()),
            params_hash(&IslandParams {
                seed: 3,
                ..IslandParams::default()
            })
        );
    }
}
