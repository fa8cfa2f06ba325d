//! The matrix product the built-in model spends its time in: `C = A · B`
//! with `B` packed once into panels of 16 columns, so the inner loop reads
//! it in order. A tile of 6 rows × 16 columns is kept in registers (12 AVX2
//! registers, fused multiply-adds) while the shared dimension runs; blocks of
//! `KC` of that dimension and `MC` rows keep `B`'s slice in L1 and `A`'s in
//! L2. Without AVX2 and FMA the same tiles run as plain loops.
//!
//! Why our own: candle's kernel reached 0.61 of this machine's arithmetic
//! limit on the model's largest product and the model half that, with every
//! step allocating a fresh tensor; and candle was a fifth of a clean build
//! (docs/performance.md, "Issue 20").

/// Columns in a panel: two 8-float AVX2 registers.
pub const NR: usize = 16;
/// Rows in a register tile.
const MR: usize = 6;
/// Shared-dimension block: a 16-column slice of `B` is 16 KB.
const KC: usize = 256;
/// Row block: 96 rows of a `KC` slice of `A` are 96 KB.
const MC: usize = 96;

/// `B` (k × n) as panels: panel `j` holds, for each `p` in `0..k`, the 16
/// values `B[p][16j .. 16j + 16]` in a row (zeros past `n`).
#[derive(Debug, Clone, Default)]
pub struct Panels {
    pub k: usize,
    pub n: usize,
    data: Vec<f32>,
}

impl Panels {
    /// Columns rounded up to whole panels: what a product writes per row.
    pub fn padded_n(&self) -> usize {
        self.n.div_ceil(NR) * NR
    }

    /// From `w`, n × k row-major (a dense layer's weight: one row per output),
    /// so that `A · Panels` is `A · wᵀ`.
    pub fn from_rows(w: &[f32], n: usize, k: usize) -> Panels {
        assert_eq!(w.len(), n * k, "weight of {n} × {k}");
        Panels::build(k, n, |p, j| w[j * k + p])
    }

    /// From `b`, k × n with rows `ld` apart (the values of one attention
    /// head: column `j` of row `p` is `b[p * ld + j]`).
    pub fn from_cols(b: &[f32], k: usize, n: usize, ld: usize) -> Panels {
        Panels::build(k, n, |p, j| b[p * ld + j])
    }

    /// From `b` whose rows `ld` apart are `B`'s columns (one attention head's
    /// keys: the scores are queries · keysᵀ), n rows of k.
    pub fn from_transposed(b: &[f32], n: usize, k: usize, ld: usize) -> Panels {
        Panels::build(k, n, |p, j| b[j * ld + p])
    }

    fn build(k: usize, n: usize, at: impl Fn(usize, usize) -> f32) -> Panels {
        let panels = n.div_ceil(NR);
        let mut data = vec![0.0; panels * k * NR];
        for j in 0..panels {
            let panel = &mut data[j * k * NR..(j + 1) * k * NR];
            for p in 0..k {
                for c in 0..NR.min(n - j * NR) {
                    panel[p * NR + c] = at(p, j * NR + c);
                }
            }
        }
        Panels { k, n, data }
    }

    fn panel(&self, j: usize) -> &[f32] {
        &self.data[j * self.k * NR..(j + 1) * self.k * NR]
    }
}

/// Where a product's rows start: a bias added to every row, or zero.
#[derive(Debug, Clone, Copy)]
pub enum Start<'a> {
    Zero,
    Bias(&'a [f32]),
}

/// `A` as the product reads it: `m` rows of `k` values, `ld` apart.
#[derive(Debug, Clone, Copy)]
pub struct Rows<'a> {
    pub data: &'a [f32],
    pub m: usize,
    pub ld: usize,
}

/// `C = start + A · B` for `m` rows: row `i`'s `padded_n` outputs are written
/// at `c[i * ldc ..]` (the padding columns too, as zeros plus bias).
pub fn product(a: Rows, b: &Panels, c: &mut [f32], ldc: usize, start: Start) {
    let k = b.k;
    let width = b.padded_n();
    assert!(a.m == 0 || (a.m - 1) * a.ld + k <= a.data.len(), "A holds {} rows of {k}", a.m);
    assert!(a.m == 0 || (a.m - 1) * ldc + width <= c.len(), "C holds {} rows of {width}", a.m);
    if let Start::Bias(bias) = start {
        assert!(bias.len() >= b.n, "bias of {} for {} columns", bias.len(), b.n);
    }
    let avx = fast();
    for p0 in (0..k.max(1)).step_by(KC) {
        let kc = KC.min(k - p0.min(k));
        for i0 in (0..a.m).step_by(MC) {
            let rows = MC.min(a.m - i0);
            for j in 0..width / NR {
                let panel = &b.panel(j)[p0 * NR..(p0 + kc) * NR];
                let mut i = i0;
                while i < i0 + rows {
                    let r = MR.min(i0 + rows - i);
                    let tile = Tile { a: &a.data[i * a.ld + p0..], lda: a.ld, b: panel, kc, ldc, r };
                    let out = &mut c[i * ldc + j * NR..];
                    if p0 == 0 {
                        tile.start(out, start, j, b.n);
                    }
                    tile.run(out, avx);
                    i += r;
                }
            }
        }
    }
}

/// Whether the AVX2 + FMA tile can run here (checked once per product: the
/// check itself is a cached load).
fn fast() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// One register tile: `r` (≤ 6) rows of `A` from `a` times one panel slice
/// `b` of `kc` steps, added into `r` rows of 16 of `C`.
struct Tile<'a> {
    a: &'a [f32],
    lda: usize,
    b: &'a [f32],
    kc: usize,
    ldc: usize,
    r: usize,
}

impl Tile<'_> {
    /// The tile's rows set to the bias (or zero) before the first block.
    fn start(&self, c: &mut [f32], start: Start, panel: usize, n: usize) {
        for row in 0..self.r {
            let out = &mut c[row * self.ldc..row * self.ldc + NR];
            for (col, v) in out.iter_mut().enumerate() {
                let j = panel * NR + col;
                *v = match start {
                    Start::Bias(bias) if j < n => bias[j],
                    _ => 0.0,
                };
            }
        }
    }

    fn run(&self, c: &mut [f32], avx: bool) {
        assert!(self.b.len() >= self.kc * NR);
        assert!(self.r == 0 || (self.r - 1) * self.lda + self.kc <= self.a.len());
        assert!(self.r == 0 || (self.r - 1) * self.ldc + NR <= c.len());
        #[cfg(target_arch = "x86_64")]
        if avx {
            // SAFETY: AVX2 and FMA were detected, and the asserts above
            // bound every read of `a` and `b` and every write of `c`.
            unsafe {
                match self.r {
                    6 => avx2::tile::<6>(self, c),
                    5 => avx2::tile::<5>(self, c),
                    4 => avx2::tile::<4>(self, c),
                    3 => avx2::tile::<3>(self, c),
                    2 => avx2::tile::<2>(self, c),
                    _ => avx2::tile::<1>(self, c),
                }
            }
            return;
        }
        let _ = avx;
        self.plain(c);
    }

    /// The same tile as plain loops (any CPU).
    fn plain(&self, c: &mut [f32]) {
        let mut acc = [[0.0f32; NR]; MR];
        for p in 0..self.kc {
            let b = &self.b[p * NR..p * NR + NR];
            for (row, acc) in acc.iter_mut().enumerate().take(self.r) {
                let a = self.a[row * self.lda + p];
                for (x, y) in acc.iter_mut().zip(b) {
                    *x += a * y;
                }
            }
        }
        for (row, acc) in acc.iter().enumerate().take(self.r) {
            for (x, y) in c[row * self.ldc..row * self.ldc + NR].iter_mut().zip(acc) {
                *x += y;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::{NR, Tile};

    /// `R` rows × 16 columns in 2·R registers, one fused multiply-add per
    /// register per step of the shared dimension.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; `Tile::run` checked the bounds.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn tile<const R: usize>(t: &Tile, c: &mut [f32]) {
        let (a, b, cp) = (t.a.as_ptr(), t.b.as_ptr(), c.as_mut_ptr());
        let mut lo = [_mm256_setzero_ps(); R];
        let mut hi = [_mm256_setzero_ps(); R];
        // SAFETY (all pointer reads and writes): within the bounds `Tile::run` asserted.
        unsafe {
            for p in 0..t.kc {
                let b0 = _mm256_loadu_ps(b.add(p * NR));
                let b1 = _mm256_loadu_ps(b.add(p * NR + 8));
                for r in 0..R {
                    let x = _mm256_broadcast_ss(&*a.add(r * t.lda + p));
                    lo[r] = _mm256_fmadd_ps(x, b0, lo[r]);
                    hi[r] = _mm256_fmadd_ps(x, b1, hi[r]);
                }
            }
            for r in 0..R {
                let out = cp.add(r * t.ldc);
                _mm256_storeu_ps(out, _mm256_add_ps(_mm256_loadu_ps(out), lo[r]));
                _mm256_storeu_ps(out.add(8), _mm256_add_ps(_mm256_loadu_ps(out.add(8)), hi[r]));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic matrix of small values (no two rows alike).
    fn matrix(rows: usize, cols: usize, seed: u32) -> Vec<f32> {
        (0..rows * cols).map(|i| (((i as u32).wrapping_mul(2654435761) ^ seed) % 1000) as f32 / 500.0 - 1.0).collect()
    }

    fn naive(a: &[f32], m: usize, k: usize, w: &[f32], n: usize, bias: &[f32]) -> Vec<f32> {
        let mut c = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = bias[j] + (0..k).map(|p| a[i * k + p] * w[j * k + p]).sum::<f32>();
            }
        }
        c
    }

    #[test]
    fn products_match_the_textbook_loop_at_every_edge() {
        // Row counts that leave partial tiles and blocks, a shared dimension
        // past one block, and a column count that leaves a partial panel.
        for (m, k, n) in [(1, 3, 5), (7, 384, 16), (13, 300, 40), (97, 520, 33), (200, 31, 384)] {
            let (a, w, bias) = (matrix(m, k, 1), matrix(n, k, 2), matrix(1, n, 3));
            let b = Panels::from_rows(&w, n, k);
            let ldc = b.padded_n();
            let mut c = vec![f32::NAN; m * ldc];
            product(Rows { data: &a, m, ld: k }, &b, &mut c, ldc, Start::Bias(&bias));
            let want = naive(&a, m, k, &w, n, &bias);
            for i in 0..m {
                for j in 0..n {
                    let (got, want) = (c[i * ldc + j], want[i * n + j]);
                    assert!((got - want).abs() <= 1e-3 * (1.0 + want.abs()), "({m},{k},{n}) at {i},{j}: {got} vs {want}");
                }
                assert!(c[i * ldc + n..(i + 1) * ldc].iter().all(|&x| x == 0.0), "padding columns are zero");
            }
        }
    }

    #[test]
    fn the_plain_tiles_give_what_the_fast_ones_give() {
        let (m, k, n) = (11, 270, 32);
        let (a, w) = (matrix(m, k, 4), matrix(n, k, 5));
        let b = Panels::from_rows(&w, n, k);
        let mut fast_c = vec![0.0; m * n];
        let mut plain_c = vec![0.0; m * n];
        for (c, avx) in [(&mut fast_c, true), (&mut plain_c, false)] {
            for i in (0..m).step_by(MR) {
                for j in 0..n / NR {
                    let tile = Tile { a: &a[i * k..], lda: k, b: b.panel(j), kc: k, ldc: n, r: MR.min(m - i) };
                    tile.run(&mut c[i * n + j * NR..], avx && fast());
                }
            }
        }
        for (x, y) in fast_c.iter().zip(&plain_c) {
            assert!((x - y).abs() <= 1e-3 * (1.0 + y.abs()), "{x} vs {y}");
        }
    }

    #[test]
    fn strided_inputs_read_one_attention_head() {
        // Two heads of 2 side by side in rows of 4: the second head's product.
        let q = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
        let keys = Panels::from_transposed(&q[2..], 2, 2, 4);
        let mut scores = vec![0.0; 2 * NR];
        product(Rows { data: &q[2..], m: 2, ld: 4 }, &keys, &mut scores, NR, Start::Zero);
        // [3 4; 7 8] · [3 4; 7 8]ᵀ
        assert_eq!(&scores[..2], &[25.0, 53.0]);
        assert_eq!(&scores[NR..NR + 2], &[53.0, 113.0]);
        let values = Panels::from_cols(&q[2..], 2, 2, 4);
        let mut out = vec![0.0; 2 * NR];
        product(Rows { data: &[1.0, 0.0, 0.5, 0.5], m: 2, ld: 2 }, &values, &mut out, NR, Start::Zero);
        assert_eq!(&out[..2], &[3.0, 4.0]);
        assert_eq!(&out[NR..NR + 2], &[5.0, 6.0]);
    }
}
