//! Hybrid search: the lexical and vector rankings fused by reciprocal rank,
//! the score normalised to [0, 1] as `Σ 1/(rrf_k + rank) ÷ (2/(rrf_k + 1))`
//! (a chunk ranked first by both channels scores 1). Every hit records what
//! each channel that saw it said: rank and score.
//!
//! A question in a Hangul/CJK script may keep its lexical top hit first (a
//! `Lead`, fitted on Korean data: docs/evaluation.md, "Korean with
//! multilingual vectors"): when that hit's BM25 is far ahead of the second's
//! and the vector channel ranks it among its own best, it stays first. Korean
//! lexical search matches rare words and trigrams, so a far-ahead BM25 top
//! hit the vectors also like is almost always right, while a small
//! multilingual model's cosines are too close together to overrule it. Other
//! scripts fuse plainly: English is unchanged by construction.

use std::collections::HashMap;

use anyhow::Result;

use super::{Citation, Retrieval, SearchHit};
use crate::store::Store;

/// How one query's channels are fused.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fusion {
    /// The k of reciprocal rank fusion.
    pub rrf_k: f64,
    /// When the lexical top hit stays first; `None`: never.
    pub lead: Option<Lead>,
}

/// The lexical top hit stays first when its BM25 is at least `ratio` times
/// the second hit's and the vector channel ranks it within its `within` best.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Lead {
    pub ratio: f64,
    pub within: usize,
}

impl Fusion {
    /// Plain reciprocal rank fusion, no lead: the fusion of non-CJK queries.
    pub fn plain(rrf_k: f64) -> Fusion {
        Fusion { rrf_k, lead: None }
    }

    /// The chunk to keep first, if the lexical channel (best first) leads.
    fn leader(&self, lexical: &[SearchHit], vector: &[(i64, f32)]) -> Option<i64> {
        let lead = self.lead?;
        let first = lexical.first()?;
        let ahead = match lexical.get(1) {
            Some(second) => second.score > 0.0 && first.score >= lead.ratio * second.score,
            None => true,
        };
        let liked = vector.iter().take(lead.within).any(|(id, _)| *id == first.chunk_id);
        (ahead && liked).then_some(first.chunk_id)
    }
}

/// Each channel's candidates (best first) fused; `vector` is (chunk id, cosine).
pub fn fuse(store: &Store, lexical: Vec<SearchHit>, vector: &[(i64, f32)], fusion: Fusion, k: usize) -> Result<Vec<SearchHit>> {
    let rrf_k = fusion.rrf_k;
    let mut by_chunk: HashMap<i64, (f64, Retrieval)> = HashMap::new();
    for h in &lexical {
        let e = by_chunk.entry(h.chunk_id).or_insert((0.0, Retrieval { method: "hybrid", ..Retrieval::default() }));
        e.0 += 1.0 / (rrf_k + h.rank as f64);
        e.1.lexical_rank = Some(h.rank);
        e.1.lexical_score = h.retrieval.lexical_score;
    }
    for (i, (id, cos)) in vector.iter().enumerate() {
        let e = by_chunk.entry(*id).or_insert((0.0, Retrieval { method: "hybrid", ..Retrieval::default() }));
        e.0 += 1.0 / (rrf_k + (i + 1) as f64);
        e.1.vector_rank = Some(i + 1);
        e.1.vector_score = Some(*cos as f64);
    }
    let best = 2.0 / (rrf_k + 1.0);
    let mut ranked: Vec<(i64, f64, Retrieval)> = by_chunk.into_iter().map(|(id, (s, r))| (id, s / best, r)).collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    if let Some(leader) = fusion.leader(&lexical, vector)
        && let Some(at) = ranked.iter().position(|r| r.0 == leader)
    {
        // The kept hit scores what the fused first did, so scores still fall with rank.
        let mut kept = ranked.remove(at);
        kept.1 = kept.1.max(ranked.first().map_or(0.0, |r| r.1));
        ranked.insert(0, kept);
    }
    ranked.truncate(k);
    let mut lexical_hits: HashMap<i64, SearchHit> = lexical.into_iter().map(|h| (h.chunk_id, h)).collect();
    let missing: Vec<i64> = ranked.iter().map(|r| r.0).filter(|id| !lexical_hits.contains_key(id)).collect();
    let mut rows: HashMap<i64, _> = store.chunks_by_ids(&missing)?.into_iter().map(|r| (r.chunk_id, r)).collect();
    let mut out = Vec::with_capacity(ranked.len());
    for (id, score, mut retrieval) in ranked {
        let mut hit = match lexical_hits.remove(&id) {
            Some(h) => h,
            None => {
                // Found by the vector channel alone; a chunk deleted meanwhile is skipped.
                let Some(row) = rows.remove(&id) else { continue };
                let section = if row.heading_path.is_empty() { None } else { Some(row.heading_path.join(" > ")) };
                SearchHit {
                    schema_version: "search_hit.v1",
                    rank: 0,
                    score: 0.0,
                    score_kind: "rrf",
                    chunk_id: row.chunk_id,
                    doc_id: row.doc_id,
                    doc_path: row.doc_path.clone(),
                    heading_path: row.heading_path,
                    snippet: String::new(),
                    citation: Citation::of_chunk(row.doc_path, row.line_start, row.line_end, section),
                    retrieval: Retrieval::default(),
                    indexed_at: row.indexed_at,
                    external_id: row.external_id,
                }
            }
        };
        retrieval.fusion_score = Some(score);
        hit.rank = out.len() + 1;
        hit.score = score;
        hit.score_kind = "rrf";
        hit.retrieval = retrieval;
        out.push(hit);
    }
    Ok(out)
}
