//! The built-in model's encoder: a BERT forward pass (MiniLM-L6 is one) on
//! plain `f32` rows, its products in `kernel`.
//!
//! Per layer: self-attention (queries, keys and values per head, scaled dot
//! products, softmax), a dense projection added back to its input and
//! normalised, then the feed-forward block (dense, GELU, dense), added back
//! and normalised in turn.
//!
//! A batch is one matrix of every text's tokens, with no padding: the dense
//! steps treat each token alone, so they run over all of them at once, split
//! across the cores by rows; attention mixes tokens only within a text, so it
//! runs text by text.

use std::collections::HashMap;
use std::ops::Range;

use super::kernel::{NR, Panels, Rows, Start, product};

/// The fields of the model's `config.json` the forward pass needs.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Config {
    vocab_size: usize,
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    max_position_embeddings: usize,
    type_vocab_size: usize,
    layer_norm_eps: f64,
    hidden_act: String,
}

pub struct Bert {
    hidden: usize,
    words: Vec<f32>,
    positions: Vec<f32>,
    /// The token type 0 row: kebab embeds single texts.
    first_type: Vec<f32>,
    norm: Norm,
    layers: Vec<Layer>,
}

struct Layer {
    /// Queries, keys and values in one product: 3 × hidden outputs.
    qkv: Dense,
    heads: usize,
    attention_out: Dense,
    attention_norm: Norm,
    intermediate: Dense,
    out: Dense,
    out_norm: Norm,
}

struct Dense {
    weight: Panels,
    bias: Vec<f32>,
}

struct Norm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
    eps: f32,
}

/// Fewest rows worth a thread of their own.
const MIN_ROWS_PER_THREAD: usize = 32;

impl Bert {
    /// The weights of `model.safetensors` (its bytes), as a Hugging Face BERT
    /// checkpoint names them.
    pub fn load(bytes: &[u8], cfg: &Config) -> Result<Bert, String> {
        // Every sentence-transformers MiniLM uses the exact (erf) GELU.
        if cfg.hidden_act != "gelu" {
            return Err(format!("hidden_act {:?} is not supported (only \"gelu\")", cfg.hidden_act));
        }
        let h = cfg.hidden_size;
        if cfg.num_attention_heads == 0 || !h.is_multiple_of(cfg.num_attention_heads) || !(h / cfg.num_attention_heads).is_multiple_of(NR) {
            return Err(format!(
                "hidden_size {h} over num_attention_heads {} must give heads of a multiple of {NR} values",
                cfg.num_attention_heads
            ));
        }
        let file = Tensors::parse(bytes)?;
        let norm = |name: &str| -> Result<Norm, String> {
            Ok(Norm { gamma: file.get(&format!("{name}.weight"), &[h])?, beta: file.get(&format!("{name}.bias"), &[h])?, eps: cfg.layer_norm_eps as f32 })
        };
        let dense = |names: &[String], inputs: usize, outputs: usize| -> Result<Dense, String> {
            let (mut w, mut bias) = (Vec::new(), Vec::new());
            for name in names {
                w.extend(file.get(&format!("{name}.weight"), &[outputs, inputs])?);
                bias.extend(file.get(&format!("{name}.bias"), &[outputs])?);
            }
            Ok(Dense { weight: Panels::from_rows(&w, outputs * names.len(), inputs), bias })
        };
        let layers = (0..cfg.num_hidden_layers)
            .map(|i| {
                let l = format!("encoder.layer.{i}");
                let qkv: Vec<String> = ["query", "key", "value"].iter().map(|p| format!("{l}.attention.self.{p}")).collect();
                Ok(Layer {
                    qkv: dense(&qkv, h, h)?,
                    heads: cfg.num_attention_heads,
                    attention_out: dense(&[format!("{l}.attention.output.dense")], h, h)?,
                    attention_norm: norm(&format!("{l}.attention.output.LayerNorm"))?,
                    intermediate: dense(&[format!("{l}.intermediate.dense")], h, cfg.intermediate_size)?,
                    out: dense(&[format!("{l}.output.dense")], cfg.intermediate_size, h)?,
                    out_norm: norm(&format!("{l}.output.LayerNorm"))?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let types = file.get("embeddings.token_type_embeddings.weight", &[cfg.type_vocab_size, h])?;
        Ok(Bert {
            hidden: h,
            words: file.get("embeddings.word_embeddings.weight", &[cfg.vocab_size, h])?,
            positions: file.get("embeddings.position_embeddings.weight", &[cfg.max_position_embeddings, h])?,
            first_type: types.get(..h).ok_or("type_vocab_size is 0: the model has no token type embedding")?.to_vec(),
            norm: norm("embeddings.LayerNorm")?,
            layers,
        })
    }

    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// The last layer's hidden states for each text's token ids: one row of
    /// `hidden` per token, texts one after another.
    pub fn forward(&self, texts: &[&[u32]]) -> Result<Vec<f32>, String> {
        let h = self.hidden;
        let mut spans: Vec<Range<usize>> = Vec::with_capacity(texts.len());
        let mut x: Vec<f32> = Vec::new();
        for ids in texts {
            let start = spans.last().map_or(0, |s| s.end);
            spans.push(start..start + ids.len());
            for (pos, &id) in ids.iter().enumerate() {
                let word = self.words.get(id as usize * h..(id as usize + 1) * h).ok_or_else(|| format!("token id {id} is outside the vocabulary"))?;
                let position = self.positions.get(pos * h..(pos + 1) * h).ok_or_else(|| format!("{} tokens is past the model's positions", ids.len()))?;
                let row = x.len();
                x.extend(word.iter().zip(position).zip(&self.first_type).map(|((w, p), t)| w + p + t));
                self.norm.apply(&mut x[row..]);
            }
        }
        let tokens = x.len() / h;
        let inner = self.layers.first().map_or(0, |l| l.intermediate.weight.n);
        let mut b = Buffers { x, qkv: vec![0.0; tokens * 3 * h], sum: vec![0.0; tokens * h], mid: vec![0.0; tokens * inner], h, inner };
        let mut context = vec![0.0; tokens * h];
        let Some(first) = self.layers.first() else { return Ok(b.x) };
        b.by_rows(|r| first.project(r.x, r.qkv));
        for (l, layer) in self.layers.iter().enumerate() {
            layer.attention(&b.qkv, &mut context, &spans);
            let next = self.layers.get(l + 1);
            b.by_rows(|mut r| {
                let own = &context[r.rows.start * h..r.rows.end * h];
                layer.finish(&mut r, own);
                if let Some(next) = next {
                    next.project(r.x, r.qkv);
                }
            });
        }
        Ok(b.x)
    }
}

/// A batch's working rows, allocated once for all its layers rather than
/// per step: hidden states, queries/keys/values, and the scratch of the
/// dense steps.
struct Buffers {
    x: Vec<f32>,
    qkv: Vec<f32>,
    sum: Vec<f32>,
    mid: Vec<f32>,
    h: usize,
    inner: usize,
}

/// One block of rows of every buffer.
struct Block<'a> {
    rows: Range<usize>,
    x: &'a mut [f32],
    qkv: &'a mut [f32],
    sum: &'a mut [f32],
    mid: &'a mut [f32],
}

impl Buffers {
    /// Runs `f` over blocks of rows, one block per core when there are rows enough.
    fn by_rows(&mut self, f: impl Fn(Block) + Sync) {
        let (h, inner) = (self.h, self.inner);
        let tokens = self.x.len() / h;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(tokens / MIN_ROWS_PER_THREAD).max(1);
        let per = tokens.div_ceil(threads).max(1);
        let blocks = self
            .x
            .chunks_mut(per * h)
            .zip(self.qkv.chunks_mut(per * 3 * h))
            .zip(self.sum.chunks_mut(per * h))
            .zip(self.mid.chunks_mut((per * inner).max(1)))
            .enumerate()
            .map(|(i, (((x, qkv), sum), mid))| Block { rows: i * per..i * per + x.len() / h, x, qkv, sum, mid });
        if threads == 1 {
            return blocks.for_each(f);
        }
        std::thread::scope(|s| {
            for block in blocks {
                let f = &f;
                s.spawn(move || f(block));
            }
        });
    }
}

impl Layer {
    /// Queries, keys and values of rows `x` into `qkv`.
    fn project(&self, x: &[f32], qkv: &mut [f32]) {
        let h = self.attention_norm.gamma.len();
        let m = x.len() / h;
        product(Rows { data: x, m, ld: h }, &self.qkv.weight, qkv, 3 * h, Start::Bias(&self.qkv.bias));
    }

    /// Everything after attention, for a block of rows and their attention
    /// `context`: projection, residual and norm, feed-forward, residual and
    /// norm, in place.
    fn finish(&self, r: &mut Block, context: &[f32]) {
        let h = self.attention_norm.gamma.len();
        let m = r.rows.len();
        let inner = self.intermediate.weight.n;
        product(Rows { data: context, m, ld: h }, &self.attention_out.weight, r.sum, h, Start::Bias(&self.attention_out.bias));
        add_and_norm(r.x, r.sum, &self.attention_norm);
        product(Rows { data: r.x, m, ld: h }, &self.intermediate.weight, r.mid, inner, Start::Bias(&self.intermediate.bias));
        r.mid.iter_mut().for_each(|v| *v = gelu(*v));
        product(Rows { data: r.mid, m, ld: inner }, &self.out.weight, r.sum, h, Start::Bias(&self.out.bias));
        add_and_norm(r.x, r.sum, &self.out_norm);
    }

    /// Multi-head self-attention within each text (`spans` of rows), heads
    /// joined into `context`. Texts are shared out among the cores by their
    /// cost (tokens squared).
    fn attention(&self, qkv: &[f32], context: &mut [f32], spans: &[Range<usize>]) {
        let h = self.attention_norm.gamma.len();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(spans.len()).max(1);
        let total: usize = spans.iter().map(|s| s.len() * s.len()).sum();
        // Texts up to each cut go to one thread.
        let mut groups: Vec<Range<usize>> = Vec::new();
        let (mut from, mut cost) = (0, 0);
        for (i, s) in spans.iter().enumerate() {
            cost += s.len() * s.len();
            if cost * threads >= total * (groups.len() + 1) || i + 1 == spans.len() {
                groups.push(from..i + 1);
                from = i + 1;
            }
        }
        let mut rest = context;
        let mut parts = Vec::new();
        for g in &groups {
            let rows = spans[g.end - 1].end - spans[g.start].start;
            let (part, tail) = rest.split_at_mut(rows * h);
            parts.push((&spans[g.clone()], part));
            rest = tail;
        }
        let run = |texts: &[Range<usize>], out: &mut [f32]| {
            let base = texts.first().map_or(0, |s| s.start);
            for s in texts {
                self.attend(qkv, &mut out[(s.start - base) * h..(s.end - base) * h], s.clone());
            }
        };
        if parts.len() == 1 {
            let (texts, out) = parts.pop().expect("one group");
            return run(texts, out);
        }
        std::thread::scope(|sc| {
            for (texts, out) in parts {
                let run = &run;
                sc.spawn(move || run(texts, out));
            }
        });
    }

    /// One text's attention, every head, into its rows of `out`.
    fn attend(&self, qkv: &[f32], out: &mut [f32], rows: Range<usize>) {
        let h = self.attention_norm.gamma.len();
        let size = h / self.heads;
        let len = rows.len();
        let wide = len.div_ceil(NR) * NR;
        let scale = 1.0 / (size as f32).sqrt();
        let mut scores = vec![0.0; len * wide];
        let at = |column: usize| &qkv[rows.start * 3 * h + column..];
        for head in 0..self.heads {
            let (q, k, v) = (head * size, h + head * size, 2 * h + head * size);
            let keys = Panels::from_transposed(at(k), len, size, 3 * h);
            product(Rows { data: at(q), m: len, ld: 3 * h }, &keys, &mut scores, wide, Start::Zero);
            for row in scores.chunks_mut(wide) {
                softmax(&mut row[..len], scale);
            }
            let values = Panels::from_cols(at(v), len, size, 3 * h);
            product(Rows { data: &scores, m: len, ld: wide }, &values, &mut out[head * size..], h, Start::Zero);
        }
    }
}

/// `x = norm(x + y)`, row by row.
fn add_and_norm(x: &mut [f32], y: &[f32], norm: &Norm) {
    let h = norm.gamma.len();
    for (row, add) in x.chunks_mut(h).zip(y.chunks(h)) {
        row.iter_mut().zip(add).for_each(|(a, b)| *a += b);
        norm.apply(row);
    }
}

impl Norm {
    fn apply(&self, row: &mut [f32]) {
        let n = row.len() as f32;
        let mean = row.iter().sum::<f32>() / n;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
        let inv = 1.0 / (var + self.eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(&self.gamma).zip(&self.beta) {
            *v = (*v - mean) * inv * g + b;
        }
    }
}

/// Softmax of `scale · row`, in place.
fn softmax(row: &mut [f32], scale: f32) {
    let max = row.iter().fold(f32::MIN, |m, &v| m.max(v));
    let mut sum = 0.0;
    for v in row.iter_mut() {
        *v = exp((*v - max) * scale);
        sum += *v;
    }
    let inv = 1.0 / sum;
    row.iter_mut().for_each(|v| *v *= inv);
}

/// The exact GELU, `x/2 · (1 + erf(x/√2))`.
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// erf to within 1.5e-7, plus f32 rounding (Abramowitz and Stegun 7.1.26).
fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = t * (0.254_829_6 + t * (-0.284_496_74 + t * (1.421_413_7 + t * (-1.453_152_1 + t * 1.061_405_4))));
    let y = 1.0 - poly * exp(-a * a);
    y.copysign(x)
}

/// eˣ to within a few parts in 10⁷, with no branch or call: 2ⁿ · e^r with
/// |r| ≤ ln2/2 by a degree-6 polynomial, so loops over it vectorise (the
/// C library's `expf` is a call per value).
fn exp(x: f32) -> f32 {
    let x = x.clamp(-87.0, 88.0);
    let n = (x * std::f32::consts::LOG2_E).round();
    // ln 2 in two parts, so n · ln2 loses nothing.
    let r = x - n * 0.693_145_75 - n * 1.428_606_8e-6;
    let p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    p * f32::from_bits(((n as i32 + 127) as u32) << 23)
}

/// The tensors of a safetensors file: an 8-byte header length, a JSON header
/// naming each tensor's type, shape and byte range, then the data.
struct Tensors<'a> {
    data: &'a [u8],
    index: HashMap<String, (String, Vec<usize>, [usize; 2])>,
}

#[derive(serde::Deserialize)]
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [usize; 2],
}

impl<'a> Tensors<'a> {
    fn parse(bytes: &'a [u8]) -> Result<Tensors<'a>, String> {
        let len = bytes.get(..8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")) as usize).ok_or("not a safetensors file: shorter than its header length")?;
        let header = bytes.get(8..8usize.saturating_add(len)).ok_or("not a safetensors file: the header runs past the end")?;
        let raw: HashMap<String, serde_json::Value> = serde_json::from_slice(header).map_err(|e| format!("not a safetensors header: {e}"))?;
        let mut index = HashMap::new();
        for (name, v) in raw.into_iter().filter(|(n, _)| n != "__metadata__") {
            let e: Entry = serde_json::from_value(v).map_err(|e| format!("tensor {name}: {e}"))?;
            index.insert(name, (e.dtype, e.shape, e.data_offsets));
        }
        Ok(Tensors { data: &bytes[8 + len..], index })
    }

    /// Tensor `name` as f32 values, checked to have `shape`.
    fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
        let (dtype, got, [from, to]) = self.index.get(name).ok_or_else(|| format!("tensor {name} is missing"))?;
        if dtype != "F32" || got != shape {
            return Err(format!("tensor {name} is {dtype} {got:?}, expected F32 {shape:?}"));
        }
        let bytes = self.data.get(*from..*to).filter(|b| b.len() == 4 * shape.iter().product::<usize>()).ok_or_else(|| format!("tensor {name}: its bytes are out of range"))?;
        Ok(bytes.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes"))).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_and_erf_match_float_references() {
        for i in -400..=400 {
            let x = i as f32 / 20.0;
            let (got, want) = (exp(x), (x as f64).exp());
            assert!(((got as f64 - want) / want).abs() < 1e-6, "exp({x}) = {got}, want {want}");
            let e = erf(x) as f64;
            if x.abs() <= 3.0 {
                let reference = erf_series(x as f64);
                // 1.5e-7 is the formula's own bound; f32 arithmetic adds as much.
                assert!((e - reference).abs() < 4e-7, "erf({x}) = {e}, want {reference}");
            } else {
                // erfc(3) is 2.2e-5 and falls fast beyond.
                assert!((e - (x as f64).signum()).abs() < 3e-5, "erf({x}) = {e}");
            }
        }
        assert!(exp(-1000.0) < 1e-37);
    }

    /// erf by its Taylor series in f64: 2/√π · Σ (-1)^n x^(2n+1) / (n! (2n+1)),
    /// exact to ~1e-12 for |x| ≤ 3 (the largest term is ~8e3).
    fn erf_series(x: f64) -> f64 {
        let (mut sum, mut term) = (0.0, x);
        for n in 0..200 {
            sum += term / (2.0 * n as f64 + 1.0);
            term *= -x * x / (n as f64 + 1.0);
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    }

    #[test]
    fn a_truncated_or_foreign_weights_file_is_refused_with_its_reason() {
        assert!(Tensors::parse(b"1234").err().unwrap().contains("shorter"));
        let mut bad = 1000u64.to_le_bytes().to_vec();
        bad.extend(b"{}");
        assert!(Tensors::parse(&bad).err().unwrap().contains("past the end"));
        let header = br#"{"w":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}}"#;
        let mut file = (header.len() as u64).to_le_bytes().to_vec();
        file.extend(header);
        file.extend([0u8; 4]);
        let t = Tensors::parse(&file).unwrap();
        assert!(t.get("w", &[2]).err().unwrap().contains("F16"));
        assert!(t.get("x", &[2]).err().unwrap().contains("missing"));
    }
}
