//! The columns of a source's rows that follow from its text: each
//! document's hash and language, each chunk's index context, token estimate,
//! hash and the words the trigram index holds. They are computed before the
//! writer takes the source, so ingest can compute them on its reading thread
//! and keep the one writing thread in SQLite (docs/performance.md, issue 20).

use anyhow::Result;
use rusqlite::{Connection, params};

use super::write::SourceInput;
use crate::{script, words};

/// A source with its derived columns: what `Store::apply_source` writes.
pub struct SourceRows {
    pub(super) input: SourceInput,
    /// One per document of `input`, in order.
    pub(super) docs: Vec<DocColumns>,
}

pub(super) struct DocColumns {
    pub hash: String,
    pub lang: &'static str,
    pub tags_json: String,
    /// One per chunk of the document, in order.
    pub chunks: Vec<ChunkColumns>,
}

pub(super) struct ChunkColumns {
    pub context: String,
    pub heading_json: String,
    pub token_estimate: i64,
    pub content_hash: String,
    /// For a chunk with Hangul/CJK (the trigram index holds it): the words
    /// with Hangul/CJK of its context and of its text.
    pub cjk: Option<(String, String)>,
}

impl SourceInput {
    /// Computes every derived column of the source's rows.
    pub fn into_rows(self) -> SourceRows {
        let docs = self
            .documents
            .iter()
            .map(|doc| DocColumns {
                hash: blake3::hash(doc.body.as_bytes()).to_hex().to_string(),
                lang: script::detect_lang(&doc.body),
                tags_json: serde_json::Value::from(doc.tags.clone()).to_string(),
                chunks: doc
                    .chunks
                    .iter()
                    .map(|chunk| {
                        let context = chunk_context(doc.title.as_deref(), &chunk.heading_path);
                        let cjk = (script::has_cjk(&chunk.text) || script::has_cjk(&context))
                            .then(|| (words::cjk_words(&context), words::cjk_words(&chunk.text)));
                        ChunkColumns {
                            heading_json: serde_json::Value::from(chunk.heading_path.clone()).to_string(),
                            token_estimate: script::estimate_tokens(&chunk.text) as i64,
                            content_hash: blake3::hash(chunk.text.as_bytes()).to_hex().to_string(),
                            context,
                            cjk,
                        }
                    })
                    .collect(),
            })
            .collect();
        SourceRows { input: self, docs }
    }
}

/// The title and the headings above a chunk, each once: what the heading
/// field of the index holds.
fn chunk_context(title: Option<&str>, headings: &[String]) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in title.into_iter().chain(headings.iter().map(String::as_str)) {
        if !p.is_empty() && !parts.contains(&p) {
            parts.push(p);
        }
    }
    parts.join(" \u{203a} ")
}

/// Migration 0008's step: the CJK words of every chunk the trigram index
/// holds, then the index rebuilt from them. Runs inside the migration's
/// transaction, a thousand chunks at a time so a large index is never all
/// in memory.
pub(super) fn fill_cjk_words(conn: &Connection) -> Result<()> {
    let mut read = conn.prepare("SELECT id, context, text FROM chunks WHERE has_cjk AND id > ?1 ORDER BY id LIMIT 1000")?;
    let mut write = conn.prepare("UPDATE chunks SET cjk_context = ?2, cjk_text = ?3 WHERE id = ?1")?;
    let mut after = 0;
    loop {
        let batch: Vec<(i64, String, String)> =
            read.query_map([after], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<rusqlite::Result<_>>()?;
        let Some(last) = batch.last() else { break };
        after = last.0;
        for (id, context, text) in &batch {
            write.execute(params![id, words::cjk_words(context), words::cjk_words(text)])?;
        }
    }
    conn.execute("INSERT INTO chunks_trigram(chunks_trigram) VALUES ('rebuild')", [])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_lists_title_and_headings_once() {
        let h = vec!["Ownership".to_string(), "Moves".to_string()];
        assert_eq!(chunk_context(Some("Ownership"), &h), "Ownership \u{203a} Moves");
        assert_eq!(chunk_context(None, &[]), "");
    }
}
