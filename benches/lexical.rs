//! Lexical benchmark: how much kebab adds on top of the SQLite FTS5 it is built on.
//!
//! For each corpus (the Rust Book from `../shared/eval/rust-book-en/src` and SciFact's
//! BEIR `corpus.jsonl` from `../shared/eval/scifact` when present, and a synthetic
//! English/Korean Markdown corpus of ~10k and/or ~100k chunks) it measures:
//!
//! * ingest throughput: `kebab::ingest::run` into a fresh database, against a raw FTS5
//!   bulk insert of the very same chunk texts in one transaction (same pragmas), each the
//!   median of three runs, alternating (one run past a minute). kebab's
//!   figure includes everything it does: walking, hashing, Markdown chunking, one
//!   transaction per file, and the trigram index for chunks with Hangul;
//! * lexical search latency: `kebab::search::lexical::search` (k = 10, snippets on),
//!   against the bare FTS5 `MATCH … ORDER BY bm25 LIMIT 10` of the same query's word
//!   expression on the same connection;
//! * database size: kebab's database file (write-ahead log folded in) per MB of notes,
//!   against the bare FTS5 table's file from the reference ingest;
//! * with `--embed` (and the model installed, see the vector bench): ingest with the
//!   built-in embedding model, i.e. the lexical ingest plus `ingest::embed::embed_missing`
//!   over every chunk, as `kebab ingest` runs them, against the same raw FTS5 reference;
//!   and the database size with the vectors. Embedding runs at a few chunks a second on a
//!   CPU, so this is minutes per thousand chunks: SciFact (5k chunks, ~18 min) is left
//!   out, and `--size 10k --embed` is the largest run that fits a coffee break.
//!
//! Each kebab figure is printed beside its reference from the same run; the ratio is
//! kebab / reference (throughput: below 1 means kebab is slower; latency: above 1 means
//! kebab is slower). Both throughputs are over the same bytes, the corpus's source
//! files, so the ingest ratio is a ratio of times. Nothing is asserted: numbers only.
//!
//! Run: `bench/run [--size 10k|100k|both] [--embed]` (or `cargo bench --bench lexical --
//! --size 10k`). Prints the table on stdout and writes the same data to
//! `target/bench/lexical.json` (`lexical-embed.json` with `--embed`) under the crate root.

mod common;

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use common::{RUST_BOOK_QUERIES, Rng, TempDir, Vocab, join, mb, p50_p95, peak_rss_kb, write_corpus};
use kebab::config::{Config, DEFAULT_HEADING_WEIGHT};
use kebab::embed::local::Local;
use kebab::ingest::IngestOptions;
use kebab::search::{lexical, query};
use kebab::store::{FtsIndex, Store};
use rusqlite::Connection;
use serde_json::json;

/// Timed passes over the query list, after one untimed warm-up pass.
const ROUNDS: usize = 5;
const QUERY_SEED: u64 = 0x7175_6572_7921;
/// Ingest runs per side (kebab, raw) whose median is reported.
const INGEST_ROUNDS: usize = 3;

/// One printed figure: kebab's value beside the reference measured in the same run.
struct Row {
    corpus: String,
    chunks: i64,
    mb: f64,
    figure: &'static str,
    kebab: f64,
    reference: f64,
}

fn main() -> Result<()> {
    let started = Instant::now();
    let args = common::parse_args("lexical", "both")?;
    let work = TempDir::new()?;
    let mut rows = Vec::new();
    let embedder = if args.embed {
        let dir = common::model_dir()
            .context("--embed needs the model: run `kebab models install --dir target/kebab-test-model`")?;
        Some(Local::open(&dir)?)
    } else {
        None
    };
    let embedder = embedder.as_ref();

    let book = common::rust_book_dir();
    if book.is_dir() {
        let queries: Vec<String> = RUST_BOOK_QUERIES.iter().map(|q| q.to_string()).collect();
        rows.extend(bench_corpus("rust-book", &book, &queries, &work.0.join("rust-book"), embedder)?);
    } else {
        println!("rust-book: {} not found; skipping that corpus", book.display());
    }
    let scifact = common::eval_dir().join("scifact");
    if scifact.join("corpus.jsonl").is_file() {
        let queries = scifact_queries(&scifact.join("queries.jsonl"))?;
        // Embedding SciFact takes ~18 minutes: its embedded figure comes from the evaluation.
        rows.extend(bench_corpus("scifact", &scifact.join("corpus.jsonl"), &queries, &work.0.join("scifact"), None)?);
    } else {
        println!("scifact: {} not found; skipping that corpus", scifact.display());
    }
    let vocab = Vocab::new();
    for (name, files) in args.sizes {
        let dir = work.0.join(name).join("corpus");
        let t = Instant::now();
        let bytes = write_corpus(&dir, files, &vocab)?;
        eprintln!("{name}: wrote {files} files, {:.1} MB in {:.1}s", mb(bytes), t.elapsed().as_secs_f64());
        let queries = synthetic_queries(&vocab);
        rows.extend(bench_corpus(name, &dir, &queries, &work.0.join(name), embedder)?);
        // Free the disk as we go: the 100k corpus and its databases take a few hundred MB.
        std::fs::remove_dir_all(work.0.join(name)).with_context(|| format!("removing the {name} corpus"))?;
    }

    print_table(&rows);
    let rss = peak_rss_kb();
    let elapsed = started.elapsed().as_secs_f64();
    let file = if args.embed { "target/bench/lexical-embed.json" } else { "target/bench/lexical.json" };
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    write_json(&out, &rows, rss, elapsed)?;
    println!("peak RSS: {}", rss.map_or("n/a".to_string(), |kb| format!("{:.1} MB", kb as f64 / 1024.0)));
    println!("total {elapsed:.1}s; JSON in {}", out.display());
    Ok(())
}

/// Ingest `src` into a fresh database under `work`, then time ingest and search
/// against their raw FTS5 references; with an embedder, embed every chunk too.
fn bench_corpus(name: &str, src: &Path, queries: &[String], work: &Path, embedder: Option<&Local>) -> Result<Vec<Row>> {
    std::fs::create_dir_all(work).with_context(|| format!("creating {}", work.display()))?;
    let mut store = Store::open(&work.join("kebab.db"), false)?;
    let opts = IngestOptions::of(vec![src.to_path_buf()]);
    let t = Instant::now();
    let summary = kebab::ingest::run(&mut store, &Config::default(), work, &opts, &mut |_| {})?;
    let first_s = t.elapsed().as_secs_f64();
    if summary.skipped > 0 {
        eprintln!("{name}: ingest skipped {} files: {:?}", summary.skipped, summary.skipped_files);
    }
    let chunks = store.chunk_count()?;
    let corpus_mb = mb(summary.bytes_read);
    eprintln!("{name}: {chunks} chunks from {} files, {corpus_mb:.1} MB, ingest {first_s:.2}s", summary.files_seen);

    let raw_db = work.join("raw.db");
    let (mut kebab_times, mut raw_times) = (vec![first_s], vec![raw_ingest(&store, &raw_db)?]);
    // One ingest's time varies by a quarter from run to run here: both sides
    // run again, alternating, into databases thrown away, and the medians
    // count; one run only where it takes minutes (1M chunks).
    for _ in 1..if first_s < 60.0 { INGEST_ROUNDS } else { 1 } {
        let again = work.join("again");
        std::fs::create_dir_all(&again).with_context(|| format!("creating {}", again.display()))?;
        let mut fresh = Store::open(&again.join("kebab.db"), false)?;
        let t = Instant::now();
        kebab::ingest::run(&mut fresh, &Config::default(), &again, &opts, &mut |_| {})?;
        kebab_times.push(t.elapsed().as_secs_f64());
        drop(fresh);
        raw_times.push(raw_ingest(&store, &again.join("raw.db"))?);
        std::fs::remove_dir_all(&again).with_context(|| format!("removing {}", again.display()))?;
    }
    // The nearest-rank p50 of three runs is their median.
    let (kebab_s, raw_s) = (p50_p95(&mut kebab_times).0, p50_p95(&mut raw_times).0);
    eprintln!("{name}: ingest runs {kebab_times:.2?} s, raw {raw_times:.2?} s");
    let row =
        |figure, kebab, reference| Row { corpus: name.to_string(), chunks, mb: corpus_mb, figure, kebab, reference };
    let raw_mb = mb(std::fs::metadata(&raw_db).map_or(0, |m| m.len()));
    let mut rows = vec![
        row("ingest MB/s", corpus_mb / kebab_s, corpus_mb / raw_s),
        row("ingest chunks/s", chunks as f64 / kebab_s, chunks as f64 / raw_s),
        row("db MB per notes MB", database_mb(&store)? / corpus_mb, raw_mb / corpus_mb),
    ];
    if let Some(model) = embedder {
        let t = Instant::now();
        let e = kebab::ingest::embed::embed_missing(&store, model, false, &mut |_, _| {})?;
        let embed_s = t.elapsed().as_secs_f64();
        eprintln!("{name}: embedded {} chunks in {embed_s:.1}s", e.embedded);
        let total_s = kebab_s + embed_s;
        rows.push(row("ingest+embed MB/s", corpus_mb / total_s, corpus_mb / raw_s));
        rows.push(row("ingest+embed chunks/s", chunks as f64 / total_s, chunks as f64 / raw_s));
        rows.push(row("db+vectors MB per notes MB", database_mb(&store)? / corpus_mb, raw_mb / corpus_mb));
    }

    let (mut kebab_ms, mut raw_ms) = (Vec::new(), Vec::new());
    let (mut kebab_new, mut raw_new) = (Vec::new(), Vec::new());
    // The reference's own connection to the same file, opened once (its page
    // and statement caches warm in round 0 like kebab's).
    let raw_conn = Connection::open(store.path())?;
    let search_opts = lexical::Options { k: 10, heading_weight: DEFAULT_HEADING_WEIGHT, snippets: true };
    let mut no_hits = 0;
    // Round 0 is each query's first search in this process: a new query in
    // a session (the store keeps the scores of phrases earlier queries
    // repeated, `store::terms`). It also warms SQLite's page and statement
    // caches. The later rounds ask the same queries again.
    for round in 0..=ROUNDS {
        for q in queries {
            let t = Instant::now();
            let (hits, _) = lexical::search(&store, q, search_opts)?;
            let k = t.elapsed().as_secs_f64() * 1000.0;
            black_box(&hits);
            // The reference runs only the word index: what one FTS5 query costs.
            let r = query::build(q).expr(FtsIndex::Words).map(|expr| raw_search(&raw_conn, &expr)).transpose()?;
            if round > 0 {
                kebab_ms.push(k);
                raw_ms.extend(r);
            } else {
                kebab_new.push(k);
                raw_new.extend(r);
                no_hits += usize::from(hits.is_empty());
            }
        }
    }
    if no_hits > 0 {
        eprintln!("{name}: {no_hits} of {} queries found nothing", queries.len());
    }
    let ((kp50, kp95), (rp50, rp95)) = (p50_p95(&mut kebab_ms), p50_p95(&mut raw_ms));
    rows.push(row("search p50 ms", kp50, rp50));
    rows.push(row("search p95 ms", kp95, rp95));
    let ((kp50, kp95), (rp50, rp95)) = (p50_p95(&mut kebab_new), p50_p95(&mut raw_new));
    rows.push(row("new search p50 ms", kp50, rp50));
    rows.push(row("new search p95 ms", kp95, rp95));
    Ok(rows)
}

/// Seconds to bulk-insert kebab's own chunk texts into a bare FTS5 table in one
/// transaction: the floor for what indexing those texts costs in SQLite.
fn raw_ingest(store: &Store, path: &Path) -> Result<f64> {
    let texts: Vec<(String, String)> = {
        let conn = Connection::open(store.path())?;
        let mut stmt = conn.prepare("SELECT context, text FROM chunks ORDER BY id")?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?
    };
    let mut conn = Connection::open(path).with_context(|| format!("opening {}", path.display()))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.execute_batch(
        "CREATE TABLE docs(id INTEGER PRIMARY KEY, context TEXT NOT NULL, text TEXT NOT NULL);
         CREATE VIRTUAL TABLE docs_fts USING fts5(context, text, tokenize='porter unicode61 remove_diacritics 2');",
    )?;
    let t = Instant::now();
    let tx = conn.transaction()?;
    {
        let mut plain = tx.prepare("INSERT INTO docs(context, text) VALUES (?1, ?2)")?;
        let mut fts = tx.prepare("INSERT INTO docs_fts(rowid, context, text) VALUES (?1, ?2, ?3)")?;
        for (context, text) in &texts {
            plain.execute([context, text])?;
            fts.execute(rusqlite::params![tx.last_insert_rowid(), context, text])?;
        }
    }
    tx.commit()?;
    Ok(t.elapsed().as_secs_f64())
}

/// The database's size in MB once its write-ahead log is folded in, as a finished
/// ingest leaves it for the next process.
fn database_mb(store: &Store) -> Result<f64> {
    let conn = Connection::open(store.path())?;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    let path: String = conn.query_row("PRAGMA database_list", [], |r| r.get(2))?;
    Ok(mb(std::fs::metadata(&path).with_context(|| format!("reading the size of {path}"))?.len()))
}

/// Milliseconds for the bare word-index query, rows collected.
fn raw_search(conn: &Connection, expr: &str) -> Result<f64> {
    let t = Instant::now();
    let sql = "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?1 ORDER BY 2 LIMIT 10";
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map([expr], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?)))?;
    let rows = rows.collect::<rusqlite::Result<Vec<_>>>()?;
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    black_box(rows);
    Ok(ms)
}

fn print_table(rows: &[Row]) {
    println!("\n{:<16} {:>8} {:>7}  {:<26} {:>12} {:>12} {:>7}", "corpus", "chunks", "MB", "figure", "kebab", "raw FTS5", "ratio");
    for r in rows {
        let prec = if r.figure.ends_with("ms") { 3 } else if r.figure.ends_with("notes MB") { 2 } else { 1 };
        println!(
            "{:<16} {:>8} {:>7.1}  {:<26} {:>12.prec$} {:>12.prec$} {:>7.2}",
            r.corpus, r.chunks, r.mb, r.figure, r.kebab, r.reference, r.kebab / r.reference
        );
    }
    println!("ratio = kebab / raw FTS5 (MB/s, chunks/s: <1 is slower; ms, MB per notes MB: >1 is slower or bigger)\n");
}

fn write_json(path: &Path, rows: &[Row], rss_kb: Option<u64>, elapsed_s: f64) -> Result<()> {
    let row = |r: &Row| {
        json!({"corpus": r.corpus, "chunks": r.chunks, "mb": r.mb, "figure": r.figure,
               "kebab": r.kebab, "reference": r.reference, "ratio": r.kebab / r.reference})
    };
    let rows: Vec<_> = rows.iter().map(row).collect();
    let doc = json!({"schema_version": "bench_lexical.v1", "kebab_version": env!("CARGO_PKG_VERSION"),
                     "rounds": ROUNDS, "rows": rows, "peak_rss_kb": rss_kb, "elapsed_s": elapsed_s});
    common::write_json(path, &doc)
}

/// The first 50 of SciFact's queries (claims), as a reader would type them.
fn scifact_queries(path: &Path) -> Result<Vec<String>> {
    let queries = kebab::eval::beir::read_queries(path)?;
    Ok(queries.into_iter().take(50).map(|(_, text)| text).collect())
}

/// 50 queries from the corpus vocabulary: English (1–5 terms), Korean, and mixed.
fn synthetic_queries(v: &Vocab) -> Vec<String> {
    let mut rng = Rng(QUERY_SEED);
    (0..50)
        .map(|i| {
            let (korean, lo, hi) = match i % 5 {
                0..=2 => (0.0, 1, 5),
                3 => (1.0, 1, 3),
                _ => (0.5, 2, 4),
            };
            let mut q = String::new();
            join(&mut q, rng.range(lo, hi), |q| {
                if korean > 0.0 { v.word(&mut rng, korean, q) } else { q.push_str(v.content.pick(&mut rng)) }
            });
            q
        })
        .collect()
}
