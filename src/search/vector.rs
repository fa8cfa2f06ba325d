//! Vector search: an exact scan over every stored vector. Vectors are unit
//! length, so the dot product is the cosine. The inner loop keeps eight
//! independent accumulators so the compiler can vectorise it; the top k are
//! kept in a small heap rather than sorting every score. A large set is split
//! across the cores: the scan is bound by memory bandwidth, which one core
//! alone does not use up.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::store::VectorSet;

/// Dot product of two equal-length slices.
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let tail: f32 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

/// A score ordered for the heap: by score (`total_cmp`, so even a NaN has a
/// place), then by row.
struct Scored(f32, usize);
impl PartialEq for Scored {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}
impl Eq for Scored {}
impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scored {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(other.1.cmp(&self.1))
    }
}

/// Below this many vectors one thread scans them all: starting another
/// costs more than it saves.
const SPLIT_ROWS: usize = 20_000;

/// The `k` chunks nearest `query`: (chunk id, cosine), best first.
pub fn top_k(set: &VectorSet, query: &[f32], k: usize) -> Vec<(i64, f32)> {
    if set.dim == 0 || query.len() != set.dim || k == 0 {
        return Vec::new();
    }
    let rows = set.ids.len();
    let threads = if rows < SPLIT_ROWS { 1 } else { std::thread::available_parallelism().map_or(1, |n| n.get().min(8)) };
    let share = rows.div_ceil(threads);
    let mut best: Vec<Scored> = if threads == 1 {
        scan(set, query, k, 0, rows)
    } else {
        std::thread::scope(|s| {
            let parts: Vec<_> =
                (0..threads).map(|t| s.spawn(move || scan(set, query, k, t * share, ((t + 1) * share).min(rows)))).collect();
            // A scan cannot panic short of a bug; if one did, its panic is re-raised here.
            parts.into_iter().flat_map(|p| p.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
        })
    };
    best.sort_by(|a, b| b.cmp(a));
    best.truncate(k);
    best.into_iter().map(|Scored(s, i)| (set.ids[i], s)).collect()
}

/// The best `k` of rows `from..to`, in no order.
fn scan(set: &VectorSet, query: &[f32], k: usize, from: usize, to: usize) -> Vec<Scored> {
    let mut heap: BinaryHeap<Reverse<Scored>> = BinaryHeap::with_capacity(k + 1);
    let rows = set.data[from * set.dim..to * set.dim].chunks_exact(set.dim);
    for (i, row) in rows.enumerate() {
        let s = dot(row, query);
        if heap.len() < k {
            heap.push(Reverse(Scored(s, from + i)));
        } else if heap.peek().is_some_and(|Reverse(min)| s > min.0) {
            heap.pop();
            heap.push(Reverse(Scored(s, from + i)));
        }
    }
    heap.into_iter().map(|Reverse(s)| s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_matches_the_naive_sum_for_any_length() {
        for n in [0, 1, 7, 8, 9, 384] {
            let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
            let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - naive).abs() < 1e-4, "n {n}");
        }
    }

    #[test]
    fn top_k_returns_the_nearest_best_first() {
        let set = VectorSet { dim: 2, ids: vec![10, 11, 12, 13], data: vec![1.0, 0.0, 0.0, 1.0, 0.6, 0.8, -1.0, 0.0] };
        let got = top_k(&set, &[0.0, 1.0], 2);
        assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), [11, 12]);
        assert!((got[0].1 - 1.0).abs() < 1e-6);
        assert!(top_k(&set, &[1.0], 2).is_empty(), "a query of the wrong dimension finds nothing");
    }

    #[test]
    fn a_split_scan_finds_what_one_thread_finds() {
        // Enough rows to be split across threads, with the best ones at both
        // ends and in the middle so each part has to contribute.
        let rows = SPLIT_ROWS * 2 + 7;
        let dim = 3;
        let mut data = Vec::with_capacity(rows * dim);
        for i in 0..rows {
            let a = (i as f32 * 0.001).sin();
            data.extend([a * 0.5, (1.0 - a * a * 0.25).sqrt(), 0.0]);
        }
        for (row, x) in [(0, 0.99f32), (rows / 2, 0.98), (rows - 1, 0.97)] {
            data[row * dim..(row + 1) * dim].copy_from_slice(&[x, 0.0, (1.0 - x * x).sqrt()]);
        }
        let set = VectorSet { dim, ids: (0..rows as i64).map(|i| i + 100).collect(), data };
        let got = top_k(&set, &[1.0, 0.0, 0.0], 3);
        assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), [100, 100 + rows as i64 / 2, 100 + rows as i64 - 1]);
        let one = scan(&set, &[1.0, 0.0, 0.0], 3, 0, rows);
        assert_eq!(one.len(), 3);
        assert!(one.iter().all(|s| got.iter().any(|g| set.ids[s.1] == g.0)));
    }
}
