//! Build: the `answer.v1` document, from what the stages produced.

use serde::Serialize;

use super::multihop::HopRecord;
use super::pack::Packed;
use super::attribute::Attribution;
use super::verify::Verification;
use crate::search::Citation;

#[derive(Debug, Clone, Serialize)]
pub struct CitationRef {
    /// The wire marker, `[n]` (the prompt-side `[#n]`).
    pub marker: String,
    pub citation: Citation,
    pub chunk_id: i64,
    /// True when the chunk is no longer in the index.
    pub stale: bool,
    /// `model`: the model wrote the marker; `attributed`: the model cited
    /// nothing there and kebab found the sentence in this entry (shown `[n*]`).
    pub origin: Origin,
    /// 0–1, attributed citations only: how well the best sentence matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub support: Option<f64>,
}

/// Who put a citation on the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    #[default]
    Model,
    Attributed,
}

impl CitationRef {
    /// The marker as the terminal shows it: `[2]`, or `[2*]` when attributed.
    pub fn shown_marker(&self) -> String {
        match self.origin {
            Origin::Model => self.marker.clone(),
            Origin::Attributed => format!("{}*]", self.marker.trim_end_matches(']')),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ModelInfo {
    pub id: String,
    pub provider: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct RetrievalInfo {
    pub trace_id: String,
    pub mode: String,
    pub k: usize,
    pub score_gate: f64,
    pub top_score: Option<f64>,
    pub chunks_returned: usize,
    pub chunks_used: usize,
    pub retrieval_query: String,
    /// The question's misspelt words and what they were read as (not saved:
    /// the saved retrieval query holds the words read).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub respelled: Vec<crate::search::spelling::Respelling>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct UsageInfo {
    pub prompt_tokens: Option<u32>,
    pub completion_tokens: Option<u32>,
    pub latency_ms: u64,
    /// True when the provider reported no token counts and these are kebab's
    /// script-aware estimates.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
}

/// A near miss shown with a `score_gate` refusal.
#[derive(Debug, Clone, Serialize)]
pub struct Candidate {
    pub path: String,
    pub start: u32,
    pub end: u32,
    pub section: Option<String>,
    pub score: f64,
    /// What `score` is: `bm25`, `cosine`, or `rrf` (hybrid search, or a
    /// follow-up's two searches fused).
    pub score_kind: &'static str,
}

/// `answer.v1`.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    pub schema_version: &'static str,
    pub answer: String,
    pub citations: Vec<CitationRef>,
    pub grounded: bool,
    pub refusal_reason: Option<&'static str>,
    pub model: ModelInfo,
    /// The embedding model behind vector or hybrid retrieval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding: Option<String>,
    pub prompt_template_version: String,
    pub retrieval: RetrievalInfo,
    pub usage: UsageInfo,
    pub created_at: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<Candidate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
    /// How each substantive sentence is backed, when kebab checked sentences
    /// the model did not cite (`rag.attribution = "auto"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attribution: Option<Attribution>,
    /// Set when the ask was a turn of a saved conversation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn_index: Option<i64>,
    /// The steps of a multi-hop ask, in order; absent for a single-pass ask.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hops: Option<Vec<HopRecord>>,
    /// Why the answer text ended, when not by the model finishing: `length`,
    /// cut at the answer cap (`llm.max_answer_tokens`). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish: Option<Finish>,
}

/// How an answer's text ended, when that matters to its reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Finish {
    /// Cut at the answer cap; the text is kept and validated as usual.
    Length,
}

impl Answer {
    /// Refused before any model was called (nothing was streamed).
    pub fn refused_before_model(&self) -> bool {
        matches!(self.refusal_reason, Some("no_index" | "no_chunks" | "score_gate"))
    }
}

/// Every refusal reason an answer can carry.
/// `unsupported_claims`: under rag-v2, every quote the answer gave is missing
/// from the evidence it cites. `model_error`: the model server failed before
/// the answer finished (a wrong model name, an error status).
pub const REFUSAL_REASONS: [&str; 8] = [
    "no_index",
    "no_chunks",
    "score_gate",
    "llm_self_judge",
    "llm_stream_aborted",
    "multi_hop_decompose_failed",
    "unsupported_claims",
    "model_error",
];

/// The static name of a stored refusal reason (rows only ever hold these).
pub fn refusal_reason(stored: &str) -> &'static str {
    REFUSAL_REASONS.iter().find(|r| **r == stored).copied().unwrap_or("llm_self_judge")
}

/// Citations for the distinct valid markers, in order of first use.
pub fn citations(markers: &[usize], packed: &[Packed]) -> Vec<CitationRef> {
    let mut out = Vec::new();
    add_citations(&mut out, markers.iter().map(|&n| (n, Origin::Model, None)), packed);
    out
}

/// Appends citations for `(n, origin, support)` entries not cited yet.
pub fn add_citations(out: &mut Vec<CitationRef>, cited: impl IntoIterator<Item = (usize, Origin, Option<f64>)>, packed: &[Packed]) {
    for (n, origin, support) in cited {
        if out.iter().any(|c| c.marker == format!("[{n}]")) {
            continue;
        }
        let Some(p) = packed.iter().find(|p| p.n == n) else { continue };
        out.push(CitationRef {
            marker: format!("[{n}]"),
            citation: Citation::of_chunk(
                p.doc_path.clone(),
                p.line_start,
                p.line_end,
                if p.heading_path.is_empty() { None } else { Some(p.heading_path.join(" > ")) },
            ),
            chunk_id: p.chunk_id,
            stale: false,
            origin,
            support,
        });
    }
}
