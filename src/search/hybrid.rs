//! Hybrid search: the lexical and vector rankings fused by reciprocal rank,
//! the score normalised to [0, 1] as `Σ 1/(rrf_k + rank) ÷ (2/(rrf_k + 1))`
//! (a chunk ranked first by both channels scores 1). Every hit records what
//! each channel that saw it said: rank and score.

use std::collections::HashMap;

use anyhow::Result;

use super::{Citation, Retrieval, SearchHit};
use crate::store::Store;

/// Each channel's candidates (best first) fused; `vector` is (chunk id, cosine).
pub fn fuse(store: &Store, lexical: Vec<SearchHit>, vector: &[(i64, f32)], rrf_k: f64, k: usize) -> Result<Vec<SearchHit>> {
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
