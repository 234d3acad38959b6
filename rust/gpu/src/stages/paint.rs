//! `fill_by_rule.wgsl`: `island_core::paint::fill_by_rule` (paint and erase modes).

use crate::ctx::grid2;
use crate::error::GpuError;
use crate::passes::Entry;
use crate::recorder::u32s;
use crate::stages::host::*;
use crate::uniforms::{self as u, Grid};
use island_core::paint::{Brush, Changed, Mode, PaintError, PaintLayer, Rect, Surface};

/// The entry points this module dispatches (registered in `crate::shaders`).
const FILL_BY_RULE: Entry = Entry::new("fill_by_rule", "main");

fn paint_err(e: PaintError) -> GpuError {
    bad("brush", e.to_string())
}

/// GPU [`island_core::paint::fill_by_rule`] for [`Mode::Paint`] and [`Mode::Erase`] (the brush
/// over the whole island with amount `strength · mask`); [`Mode::Smooth`] and a base with layers
/// 4..7 ([`island_core::paint::Base::upper`]) are CPU-only
/// ([`GpuError::Unsupported`]). On error `paint` is left untouched.
pub fn fill_by_rule(
    paint: &mut PaintLayer,
    surf: &Surface,
    brush: &Brush,
) -> Result<Changed, GpuError> {
    brush.validate().map_err(paint_err)?;
    let field = surf.field;
    let n = field.resolution;
    let nn = n * n;
    if paint.resolution != n || paint.data.len() != nn {
        return Err(paint_err(PaintError::Mismatch(format!(
            "paint is {}², heightfield {n}²",
            paint.resolution
        ))));
    }
    if !surf.base.is_empty() && surf.base.len() != nn {
        return Err(paint_err(PaintError::Mismatch(format!(
            "base splat has {} samples, expected {nn}",
            surf.base.len()
        ))));
    }
    if surf.base.upper.is_some() {
        return Err(GpuError::Unsupported(
            "fill_by_rule over a base with layers 4..7 (a road on a user layer)".into(),
        ));
    }
    if field.normals.len() != nn || field.heights.len() != nn {
        return Err(paint_err(PaintError::Mismatch(
            "heightfield normals missing".into(),
        )));
    }
    let all = Rect::full(n);
    if brush.strength <= 0.0 {
        return Ok(Changed {
            texels: 0,
            rect: all,
        });
    }
    let mode = match brush.mode {
        Mode::Paint => 0,
        Mode::Erase => 1,
        Mode::Smooth => return Err(GpuError::Unsupported("fill_by_rule in smooth mode".into())),
    };
    let m = &brush.masks;
    let bp = u::Brush {
        layer: brush.layer as u32,
        mode,
        strength: brush.strength,
        min_height: m.min_height,
        max_height: m.max_height,
        height_fade: m.height_fade,
        min_slope: m.min_slope,
        max_slope: m.max_slope,
        slope_fade: m.slope_fade,
    };
    let (data, texels) = with_gpu(Grid::new(n, field.world_size, 0), |gpu, rec| {
        let ny: Vec<f32> = field.normals.iter().map(|v| v[1]).collect();
        let base: Vec<u32> = if surf.base.is_empty() {
            vec![u32::from_le_bytes([0, 255, 0, 0]); nn]
        } else {
            surf.base
                .lower
                .iter()
                .map(|b| u32::from_le_bytes(*b))
                .collect()
        };
        let pa: Vec<u32> = paint
            .data
            .iter()
            .map(|p| u32::from_le_bytes([p[0], p[1], p[2], p[3]]))
            .collect();
        let pb: Vec<u32> = paint
            .data
            .iter()
            .map(|p| u32::from_le_bytes([p[4], p[5], p[6], p[7]]))
            .collect();
        let hb = gpu.storage_init("heights", bytemuck::cast_slice(&field.heights));
        let nb = gpu.storage_init("normal_y", bytemuck::cast_slice(&ny));
        let bb = gpu.storage_init("base", bytemuck::cast_slice(&base));
        let ab = gpu.storage_init("paint_a", bytemuck::cast_slice(&pa));
        let bb2 = gpu.storage_init("paint_b", bytemuck::cast_slice(&pb));
        let cb = gpu.storage("changed", 16);
        rec.enc.clear_buffer(&cb, 0, None);
        rec.pass(FILL_BY_RULE)
            .params(&bp)
            .read("heights", &hb)
            .read("normal_y", &nb)
            .read("base_splat", &bb)
            .read_write("paint_a", &ab)
            .read_write("paint_b", &bb2)
            .read_write("changed", &cb)
            .run(grid2(n))?;
        let bytes = nn as u64 * 4;
        let parts = rec.read_back(&[(&ab, bytes), (&bb2, bytes), (&cb, 4)], None)?;
        let (a, b) = (u32s(&parts[0]), u32s(&parts[1]));
        let texels = u32s(&parts[2])[0] as usize;
        let data: Vec<[u8; 8]> = a
            .iter()
            .zip(&b)
            .map(|(x, y)| {
                let (x, y) = (x.to_le_bytes(), y.to_le_bytes());
                [x[0], x[1], x[2], x[3], y[0], y[1], y[2], y[3]]
            })
            .collect();
        Ok((data, texels))
    })?;
    paint.data = data;
    Ok(Changed { texels, rect: all })
}
