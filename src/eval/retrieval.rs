//! `kebab eval retrieval`: run every judged query against the index and score
//! the ranked documents (chunks are folded to their document, best first).

use std::collections::HashSet;
use std::path::Path;

use anyhow::Result;
use serde::Serialize;

use super::beir::{read_qrels, read_queries};
use super::metrics::{mrr_at, ndcg_at, recall_at};
use super::split::Split;
use crate::error::UserError;
use crate::search::Mode;
use crate::search::engine::Engine;
use crate::store::Store;

#[derive(Debug, Serialize)]
pub struct QueryRow {
    pub query_id: String,
    pub ndcg_at_10: f64,
    pub recall_at_100: f64,
    pub mrr_at_10: f64,
    pub relevant: usize,
    pub retrieved: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub schema_version: &'static str,
    pub mode: Mode,
    pub k: usize,
    /// The split scored (`--split`); absent: every judged query.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<Split>,
    pub queries: usize,
    /// Judged queries absent from the queries file: not scored.
    pub missing_queries: usize,
    pub ndcg_at_10: f64,
    pub recall_at_100: f64,
    pub mrr_at_10: f64,
    pub elapsed_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_query: Option<Vec<QueryRow>>,
}

pub struct Options<'a> {
    pub queries: &'a Path,
    pub qrels: &'a Path,
    pub mode: Mode,
    /// Documents retrieved per query (Recall@100 needs 100).
    pub k: usize,
    pub per_query: bool,
    /// Only the queries of this split (by the hash of their id).
    pub split: Option<Split>,
}

pub fn run(store: &Store, engine: &Engine, opts: &Options) -> Result<Report> {
    let started = std::time::Instant::now();
    let queries = read_queries(opts.queries)?;
    let mut qrels = read_qrels(opts.qrels)?;
    if qrels.is_empty() {
        return Err(UserError::new("bad_input", format!("{} has no relevance judgements", opts.qrels.display())).into());
    }
    if let Some(split) = opts.split {
        qrels.retain(|id, _| Split::of(id) == split);
    }
    if store.chunk_count()? == 0 {
        return Err(UserError::new("no_index", "the index is empty: nothing to evaluate")
            .with_hint("ingest the corpus first, e.g. `kebab ingest corpus.jsonl`")
            .into());
    }
    let mut rows = Vec::new();
    let judged: HashSet<&String> = qrels.keys().collect();
    for (id, text) in &queries {
        let Some(relevant) = qrels.get(id) else { continue };
        // Several chunks of one document may rank; fetch enough chunks to
        // fill k distinct documents in all but pathological cases.
        let hits = engine.search(store, text, opts.mode, opts.k * 2)?;
        let mut seen = HashSet::new();
        let ranked: Vec<String> =
            hits.into_iter().map(|h| h.external_id).filter(|d| seen.insert(d.clone())).take(opts.k).collect();
        rows.push(QueryRow {
            query_id: id.clone(),
            ndcg_at_10: ndcg_at(&ranked, relevant, 10),
            recall_at_100: recall_at(&ranked, relevant, 100),
            mrr_at_10: mrr_at(&ranked, relevant, 10),
            relevant: relevant.len(),
            retrieved: ranked.into_iter().take(10).collect(),
        });
    }
    if rows.is_empty() {
        return Err(UserError::new(
            "bad_input",
            format!("no query in {} has judgements in {}", opts.queries.display(), opts.qrels.display()),
        )
        .into());
    }
    let n = rows.len() as f64;
    let mean = |f: fn(&QueryRow) -> f64| rows.iter().map(f).sum::<f64>() / n;
    let scored: HashSet<&String> = rows.iter().map(|r| &r.query_id).collect();
    Ok(Report {
        schema_version: "eval_retrieval.v1",
        mode: opts.mode,
        k: opts.k,
        split: opts.split,
        queries: rows.len(),
        missing_queries: judged.len() - scored.len(),
        ndcg_at_10: mean(|r| r.ndcg_at_10),
        recall_at_100: mean(|r| r.recall_at_100),
        mrr_at_10: mean(|r| r.mrr_at_10),
        elapsed_ms: started.elapsed().as_millis() as u64,
        per_query: if opts.per_query { Some(rows) } else { None },
    })
}
