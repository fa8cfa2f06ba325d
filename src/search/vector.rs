//! Vector search: an exact scan over every stored vector. Vectors are unit
//! length, so the dot product is the cosine. The inner loop keeps eight
//! independent accumulators so the compiler can vectorise it; the top k are
//! kept in a small heap rather than sorting every score.

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

/// The `k` chunks nearest `query`: (chunk id, cosine), best first.
pub fn top_k(set: &VectorSet, query: &[f32], k: usize) -> Vec<(i64, f32)> {
    if set.dim == 0 || query.len() != set.dim || k == 0 {
        return Vec::new();
    }
    let mut heap: BinaryHeap<Reverse<Scored>> = BinaryHeap::with_capacity(k + 1);
    for (i, row) in set.data.chunks_exact(set.dim).enumerate() {
        let s = dot(row, query);
        if heap.len() < k {
            heap.push(Reverse(Scored(s, i)));
        } else if heap.peek().is_some_and(|Reverse(min)| s > min.0) {
            heap.pop();
            heap.push(Reverse(Scored(s, i)));
        }
    }
    let mut out: Vec<(i64, f32)> = heap.into_iter().map(|Reverse(Scored(s, i))| (set.ids[i], s)).collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
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
}
