//! Replays the fuzz corpus as regression tests on stable Rust, without
//! cargo-fuzz: every input under `fuzz/corpus/<target>/` (a minimised set of
//! interesting inputs) and `fuzz/regressions/<target>/` (inputs that once
//! crashed a target) goes through the same check as in the fuzz target.
//! The checks live in `fuzz/checks.rs`, shared with the targets.

#[path = "../fuzz/checks.rs"]
mod checks;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

/// Runs `check` on every file of the target's corpus and regression folders;
/// fails naming each input that panicked.
fn replay(target: &str, check: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut inputs = Vec::new();
    for dir in [root.join("corpus").join(target), root.join("regressions").join(target)] {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries {
            let path = entry.expect("corpus entry").path();
            if path.is_file() {
                inputs.push(path);
            }
        }
    }
    inputs.sort();
    assert!(inputs.len() >= 5, "{target}: only {} corpus inputs; the corpus is missing", inputs.len());
    let failed: Vec<String> = inputs
        .iter()
        .filter(|path| {
            let data = std::fs::read(path).expect("read corpus input");
            catch_unwind(AssertUnwindSafe(|| check(&data))).is_err()
        })
        .map(|path| path.display().to_string())
        .collect();
    assert!(failed.is_empty(), "{target}: {} of {} inputs fail their check: {failed:#?}", failed.len(), inputs.len());
}

#[test]
fn chunkers_keep_spans_exact_on_the_fuzz_corpus() {
    replay("chunkers", checks::chunkers);
}

#[test]
fn citation_markers_follow_the_grammar_on_the_fuzz_corpus() {
    replay("citations", checks::citations);
}

#[test]
fn fts_queries_built_from_the_fuzz_corpus_never_upset_fts5() {
    replay("fts_query", checks::fts_query);
}

#[test]
fn ndjson_streams_from_the_fuzz_corpus_parse_without_panics() {
    replay("stream_ndjson", checks::stream_ndjson);
}

#[test]
fn sse_streams_from_the_fuzz_corpus_parse_without_panics() {
    replay("stream_sse", checks::stream_sse);
}

#[test]
fn html_pages_from_the_fuzz_corpus_keep_spans_inside_the_file() {
    replay("html", checks::html);
}

#[test]
fn pdfs_from_the_fuzz_corpus_give_pages_or_a_typed_error() {
    replay("pdf", checks::pdf);
}
