//! Search: turning a query into ranked, citable chunks. `query` builds safe
//! FTS5 expressions, `lexical` runs them; the wire shapes (`search_hit.v1`,
//! `search_response.v1`) live here.

pub mod best;
pub mod engine;
pub mod hybrid;
pub mod lexical;
pub mod vector;
pub mod query;
pub mod spelling;

use serde::ser::{SerializeStruct, Serializer};
use serde::Serialize;

pub use crate::config::Mode;

/// How a citation points into its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CitationKind {
    /// A 1-based inclusive line span of a text file (Markdown, text, HTML, JSONL).
    Line,
    /// A page of a PDF: the index keeps the page number in the chunk's line span.
    Page,
}

impl CitationKind {
    /// A chunk of the document at `path` is cited by page when the document
    /// is a PDF (ingest reads every `.pdf` as one, whatever `--format` says).
    pub fn of_path(path: &str) -> CitationKind {
        // Bytes, not a str slice: the last four bytes of `café.md` (NFD) or
        // `카페.md` start inside a character.
        let name = path.rsplit('/').next().unwrap_or(path).as_bytes();
        if name.len() > 4 && name[name.len() - 4..].eq_ignore_ascii_case(b".pdf") { CitationKind::Page } else { CitationKind::Line }
    }
}

/// The file a JSONL record's path (`notes/set.jsonl#doc-7`, `set.NDJSON#r1`)
/// is in; `None` for any other document's path. Ingest reads both
/// extensions, in any case, as JSONL.
pub fn record_file(path: &str) -> Option<&str> {
    // ASCII lowercasing keeps every byte offset.
    let lower = path.to_ascii_lowercase();
    [".jsonl#", ".ndjson#"].iter().filter_map(|ext| lower.rfind(ext).map(|i| i + ext.len() - 1)).max().map(|end| &path[..end])
}

/// Where a hit sits in its source: enough to open the file at the right lines
/// (or page). On the wire a line citation is `{kind:"line", path, start, end,
/// section?}` and a page citation `{kind:"page", path, page, section?}`.
#[derive(Debug, Clone)]
pub struct Citation {
    pub kind: CitationKind,
    pub path: String,
    /// First line, or the page.
    pub start: u32,
    /// Last line, or the page.
    pub end: u32,
    pub section: Option<String>,
}

impl Citation {
    /// The citation of a stored chunk: its kind follows from the document's path.
    pub fn of_chunk(path: String, start: u32, end: u32, section: Option<String>) -> Citation {
        Citation { kind: CitationKind::of_path(&path), path, start, end, section }
    }

    /// Where it points, as the terminal shows it: `notes/a.md:3-5`, `paper.pdf p. 4`.
    pub fn place(&self) -> String {
        place(&self.path, self.start, self.end)
    }
}

/// `path:start-end`, or `path p. N` for a PDF (`pp. N–M` across pages); the
/// REPL uses it for packed evidence, which keeps a path and a span.
pub fn place(path: &str, start: u32, end: u32) -> String {
    let path = crate::script::one_line(path);
    match CitationKind::of_path(&path) {
        CitationKind::Line => format!("{path}:{start}-{end}"),
        CitationKind::Page if start == end => format!("{path} p. {start}"),
        CitationKind::Page => format!("{path} pp. {start}–{end}"),
    }
}

impl Serialize for Citation {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Citation", 5)?;
        match self.kind {
            CitationKind::Line => {
                s.serialize_field("kind", "line")?;
                s.serialize_field("path", &self.path)?;
                s.serialize_field("start", &self.start)?;
                s.serialize_field("end", &self.end)?;
            }
            CitationKind::Page => {
                s.serialize_field("kind", "page")?;
                s.serialize_field("path", &self.path)?;
                s.serialize_field("page", &self.start)?;
            }
        }
        match &self.section {
            Some(section) => s.serialize_field("section", section)?,
            None => s.skip_field("section")?,
        }
        s.end()
    }
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

impl SearchHit {
    /// The score the hit is ranked by and its kind: the fused one when ranks
    /// were fused (hybrid search, a follow-up's two searches), where `score`
    /// is still the one search's that found it.
    pub fn ranked_by(&self) -> (f64, &'static str) {
        match self.retrieval.fusion_score {
            Some(fused) => (fused, "rrf"),
            None => (self.score, self.score_kind),
        }
    }
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
            citation: Citation::of_chunk("n/a.md".into(), 1, 2, None),
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
    /// The query's misspelt words and what they were searched as.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub respelled: Vec<spelling::Respelling>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<engine::Trace>,
}

#[cfg(test)]
mod tests {
    use super::record_file;

    #[test]
    fn a_records_file_is_found_whatever_the_jsonl_extension_and_its_case() {
        assert_eq!(record_file("notes/set.jsonl#doc-7"), Some("notes/set.jsonl"));
        assert_eq!(record_file("nd/set.ndjson#r1"), Some("nd/set.ndjson"));
        assert_eq!(record_file("NOTES/Set.JSONL#a#b"), Some("NOTES/Set.JSONL"));
        assert_eq!(record_file("notes/plain.md"), None);
        assert_eq!(record_file("notes/tag#1.md"), None);
    }
}
