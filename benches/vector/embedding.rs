//! The vector bench's embedding figures: the built-in model's throughput on
//! short and long texts, and its arithmetic rate beside what its own matrix
//! kernel reaches on this machine (see the bench's module comment).

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use anyhow::{Result, anyhow};
use kebab::embed::local::Local;
use kebab::embed::{Embedder, Role};

use super::Row;
use super::common::{Rng, Vocab, join};

pub const TEXT_SEED: u64 = 0x7465_7874_7321;
const EMBED_BATCH: usize = 32;
const EMBED_ROUNDS: usize = 2;
/// The model's training length in word pieces (texts are cut there).
const MAX_TOKENS: usize = 256;

/// Embedding throughput with the built-in model, in this process.
pub fn bench_embed(dir: &Path, vocab: &Vocab) -> Result<Vec<Row>> {
    let mut rng = Rng(TEXT_SEED);
    let short: Vec<String> = (0..200)
        .map(|_| {
            let mut s = String::new();
            join(&mut s, rng.range(10, 14), |s| vocab.word(&mut rng, 0.0, s));
            s.push('.');
            s
        })
        .collect();
    let long: Vec<String> = (0..64)
        .map(|_| {
            let (want, mut words, mut s) = (rng.range(160, 200), 0, String::new());
            while words < want {
                let n = rng.range(6, 14).min(want - words).max(1);
                if !s.is_empty() {
                    s.push(' ');
                }
                join(&mut s, n, |s| vocab.word(&mut rng, 0.0, s));
                s.push('.');
                words += n;
            }
            s
        })
        .collect();
    // The real pieces, `[CLS]`/`[SEP]` included, cut at 256 as kebab's embedder does.
    let tokenizer = kebab::embed::wordpiece::WordPiece::from_file(&dir.join("tokenizer.json")).map_err(|e| anyhow!("tokenizer.json: {e}"))?;
    let pieces = |texts: &[String]| -> Result<Vec<usize>> { Ok(texts.iter().map(|t| tokenizer.encode(t, MAX_TOKENS).len()).collect()) };

    let t = Instant::now();
    let model = Local::open(dir)?;
    black_box(model.embed(&["a first short text to load the model"], Role::Document)?);
    let load_ms = t.elapsed().as_secs_f64() * 1000.0;
    eprintln!("embedding: model loaded in {load_ms:.0} ms");
    let row = |figure, kebab| Row {
        corpus: "-".into(),
        vectors: 0,
        figure,
        kebab,
        reference: None,
        reference_is: "",
        target: None,
    };
    let mut rows = vec![row("model load + first embed ms", load_ms)];
    let figures: [(&[String], [&'static str; 3]); 2] = [
        (&short, ["embed short texts/s", "embed short words/s", "embed short pieces/s"]),
        (&long, ["embed 180w texts/s", "embed 180w words/s", "embed 180w pieces/s"]),
    ];
    for (texts, [per_text, per_word, per_piece]) in figures {
        let words: usize = texts.iter().map(|t| t.split_whitespace().count()).sum();
        let each = pieces(texts)?;
        let (pieces, flops) = (each.iter().sum::<usize>(), each.iter().map(|l| minilm_flops(*l)).sum::<f64>());
        let t = Instant::now();
        for _ in 0..EMBED_ROUNDS {
            for batch in texts.chunks(EMBED_BATCH) {
                let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
                black_box(model.embed(&refs, Role::Document)?);
            }
        }
        let s = t.elapsed().as_secs_f64() / EMBED_ROUNDS as f64;
        eprintln!("embedding: {} texts, {words} words, {pieces} pieces in {s:.2}s a pass", texts.len());
        rows.push(row(per_text, texts.len() as f64 / s));
        rows.push(row(per_word, words as f64 / s));
        rows.push(row(per_piece, pieces as f64 / s));
        if per_text.starts_with("embed 180w") {
            let matmul = matmul_gflops()?;
            rows.push(Row {
                reference: Some(matmul),
                reference_is: "kebab matmul, feed-forward shape",
                ..row("embed 180w GFLOP/s", flops / s / 1e9)
            });
        }
    }
    Ok(rows)
}

/// Floating-point operations of one MiniLM-L6 pass over a text of `l` word
/// pieces (a multiply-add is 2): per layer, the four attention projections
/// and the two feed-forward ones, then the attention's scores and weighted
/// sums. Normalisation, GELU and softmax are left out: a few percent.
fn minilm_flops(l: usize) -> f64 {
    let (h, inner, layers, l) = (384.0, 1536.0, 6.0, l as f64);
    layers * ((4.0 * h * h + 2.0 * h * inner) * 2.0 * l + 2.0 * 2.0 * l * l * h)
}

/// What the embedder's matrix product reaches on this machine for the
/// largest product of the model: a batch of 32 passages of ~230 pieces
/// through the first feed-forward layer, (7,360 × 384) · (384 × 1,536), split
/// across the cores by rows as the encoder splits it. The embedder cannot beat
/// its own kernel: this is the reference for its GFLOP/s.
fn matmul_gflops() -> Result<f64> {
    use kebab::embed::kernel::{Panels, Rows, Start, product};
    let (m, k, n) = (32 * 230, 384, 1536);
    let values = |len: usize, seed: usize| -> Vec<f32> { (0..len).map(|i| ((i * 7919 + seed) % 1000) as f32 / 500.0 - 1.0).collect() };
    let (a, w) = (values(m * k, 1), values(n * k, 2));
    let b = Panels::from_rows(&w, n, k);
    let mut c = vec![0.0f32; m * n];
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let per = m.div_ceil(threads);
    let run = |c: &mut [f32]| {
        std::thread::scope(|s| {
            for (i, c) in c.chunks_mut(per * n).enumerate() {
                let (a, b) = (&a[i * per * k..], &b);
                s.spawn(move || product(Rows { data: a, m: c.len() / n, ld: k }, b, c, n, Start::Zero));
            }
        })
    };
    run(&mut c);
    let rounds = 10;
    let t = Instant::now();
    for _ in 0..rounds {
        run(&mut c);
        black_box(&c);
    }
    let s = t.elapsed().as_secs_f64() / rounds as f64;
    Ok(2.0 * (m * k * n) as f64 / s / 1e9)
}
