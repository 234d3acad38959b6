//! [`LayerMoves`]: how the entries of a resource array moved between two looks at it (plain
//! data, by instance id). `scatter_nodes` makes it; the `SplatPaint`'s scatter erase masks
//! follow their layers with it.

use godot::prelude::InstanceId;

/// How the entries of `scatter_layers` moved between two frames, by resource identity:
/// `from[i]` is the old index of the layer now at `i` (`None`: a layer that was not there),
/// `gone` the old indices and ids of layers no longer in the array. Erase masks (kept per index in
/// the `SplatPaint`) follow their layer with it when the user reorders, inserts or removes layers.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerMoves {
    pub from: Vec<Option<usize>>,
    pub old_ids: Vec<Option<InstanceId>>,
    pub new_ids: Vec<Option<InstanceId>>,
    pub gone: Vec<(usize, InstanceId)>,
}

impl LayerMoves {
    /// The moves from `old` to `new` ids, or `None` when every layer kept its index and none
    /// was removed or added.
    pub fn between(old: &[Option<InstanceId>], new: &[Option<InstanceId>]) -> Option<LayerMoves> {
        if old.is_empty() {
            // The first look at the array (entering the tree, a loaded scene): nothing moved.
            return None;
        }
        let mut used = vec![false; old.len()];
        let from: Vec<Option<usize>> = new
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let id = (*id)?;
                // Prefer the same index (the same resource twice in the array stays put).
                let j = if old.get(i) == Some(&Some(id)) && !used[i] {
                    i
                } else {
                    old.iter()
                        .enumerate()
                        .position(|(j, o)| !used[j] && *o == Some(id))?
                };
                used[j] = true;
                Some(j)
            })
            .collect();
        let gone: Vec<(usize, InstanceId)> = old
            .iter()
            .enumerate()
            .filter_map(|(j, o)| match o {
                Some(id) if !used[j] => Some((j, *id)),
                _ => None,
            })
            .collect();
        let moved = from
            .iter()
            .enumerate()
            .any(|(i, f)| f.is_some_and(|j| j != i));
        let shifted = !gone.is_empty();
        let arrived = from
            .iter()
            .zip(new)
            .any(|(f, id)| f.is_none() && id.is_some());
        (moved || shifted || arrived).then(|| LayerMoves {
            from,
            old_ids: old.to_vec(),
            new_ids: new.to_vec(),
            gone,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::LayerMoves;
    use godot::prelude::InstanceId;

    fn ids(v: &[i64]) -> Vec<Option<InstanceId>> {
        v.iter()
            .map(|&k| (k != 0).then(|| InstanceId::from_i64(k)))
            .collect()
    }

    #[test]
    fn layer_moves_follow_resources() {
        // Nothing moved, or the first look at the array.
        assert_eq!(LayerMoves::between(&ids(&[1, 2]), &ids(&[1, 2])), None);
        assert_eq!(LayerMoves::between(&[], &ids(&[1, 2])), None);
        // Dropping the last entry: nobody moves, but it is gone (its mask is parked).
        let m = LayerMoves::between(&ids(&[1, 2]), &ids(&[1])).expect("removed");
        assert_eq!(m.from, vec![Some(0)]);
        assert_eq!(m.gone, vec![(1, InstanceId::from_i64(2))]);
        // A swap.
        let m = LayerMoves::between(&ids(&[1, 2]), &ids(&[2, 1])).expect("moved");
        assert_eq!(m.from, vec![Some(1), Some(0)]);
        assert!(m.gone.is_empty());
        // Removing the first: the second shifts down, the first is gone.
        let m = LayerMoves::between(&ids(&[1, 2]), &ids(&[2])).expect("moved");
        assert_eq!(m.from, vec![Some(1)]);
        assert_eq!(m.gone, vec![(0, InstanceId::from_i64(1))]);
        // Inserting in front: the old ones shift up, the new one comes from nowhere.
        let m = LayerMoves::between(&ids(&[1, 2]), &ids(&[3, 1, 2])).expect("moved");
        assert_eq!(m.from, vec![None, Some(0), Some(1)]);
        // The same resource twice stays at its index; a null entry has no source.
        let m = LayerMoves::between(&ids(&[1, 1, 2]), &ids(&[2, 1, 0, 1])).expect("moved");
        assert_eq!(m.from, vec![Some(2), Some(1), None, Some(0)]);
    }
}
