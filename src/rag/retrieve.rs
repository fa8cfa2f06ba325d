//! Retrieve: the hits an ask works from. A single question searches with
//! itself. A follow-up searches twice — with the bare question and with the
//! question expanded by the previous answer (see `expand`) — and the two
//! rankings are fused by reciprocal rank: the follow-up gains the context
//! while a change of topic keeps what the question finds on its own. Plain
//! concatenation lost that: on a topic switch the old answer's words
//! outvoted the new question (README "Conversations").

use std::collections::HashMap;

use anyhow::Result;

use super::Kb;
use crate::search::{Mode, SearchHit};

/// The usual RRF constant: damps the difference between the top ranks.
const RRF_K: f64 = 60.0;

/// What one retrieval searches for.
pub struct Query<'a> {
    pub question: &'a str,
    /// The question expanded with the conversation (the question itself when alone).
    pub retrieval_query: &'a str,
    pub mode: Mode,
    pub k: usize,
}

pub fn retrieve(kb: &Kb, q: &Query) -> Result<Vec<SearchHit>> {
    let (store, engine) = (&kb.store, &kb.engine);
    let bare = engine.search(store, q.question, q.mode, q.k)?;
    if q.retrieval_query == q.question {
        return Ok(bare);
    }
    let expanded = engine.search(store, q.retrieval_query, q.mode, q.k)?;
    Ok(fuse(bare, expanded, q.k))
}

/// Both rankings fused by reciprocal rank, best first, renumbered; each hit
/// keeps its own BM25 score and records the fused score, as a share of the
/// most a chunk can get (first in both), as hybrid search scales its own.
fn fuse(bare: Vec<SearchHit>, expanded: Vec<SearchHit>, k: usize) -> Vec<SearchHit> {
    let mut by_chunk: HashMap<i64, (f64, SearchHit)> = HashMap::new();
    // Equal weights: on the dialogue dev split, 0.5 and 0.7 for the expanded
    // ranking gave back the follow-up gain without helping topic switches.
    for list in [bare, expanded] {
        for (i, hit) in list.into_iter().enumerate() {
            let share = 1.0 / (RRF_K + (i + 1) as f64);
            by_chunk.entry(hit.chunk_id).and_modify(|(s, _)| *s += share).or_insert((share, hit));
        }
    }
    let best = 2.0 / (RRF_K + 1.0);
    let mut fused: Vec<(f64, SearchHit)> = by_chunk.into_values().map(|(s, hit)| (s / best, hit)).collect();
    // Ties (a chunk at the same rank in one list each) go to the higher BM25.
    fused.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.score.total_cmp(&a.1.score)).then(a.1.chunk_id.cmp(&b.1.chunk_id)));
    fused
        .into_iter()
        .take(k)
        .enumerate()
        .map(|(i, (score, mut hit))| {
            hit.rank = i + 1;
            hit.retrieval.fusion_score = Some(score);
            hit
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(chunk_id: i64, score: f64) -> SearchHit {
        SearchHit::stub(chunk_id, score)
    }

    #[test]
    fn chunks_both_rankings_agree_on_come_first_and_each_ranking_keeps_its_top() {
        let bare = vec![hit(1, 9.0), hit(2, 8.0), hit(3, 7.0)];
        let expanded = vec![hit(4, 9.5), hit(3, 8.5), hit(5, 8.0)];
        let ids: Vec<i64> = fuse(bare, expanded, 4).iter().map(|h| h.chunk_id).collect();
        // 3 is in both; then the two rank-1 hits (tie broken by BM25); k cuts the rest.
        assert_eq!(ids, [3, 4, 1, 2]);
    }

    #[test]
    fn fused_hits_are_renumbered_and_carry_the_fused_score() {
        let out = fuse(vec![hit(1, 1.0)], vec![hit(1, 2.0)], 8);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].rank, 1);
        // First in both: the most a chunk can score.
        assert!((out[0].retrieval.fusion_score.unwrap() - 1.0).abs() < 1e-12);
        // First in one of them: half that.
        let out = fuse(vec![hit(1, 1.0)], vec![hit(2, 2.0)], 8);
        assert!(out.iter().all(|h| (h.retrieval.fusion_score.unwrap() - 0.5).abs() < 1e-12), "{out:?}");
    }
}
