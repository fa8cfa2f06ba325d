//! Vector search: a scan of every stored vector's int8 code, then the exact
//! cosine of the best candidates. Vectors are unit length, so the dot product
//! is the cosine.
//!
//! The scan ranks by the dot product of the query's code and each vector's
//! code (an integer sum, scaled by the vector's scale): a quarter of the
//! bytes of an f32 scan, which is bound by memory bandwidth. Rounding can
//! swap near neighbours, so the scan keeps a pool of candidates several times
//! larger than asked for (`rescore_pool`), reads their f32 vectors and orders
//! them by their exact cosine: the hits and their scores are those of an
//! exact f32 scan whenever the true top k are among the pool's, which
//! benches/vector.rs measures (recall@10). The top of the pool is kept in a
//! small heap rather than sorting every score; a large set is split across
//! the cores, since one core alone does not use up the memory bandwidth.

use anyhow::Result;

use super::best::Best;
use crate::store::{Store, VectorSet, quantize};

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

/// Dot product of two equal-length codes. Each product fits an i16
/// (|c| ≤ 128), which lets the compiler use the multiply-and-add-pairs
/// instruction; sums are i32 (384 dimensions × 128² is far below its range).
#[inline(always)]
fn dot_codes_portable(a: &[i8], b: &[i8]) -> i32 {
    let mut acc = [0i32; 16];
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..16 {
            acc[i] += (x[i] as i16 * y[i] as i16) as i32;
        }
    }
    let tail: i32 = ra.iter().zip(rb).map(|(x, y)| *x as i32 * *y as i32).sum();
    acc.iter().sum::<i32>() + tail
}

/// The same loop compiled for AVX2 (twice the lanes of the baseline SSE2),
/// used when the processor has it.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn scan_avx2(set: &VectorSet, query: &[i8], part: Part) -> Best<f32, usize> {
    scan_with(set, query, part, dot_codes_portable)
}

/// Below this many vectors one thread scans them all: starting another
/// costs more than it saves.
const SPLIT_ROWS: usize = 20_000;

/// How many of the scan's best are re-scored exactly for a top `k`: four
/// times k, and never fewer than 100 (reading 100 f32 vectors by id is well
/// under a millisecond).
pub fn rescore_pool(k: usize) -> usize {
    (4 * k).max(100)
}

/// The `k` chunks nearest `query`: (chunk id, exact cosine), best first,
/// ties by chunk id. The codes in `set` choose the candidates; `store`
/// gives their f32 vectors.
pub fn top_k(store: &Store, set: &VectorSet, query: &[f32], k: usize) -> Result<Vec<(i64, f32)>> {
    exact_top(store, set.dim, &candidates(set, query, rescore_pool(k)), query, k)
}

/// The best `k` of the scan's `candidates` by their exact cosine with `query`
/// (`store` gives their f32 vectors of `dim` floats), ties by id.
pub fn exact_top(store: &Store, dim: usize, candidates: &[(i64, f32)], query: &[f32], k: usize) -> Result<Vec<(i64, f32)>> {
    let ids: Vec<i64> = candidates.iter().map(|&(id, _)| id).collect();
    Ok(rescore(store.exact_vectors(&ids, dim)?, query, k))
}

/// The best `k` of `vectors` by their exact cosine with `query`, ties by id.
fn rescore(vectors: Vec<(i64, Vec<f32>)>, query: &[f32], k: usize) -> Vec<(i64, f32)> {
    let mut exact: Vec<(i64, f32)> = vectors.into_iter().map(|(id, v)| (id, dot(&v, query))).collect();
    exact.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    exact.truncate(k);
    exact
}

/// The `pool` chunks whose codes score best against `query`'s code: (chunk
/// id, approximate cosine), best first. Empty for a query of another dimension.
pub fn candidates(set: &VectorSet, query: &[f32], pool: usize) -> Vec<(i64, f32)> {
    let threads = if set.ids.len() < SPLIT_ROWS { 1 } else { std::thread::available_parallelism().map_or(1, |n| n.get().min(8)) };
    candidates_on(set, query, pool, threads)
}

/// `candidates` on `threads` threads.
pub fn candidates_on(set: &VectorSet, query: &[f32], pool: usize, threads: usize) -> Vec<(i64, f32)> {
    if set.dim == 0 || query.len() != set.dim || pool == 0 {
        return Vec::new();
    }
    let (q_scale, q) = quantize(query);
    let rows = set.ids.len();
    let threads = threads.clamp(1, rows.max(1));
    let share = rows.div_ceil(threads);
    let part = |t: usize| Part { from: t * share, to: ((t + 1) * share).min(rows), keep: pool };
    let best = if threads == 1 {
        scan(set, &q, part(0))
    } else {
        std::thread::scope(|s| {
            let q = &q;
            let parts: Vec<_> = (0..threads).map(|t| s.spawn(move || scan(set, q, part(t)))).collect();
            let mut best = Best::new(pool);
            for p in parts {
                // A scan cannot panic short of a bug; if one did, its panic is re-raised here.
                for (score, row) in p.join().unwrap_or_else(|e| std::panic::resume_unwind(e)).into_items() {
                    best.offer(score, row);
                }
            }
            best
        })
    };
    best.into_sorted().into_iter().map(|(s, i)| (set.ids[i], s * q_scale)).collect()
}

/// Rows `from..to` of a set, of which a scan keeps the best `keep`.
#[derive(Clone, Copy)]
struct Part {
    from: usize,
    to: usize,
    keep: usize,
}

/// The best of `part`, in no order, scored as `scale * (code · query)`.
fn scan(set: &VectorSet, query: &[i8], part: Part) -> Best<f32, usize> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has just been checked for AVX2.
        return unsafe { scan_avx2(set, query, part) };
    }
    scan_with(set, query, part, dot_codes_portable)
}

#[inline(always)]
fn scan_with(set: &VectorSet, query: &[i8], part: Part, dot: impl Fn(&[i8], &[i8]) -> i32) -> Best<f32, usize> {
    let mut best = Best::new(part.keep);
    let rows = set.codes[part.from * set.dim..part.to * set.dim].chunks_exact(set.dim);
    for (i, (row, scale)) in rows.zip(&set.scales[part.from..part.to]).enumerate() {
        best.offer(scale * dot(row, query) as f32, part.from + i);
    }
    best
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
    fn the_code_dot_is_the_exact_integer_sum_for_any_length() {
        for n in [0, 1, 15, 16, 17, 384] {
            let a: Vec<i8> = (0..n).map(|i| ((i * 37) % 255) as i16 as i8).map(|c| c.max(-127)).collect();
            let b: Vec<i8> = (0..n).map(|i| (127 - (i * 11) % 255) as i8).collect();
            let naive: i32 = a.iter().zip(&b).map(|(x, y)| *x as i32 * *y as i32).sum();
            assert_eq!(dot_codes_portable(&a, &b), naive, "n {n}");
        }
        let extreme = vec![-128i8; 384];
        assert_eq!(dot_codes_portable(&extreme, &extreme), 384 * 128 * 128, "no overflow at the ends of the range");
    }

    fn set_of(dim: usize, rows: &[Vec<f32>], first_id: i64) -> VectorSet {
        let mut set = VectorSet { dim, ..VectorSet::default() };
        for (i, v) in rows.iter().enumerate() {
            set.push(first_id + i as i64, v);
        }
        set
    }

    #[test]
    fn candidates_come_best_first_with_approximate_cosines() {
        let set = set_of(2, &[vec![1.0, 0.0], vec![0.0, 1.0], vec![0.6, 0.8], vec![-1.0, 0.0]], 10);
        let got = candidates(&set, &[0.0, 1.0], 2);
        assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), [11, 12]);
        assert!((got[0].1 - 1.0).abs() < 0.01 && (got[1].1 - 0.8).abs() < 0.01, "{got:?}");
        assert!(candidates(&set, &[1.0], 2).is_empty(), "a query of the wrong dimension finds nothing");
    }

    #[test]
    fn rescoring_orders_by_the_exact_cosine_then_by_id() {
        // 12 and 13 tie exactly; 11 is ahead of both by less than a code's step.
        let vectors = vec![(13, vec![0.6, 0.8]), (12, vec![0.6, 0.8]), (11, vec![0.6001, 0.7999]), (10, vec![1.0, 0.0])];
        let got = rescore(vectors, &[0.0, 1.0], 3);
        assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), [12, 13, 11]);
        assert_eq!(got[0].1, 0.8, "the score is the f32 dot product, not the code's");
    }

    #[test]
    fn a_split_scan_finds_what_one_thread_finds() {
        // Enough rows to be split across threads, with the best ones at both
        // ends and in the middle so each part has to contribute.
        let n = SPLIT_ROWS * 2 + 7;
        let mut rows: Vec<Vec<f32>> = (0..n)
            .map(|i| {
                let a = (i as f32 * 0.001).sin();
                vec![a * 0.5, (1.0 - a * a * 0.25).sqrt(), 0.0]
            })
            .collect();
        for (row, x) in [(0, 0.99f32), (n / 2, 0.98), (n - 1, 0.97)] {
            rows[row] = vec![x, 0.0, (1.0 - x * x).sqrt()];
        }
        let set = set_of(3, &rows, 100);
        let got = candidates(&set, &[1.0, 0.0, 0.0], 3);
        assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), [100, 100 + n as i64 / 2, 100 + n as i64 - 1]);
        let (_, q) = quantize(&[1.0, 0.0, 0.0]);
        let one: Vec<(f32, usize)> = scan(&set, &q, Part { from: 0, to: n, keep: 3 }).into_items().collect();
        assert_eq!(one.len(), 3);
        assert!(one.iter().all(|s| got.iter().any(|g| set.ids[s.1] == g.0)));
        // The hybrid search's scan beside the lexical channel runs on one thread.
        for threads in [1, 3] {
            assert_eq!(candidates_on(&set, &[1.0, 0.0, 0.0], 3, threads), got, "{threads} threads");
        }
    }
}
