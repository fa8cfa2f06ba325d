//! Explain: what `--explain` and the REPL's `:explain` show about one ask —
//! the gate's evidence, every hit with its channel ranks and scores and
//! whether it was packed, the token budget, how much history went in, and
//! stage timings. Saved with the answer, so `:explain` works after a restart.

use serde::{Deserialize, Serialize};

use super::Explain;
use super::gate::GateReport;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ExplainRecord {
    pub gate: Option<GateReport>,
    pub hits: Vec<HitRecord>,
    pub budget_tokens: usize,
    pub used_tokens: usize,
    pub packed: Vec<PackedRecord>,
    pub history_kept: usize,
    pub history_dropped: usize,
    /// The one earlier turn kept is the previous one with its answer shortened
    /// (no whole turn fit in what the context left).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub history_shortened: bool,
    pub timings_ms: super::Timings,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HitRecord {
    pub rank: usize,
    pub chunk_id: i64,
    pub path: String,
    pub start: u32,
    pub end: u32,
    pub lexical_score: Option<f64>,
    pub lexical_rank: Option<usize>,
    pub packed: bool,
    /// The score the hit was ranked by and what it is (`rrf`, `cosine`,
    /// `bm25`): in hybrid and vector mode BM25 is not it, and a hit only the
    /// vectors found has none. Absent from explains saved before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_kind: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PackedRecord {
    pub n: usize,
    pub chunk_id: i64,
    pub path: String,
    pub tokens: usize,
    pub truncated: bool,
}

impl Explain {
    pub fn record(&self) -> ExplainRecord {
        let packed_ids: Vec<i64> = self.packing.entries.iter().map(|p| p.chunk_id).collect();
        ExplainRecord {
            gate: self.gate.clone(),
            hits: self
                .hits
                .iter()
                .map(|h| (h, h.ranked_by()))
                .map(|(h, (score, kind))| HitRecord {
                    rank: h.rank,
                    chunk_id: h.chunk_id,
                    path: h.citation.path.clone(),
                    start: h.citation.start,
                    end: h.citation.end,
                    lexical_score: h.retrieval.lexical_score,
                    lexical_rank: h.retrieval.lexical_rank,
                    packed: packed_ids.contains(&h.chunk_id),
                    score: Some(score),
                    score_kind: Some(kind.to_string()),
                })
                .collect(),
            budget_tokens: self.packing.budget_tokens,
            used_tokens: self.packing.used_tokens,
            packed: self
                .packing
                .entries
                .iter()
                .map(|p| PackedRecord {
                    n: p.n,
                    chunk_id: p.chunk_id,
                    path: p.doc_path.clone(),
                    tokens: p.tokens,
                    truncated: p.truncated,
                })
                .collect(),
            history_kept: self.history_kept,
            history_dropped: self.history_dropped,
            history_shortened: self.history_shortened,
            timings_ms: self.timings.clone(),
        }
    }
}
