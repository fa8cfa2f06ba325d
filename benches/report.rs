//! The benchmark report: one growth table from the JSON the other benches wrote.
//!
//! `bench/run` runs the lexical, ask and vector benches, each printing its own detailed
//! table, then this. It reads `target/bench/{lexical,lexical-embed,ask,vector}.json`
//! (whichever exist), picks the headline figures, and prints them as one Markdown table:
//! a row per figure, a column per corpus (Rust Book, SciFact, synthetic 10k and 100k
//! chunks, and 1M when a bench ran `--size 1m`), each cell `kebab (reference)` with the
//! reference measured in the same run, and last columns with the 100k figure over the
//! 10k one (and the 1M one over the 100k one), so the cost curve is visible.
//! The same data goes to `target/bench/report.json`. It measures nothing itself.
//!
//! Run: `cargo bench --bench report` (after the others).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{Value, json};

const CORPORA: [(&str, &str); 5] = [
    ("rust-book", "Rust Book"),
    ("scifact", "SciFact"),
    ("synthetic-10k", "synthetic 10k"),
    ("synthetic-100k", "synthetic 100k"),
    ("synthetic-1m", "synthetic 1M"),
];
/// Where the synthetic sizes sit in `CORPORA`: each growth column is one over the one before.
const SIZE_10K: usize = 2;
const SIZE_100K: usize = 3;
const SIZE_1M: usize = 4;

/// A headline figure: which bench's JSON, which of its figures, the label it is printed
/// under and what its reference is. For the ask bench, whose rows are percentile pairs, the
/// figure names the row and the percentile, and the reference is another row.
struct Pick {
    file: &'static str,
    figure: &'static str,
    label: &'static str,
    reference_is: &'static str,
}

#[rustfmt::skip]
const PICKS: &[Pick] = &[
    Pick { file: "lexical", figure: "ingest MB/s", label: "ingest MB/s, lexical", reference_is: "raw FTS5 bulk insert" },
    Pick { file: "lexical-embed", figure: "ingest+embed MB/s", label: "ingest MB/s, with local embeddings", reference_is: "raw FTS5 bulk insert" },
    Pick { file: "lexical", figure: "db MB per notes MB", label: "database MB per MB of notes, lexical", reference_is: "raw FTS5 table" },
    Pick { file: "vector", figure: "db with vectors MB per notes MB", label: "database MB per MB of notes, with vectors", reference_is: "—" },
    Pick { file: "vector", figure: "db with vectors MB", label: "database MB, with vectors", reference_is: "—" },
    Pick { file: "lexical", figure: "search p50 ms", label: "lexical search p50 ms, asked again", reference_is: "same FTS5 query, raw" },
    Pick { file: "lexical", figure: "search p95 ms", label: "lexical search p95 ms, asked again", reference_is: "same FTS5 query, raw" },
    Pick { file: "lexical", figure: "new search p95 ms", label: "lexical search p95 ms, new query", reference_is: "same FTS5 query, raw" },
    Pick { file: "vector", figure: "scan top-10 p50 ms", label: "vector scan p50 ms", reference_is: "naive loop + sort" },
    Pick { file: "vector", figure: "scan top-10 p95 ms", label: "vector scan p95 ms", reference_is: "naive loop + sort" },
    Pick { file: "vector", figure: "recall@10", label: "vector recall@10 (int8 + exact re-score)", reference_is: "—" },
    Pick { file: "vector", figure: "load_vectors p50 ms", label: "loading the vectors p50 ms", reference_is: "f32 rows, naive" },
    Pick { file: "vector", figure: "vectors in memory MB", label: "vectors in memory MB", reference_is: "f32 vectors" },
    Pick { file: "vector", figure: "hybrid search p50 ms", label: "hybrid search p50 ms, asked again", reference_is: "same queries, lexical" },
    Pick { file: "vector", figure: "hybrid search p95 ms", label: "hybrid search p95 ms, asked again", reference_is: "same queries, lexical" },
    Pick { file: "vector", figure: "new hybrid search p50 ms", label: "hybrid search p50 ms, new query", reference_is: "same queries, lexical" },
    Pick { file: "vector", figure: "new hybrid search p95 ms", label: "hybrid search p95 ms, new query", reference_is: "same queries, lexical" },
    Pick { file: "ask", figure: "before_model, to model:p50", label: "ask before first token p50 ms, asked again", reference_is: "scripted model's first token" },
    Pick { file: "ask", figure: "before_model, to model:p95", label: "ask before first token p95 ms, asked again", reference_is: "scripted model's first token" },
    Pick { file: "ask", figure: "new question before_model:p95", label: "ask before first token p95 ms, new question", reference_is: "scripted model's first token" },
    Pick { file: "ask", figure: "one-shot before_model:p95", label: "ask before first token p95 ms, one-shot", reference_is: "scripted model's first token" },
    Pick { file: "vector", figure: "repl -> first stdout p50 ms", label: "REPL start to prompt p50 ms", reference_is: "`kebab stats`" },
    Pick { file: "vector", figure: "hybrid search peak RSS MB", label: "one-shot hybrid search peak RSS MB", reference_is: "same query, lexical" },
];

fn main() -> Result<()> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench");
    let mut docs = BTreeMap::new();
    for file in ["lexical", "lexical-embed", "ask", "vector"] {
        let path = dir.join(format!("{file}.json"));
        if let Ok(text) = std::fs::read_to_string(&path) {
            let doc: Value = serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
            docs.insert(file, doc);
        }
    }
    if docs.is_empty() {
        anyhow::bail!("no bench JSON in {}: run bench/run first", dir.display());
    }

    let chunks = chunk_counts(&docs);
    // The 1M column and its growth column only when a bench ran `--size 1m`.
    let corpora = if chunks.contains_key(CORPORA[SIZE_1M].0) { &CORPORA[..] } else { &CORPORA[..SIZE_1M] };
    let growths: &[(usize, usize, &str)] =
        if corpora.len() > SIZE_1M { &[(SIZE_10K, SIZE_100K, "100k / 10k"), (SIZE_100K, SIZE_1M, "1M / 100k")] } else { &[(SIZE_10K, SIZE_100K, "100k / 10k")] };
    let names: Vec<&str> = corpora.iter().map(|c| c.1).chain(growths.iter().map(|g| g.2)).collect();
    let mut out_rows = Vec::new();
    println!("\n| figure | reference | {} |", names.join(" | "));
    println!("|---|---|{}", "---|".repeat(names.len()));
    let counts: Vec<String> = corpora.iter().map(|(c, _)| chunks.get(*c).map_or("—".to_string(), |n| thousands(*n))).collect();
    println!("| chunks | | {} |{}", counts.join(" | "), " |".repeat(growths.len()));
    for pick in PICKS {
        let Some(doc) = docs.get(pick.file) else { continue };
        let cells: Vec<Option<(f64, Option<f64>)>> = corpora.iter().map(|(c, _)| figure(doc, pick, c)).collect();
        if cells.iter().all(Option::is_none) {
            continue;
        }
        let growth: Vec<String> = growths
            .iter()
            .map(|&(from, to, _)| match (cells[from], cells[to]) {
                (Some((a, _)), Some((b, _))) if a > 0.0 => format!("{:.2}×", b / a),
                _ => String::new(),
            })
            .collect();
        let text: Vec<String> = cells
            .iter()
            .map(|c| match c {
                Some((k, Some(r))) => format!("{} ({})", num(*k), num(*r)),
                Some((k, None)) => num(*k),
                None => "—".to_string(),
            })
            .collect();
        println!("| {} | {} | {} | {} |", pick.label, pick.reference_is, text.join(" | "), growth.join(" | "));
        let by_corpus: BTreeMap<_, _> = corpora
            .iter()
            .zip(&cells)
            .filter_map(|((c, _), v)| v.map(|(k, r)| (c.to_string(), json!({"kebab": k, "reference": r}))))
            .collect();
        out_rows.push(json!({"figure": pick.label, "reference_is": pick.reference_is, "source": pick.file,
                             "corpora": by_corpus}));
    }
    for (file, doc) in &docs {
        if let Some(notes) = doc.get("notes").and_then(Value::as_array) {
            notes.iter().filter_map(Value::as_str).for_each(|n| println!("\n{file}: {n}"));
        }
    }
    let out = dir.join("report.json");
    let doc = json!({"schema_version": "bench_report.v1", "kebab_version": env!("CARGO_PKG_VERSION"),
                     "chunks": chunks, "rows": out_rows});
    std::fs::write(&out, serde_json::to_string_pretty(&doc)? + "\n").with_context(|| format!("writing {}", out.display()))?;
    println!("\ncells: kebab (reference, same run); JSON in {}", out.display());
    Ok(())
}

/// `(kebab, reference)` of one pick for one corpus, if that bench measured it.
fn figure(doc: &Value, pick: &Pick, corpus: &str) -> Option<(f64, Option<f64>)> {
    let rows = doc.get("rows")?.as_array()?;
    let of = |figure: &str| rows.iter().find(|r| r["corpus"] == corpus && r["figure"] == figure && model_ok(r));
    match pick.figure.split_once(':') {
        // Ask rows: a percentile of the scripted model's row, beside its first token.
        Some((name, pct)) => {
            let kebab = of(name)?.get(pct)?.as_f64()?;
            let reference = of("first_token").and_then(|r| r.get(pct)?.as_f64());
            Some((kebab, reference))
        }
        None => {
            let row = of(pick.figure)?;
            Some((row["kebab"].as_f64()?, row["reference"].as_f64()))
        }
    }
}

/// The ask bench reports two models; the headline is the zero-latency scripted one.
fn model_ok(row: &Value) -> bool {
    row.get("model").is_none_or(|m| m == "scripted")
}

/// Chunks per corpus, from whichever bench saw the corpus.
fn chunk_counts(docs: &BTreeMap<&str, Value>) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for doc in docs.values() {
        for row in doc.get("rows").and_then(Value::as_array).into_iter().flatten() {
            let n = row.get("chunks").or_else(|| row.get("vectors")).and_then(Value::as_u64);
            if let (Some(c), Some(n)) = (row["corpus"].as_str(), n) {
                out.entry(c.to_string()).or_insert(n);
            }
        }
    }
    out
}

/// Three significant figures or so, the precision these timings deserve.
fn num(v: f64) -> String {
    match v.abs() {
        a if a >= 100.0 => format!("{v:.0}"),
        a if a >= 10.0 => format!("{v:.1}"),
        a if a >= 1.0 => format!("{v:.2}"),
        _ => format!("{v:.3}"),
    }
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
