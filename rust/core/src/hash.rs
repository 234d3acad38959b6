//! The one integer hash of the project, ported bit-for-bit to WGSL (`shaders/common.wgsl`).
//!
//! Everything random in the generator derives from [`hash_u32`] (Chris Wellons' "lowbias32"
//! avalanche permutation), using only 32-bit wrapping integer arithmetic so that the GPU gives
//! the very same bits. No `sin`-based PRNG anywhere: every `u64` seed works.

/// Avalanche hash of one 32-bit word (lowbias32). Bijective on `u32`.
#[inline(always)]
pub fn hash_u32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x
}

/// Hash of an integer lattice point `(x, y)` under a 32-bit `seed`.
#[inline(always)]
pub fn hash2(x: i32, y: i32, seed: u32) -> u32 {
    hash_u32((x as u32) ^ hash_u32((y as u32) ^ seed))
}

/// Hash of `(x, y)` mapped to `[0, 1)` with 24 bits of precision (exact in f32).
#[inline(always)]
pub fn hash2_unit(x: i32, y: i32, seed: u32) -> f32 {
    (hash2(x, y, seed) >> 8) as f32 * (1.0 / 16_777_216.0)
}

/// Map a hash to `[0, 1)` with 24 bits of precision.
#[inline(always)]
pub fn unit(h: u32) -> f32 {
    (h >> 8) as f32 * (1.0 / 16_777_216.0)
}

/// Fold a 64-bit user seed and a stage tag into a 32-bit stage seed.
///
/// Both halves of the seed take part, so seeds that differ only in their high 32 bits still
/// give different islands.
pub fn stage_seed(seed: u64, stage: u32) -> u32 {
    let lo = seed as u32;
    let hi = (seed >> 32) as u32;
    hash_u32(lo ^ hash_u32(hi ^ hash_u32(stage.wrapping_add(0x9e37_79b9))))
}

/// Stage tags: each stage draws from its own stream.
pub mod tag {
    pub const BASE: u32 = 1;
    pub const DETAIL: u32 = 2;
    pub const MASK: u32 = 3;
    pub const FINE: u32 = 4;
    pub const RIVER: u32 = 5;
    pub const BIOME: u32 = 6;
    pub const SPLAT: u32 = 7;
}

/// A 128-bit digest of byte strings (in order; each one's length counts), to tell whether data
/// changed since it was last built into something (a chunk's mesh and collider). Four
/// independent lanes take every fourth 8-byte word each (xor, multiply by an odd constant,
/// rotate: a bijection of the lane for each word, so one changed word always changes its lane),
/// mixed at the end. Fast (several GB/s), not cryptographic, never part of a generated output.
pub fn digest(parts: &[&[u8]]) -> u128 {
    const K: [u64; 4] = [
        0x9e37_79b9_7f4a_7c15,
        0xc2b2_ae3d_27d4_eb4f,
        0x1656_67b1_9e37_79f9,
        0x27d4_eb2f_1656_67c5,
    ];
    let mut lane = [
        0x243f_6a88_85a3_08d3u64,
        0x1319_8a2e_0370_7344,
        0xa409_3822_299f_31d0,
        0x082e_fa98_ec4e_6c89,
    ];
    #[inline(always)]
    fn step(l: u64, w: u64, k: u64) -> u64 {
        (l ^ w).wrapping_mul(k).rotate_left(29)
    }
    for part in parts {
        lane[0] = step(lane[0], part.len() as u64, K[0]);
        let mut blocks = part.chunks_exact(32);
        for b in &mut blocks {
            for (k, l) in lane.iter_mut().enumerate() {
                let w = u64::from_le_bytes(b[8 * k..8 * k + 8].try_into().expect("8 bytes"));
                *l = step(*l, w, K[k]);
            }
        }
        let mut rest = [0u8; 32];
        let r = blocks.remainder();
        rest[..r.len()].copy_from_slice(r);
        for (k, l) in lane.iter_mut().enumerate() {
            let w = u64::from_le_bytes(rest[8 * k..8 * k + 8].try_into().expect("8 bytes"));
            *l = step(*l, w, K[k]);
        }
    }
    let fin = |mut x: u64| {
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        x ^ (x >> 33)
    };
    let [a, b, c, d] = lane.map(fin);
    let hi = fin(a ^ c.rotate_left(17)) ^ b;
    let lo = fin(b ^ d.rotate_left(41)) ^ c;
    ((hi as u128) << 64) | lo as u128
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_tells_every_changed_byte_and_boundary() {
        let data: Vec<u8> = (0..1000u32).map(|i| hash_u32(i) as u8).collect();
        let d = digest(&[&data]);
        assert_eq!(d, digest(&[&data.clone()]), "same bytes, same digest");
        let mut seen = std::collections::HashSet::new();
        seen.insert(d);
        for k in [0, 7, 8, 500, 998, 999] {
            for bit in [0, 7] {
                let mut c = data.clone();
                c[k] ^= 1 << bit;
                assert!(seen.insert(digest(&[&c])), "byte {k} bit {bit}");
            }
        }
        // Where the parts split counts, and so does a trailing zero byte.
        assert!(seen.insert(digest(&[&data[..8], &data[8..]])));
        assert!(seen.insert(digest(&[&data[..9], &data[9..]])));
        let mut z = data.clone();
        z.push(0);
        assert!(seen.insert(digest(&[&z])));
        assert!(seen.insert(digest(&[])));
    }

    #[test]
    fn known_values_pin_the_wgsl_port() {
        // These values are also asserted by the GPU parity tests; changing the hash breaks both.
        assert_eq!(hash_u32(0), 0);
        assert_eq!(hash_u32(1), 0x6889_90c0);
        assert_eq!(hash_u32(0xdead_beef), 0xe628_c683);
        assert_ne!(hash2(1, 2, 3), hash2(2, 1, 3));
    }

    #[test]
    fn stage_seed_uses_high_bits() {
        assert_ne!(stage_seed(1, 0), stage_seed(1 | (1 << 40), 0));
        assert_ne!(stage_seed(u64::MAX, 0), stage_seed(u64::MAX - 1, 0));
    }

    #[test]
    fn unit_in_range() {
        for i in 0..10_000 {
            let v = hash2_unit(i, -i, 7);
            assert!((0.0..1.0).contains(&v));
        }
    }
}
