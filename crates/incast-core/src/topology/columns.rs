//! Switches that route alike share one column of the routing table.
//!
//! The routing table ([`super::Routes`]) has one row per switch with hosts
//! (an *edge row*) and, before merging, one column per switch: at k = 32 a
//! fat-tree has 512 rows x 1,280 switches, 1.3 MB of two-byte entries, and
//! the row a packet reads is a fresh last-level cache miss at most hops.
//! Most columns are copies of each other, though: every core switch of a
//! fat-tree routes by the destination's pod through the same port numbers,
//! every aggregation switch of a pod routes alike, and so does every edge
//! switch of a pod (apart from its own row, which routing never reads: there
//! the host's own port is the route). [`merge_columns`] keeps one column per
//! *class* of identical columns and a switch-to-class map, so the k = 32
//! table becomes 512 rows x 65 classes (67 KB), small enough to stay in the
//! second-level cache. Nothing here knows about fat-trees: any topology's
//! identical columns merge, and a topology without any keeps its full size
//! (plus the map).

use std::collections::HashMap;

/// A table of `rows x classes` entries, row-major, that stands for a
/// `rows x switches` one: entry (`r`, `s`) is `table[r * n_classes + class_of[s]]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Merged {
    /// The class (compact column) of each switch.
    pub class_of: Vec<u32>,
    pub n_classes: usize,
    pub table: Vec<u32>,
}

/// Merges the identical columns of `full`, a row-major table of `n_cols`
/// columns. Classes are numbered in order of their first switch, so the
/// result depends only on the table.
pub(super) fn merge_columns(full: &[u32], n_cols: usize) -> Merged {
    let n_rows = full.len().checked_div(n_cols).unwrap_or(0);
    // Without rows every column is empty: one class (when there are columns).
    let column = |s: usize| -> Vec<u32> { (0..n_rows).map(|r| full[r * n_cols + s]).collect() };
    let mut ids: HashMap<Vec<u32>, u32> = HashMap::new();
    // The first switch of each class: its column is the class's.
    let mut first: Vec<usize> = Vec::new();
    let class_of: Vec<u32> = (0..n_cols)
        .map(|s| {
            *ids.entry(column(s)).or_insert_with(|| {
                first.push(s);
                first.len() as u32 - 1
            })
        })
        .collect();
    let n_classes = first.len();
    let mut table = vec![0u32; n_rows * n_classes];
    for (c, &s) in first.iter().enumerate() {
        for r in 0..n_rows {
            table[r * n_classes + c] = full[r * n_cols + s];
        }
    }
    Merged {
        class_of,
        n_classes,
        table,
    }
}

/// For each switch that has an edge row (`row_switches`, in row order), the
/// other such switch nearest to it, given `dist_from(t)`: the hop counts from
/// `t` to every switch. Its own row's entry is never read, so the routing
/// table copies it from the nearest other row: in a fat-tree, an edge switch
/// then routes toward its own row as toward its pod's other edge switches,
/// and all edge switches of a pod share one column. Ties go to the lowest
/// row; `None` when there is no other row.
pub(super) fn nearest_other_row(t: usize, row_switches: &[u32], dist: &[u32]) -> Option<usize> {
    row_switches
        .iter()
        .enumerate()
        .filter(|&(_, &u)| u as usize != t)
        .min_by_key(|&(r, &u)| (dist[u as usize], r))
        .map(|(r, _)| r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entry (`r`, `s`) of the merged table, as the router reads it.
    fn at(m: &Merged, r: usize, s: usize) -> u32 {
        m.table[r * m.n_classes + m.class_of[s] as usize]
    }

    #[test]
    fn merged_table_reads_as_the_full_one() {
        // 3 rows x 5 columns: columns 0, 2 and 4 are equal, 1 and 3 differ.
        let full = [
            7, 1, 7, 2, 7, //
            8, 1, 8, 2, 8, //
            9, 3, 9, 3, 9,
        ];
        let m = merge_columns(&full, 5);
        assert_eq!(m.class_of, [0, 1, 0, 2, 0]);
        assert_eq!(m.n_classes, 3);
        for r in 0..3 {
            for s in 0..5 {
                assert_eq!(at(&m, r, s), full[r * 5 + s]);
            }
        }
        // No equal columns: nothing merges.
        let m = merge_columns(&[1, 2, 3, 4, 5, 6], 3);
        assert_eq!((m.n_classes, m.class_of.clone()), (3, vec![0, 1, 2]));
        assert_eq!(m.table, [1, 2, 3, 4, 5, 6]);
        // No rows (no switch has hosts) and no columns.
        assert_eq!(merge_columns(&[], 4).n_classes, 1);
        assert_eq!(merge_columns(&[], 0).n_classes, 0);
    }

    #[test]
    fn nearest_row_skips_its_own_and_breaks_ties_low() {
        // Rows belong to switches 4, 1, 6, 2; distances from switch 1.
        let dist = [0, 0, 3, 9, 2, 9, 2];
        assert_eq!(nearest_other_row(1, &[4, 1, 6, 2], &dist), Some(0));
        assert_eq!(nearest_other_row(1, &[2, 1, 6], &dist), Some(2));
        assert_eq!(nearest_other_row(1, &[1, 2, 6], &dist), Some(2));
        assert_eq!(nearest_other_row(1, &[1], &dist), None);
    }
}
