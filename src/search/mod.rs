//! Search: turning a query into ranked, citable chunks. `query` builds safe
//! FTS5 expressions, `lexical` runs them; the wire shapes (`search_hit.v1`,
//! `search_response.v1`) live here.

pub mod engine;
pub mod hybrid;
pub mod lexical;
pub mod vector;
pub mod query;

use serde::Serialize;

pub use crate::config::Mode;

/// Where a hit sits in its source: enough to open the file at the right lines.
#[derive(Debug, Clone, Serialize)]
pub struct Citation {
    pub kind: &'static str,
    pub path: String,
    pub start: u32,
    pub end: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
}

/// How each channel saw a hit.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Retrieval {
    pub method: &'static str,
    pub fusion_score: Option<f64>,
    pub lexical_score: Option<f64>,
    pub lexical_rank: Option<usize>,
    pub vector_score: Option<f64>,
    pub vector_rank: Option<usize>,
}

/// `search_hit.v1`.
#[derive(Debug, Clone, Serialize)]
pub struct SearchHit {
    pub schema_version: &'static str,
    pub rank: usize,
    pub score: f64,
    pub score_kind: &'static str,
    pub chunk_id: i64,
    pub doc_id: i64,
    pub doc_path: String,
    pub heading_path: Vec<String>,
    /// The best-matching passage, matched terms between « and ».
    pub snippet: String,
    pub citation: Citation,
    pub retrieval: Retrieval,
    pub indexed_at: String,
    /// The document's external id (what evaluation qrels name); not on the wire.
    #[serde(skip)]
    pub external_id: String,
}

#[cfg(test)]
impl SearchHit {
    /// A hit for unit tests of what is done with hits (fusion, pooling).
    pub(crate) fn stub(chunk_id: i64, score: f64) -> SearchHit {
        SearchHit {
            schema_version: "search_hit.v1",
            rank: 0,
            score,
            score_kind: "bm25",
            chunk_id,
            doc_id: 1,
            doc_path: "n/a.md".into(),
            heading_path: Vec::new(),
            snippet: String::new(),
            citation: Citation { kind: "line", path: "n/a.md".into(), start: 1, end: 2, section: None },
            retrieval: Retrieval::default(),
            indexed_at: String::new(),
            external_id: String::new(),
        }
    }
}

/// `search_response.v1`: what `kebab search --json` prints.
#[derive(Debug, Serialize)]
pub struct SearchResponse {
    pub schema_version: &'static str,
    pub query: String,
    pub mode: Mode,
    pub hits: Vec<SearchHit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<engine::Trace>,
}
