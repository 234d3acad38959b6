//! The whole parameter schema of [`IslandParams`]: every section's table (see
//! [`crate::schema`]) in the docs groups' order, for the generated docs and the checks. Kept
//! apart from `schema` (the types every stage's table uses) so that the stages do not depend on
//! each other through it.

use crate::schema::{default_mismatches, infos, ParamInfo};

/// Every scalar parameter of [`IslandParams`], section by section (in the docs groups' order).
pub fn all() -> Vec<ParamInfo> {
    use crate::params::*;
    let mut v = infos(IslandParams::PARAMS, "", "island");
    v.extend(infos(FbmParams::PARAMS, "fbm", "fbm"));
    v.extend(infos(
        ValueNoiseParams::PARAMS,
        "value_noise",
        "value_noise",
    ));
    v.extend(infos(
        DiamondSquareParams::PARAMS,
        "diamond_square",
        "diamond_square",
    ));
    v.extend(infos(GaussianParams::PARAMS, "gaussian", "gaussian"));
    v.extend(infos(DetailParams::PARAMS, "detail", "detail"));
    v.extend(infos(MaskParams::PARAMS, "mask", "shape"));
    v.extend(infos(ShapeParams::PARAMS, "shape", "shape"));
    v.extend(infos(CoastParams::PARAMS, "coast", "coast"));
    v.extend(infos(RiverParams::PARAMS, "river", "river"));
    v.extend(infos(
        crate::drainage::DrainageSettings::PARAMS,
        "drainage",
        "river",
    ));
    v.extend(infos(
        crate::channels::CarveSettings::PARAMS,
        "channels",
        "river",
    ));
    v.extend(infos(
        crate::basins::BasinSettings::PARAMS,
        "basins",
        "river",
    ));
    v.extend(infos(
        crate::erosion::ErosionSettings::PARAMS,
        "erosion",
        "erosion",
    ));
    v.extend(infos(BiomeParams::PARAMS, "biomes", "biomes"));
    v.extend(infos(SplatParams::PARAMS, "splat", "splat"));
    v
}

/// Every table's mismatch between `Default` and the table (see [`default_mismatches`](crate::schema::default_mismatches)).
pub fn all_default_mismatches() -> Vec<String> {
    use crate::params::*;
    let mut v = Vec::new();
    // IslandParams' own fields: its Default holds the other sections too.
    let d = IslandParams::default();
    for p in IslandParams::PARAMS {
        if (p.get)(&d) != p.default {
            v.push(format!("{}: Default differs from the table", p.field));
        }
    }
    v.extend(default_mismatches(FbmParams::PARAMS, "fbm"));
    v.extend(default_mismatches(ValueNoiseParams::PARAMS, "value_noise"));
    v.extend(default_mismatches(
        DiamondSquareParams::PARAMS,
        "diamond_square",
    ));
    v.extend(default_mismatches(GaussianParams::PARAMS, "gaussian"));
    v.extend(default_mismatches(DetailParams::PARAMS, "detail"));
    v.extend(default_mismatches(MaskParams::PARAMS, "mask"));
    v.extend(default_mismatches(ShapeParams::PARAMS, "shape"));
    v.extend(default_mismatches(CoastParams::PARAMS, "coast"));
    v.extend(default_mismatches(RiverParams::PARAMS, "river"));
    v.extend(default_mismatches(
        crate::drainage::DrainageSettings::PARAMS,
        "drainage",
    ));
    v.extend(default_mismatches(
        crate::channels::CarveSettings::PARAMS,
        "channels",
    ));
    v.extend(default_mismatches(
        crate::basins::BasinSettings::PARAMS,
        "basins",
    ));
    v.extend(default_mismatches(
        crate::erosion::ErosionSettings::PARAMS,
        "erosion",
    ));
    v.extend(default_mismatches(BiomeParams::PARAMS, "biomes"));
    v.extend(default_mismatches(SplatParams::PARAMS, "splat"));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_tables_defaults() {
        let m = all_default_mismatches();
        assert!(m.is_empty(), "{}", m.join("\n"));
    }

    #[test]
    fn every_default_passes_its_check_and_paths_are_unique() {
        let all = all();
        for p in &all {
            p.check
                .check(p.default)
                .unwrap_or_else(|e| panic!("{}: {e}", p.path));
        }
        let mut paths: Vec<&str> = all.iter().map(|p| p.path.as_str()).collect();
        paths.sort();
        paths.dedup();
        assert_eq!(paths.len(), all.len());
        let mut props: Vec<&str> = all.iter().filter_map(|p| p.property).collect();
        let n = props.len();
        props.sort();
        props.dedup();
        assert_eq!(props.len(), n, "a property is named twice");
    }
}
