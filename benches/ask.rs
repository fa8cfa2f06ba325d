//! Ask benchmark: what kebab's ask pipeline costs before the model gets the prompt,
//! beside the model's own time to its first token.
//!
//! For each corpus (the Rust Book from `../shared/eval/rust-book-en/src` when present,
//! and the lexical bench's synthetic English/Korean corpus of ~10k and/or ~100k chunks)
//! it ingests with `kebab::ingest::run`, then puts 50 questions through `kebab::rag::ask`
//! with two models:
//!
//! * `scripted`: the tests' `Scripted` model (tests/common/scripted.rs), zero latency, one short grounded reply
//!   per call (`"word" [#1]`, the word taken from the question). Its first token costs
//!   next to nothing, so what remains is the pipeline. The score gate is set permissive
//!   (lexical = lexical_cjk = 0) so that questions reach the model;
//! * `extractive`: the built-in `Extractive` model with the default config (default gate).
//!   It computes its whole answer before its first piece, so its first token is its work.
//!
//! Figures per corpus and model (nearest-rank p50/p95, milliseconds):
//!
//! * `before_model, all`: retrieve + gate + pack + render (`timings.before_model`); for a
//!   question refused before the model it is the time to that refusal (`timings.total`);
//! * `before_model, to model` (and its `retrieve`, `gate`, `pack` stages; rendering is the
//!   rest), `first_token`, `total, to model`: over the questions that reached the model
//!   only (`first_token` is the model's own, from its call);
//! * `kebab share of TTFT %`: per question, before_model / (before_model + first_token);
//! * `ask() call, all`: wall time of the call, which adds saving the answer.
//!
//! Questions refused before the model (score gate, nothing found) are counted and listed
//! by reason. Each ask saves an answer row, as in real use. Two passes (scripted,
//! before_model only) come first: `one-shot` asks each question on a fresh connection,
//! as each `kebab ask` process does; `new question` asks each once in one session, where
//! the store keeps the scores of the words questions repeat (see `store::terms`). Then
//! `ROUNDS` passes per model ask the same questions again. Nothing is asserted.
//!
//! Run: `bench/run [--size 10k|100k|both]` (or `cargo bench --bench ask -- --size 10k`).
//! Prints the table on stdout and writes the same data to `target/bench/ask.json` under
//! the crate root.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use common::{RUST_BOOK_QUERIES, Rng, TempDir, Vocab, join, mb, p50_p95, peak_rss_kb, write_corpus};
use kebab::config::Config;
use kebab::ingest::IngestOptions;
use kebab::llm::extractive::Extractive;
use kebab::rag::{self, AskOptions};
use kebab::search::query;
use kebab::search::engine::Engine;
use kebab::store::Store;
use serde_json::json;

#[path = "../tests/common/scripted.rs"]
mod scripted;
use scripted::Scripted;

/// Timed passes over the question list per model, after one untimed warm-up pass.
const ROUNDS: usize = 3;
const QUESTIONS: usize = 50;
const QUESTION_SEED: u64 = 0x6173_6b21_7175_6573;
/// English question openings; their words are question words the gate ignores.
const EN_LEADS: &[&str] = &["how do I", "what is the", "why does", "when should I use", "where is", "what about"];
/// Korean question endings (predicate forms the gate ignores).
const KO_ENDINGS: &[&str] = &["무엇인가요", "어떻게 하나요", "알려주세요", "왜 그런가요"];

/// One figure: a percentile pair over `n` samples.
struct Row {
    corpus: String,
    chunks: i64,
    model: &'static str,
    figure: &'static str,
    n: usize,
    p50: f64,
    p95: f64,
}

/// What happened to the questions of one (corpus, model) run.
struct Run {
    corpus: String,
    model: &'static str,
    gate: String,
    asked: usize,
    /// Refused before the model, by reason.
    refused: BTreeMap<&'static str, usize>,
    to_model: usize,
    grounded: usize,
    verified: usize,
}

#[derive(Clone, Copy)]
enum Which {
    Scripted,
    Extractive,
}

fn main() -> Result<()> {
    let started = Instant::now();
    let sizes = common::parse_args("ask", "both")?.sizes;
    let work = TempDir::new()?;
    let (mut rows, mut runs) = (Vec::new(), Vec::new());

    let book = common::rust_book_dir();
    if book.is_dir() {
        let questions: Vec<String> = RUST_BOOK_QUERIES.iter().map(|q| q.to_string()).collect();
        bench_corpus("rust-book", &book, &questions, &work.0.join("rust-book"), &mut rows, &mut runs)?;
    } else {
        println!("rust-book: {} not found; skipping that corpus", book.display());
    }
    let vocab = Vocab::new();
    let questions = synthetic_questions(&vocab);
    for (name, files) in sizes {
        let dir = work.0.join(name).join("corpus");
        let t = Instant::now();
        let bytes = write_corpus(&dir, files, &vocab)?;
        eprintln!("{name}: wrote {files} files, {:.1} MB in {:.1}s", mb(bytes), t.elapsed().as_secs_f64());
        bench_corpus(name, &dir, &questions, &work.0.join(name), &mut rows, &mut runs)?;
        std::fs::remove_dir_all(work.0.join(name)).with_context(|| format!("removing the {name} corpus"))?;
    }

    print_table(&rows, &runs);
    let rss = peak_rss_kb();
    let elapsed = started.elapsed().as_secs_f64();
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench/ask.json");
    write_json(&out, &rows, &runs, rss, elapsed)?;
    println!("peak RSS: {}", rss.map_or("n/a".to_string(), |kb| format!("{:.1} MB", kb as f64 / 1024.0)));
    println!("total {elapsed:.1}s; JSON in {}", out.display());
    Ok(())
}

/// Ingest `src` into a fresh database under `work`, then time asks with both models.
fn bench_corpus(name: &str, src: &Path, questions: &[String], work: &Path, rows: &mut Vec<Row>, runs: &mut Vec<Run>) -> Result<()> {
    std::fs::create_dir_all(work).with_context(|| format!("creating {}", work.display()))?;
    let db = work.join("kebab.db");
    let mut store = Store::open(&db, false)?;
    let opts = IngestOptions::of(vec![src.to_path_buf()]);
    let t = Instant::now();
    let summary = kebab::ingest::run(&mut store, &Config::default(), work, &opts, &mut |_| {})?;
    let chunks = store.chunk_count()?;
    eprintln!(
        "{name}: {chunks} chunks from {} files, {:.1} MB, ingest {:.2}s",
        summary.files_seen,
        mb(summary.bytes_read),
        t.elapsed().as_secs_f64()
    );

    let mut permissive = Config::default();
    permissive.rag.score_gate.lexical = 0.0;
    permissive.rag.score_gate.lexical_cjk = 0.0;
    let mut kb = rag::Kb { cfg: permissive.clone(), store, engine: Engine::lexical(&permissive), model: Box::new(Extractive::default()) };
    // One-shot: each question asked on a fresh connection, as each `kebab ask`
    // process is (the OS's page cache is warm from the ingest).
    let t = Instant::now();
    let mut one_shot = Vec::new();
    for q in questions {
        kb.store = Store::open(&db, false)?;
        one_shot.extend(measure(&mut kb, Which::Scripted, std::slice::from_ref(q), 1)?.before_all);
    }
    eprintln!("{name}: one-shot pass {:.1}s", t.elapsed().as_secs_f64());
    // A session, then: each question new to it, though its common words recur
    // (the store keeps their scores, `store::terms`). This pass also warms
    // SQLite's statement cache for the timed rounds, which ask again.
    kb.store = Store::open(&db, false)?;
    let t = Instant::now();
    let new = measure(&mut kb, Which::Scripted, questions, 1)?.before_all;
    eprintln!("{name}: new-question pass {:.1}s", t.elapsed().as_secs_f64());
    for (figure, mut v) in [("one-shot before_model", one_shot), ("new question before_model", new)] {
        let (p50, p95) = p50_p95(&mut v);
        rows.push(Row { corpus: name.to_string(), chunks, model: "scripted", figure, n: v.len(), p50, p95 });
    }
    for (which, cfg) in [(Which::Scripted, &permissive), (Which::Extractive, &Config::default())] {
        let t = Instant::now();
        kb.cfg = cfg.clone();
        kb.engine = Engine::lexical(cfg);
        let s = measure(&mut kb, which, questions, ROUNDS)?;
        let model = match which {
            Which::Scripted => "scripted",
            Which::Extractive => "extractive",
        };
        eprintln!("{name}: {model} {} asks in {:.1}s", s.run.asked, t.elapsed().as_secs_f64());
        let g = &cfg.rag.score_gate;
        let gate = format!("lexical {} / cjk {}{}", g.lexical, g.lexical_cjk, if g.lexical == 0.0 { " (permissive)" } else { " (default)" });
        let mut row = |figure, v: Vec<f64>| {
            let mut v = v;
            let (p50, p95) = p50_p95(&mut v);
            rows.push(Row { corpus: name.to_string(), chunks, model, figure, n: v.len(), p50, p95 });
        };
        row("before_model, all", s.before_all);
        row("before_model, to model", s.before_model);
        row("  retrieve", s.retrieve);
        row("  gate", s.gate);
        row("  pack", s.pack);
        row("first_token", s.first_token);
        row("kebab share of TTFT %", s.share);
        row("total, to model", s.total);
        row("ask() call, all", s.wall);
        runs.push(Run { corpus: name.to_string(), model, gate, ..s.run });
    }
    Ok(())
}

/// Samples from `rounds` passes over the questions.
struct Samples {
    before_all: Vec<f64>,
    before_model: Vec<f64>,
    retrieve: Vec<f64>,
    gate: Vec<f64>,
    pack: Vec<f64>,
    first_token: Vec<f64>,
    share: Vec<f64>,
    total: Vec<f64>,
    wall: Vec<f64>,
    run: Run,
}

fn measure(kb: &mut rag::Kb, which: Which, questions: &[String], rounds: usize) -> Result<Samples> {
    let cancel = AtomicBool::new(false);
    let run = Run {
        corpus: String::new(),
        model: "",
        gate: String::new(),
        asked: 0,
        refused: BTreeMap::new(),
        to_model: 0,
        grounded: 0,
        verified: 0,
    };
    let mut s = Samples {
        before_all: Vec::new(),
        before_model: Vec::new(),
        retrieve: Vec::new(),
        gate: Vec::new(),
        pack: Vec::new(),
        first_token: Vec::new(),
        share: Vec::new(),
        total: Vec::new(),
        wall: Vec::new(),
        run,
    };
    for _ in 0..rounds {
        for q in questions {
            // A fresh scripted model per call holds exactly this call's reply, whether or
            // not the previous question reached its model (and keeps no request history).
            kb.model = match which {
                Which::Scripted => Box::new(Scripted::new([scripted_reply(q)])),
                Which::Extractive => Box::new(Extractive::default()),
            };
            let opts = AskOptions::new(q.clone());
            let t = Instant::now();
            let out = kb.ask(&opts, &mut |_| true, &cancel)?;
            let wall = t.elapsed().as_secs_f64() * 1000.0;
            if let Some(e) = out.error {
                bail!("the model failed on {q:?}: {e}");
            }
            let tm = &out.explain.timings;
            s.run.asked += 1;
            s.wall.push(wall);
            match tm.first_token {
                Some(ft) => {
                    s.run.to_model += 1;
                    s.before_all.push(tm.before_model);
                    s.before_model.push(tm.before_model);
                    s.retrieve.push(tm.retrieve);
                    s.gate.push(tm.gate);
                    s.pack.push(tm.pack);
                    s.first_token.push(ft);
                    s.share.push(100.0 * tm.before_model / (tm.before_model + ft));
                    s.total.push(tm.total);
                    s.run.grounded += usize::from(out.answer.grounded);
                    let v = out.answer.verification.as_ref();
                    s.run.verified += usize::from(v.is_some_and(|v| !v.supported.is_empty() && v.unsupported.is_empty()));
                }
                None => {
                    // Refused before the model: `total` is the time to the refusal (the
                    // pack-stage refusal leaves it unset; the call's wall time stands in).
                    let reason = out.answer.refusal_reason.unwrap_or("unknown");
                    *s.run.refused.entry(reason).or_default() += 1;
                    s.before_all.push(if tm.total > 0.0 { tm.total } else { wall });
                }
            }
        }
    }
    Ok(s)
}

/// `"word" [#1]`: a quote of one of the question's content words, cited to the top
/// evidence entry (which usually contains it).
fn scripted_reply(q: &str) -> String {
    let terms = query::terms(q);
    let word = terms
        .iter()
        .find(|t| !query::is_question_word(&t.word))
        .or(terms.first())
        .map_or_else(|| "note".to_string(), |t| if t.cjk { query::strip_particle(&t.word).to_string() } else { t.word.clone() });
    format!("\"{word}\" [#1]")
}

/// 50 questions of 3–8 words from the corpus vocabulary: English (with a question
/// opening most of the time), Korean (with a question ending half the time), and mixed.
fn synthetic_questions(v: &Vocab) -> Vec<String> {
    let mut rng = Rng(QUESTION_SEED);
    (0..QUESTIONS)
        .map(|i| {
            let korean = match i % 5 {
                0..=2 => 0.0,
                3 => 1.0,
                _ => 0.5,
            };
            let words = rng.range(3, 8);
            let mut q = String::new();
            let mut lead = 0;
            if korean == 0.0 && rng.chance(0.7) {
                let l = EN_LEADS[rng.range(0, EN_LEADS.len() - 1)];
                q.push_str(l);
                q.push(' ');
                lead = l.split_whitespace().count();
            }
            let ending = (korean == 1.0 && rng.chance(0.5)).then(|| KO_ENDINGS[rng.range(0, KO_ENDINGS.len() - 1)]);
            let tail = ending.map_or(0, |e| e.split_whitespace().count());
            join(&mut q, words.saturating_sub(lead + tail).max(2), |q| v.word(&mut rng, korean, q));
            if let Some(e) = ending {
                q.push(' ');
                q.push_str(e);
            }
            q.push('?');
            q
        })
        .collect()
}

fn print_table(rows: &[Row], runs: &[Run]) {
    println!("\n{:<16} {:>8}  {:<10}  {:<23} {:>5} {:>10} {:>10}", "corpus", "chunks", "model", "figure", "n", "p50", "p95");
    for r in rows {
        println!(
            "{:<16} {:>8}  {:<10}  {:<23} {:>5} {:>10.3} {:>10.3}",
            r.corpus, r.chunks, r.model, r.figure, r.n, r.p50, r.p95
        );
    }
    println!("ms unless marked %; `to model` = questions that reached the model; first_token is the model's own\n");
    println!("{:<16} {:<10}  {:<33} {:>5} {:>8} {:>8} {:>8}  refused before the model", "corpus", "model", "score gate", "asked", "to model", "grounded", "verified");
    for r in runs {
        let refused: Vec<String> = r.refused.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let refused = if refused.is_empty() { "none".to_string() } else { refused.join(", ") };
        println!(
            "{:<16} {:<10}  {:<33} {:>5} {:>8} {:>8} {:>8}  {refused}",
            r.corpus, r.model, r.gate, r.asked, r.to_model, r.grounded, r.verified
        );
    }
    println!("grounded = markers valid; verified = every quote found in its cited evidence (rag-v2)\n");
}

fn write_json(path: &Path, rows: &[Row], runs: &[Run], rss_kb: Option<u64>, elapsed_s: f64) -> Result<()> {
    let rows: Vec<_> = rows
        .iter()
        .map(|r| {
            json!({"corpus": r.corpus, "chunks": r.chunks, "model": r.model, "figure": r.figure,
                   "n": r.n, "p50": r.p50, "p95": r.p95})
        })
        .collect();
    let runs: Vec<_> = runs
        .iter()
        .map(|r| {
            json!({"corpus": r.corpus, "model": r.model, "score_gate": r.gate, "asked": r.asked,
                   "refused_before_model": r.refused, "to_model": r.to_model, "grounded": r.grounded,
                   "verified": r.verified})
        })
        .collect();
    let doc = json!({"schema_version": "bench_ask.v1", "kebab_version": env!("CARGO_PKG_VERSION"),
                     "rounds": ROUNDS, "questions": QUESTIONS, "unit": "ms", "rows": rows, "runs": runs,
                     "peak_rss_kb": rss_kb, "elapsed_s": elapsed_s});
    common::write_json(path, &doc)
}
