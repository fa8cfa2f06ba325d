//! Lexical retrieval: BM25 over the word index, plus the trigram index for
//! Hangul/CJK, fused into one ranking.
//!
//! The two indexes' BM25 values are summed per chunk: each is a BM25 over a
//! different cut of the same text (words, trigrams), so a chunk that matches
//! both ways ranks above one that matches one way — measured on KorQuAD
//! against reciprocal-rank fusion (see README, Evaluation).

use std::collections::HashMap;
use std::time::Instant;

use anyhow::{Context, Result};
use serde::Serialize;

use super::query::{self, LexicalQuery};
use super::{Citation, Retrieval, SearchHit};
use crate::store::{FtsIndex, Store};

/// What `--trace` shows for a lexical search.
#[derive(Debug, Clone, Serialize)]
pub struct Trace {
    pub word_match: Option<String>,
    pub trigram_match: Option<String>,
    pub word_candidates: usize,
    pub trigram_candidates: usize,
    pub timings_ms: Timings,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Timings {
    pub word_index: f64,
    pub trigram_index: f64,
    pub load_chunks: f64,
    pub total: f64,
}

/// How to search.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Hits wanted.
    pub k: usize,
    /// BM25 weight of the title/heading column relative to the body.
    pub heading_weight: f64,
    /// Cut snippets for the hits (evaluation does not need them).
    pub snippets: bool,
}

struct Candidate {
    chunk_id: i64,
    score: f64,
    /// Which index found it first: the one its snippet is cut from.
    table: &'static str,
}

/// The `k` best chunks for `text`, best first.
pub fn search(store: &Store, text: &str, opts: Options) -> Result<(Vec<SearchHit>, Trace)> {
    let k = opts.k;
    let started = Instant::now();
    let q: LexicalQuery = query::build(text);
    let mut timings = Timings::default();
    // Fusion needs more than k from each index: a chunk at rank k+5 in both
    // can beat one at rank 1 in only one.
    let pool = if q.words.is_some() && q.trigram.is_some() { (k * 3).max(30) } else { k };

    let t = Instant::now();
    let word = match &q.words {
        Some(m) => run(store, FtsIndex::Words.table(), m, pool, opts.heading_weight)?,
        None => Vec::new(),
    };
    timings.word_index = ms(t);
    let t = Instant::now();
    let tri = match &q.trigram {
        Some(m) => run(store, FtsIndex::Trigrams.table(), m, pool, opts.heading_weight)?,
        None => Vec::new(),
    };
    timings.trigram_index = ms(t);
    let trace_counts = (word.len(), tri.len());

    let mut fused: HashMap<i64, Candidate> = HashMap::new();
    for c in word.into_iter().chain(tri) {
        match fused.get_mut(&c.chunk_id) {
            Some(have) => have.score += c.score,
            None => {
                fused.insert(c.chunk_id, c);
            }
        }
    }
    let mut ranked: Vec<Candidate> = fused.into_values().collect();
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.chunk_id.cmp(&b.chunk_id)));
    ranked.truncate(k);

    let t = Instant::now();
    let ids: Vec<i64> = ranked.iter().map(|c| c.chunk_id).collect();
    let mut rows: HashMap<i64, _> = store.chunks_by_ids(&ids)?.into_iter().map(|r| (r.chunk_id, r)).collect();
    // Snippets only for the hits kept: cutting one re-reads the chunk's text.
    let mut snippets = HashMap::new();
    for (index, expr) in [(FtsIndex::Words, &q.words), (FtsIndex::Trigrams, &q.trigram)] {
        let ids: Vec<i64> = ranked.iter().filter(|c| index.table() == c.table).map(|c| c.chunk_id).collect();
        if let (Some(expr), false, true) = (expr, ids.is_empty(), opts.snippets) {
            snippets.extend(store.snippets(index, expr, &ids)?);
        }
    }
    timings.load_chunks = ms(t);

    let mut hits = Vec::with_capacity(ranked.len());
    for c in ranked {
        // A chunk deleted between the index read and this one is skipped.
        let Some(row) = rows.remove(&c.chunk_id) else { continue };
        let rank = hits.len() + 1;
        let section = if row.heading_path.is_empty() { None } else { Some(row.heading_path.join(" > ")) };
        hits.push(SearchHit {
            schema_version: "search_hit.v1",
            rank,
            score: c.score,
            score_kind: "bm25",
            chunk_id: row.chunk_id,
            doc_id: row.doc_id,
            doc_path: row.doc_path.clone(),
            heading_path: row.heading_path,
            snippet: snippets.remove(&c.chunk_id).unwrap_or_default(),
            citation: Citation::of_chunk(row.doc_path, row.line_start, row.line_end, section),
            retrieval: Retrieval {
                method: "lexical",
                lexical_score: Some(c.score),
                lexical_rank: Some(rank),
                ..Retrieval::default()
            },
            indexed_at: row.indexed_at,
            external_id: row.external_id,
        });
    }
    timings.total = ms(started);
    let trace = Trace {
        word_match: q.words,
        trigram_match: q.trigram,
        word_candidates: trace_counts.0,
        trigram_candidates: trace_counts.1,
        timings_ms: timings,
    };
    Ok((hits, trace))
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// One index's top `limit` for a MATCH expression built by `query`. BM25 in
/// FTS5 is negative (lower is better); it is negated here.
fn run(store: &Store, table: &'static str, expr: &str, limit: usize, heading_weight: f64) -> Result<Vec<Candidate>> {
    // `table` is one of two constants, never user text.
    let sql = format!(
        "SELECT rowid, -bm25({table}, ?1, 1.0) AS score
         FROM {table} WHERE {table} MATCH ?2 ORDER BY score DESC LIMIT ?3"
    );
    let mut stmt = store.conn().prepare_cached(&sql)?;
    let rows = stmt
        .query_map(rusqlite::params![heading_weight, expr, limit as i64], |r| {
            Ok(Candidate { chunk_id: r.get(0)?, score: r.get(1)?, table })
        })
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
        .with_context(|| format!("searching {table}"))?;
    Ok(rows)
}

/// Snippets for hits another channel found: cut around the query's words
/// where the chunk has them, else the chunk's opening words.
pub fn fill_snippets(store: &Store, text: &str, hits: &mut [SearchHit]) -> Result<()> {
    let q = query::build(text);
    for (index, expr) in [(FtsIndex::Words, &q.words), (FtsIndex::Trigrams, &q.trigram)] {
        let ids: Vec<i64> = hits.iter().filter(|h| h.snippet.is_empty()).map(|h| h.chunk_id).collect();
        if let (Some(expr), false) = (expr, ids.is_empty()) {
            let mut found = store.snippets(index, expr, &ids)?;
            for h in hits.iter_mut().filter(|h| h.snippet.is_empty()) {
                h.snippet = found.remove(&h.chunk_id).unwrap_or_default();
            }
        }
    }
    let ids: Vec<i64> = hits.iter().filter(|h| h.snippet.is_empty()).map(|h| h.chunk_id).collect();
    if !ids.is_empty() {
        let mut rows: HashMap<i64, String> = store.chunks_by_ids(&ids)?.into_iter().map(|r| (r.chunk_id, r.text)).collect();
        for h in hits.iter_mut().filter(|h| h.snippet.is_empty()) {
            let text = rows.remove(&h.chunk_id).unwrap_or_default();
            let words: Vec<&str> = text.split_whitespace().take(24).collect();
            let more = text.split_whitespace().nth(24).is_some();
            h.snippet = format!("{}{}", words.join(" "), if more { " …" } else { "" });
        }
    }
    Ok(())
}
