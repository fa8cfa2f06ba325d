//! Vector benchmark: what semantic retrieval costs in kebab, each figure beside a
//! reference measured in the same run.
//!
//! For each synthetic corpus (the lexical bench's English/Korean Markdown, ~10k, ~100k
//! and, with `--size 1m`, ~1M chunks) it ingests with `kebab::ingest::run` into a real
//! database, gives every chunk a random unit vector of 384 floats (directions uniform on
//! the sphere, fixed seed, tagged `all-MiniLM-L6-v2` so the engine loads them; written
//! directly, no embedding), and measures:
//!
//! * `put_vectors vectors/s`: writing the vectors with `Store::put_vectors` in batches of
//!   4096 (one transaction each; each vector and its int8 code). No reference: it is only
//!   the setup's cost;
//! * `load_vectors p50/p95 ms`: `Store::load_vectors(model, 384)`, what the engine runs on
//!   the first vector or hybrid query of a process (it reads the int8 codes), against a
//!   naive rusqlite load of the f32 vectors on the same connection that
//!   `get::<_, Vec<u8>>`s each blob and decodes it into a fresh `Vec<f32>` per row (what
//!   loading cost before the codes, roughly). 5 timed rounds after one untimed one; the
//!   loaded codes are checked against the vectors written. The pages are in the OS cache:
//!   this is decoding and copying, not disk;
//! * `vectors in memory MB`: what a search process holds for the scan (ids, scales,
//!   codes), beside the f32 vectors and ids it held before;
//! * `scan top-10 p50/p95 ms`: `kebab::search::vector::top_k(store, set, query, 10)`: the
//!   int8 scan, then the exact f32 cosine of its best 100 read from the database, for 50
//!   random unit queries after 5 untimed warm-up queries, against a naive exact scan of
//!   the f32 vectors in this file: `iter().zip().map(|(a, b)| a * b).sum()` per row into
//!   a `Vec<(score, row)>`, then a full sort. Targets: ≤ 20 ms at 100k, ≤ 100 ms at 1M;
//! * `recall@10`: the share of the exact top 10 (the naive scan's) that kebab returns,
//!   mean over the 50 queries (target ≥ 0.99); `recall@10, int8 scan alone`: the same for
//!   the codes' own top 10 before re-scoring, to show what the re-score buys;
//! * `scan top-10 id mismatches`: timed queries whose top-10 id sets differ between the
//!   two scans; `order mismatches`: same ids in another order. The summation orders
//!   differ, so scores may differ in the last bits, and two near-tied neighbours (closer
//!   than ~1e-7) can swap: that is rounding, not a wrong result. The first few
//!   differences are printed on stderr with their scores;
//! * `db with vectors MB`: the database file, vectors and codes written and the
//!   write-ahead log folded in;
//! * `db with vectors MB per notes MB`: the same over the corpus's bytes (the lexical
//!   bench has the figure without vectors);
//! * `hybrid search p50/p95 ms`, `vector search p50/p95 ms`: whole searches through
//!   `kebab::search::engine::Engine` with the built-in model (default `rrf_k`, k = 10), in
//!   one process after an untimed pass that loads the vectors and the weights, as the
//!   REPL runs every question after its first: 50 English queries of 1–4 corpus words
//!   (English, since the model runs Korean queries lexically), 3 timed passes (1 at 1M,
//!   target hybrid p50 ≤ 150 ms there), each beside the same queries in `--mode lexical`. Embedding the query is part of the
//!   hybrid figure (it runs beside the lexical channel), whose stages are shown from its
//!   trace (`hybrid: …` rows); the vector search that follows reuses that query's vector,
//!   so its figure is the scan and the re-score. The vectors are random, so only the
//!   time counts. Needs the model. `new hybrid search p50/p95 ms`: one pass of the same
//!   queries each on a connection of its own that has not met their words, hybrid beside
//!   lexical (a session keeps the scores of the words it meets twice, so the timed passes
//!   above are queries asked again);
//! * `repl -> first stdout p50/p95 ms`: the release binary started as
//!   `kebab --data-dir DIR --repl --session bench` with stdin a pipe. Piped, the REPL
//!   prints nothing before its first input line (no banner), so `:quit` is written at
//!   once and the figure is the time until the first stdout byte: the echoed
//!   `kebab[bench]> :quit`, i.e. process start, config, opening the database, choosing
//!   the chat model (`llm.provider = auto` probes the Ollama server; a refused connection
//!   is quick) and reading the line. Target: < 100 ms. `repl -> exit` adds quitting.
//!   Reference for both: `kebab --data-dir DIR stats` to exit (process start + opening the
//!   database + its counts, which read the whole chunks table). `bare start (--version)`
//!   is `kebab --version`: the process alone. 10 timed runs after one untimed one each;
//!   `KEBAB_CONFIG` points at an empty file, so defaults are used;
//! * `hybrid search peak RSS MB` / `hybrid search wall ms`: the child process
//!   `kebab --data-dir DIR search --mode hybrid QUERY` (embedding the query loads the
//!   model; the first vector query loads every vector) against the same query with
//!   `--mode lexical`, peak RSS from `/usr/bin/time -f %M` (else polled from
//!   `/proc/PID/status` VmHWM, which can miss a last peak), p50 of 3 runs each. The
//!   vectors are random, so the hits mean nothing: only memory and time count. Needs the
//!   model (below); its config file sets only `embedding.model_dir`.
//!
//! Once per run, with the model: `model load + first embed ms` (`Local::open`, then the
//! first `embed` call of one short text, which reads the weights), then embedding
//! throughput in batches of 32 with `kebab::embed::Embedder::embed`, 2 passes each, over
//! (a) 200 short English sentences of 10–14 words and (b) 64 English passages of
//! 160–200 words: texts/s, words/s and word pieces/s (counted with the model's own
//! tokenizer, `[CLS]`/`[SEP]` included, cut
//! at 256 as kebab's embedder does). No reference, except for `embed 180w GFLOP/s`: the
//! passages' arithmetic (`minilm_flops`) over the time, beside the GFLOP/s the embedder's
//! own matrix product (`kebab::embed::kernel`) reaches here on the model's largest
//! product (`matmul_gflops`).
//!
//! The model is looked for in `KEBAB_MODEL_DIR`, `KEBAB_TEST_MODEL_DIR`, then
//! `target/kebab-test-model`; without it those figures are reported as skipped. The
//! binary is the one Cargo builds for this bench (`CARGO_BIN_EXE_kebab`, else
//! `target/release/kebab`); if it is missing or older than `src/`, `Cargo.toml` or
//! `Cargo.lock`, the figures that run it are skipped with the command to build it.
//!
//! The table ends with the load average: the figures are wall times, so other work on
//! the machine (e.g. a build) inflates them, the model's throughput most.
//!
//! ratio = kebab / reference (ms, MB: above 1 means kebab costs more). A target bounds the
//! kebab figure (≤ for times, ≥ for recall); `ok`/`missed` says whether it held. Nothing is
//! asserted.
//!
//! Run: `bench/run [--size 10k|100k|both|1m]` (or `cargo bench --bench vector -- --size 10k`).
//! Prints the table on stdout and writes the same data to `target/bench/vector.json`
//! under the crate root.

mod common;
#[path = "vector/embedding.rs"]
mod embedding;

use std::hint::black_box;
use std::path::Path;
use std::time::{Instant, SystemTime};

use anyhow::{Context, Result};
use common::process::{binary, child_peak_rss, kebab, load_average, repl_start, timed};
use common::{FILES_1M, Rng, TempDir, Vocab, join, mb, p50_p95, peak_rss_kb, unit_vectors, write_corpus};
use kebab::config::Config;
use kebab::embed::local::Local;
use kebab::ingest::IngestOptions;
use kebab::search::engine::Engine;
use kebab::search::{Mode, vector};
use kebab::store::{Store, VectorSet};
use rusqlite::Connection;
use serde_json::json;

const DIM: usize = 384;
const MODEL: &str = "all-MiniLM-L6-v2";
const K: usize = 10;
const VECTOR_SEED: u64 = 0x7665_6374_6f72_7321;
const QUERY_SEED: u64 = 0x7175_6572_7976_6563;
const QUERIES: usize = 50;
const WARM_UP_QUERIES: usize = 5;
/// Vectors per `put_vectors` call (one transaction each).
const PUT_BATCH: usize = 4096;
const LOAD_ROUNDS: usize = 5;
const START_RUNS: usize = 10;
const RSS_RUNS: usize = 3;
/// Timed passes over the query list for the in-process searches, after one untimed pass.
const SEARCH_ROUNDS: usize = 3;
const SEARCH_QUERY: &str = "search index latency memory";
const SCAN_TARGET_MS: f64 = 20.0;
const SCAN_TARGET_1M_MS: f64 = 100.0;
const HYBRID_TARGET_1M_MS: f64 = 150.0;
const RECALL_TARGET: f64 = 0.99;
const REPL_TARGET_MS: f64 = 100.0;

/// One printed figure: kebab's value beside the reference measured in the same run.
struct Row {
    corpus: String,
    vectors: usize,
    figure: &'static str,
    kebab: f64,
    reference: Option<f64>,
    reference_is: &'static str,
    target: Option<Bound>,
}

/// A target on the kebab figure.
#[derive(Clone, Copy)]
enum Bound {
    AtMost(f64),
    AtLeast(f64),
}

impl Bound {
    fn holds(self, v: f64) -> bool {
        match self {
            Bound::AtMost(t) => v <= t,
            Bound::AtLeast(t) => v >= t,
        }
    }
    fn text(self) -> String {
        match self {
            Bound::AtMost(t) => format!("≤ {t}"),
            Bound::AtLeast(t) => format!("≥ {t}"),
        }
    }
}

/// The f32 vectors as written, for the exact reference scan: row `i` of `data` is `ids[i]`'s.
struct Exact {
    ids: Vec<i64>,
    data: Vec<f32>,
}

fn main() -> Result<()> {
    let started = Instant::now();
    let sizes = common::parse_args("vector", "both")?.sizes;
    let work = TempDir::new()?;
    let bin = binary();
    let model_dir = common::model_dir();
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    if let Err(why) = &bin {
        notes.push(format!("skipped: REPL start and search RSS: {why}"));
    }
    if model_dir.is_none() {
        notes.push(
            "skipped: search RSS and embedding throughput: no model (run `kebab models install --dir target/kebab-test-model`)"
                .to_string(),
        );
    }

    let vocab = Vocab::new();
    for (name, files) in sizes {
        let dir = work.0.join(name);
        let setup = Setup { vocab: &vocab, bin: bin.as_deref().ok(), model_dir: model_dir.as_deref() };
        bench_size(&setup, name, files, &dir, &mut rows)?;
        // Free the disk as we go: the 100k corpus and database take a few hundred MB.
        std::fs::remove_dir_all(&dir).with_context(|| format!("removing the {name} corpus"))?;
    }
    if let Some(dir) = &model_dir {
        rows.extend(embedding::bench_embed(dir, &vocab)?);
    }

    // Other work on the machine slows every figure, the model's most: say how busy it was.
    notes.push(format!("load average (1, 5, 15 min) at the end: {}", load_average()));
    print_table(&rows, &notes);
    let rss = peak_rss_kb();
    let elapsed = started.elapsed().as_secs_f64();
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench/vector.json");
    write_json(&out, &rows, &notes, rss, elapsed)?;
    println!(
        "peak RSS (this bench process): {}",
        rss.map_or("n/a".to_string(), |kb| format!("{:.1} MB", kb as f64 / 1024.0))
    );
    println!("total {elapsed:.1}s; JSON in {}", out.display());
    Ok(())
}

/// What every corpus size's run shares.
struct Setup<'a> {
    vocab: &'a Vocab,
    /// The release binary, when fresh.
    bin: Option<&'a Path>,
    /// The built-in model's folder, when installed.
    model_dir: Option<&'a Path>,
}

/// Builds the corpus's database with one vector per chunk, then every per-size figure.
fn bench_size(setup: &Setup, name: &str, files: usize, work: &Path, rows: &mut Vec<Row>) -> Result<()> {
    let Setup { vocab, bin, model_dir } = *setup;
    let corpus = work.join("corpus");
    let data_dir = work.join("data");
    let t = Instant::now();
    let bytes = write_corpus(&corpus, files, vocab)?;
    eprintln!("{name}: wrote {files} files, {:.1} MB in {:.1}s", mb(bytes), t.elapsed().as_secs_f64());
    let mut store = Store::open(&data_dir.join("kebab.db"), false)?;
    let opts = IngestOptions::of(vec![corpus.clone()]);
    let t = Instant::now();
    kebab::ingest::run(&mut store, &Config::default(), work, &opts, &mut |_| {})?;
    let ids: Vec<i64> = {
        let conn = rusqlite::Connection::open(store.path())?;
        let mut stmt = conn.prepare("SELECT id FROM chunks ORDER BY id")?;
        stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?
    };
    let n = ids.len();
    eprintln!("{name}: {n} chunks, ingest {:.1}s", t.elapsed().as_secs_f64());

    let t = Instant::now();
    let exact = Exact { ids, data: unit_vectors(VECTOR_SEED, n, DIM) };
    let queries = unit_vectors(QUERY_SEED, WARM_UP_QUERIES + QUERIES, DIM);
    eprintln!("{name}: {n} x {DIM} random unit vectors in {:.1}s", t.elapsed().as_secs_f64());
    let row = |figure, kebab, reference, reference_is, target| Row {
        corpus: name.to_string(),
        vectors: n,
        figure,
        kebab,
        reference,
        reference_is,
        target,
    };

    // 1. Writing, then loading the vectors (kebab loads the int8 codes).
    let t = Instant::now();
    let mut batch = Vec::with_capacity(PUT_BATCH);
    for (id, v) in exact.ids.iter().zip(exact.data.chunks_exact(DIM)) {
        batch.push((*id, v.to_vec()));
        if batch.len() == PUT_BATCH {
            store.put_vectors(MODEL, &batch)?;
            batch.clear();
        }
    }
    store.put_vectors(MODEL, &batch)?;
    let put_s = t.elapsed().as_secs_f64();
    drop(batch);
    // As a database left by a finished ingest: the write-ahead log folded in.
    // The reference's own connection to the same file, opened once.
    let raw_conn = rusqlite::Connection::open(store.path())?;
    raw_conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    let db_mb = mb(std::fs::metadata(data_dir.join("kebab.db")).map_or(0, |m| m.len()));
    eprintln!("{name}: put_vectors {put_s:.1}s; database {db_mb:.0} MB");
    rows.push(row("put_vectors vectors/s", n as f64 / put_s, None, "", None));

    let (mut kebab_ms, mut naive_ms) = (Vec::new(), Vec::new());
    let mut set = VectorSet::default();
    for round in 0..=LOAD_ROUNDS {
        let t = Instant::now();
        let loaded = store.load_vectors(MODEL, DIM)?;
        let k = t.elapsed().as_secs_f64() * 1000.0;
        drop(black_box(std::mem::replace(&mut set, loaded)));
        let t = Instant::now();
        let naive = naive_load(&raw_conn)?;
        let r = t.elapsed().as_secs_f64() * 1000.0;
        if round == 0 && naive.len() != n {
            eprintln!("{name}: the naive load read {} vectors, not {n}", naive.len());
        }
        drop(black_box(naive));
        if round > 0 {
            kebab_ms.push(k);
            naive_ms.push(r);
        }
    }
    let mut want = VectorSet { dim: DIM, ..VectorSet::default() };
    exact.ids.iter().zip(exact.data.chunks_exact(DIM)).for_each(|(id, v)| want.push(*id, v));
    if set.ids != want.ids || set.codes != want.codes || set.scales != want.scales {
        eprintln!("{name}: load_vectors returned {} codes that differ from the {n} written", set.ids.len());
    }
    drop(want);
    let ((kp50, kp95), (np50, np95)) = (p50_p95(&mut kebab_ms), p50_p95(&mut naive_ms));
    let naive = "f32 vectors, rusqlite Vec<u8> per row";
    rows.push(row("load_vectors p50 ms", kp50, Some(np50), naive, None));
    rows.push(row("load_vectors p95 ms", kp95, Some(np95), naive, None));
    rows.push(row("vectors in memory MB", mb(set.bytes() as u64), Some(mb((n * (DIM * 4 + 8)) as u64)), "f32 vectors and ids", None));
    rows.push(row("db with vectors MB", db_mb, None, "", None));
    rows.push(row("db with vectors MB per notes MB", db_mb / mb(bytes), None, "", None));

    // 2. The scan: int8 codes, the best re-scored exactly, against an exact f32 scan.
    let (mut kebab_ms, mut naive_ms, mut recall, mut recall_codes) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut mismatches, mut swaps) = (0, 0);
    for (i, q) in queries.chunks_exact(DIM).enumerate() {
        let t = Instant::now();
        let top = vector::top_k(&store, black_box(&set), black_box(q), K)?;
        let k = t.elapsed().as_secs_f64() * 1000.0;
        let t = Instant::now();
        let naive = naive_top_k(black_box(&exact), black_box(q), K);
        let r = t.elapsed().as_secs_f64() * 1000.0;
        if i < WARM_UP_QUERIES {
            continue;
        }
        kebab_ms.push(k);
        naive_ms.push(r);
        let found = |hits: &[(i64, f32)]| hits.iter().filter(|h| naive.iter().any(|n| n.0 == h.0)).count() as f64 / K as f64;
        recall.push(found(&top));
        recall_codes.push(found(&vector::candidates(&set, q, K)));
        if top.iter().map(|h| h.0).ne(naive.iter().map(|h| h.0)) {
            let same_set = top.len() == naive.len() && found(&top) == 1.0;
            if same_set { swaps += 1 } else { mismatches += 1 }
            if swaps + mismatches <= 3 {
                let fmt = |v: &[(i64, f32)]| v.iter().map(|(id, s)| format!("{id}:{s:.7}")).collect::<Vec<_>>().join(" ");
                eprintln!(
                    "{name}: query {i}: top-10 differs ({}):\n  kebab {}\n  naive {}",
                    if same_set { "same ids, other order" } else { "other ids" },
                    fmt(&top),
                    fmt(&naive)
                );
            }
        }
    }
    let ((kp50, kp95), (np50, np95)) = (p50_p95(&mut kebab_ms), p50_p95(&mut naive_ms));
    let naive = "naive f32 dot + full sort";
    let scan_target = Some(Bound::AtMost(if files >= FILES_1M { SCAN_TARGET_1M_MS } else { SCAN_TARGET_MS }));
    rows.push(row("scan top-10 p50 ms", kp50, Some(np50), naive, scan_target));
    rows.push(row("scan top-10 p95 ms", kp95, Some(np95), naive, scan_target));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let exact_is = "exact f32 top-10 (naive scan)";
    rows.push(row("recall@10", mean(&recall), None, exact_is, Some(Bound::AtLeast(RECALL_TARGET))));
    rows.push(row("recall@10, int8 scan alone", mean(&recall_codes), None, exact_is, None));
    rows.push(row("scan top-10 id mismatches", mismatches as f64, None, "of 50 queries: other ids than naive", None));
    rows.push(row("scan top-10 order mismatches", swaps as f64, None, "of 50 queries: same ids, other order", None));
    drop(exact);
    drop(set);

    // 3. Whole searches in one process, as the REPL runs them after its first question.
    if let Some(dir) = model_dir {
        let search = Config::default().search;
        let engine = Engine::new(Some(Box::new(Local::open(dir)?)), &search);
        let queries = english_queries(vocab);
        let mut ms = [Vec::new(), Vec::new(), Vec::new()];
        // The hybrid searches' stages, from their traces: lexical channel,
        // query embedding (beside the lexical channel), scan with re-score, fusion.
        let mut stages = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
        let modes = [Mode::Hybrid, Mode::Vector, Mode::Lexical];
        // Round 0 loads the vectors and the weights and warms the caches: untimed.
        // One timed pass at 1M: a lexical query there takes most of a second.
        let rounds = if files >= FILES_1M { 1 } else { SEARCH_ROUNDS };
        for round in 0..=rounds {
            for q in &queries {
                for (mode, ms) in modes.iter().zip(ms.iter_mut()) {
                    let t = Instant::now();
                    let (hits, trace) = engine.search_traced(&store, q, *mode, K, false)?;
                    black_box(hits);
                    if round == 0 {
                        continue;
                    }
                    ms.push(t.elapsed().as_secs_f64() * 1000.0);
                    if let (Some(l), Some(v), Some(f)) = (&trace.lexical, &trace.vector, &trace.fusion) {
                        let took = [l.timings_ms.total, v.embed_ms, v.scan_ms, f.fuse_ms];
                        stages.iter_mut().zip(took).for_each(|(s, t)| s.push(t));
                    }
                }
            }
        }
        // New queries: hybrid and lexical each on a connection of its own
        // that has not met the queries' words (a session keeps the scores of
        // a word it meets twice), after a vector search that loads the
        // vectors and the weights.
        let mut new = [Vec::new(), Vec::new()];
        for (mode, ms) in [Mode::Hybrid, Mode::Lexical].into_iter().zip(new.iter_mut()) {
            let fresh = Store::open(&data_dir.join("kebab.db"), false)?;
            // (Not one of the queries: the engine keeps the last query's vector.)
            black_box(engine.search_traced(&fresh, "loading the vectors", Mode::Vector, K, false)?);
            for q in &queries {
                let t = Instant::now();
                black_box(engine.search_traced(&fresh, q, mode, K, false)?);
                ms.push(t.elapsed().as_secs_f64() * 1000.0);
            }
        }
        let [mut nh, mut nl] = new;
        let ((nhp50, nhp95), (nlp50, nlp95)) = (p50_p95(&mut nh), p50_p95(&mut nl));
        let [mut h, mut v, mut l] = ms;
        let ((hp50, hp95), (vp50, vp95), (lp50, lp95)) = (p50_p95(&mut h), p50_p95(&mut v), p50_p95(&mut l));
        let lexical = "same queries, --mode lexical";
        let hybrid_target = (files >= FILES_1M).then_some(Bound::AtMost(HYBRID_TARGET_1M_MS));
        rows.push(row("hybrid search p50 ms", hp50, Some(lp50), lexical, hybrid_target));
        rows.push(row("hybrid search p95 ms", hp95, Some(lp95), lexical, None));
        rows.push(row("new hybrid search p50 ms", nhp50, Some(nlp50), lexical, None));
        rows.push(row("new hybrid search p95 ms", nhp95, Some(nlp95), lexical, None));
        let names = ["hybrid: lexical channel p50 ms", "hybrid: query embedding p50 ms", "hybrid: scan + re-score p50 ms", "hybrid: fusion p50 ms"];
        for (name, mut took) in names.into_iter().zip(stages) {
            rows.push(row(name, p50_p95(&mut took).0, Some(lp50), lexical, None));
        }
        rows.push(row("vector search p50 ms", vp50, Some(lp50), lexical, None));
        rows.push(row("vector search p95 ms", vp95, Some(lp95), lexical, None));
    }
    drop(store);

    let Some(bin) = bin else { return Ok(()) };
    // 4. Start to prompt.
    // An empty config: every default (a missing config file is an error).
    let no_config = work.join("defaults.toml");
    std::fs::write(&no_config, "").context("writing the empty bench config")?;
    let (mut first, mut exit, mut stats, mut bare) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for run in 0..=START_RUNS {
        let (f, e) = repl_start(bin, &data_dir, &no_config)?;
        let s = timed(kebab(bin, &no_config).arg("--data-dir").arg(&data_dir).arg("stats"))?;
        let b = timed(kebab(bin, &no_config).arg("--version"))?;
        if run > 0 {
            first.push(f);
            exit.push(e);
            stats.push(s);
            bare.push(b);
        }
    }
    let ((fp50, fp95), (ep50, ep95)) = (p50_p95(&mut first), p50_p95(&mut exit));
    let ((sp50, sp95), (bp50, _)) = (p50_p95(&mut stats), p50_p95(&mut bare));
    rows.push(row("repl -> first stdout p50 ms", fp50, Some(sp50), "`kebab stats` to exit", Some(Bound::AtMost(REPL_TARGET_MS))));
    rows.push(row("repl -> first stdout p95 ms", fp95, Some(sp95), "`kebab stats` to exit", Some(Bound::AtMost(REPL_TARGET_MS))));
    rows.push(row("repl -> exit p50 ms", ep50, Some(sp50), "`kebab stats` to exit", None));
    rows.push(row("repl -> exit p95 ms", ep95, Some(sp95), "`kebab stats` to exit", None));
    rows.push(row("bare start (--version) p50 ms", bp50, None, "", None));

    // 5. Memory of the first hybrid query.
    let Some(model_dir) = model_dir else { return Ok(()) };
    let config = work.join("config.toml");
    // A JSON string is a valid TOML basic string.
    let dir_str = serde_json::to_string(&model_dir.to_string_lossy())?;
    std::fs::write(&config, format!("[embedding]\nmodel_dir = {dir_str}\n")).context("writing the bench config")?;
    let (mut h_kb, mut h_ms, mut l_kb, mut l_ms) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..RSS_RUNS {
        for (mode, kb, ms) in [("hybrid", &mut h_kb, &mut h_ms), ("lexical", &mut l_kb, &mut l_ms)] {
            let mut cmd = kebab(bin, &config);
            cmd.arg("--data-dir").arg(&data_dir).args(["search", "--mode", mode, SEARCH_QUERY]);
            let (rss_kb, wall) = child_peak_rss(cmd, work)?;
            kb.push(rss_kb as f64 / 1024.0);
            ms.push(wall);
        }
    }
    let ((hkb, _), (lkb, _)) = (p50_p95(&mut h_kb), p50_p95(&mut l_kb));
    let ((hms, _), (lms, _)) = (p50_p95(&mut h_ms), p50_p95(&mut l_ms));
    rows.push(row("hybrid search peak RSS MB", hkb, Some(lkb), "same query, --mode lexical", None));
    rows.push(row("hybrid search wall ms", hms, Some(lms), "same query, --mode lexical", None));
    Ok(())
}

/// 50 English queries of 1–4 content words from the corpus vocabulary (English, because
/// the built-in model runs Korean queries lexically).
fn english_queries(v: &Vocab) -> Vec<String> {
    let mut rng = Rng(embedding::TEXT_SEED ^ QUERY_SEED);
    (0..QUERIES)
        .map(|_| {
            let mut q = String::new();
            join(&mut q, rng.range(1, 4), |q| q.push_str(v.content.pick(&mut rng)));
            q
        })
        .collect()
}

/// The reference scan: one plain dot product per row, every score kept, a full sort.
fn naive_top_k(set: &Exact, q: &[f32], k: usize) -> Vec<(i64, f32)> {
    let mut scored: Vec<(f32, usize)> = set
        .data
        .chunks_exact(DIM)
        .enumerate()
        .map(|(i, row)| (row.iter().zip(q).map(|(a, b)| a * b).sum::<f32>(), i))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().take(k).map(|(s, i)| (set.ids[i], s)).collect()
}

/// The reference load: an owned blob per row, decoded into a fresh vector per row.
fn naive_load(conn: &Connection) -> Result<Vec<(i64, Vec<f32>)>> {
    let mut stmt = conn.prepare_cached("SELECT chunk_id, vector FROM embeddings WHERE model = ?1")?;
    let rows = stmt.query_map([MODEL], |r| {
        let blob: Vec<u8> = r.get(1)?;
        let v: Vec<f32> = blob.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        Ok((r.get(0)?, v))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

fn print_table(rows: &[Row], notes: &[String]) {
    println!(
        "\n{:<15} {:>7}  {:<30} {:>11} {:>11} {:>7} {:>10}  reference",
        "corpus", "vectors", "figure", "kebab", "reference", "ratio", "target"
    );
    for r in rows {
        let prec = if r.figure.ends_with("ms") {
            2
        } else if r.figure.ends_with("mismatches") {
            0
        } else {
            1
        };
        let reference = r.reference.map_or("-".to_string(), |v| format!("{v:.prec$}"));
        let ratio = r.reference.map_or("-".to_string(), |v| format!("{:.2}", r.kebab / v));
        let target = r.target.map_or(String::new(), |t| format!("{} {}", if t.holds(r.kebab) { "ok" } else { "missed" }, t.text()));
        println!(
            "{:<15} {:>7}  {:<30} {:>11.prec$} {:>11} {:>7} {:>10}  {}",
            r.corpus, r.vectors, r.figure, r.kebab, reference, ratio, target, r.reference_is
        );
    }
    println!("ratio = kebab / reference (ms, MB: >1 means kebab costs more); target = upper bound on kebab");
    for n in notes {
        println!("{n}");
    }
    println!();
}

fn write_json(path: &Path, rows: &[Row], notes: &[String], rss_kb: Option<u64>, elapsed_s: f64) -> Result<()> {
    let row = |r: &Row| {
        json!({"corpus": r.corpus, "vectors": r.vectors, "figure": r.figure, "kebab": r.kebab,
               "reference": r.reference, "reference_is": r.reference_is,
               "ratio": r.reference.map(|v| r.kebab / v), "target": r.target.map(Bound::text),
               "target_met": r.target.map(|t| t.holds(r.kebab))})
    };
    let rows: Vec<_> = rows.iter().map(row).collect();
    let when = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let doc = json!({"schema_version": "bench_vector.v1", "kebab_version": env!("CARGO_PKG_VERSION"),
                     "dim": DIM, "k": K, "queries": QUERIES, "load_rounds": LOAD_ROUNDS,
                     "start_runs": START_RUNS, "rss_runs": RSS_RUNS, "rows": rows, "notes": notes,
                     "peak_rss_kb": rss_kb, "elapsed_s": elapsed_s, "unix_time": when});
    common::write_json(path, &doc)
}
