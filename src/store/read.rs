//! Reads from the index: chunks by id (for search hits), the document list,
//! and the counts `kebab stats` and `kebab doctor` report.

use anyhow::Result;
use rusqlite::params_from_iter;
use serde::Serialize;

use super::Store;

/// A chunk with what a hit or a citation needs to show about it.
#[derive(Debug, Clone)]
pub struct ChunkRow {
    pub chunk_id: i64,
    pub doc_id: i64,
    pub doc_path: String,
    pub external_id: String,
    pub title: Option<String>,
    pub heading_path: Vec<String>,
    pub text: String,
    pub line_start: u32,
    pub line_end: u32,
    pub token_estimate: u32,
    pub indexed_at: String,
}

/// One line of `kebab docs`.
#[derive(Debug, Clone, Serialize)]
pub struct DocRow {
    pub id: i64,
    pub path: String,
    pub external_id: String,
    pub title: Option<String>,
    pub media: String,
    pub lang: String,
    pub tags: Vec<String>,
    pub chunks: i64,
    pub bytes: i64,
    pub indexed_at: String,
    pub updated_at: String,
}

/// What `kebab stats` reports.
#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    pub database: String,
    pub schema_level: i64,
    pub roots: Vec<RootRow>,
    pub sources: i64,
    pub documents: i64,
    pub chunks: i64,
    pub cjk_chunks: i64,
    pub text_bytes: i64,
    pub database_bytes: u64,
    pub wal_bytes: u64,
    pub last_indexed_at: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RootRow {
    pub name: String,
    /// The folder as the index spells it (`\xNN` for a byte that is not UTF-8); `dir()` is the folder.
    pub path: String,
    pub documents: i64,
    /// Whether the folder itself was named (a bare run walks it), or only files in it (it reads those again).
    pub whole_folder: bool,
    #[serde(skip)]
    pub id: i64,
}

impl RootRow {
    /// The folder on disk.
    pub fn dir(&self) -> std::path::PathBuf {
        super::dir_on_disk(&self.path)
    }
}

impl Store {
    /// The chunks with these ids, in no particular order; ids that no longer
    /// exist are simply absent.
    pub fn chunks_by_ids(&self, ids: &[i64]) -> Result<Vec<ChunkRow>> {
        let mut out = Vec::with_capacity(ids.len());
        // SQLite's default host-parameter limit is far above this; batching
        // keeps each statement small and cacheable.
        for batch in ids.chunks(200) {
            let marks = vec!["?"; batch.len()].join(",");
            let sql = format!(
                "SELECT c.id, c.doc_id, d.path, d.external_id, d.title, c.heading_path_json, c.text,
                        c.line_start, c.line_end, c.token_estimate, d.indexed_at
                 FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE c.id IN ({marks})"
            );
            let mut stmt = self.conn.prepare_cached(&sql)?;
            let rows = stmt.query_map(params_from_iter(batch.iter()), |r| {
                let heading_json: String = r.get(5)?;
                Ok(ChunkRow {
                    chunk_id: r.get(0)?,
                    doc_id: r.get(1)?,
                    doc_path: r.get(2)?,
                    external_id: r.get(3)?,
                    title: r.get(4)?,
                    heading_path: serde_json::from_str(&heading_json).unwrap_or_default(),
                    text: r.get(6)?,
                    line_start: r.get(7)?,
                    line_end: r.get(8)?,
                    token_estimate: r.get(9)?,
                    indexed_at: r.get(10)?,
                })
            })?;
            for row in rows {
                out.push(row?);
            }
        }
        Ok(out)
    }

    /// Whether a document with this path (`ROOT/rel/path`, `ROOT/file.jsonl#ID`) is indexed.
    pub fn document_indexed(&self, path: &str) -> Result<bool> {
        let mut stmt = self.conn.prepare_cached("SELECT 1 FROM documents WHERE path = ?1")?;
        Ok(stmt.exists([path])?)
    }

    /// Every document, ordered by path.
    pub fn documents(&self) -> Result<Vec<DocRow>> {
        let mut stmt = self.conn.prepare(
            "SELECT d.id, d.path, d.external_id, d.title, d.media, d.lang, d.tags_json,
                    (SELECT count(*) FROM chunks c WHERE c.doc_id = d.id), d.bytes, d.indexed_at, d.updated_at
             FROM documents d ORDER BY d.path",
        )?;
        let rows = stmt.query_map([], |r| {
            let tags: String = r.get(6)?;
            Ok(DocRow {
                id: r.get(0)?,
                path: r.get(1)?,
                external_id: r.get(2)?,
                title: r.get(3)?,
                media: r.get(4)?,
                lang: r.get(5)?,
                tags: serde_json::from_str(&tags).unwrap_or_default(),
                chunks: r.get(7)?,
                bytes: r.get(8)?,
                indexed_at: r.get(9)?,
                updated_at: r.get(10)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// How many chunks are indexed. Every ask needs it (the gate's IDF), and
    /// counting the table reads all of it, some 15 ms at a million chunks:
    /// the word index holds every chunk, and FTS5's own record of its row
    /// count is one read. Inside a write transaction that record may not be
    /// written yet, so the table is counted.
    pub fn chunk_count(&self) -> Result<i64> {
        if self.conn.is_autocommit() {
            return self.index_rows(super::FtsIndex::Words);
        }
        Ok(self.conn.query_row("SELECT count(*) FROM chunks", [], |r| r.get(0))?)
    }

    /// The ingested folders, by name, with their document counts.
    pub fn roots(&self) -> Result<Vec<RootRow>> {
        let mut stmt = self.conn.prepare(
            "SELECT r.name, r.abs_path,
                    (SELECT count(*) FROM documents d JOIN sources s ON s.id = d.source_id WHERE s.root_id = r.id),
                    r.whole_folder, r.id
             FROM roots r ORDER BY r.name",
        )?;
        let row = |r: &rusqlite::Row| {
            Ok(RootRow { name: r.get(0)?, path: r.get(1)?, documents: r.get(2)?, whole_folder: r.get(3)?, id: r.get(4)? })
        };
        let roots = stmt
            .query_map([], row)?
            .collect::<rusqlite::Result<_>>()?;
        Ok(roots)
    }

    pub fn stats(&self) -> Result<Stats> {
        let one = |sql: &str| -> Result<i64> { Ok(self.conn.query_row(sql, [], |r| r.get(0))?) };
        let roots = self.roots()?;
        let file_len = |suffix: &str| {
            let mut p = self.path.as_os_str().to_owned();
            p.push(suffix);
            std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
        };
        Ok(Stats {
            database: self.path.display().to_string(),
            schema_level: self.schema_level()?,
            roots,
            sources: one("SELECT count(*) FROM sources")?,
            documents: one("SELECT count(*) FROM documents")?,
            chunks: one("SELECT count(*) FROM chunks")?,
            cjk_chunks: one("SELECT count(*) FROM chunks WHERE has_cjk")?,
            text_bytes: one("SELECT coalesce(sum(length(CAST(text AS BLOB))), 0) FROM chunks")?,
            database_bytes: file_len(""),
            wal_bytes: file_len("-wal"),
            last_indexed_at: self.conn.query_row("SELECT max(indexed_at) FROM sources", [], |r| r.get(0))?,
        })
    }
}
