//! Writes to the index: roots, and one source file's documents and chunks
//! replaced in a single transaction, so a crash never leaves half a file.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::derived::{ChunkColumns, DocColumns, SourceRows};
use super::postings::{self, Settle};
use super::{Store, now_rfc3339};

/// A piece of a document ready to be stored: its text, where it sits in the
/// source (1-based, inclusive line span) and the headings above it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkDraft {
    /// Headings from the outermost to the innermost, without `#` marks.
    pub heading_path: Vec<String>,
    /// The chunk's text exactly as it stands in the source lines it spans.
    pub text: String,
    /// First line of the chunk in the source file, 1-based.
    pub line_start: u32,
    /// Last line of the chunk in the source file, 1-based, inclusive.
    pub line_end: u32,
}

/// One file, parsed: the documents it holds.
pub struct SourceInput {
    pub root_id: i64,
    pub rel_path: String,
    pub format: &'static str,
    pub content_hash: String,
    pub bytes: u64,
    pub documents: Vec<DocumentInput>,
}

/// One logical document and its chunks.
pub struct DocumentInput {
    pub path: String,
    pub external_id: String,
    pub title: Option<String>,
    pub media: &'static str,
    pub tags: Vec<String>,
    /// The document's own text, for its hash and language.
    pub body: String,
    pub chunks: Vec<ChunkDraft>,
}

/// What applying one source did, counted in documents.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SourceOutcome {
    pub added: usize,
    pub updated: usize,
    pub unchanged: usize,
    pub removed: usize,
    pub chunks_written: usize,
}

impl Store {
    /// The root row for `abs_path`, created on first use. Its name is the
    /// folder's own name, lengthened with its parent (then a number) when
    /// another folder already uses that name, so every document path is unique
    /// and stable across runs.
    pub fn ensure_root(&self, abs_path: &Path) -> Result<(i64, String)> {
        self.ensure_root_as(abs_path, true)
    }

    /// `ensure_root` for a folder named whole (`whole_folder`), or one only files in which were named: a bare
    /// run walks the first and reads again only the files of the second. A folder named whole once stays so.
    pub fn ensure_root_as(&self, abs_path: &Path, whole_folder: bool) -> Result<(i64, String)> {
        self.ensure_writable()?;
        let key = super::dir_in_index(abs_path);
        let found = self
            .conn
            .query_row("SELECT id, name, whole_folder FROM roots WHERE abs_path = ?1", [&key], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get::<_, bool>(2)?))
            })
            .optional()?;
        if let Some((id, name, whole)) = found {
            if whole_folder && !whole {
                self.conn.execute("UPDATE roots SET whole_folder = 1 WHERE id = ?1", [id])?;
            }
            return Ok((id, name));
        }
        let comps: Vec<String> = abs_path
            .components()
            .filter_map(|c| match c {
                std::path::Component::Normal(s) => Some(super::dir_in_index(Path::new(s))),
                _ => None,
            })
            .collect();
        let last = comps.last().cloned().unwrap_or_else(|| "root".into());
        let mut candidates = vec![last.clone()];
        if comps.len() >= 2 {
            candidates.push(format!("{}/{}", comps[comps.len() - 2], last));
        }
        let taken = |name: &str| -> Result<bool> {
            Ok(self.conn.query_row("SELECT count(*) FROM roots WHERE name = ?1", [name], |r| r.get::<_, i64>(0))? > 0)
        };
        let mut name = None;
        for c in &candidates {
            if !taken(c)? {
                name = Some(c.clone());
                break;
            }
        }
        let name = match name {
            Some(n) => n,
            None => {
                let mut n = 2;
                while taken(&format!("{last}-{n}"))? {
                    n += 1;
                }
                format!("{last}-{n}")
            }
        };
        self.conn.execute(
            "INSERT INTO roots(name, abs_path, whole_folder, created_at) VALUES (?1, ?2, ?3, ?4)",
            params![name, key, whole_folder, now_rfc3339()],
        )?;
        Ok((self.conn.last_insert_rowid(), name))
    }

    /// The ingested root that is `path` or holds it (the deepest one), with its
    /// name and folder. A root of files named holds its folder and the files in it, not the folders below:
    /// one of those named later is a whole folder, a root of its own.
    pub fn root_containing(&self, path: &Path) -> Result<Option<(i64, String, std::path::PathBuf)>> {
        let mut stmt = self.conn.prepare("SELECT id, name, abs_path, whole_folder FROM roots")?;
        let rows = stmt.query_map([], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, bool>(3)?))
        })?;
        let mut best: Option<(i64, String, std::path::PathBuf)> = None;
        for row in rows {
            let (id, name, dir, whole) = row?;
            let dir = super::dir_on_disk(&dir);
            let holds = whole || path == dir || (path.parent() == Some(dir.as_path()) && !path.is_dir());
            let deeper = best.as_ref().is_none_or(|(_, _, b)| dir.as_os_str().len() > b.as_os_str().len());
            if holds && path.starts_with(&dir) && deeper {
                best = Some((id, name, dir));
            }
        }
        Ok(best)
    }

    /// The stored content hash of a source file, if it was indexed before.
    pub fn source_hash(&self, root_id: i64, rel_path: &str) -> Result<Option<(String, usize)>> {
        Ok(self
            .conn
            .query_row(
                "SELECT s.content_hash, (SELECT count(*) FROM documents d WHERE d.source_id = s.id)
                 FROM sources s WHERE s.root_id = ?1 AND s.rel_path = ?2",
                params![root_id, rel_path],
                |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as usize)),
            )
            .optional()?)
    }

    /// The stored content hash, document count and format of every source
    /// file of `root_id`, by root-relative path: what a run compares files with.
    pub fn indexed_sources(&self, root_id: i64) -> Result<HashMap<String, (String, usize, String)>> {
        let mut stmt = self.conn.prepare(
            "SELECT s.rel_path, s.content_hash, (SELECT count(*) FROM documents d WHERE d.source_id = s.id), s.format
             FROM sources s WHERE s.root_id = ?1",
        )?;
        let rows = stmt.query_map([root_id], |r| Ok((r.get(0)?, (r.get(1)?, r.get::<_, i64>(2)? as usize, r.get(3)?))))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Replaces what the index holds for one source file with `rows`,
    /// all or nothing: in its own transaction, or inside an open batch
    /// (`begin_batch`). Documents whose text did not change keep their rows
    /// (and chunk ids) unless `force`.
    ///
    /// A failure inside a batch rolls the whole batch back: the files before
    /// this one were not committed yet and a later run indexes them again, so
    /// the committed index never holds part of a file.
    pub fn apply_source(&mut self, rows: &SourceRows, force: bool) -> Result<SourceOutcome> {
        self.ensure_writable()?;
        self.terms.get_mut().clear();
        if self.conn.is_autocommit() {
            let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let out = apply_source_in(&tx, rows, force, None)?;
            postings::settle(&tx, Settle::All, None)?;
            tx.commit().context("committing the index update")?;
            return Ok(out);
        }
        // No savepoint per file: FTS5 writes its pending terms out as a new
        // segment at every SAVEPOINT, and merging those tiny segments was
        // 60% of a bulk ingest (docs/performance.md, issue 20).
        let out = apply_source_in(&self.conn, rows, force, self.building.as_ref());
        if out.is_err() {
            self.rollback_batch();
        }
        out
    }

    /// Removes the sources of `root_id` at or below `scope` (a root-relative
    /// path, "" for the whole root) that are not in `seen`. Returns the number
    /// of documents removed.
    pub fn prune(&mut self, root_id: i64, scope: &str, seen: &HashSet<String>) -> Result<usize> {
        self.remove_gone(root_id, scope, seen, false)
    }

    /// Removes a root whose folder is gone: its documents and the root
    /// itself, in one transaction. Returns how many documents went.
    pub fn forget_root(&mut self, root_id: i64) -> Result<usize> {
        self.remove_gone(root_id, "", &HashSet::new(), true)
    }

    fn remove_gone(&mut self, root_id: i64, scope: &str, seen: &HashSet<String>, and_root: bool) -> Result<usize> {
        self.ensure_writable()?;
        self.terms.get_mut().clear();
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let gone: Vec<(i64, String)> = {
            let mut stmt = tx.prepare("SELECT id, rel_path FROM sources WHERE root_id = ?1")?;
            let rows = stmt.query_map([root_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
            let mut v = Vec::new();
            for row in rows {
                let (id, rel): (i64, String) = row?;
                if in_scope(&rel, scope) && !seen.contains(&rel) {
                    v.push((id, rel));
                }
            }
            v
        };
        let mut removed = 0;
        for (source_id, _) in gone {
            let ids: Vec<i64> = {
                let mut stmt = tx.prepare("SELECT id FROM documents WHERE source_id = ?1")?;
                stmt.query_map([source_id], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?
            };
            for id in ids {
                delete_document(&tx, id)?;
                removed += 1;
            }
            tx.execute("DELETE FROM sources WHERE id = ?1", [source_id])?;
        }
        if and_root {
            tx.execute("DELETE FROM roots WHERE id = ?1", [root_id])?;
        }
        postings::settle(&tx, Settle::All, None)?;
        tx.commit()?;
        Ok(removed)
    }

    /// Documents whose source files are at or below `scope` but not in `seen`:
    /// what `--prune` would remove.
    pub fn count_missing(&self, root_id: i64, scope: &str, seen: &HashSet<String>) -> Result<usize> {
        let mut stmt = self.conn.prepare(
            "SELECT s.rel_path, (SELECT count(*) FROM documents d WHERE d.source_id = s.id)
             FROM sources s WHERE s.root_id = ?1",
        )?;
        let rows = stmt.query_map([root_id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
        let mut n = 0;
        for row in rows {
            let (rel, docs) = row?;
            if in_scope(&rel, scope) && !seen.contains(&rel) {
                n += docs as usize;
            }
        }
        Ok(n)
    }
}

/// A source file as the index holds it: what `kebab watch` needs to tell a
/// renamed file (same bytes, new path) from a new one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceRow {
    pub rel_path: String,
    pub format: String,
    pub content_hash: String,
}

impl Store {
    /// The sources of `root_id` at or below `scope` ("" for the whole root).
    pub fn sources_under(&self, root_id: i64, scope: &str) -> Result<Vec<SourceRow>> {
        let mut stmt = self.conn.prepare_cached("SELECT rel_path, format, content_hash FROM sources WHERE root_id = ?1 ORDER BY rel_path")?;
        let rows = stmt.query_map([root_id], |r| Ok(SourceRow { rel_path: r.get(0)?, format: r.get(1)?, content_hash: r.get(2)? }))?;
        let mut out = Vec::new();
        for row in rows {
            let row = row?;
            if in_scope(&row.rel_path, scope) {
                out.push(row);
            }
        }
        Ok(out)
    }
}

fn in_scope(rel: &str, scope: &str) -> bool {
    scope.is_empty() || rel == scope || rel.strip_prefix(scope).is_some_and(|rest| rest.starts_with('/'))
}

fn apply_source_in(tx: &Connection, rows: &SourceRows, force: bool, building: Option<&postings::Builder>) -> Result<SourceOutcome> {
    let input = &rows.input;
    let now = now_rfc3339();
    tx.execute(
        "INSERT INTO sources(root_id, rel_path, format, content_hash, bytes, indexed_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT(root_id, rel_path) DO UPDATE SET
           format = excluded.format, content_hash = excluded.content_hash,
           bytes = excluded.bytes, indexed_at = excluded.indexed_at",
        params![input.root_id, input.rel_path, input.format, input.content_hash, input.bytes as i64, now],
    )?;
    let source_id: i64 = tx.query_row(
        "SELECT id FROM sources WHERE root_id = ?1 AND rel_path = ?2",
        params![input.root_id, input.rel_path],
        |r| r.get(0),
    )?;

    let mut existing: HashMap<String, (i64, String)> = HashMap::new();
    {
        let mut stmt = tx.prepare_cached("SELECT path, id, content_hash FROM documents WHERE source_id = ?1")?;
        let rows = stmt.query_map([source_id], |r| Ok((r.get::<_, String>(0)?, (r.get(1)?, r.get(2)?))))?;
        for row in rows {
            let (path, v) = row?;
            existing.insert(path, v);
        }
    }

    let mut out = SourceOutcome::default();
    let mut seen = HashSet::new();
    for (doc, cols) in input.documents.iter().zip(&rows.docs) {
        if !seen.insert(doc.path.as_str()) {
            continue; // a repeated JSONL _id: the first record wins, as reported by the parser
        }
        let DocColumns { hash, lang, tags_json: tags, .. } = cols;
        let doc_id = match existing.get(&doc.path) {
            Some((_, old_hash)) if old_hash == hash && !force => {
                out.unchanged += 1;
                continue;
            }
            Some((id, _)) => {
                // The path may exist under another source only if it moved
                // files; the UNIQUE(path) constraint reports that case.
                tx.execute("DELETE FROM chunks WHERE doc_id = ?1", [id])?;
                tx.execute(
                    "UPDATE documents SET external_id = ?2, title = ?3, media = ?4, lang = ?5, tags_json = ?6,
                       content_hash = ?7, bytes = ?8, updated_at = ?9 WHERE id = ?1",
                    params![id, doc.external_id, doc.title, doc.media, lang, tags, hash, doc.body.len() as i64, now],
                )?;
                out.updated += 1;
                *id
            }
            None => {
                // A document of this path from another source (a file that
                // moved between roots cannot share a path, but a JSONL _id
                // may be re-homed): take it over rather than fail.
                let other: Option<i64> = tx
                    .query_row("SELECT id FROM documents WHERE path = ?1", [&doc.path], |r| r.get(0))
                    .optional()?;
                if let Some(other) = other {
                    delete_document(tx, other)?;
                }
                tx.execute(
                    "INSERT INTO documents(source_id, path, external_id, title, media, lang, tags_json,
                       content_hash, bytes, indexed_at, updated_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10)",
                    params![
                        source_id, doc.path, doc.external_id, doc.title, doc.media, lang, tags, hash,
                        doc.body.len() as i64, now
                    ],
                )?;
                out.added += 1;
                tx.last_insert_rowid()
            }
        };
        out.chunks_written += insert_chunks(tx, doc_id, doc, &cols.chunks, building)?;
    }
    for (path, (id, _)) in &existing {
        if !seen.contains(path.as_str()) {
            delete_document(tx, *id)?;
            out.removed += 1;
        }
    }
    Ok(out)
}

pub(super) fn delete_document(tx: &Connection, doc_id: i64) -> Result<()> {
    tx.execute("DELETE FROM chunks WHERE doc_id = ?1", [doc_id])?;
    tx.execute("DELETE FROM documents WHERE id = ?1", [doc_id])?;
    Ok(())
}

/// Inserts a document's chunks and their full-text rows (the word index for
/// every chunk, the trigram index for those with Hangul/CJK), as the
/// `chunks_ad`/`chunks_au` triggers keep them on delete and update, and
/// marks their postings to rebuild. No insert trigger: see migration 0006.
fn insert_chunks(
    tx: &Connection,
    doc_id: i64,
    doc: &DocumentInput,
    cols: &[ChunkColumns],
    building: Option<&postings::Builder>,
) -> Result<usize> {
    let mut chunk_row = tx.prepare_cached(
        "INSERT INTO chunks(doc_id, ordinal, heading_path_json, context, text, line_start, line_end,
           token_estimate, content_hash, has_cjk, cjk_context, cjk_text)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?;
    let mut words = tx.prepare_cached("INSERT INTO chunks_fts(rowid, context, text) VALUES (?1, ?2, ?3)")?;
    let mut trigrams = tx.prepare_cached("INSERT INTO chunks_trigram(rowid, context, text) VALUES (?1, ?2, ?3)")?;
    for (ordinal, (chunk, col)) in doc.chunks.iter().zip(cols).enumerate() {
        let (cjk_context, cjk_text) = col.cjk.as_ref().map(|(c, t)| (c, t)).unzip();
        let id = chunk_row.insert(params![
            doc_id,
            ordinal as i64,
            col.heading_json,
            col.context,
            chunk.text,
            chunk.line_start,
            chunk.line_end,
            col.token_estimate,
            col.content_hash,
            col.cjk.is_some(),
            cjk_context,
            cjk_text,
        ])?;
        words.execute(params![id, col.context, chunk.text])?;
        if col.cjk.is_some() {
            trigrams.execute(params![id, cjk_context, cjk_text])?;
        }
        // Once per block: a document's chunks mostly share one.
        if ordinal == 0 || id >> postings::BLOCK_BITS != (id - 1) >> postings::BLOCK_BITS {
            postings::mark_stale(tx, id)?;
        }
        if let Some(building) = building {
            let words = [col.context.clone(), chunk.text.clone()];
            let cjk = col.cjk.clone().map(|(c, t)| [c, t]);
            building.add(postings::ChunkText { id, words, cjk })?;
        }
    }
    Ok(doc.chunks.len())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// One Markdown source of one document whose chunks are `texts`.
    pub(crate) fn source(root_id: i64, name: &str, texts: &[&str]) -> SourceRows {
        let chunks: Vec<(&str, &str)> = texts.iter().map(|t| ("", *t)).collect();
        source_with_headings(root_id, name, &chunks)
    }

    /// One Markdown source of one document of chunks (heading, text); an
    /// empty heading is none.
    pub(crate) fn source_with_headings(root_id: i64, name: &str, chunks: &[(&str, &str)]) -> SourceRows {
        let texts: Vec<&str> = chunks.iter().map(|c| c.1).collect();
        let chunks = chunks
            .iter()
            .enumerate()
            .map(|(i, (h, t))| ChunkDraft {
                heading_path: if h.is_empty() { vec![] } else { vec![h.to_string()] },
                text: t.to_string(),
                line_start: i as u32 + 1,
                line_end: i as u32 + 1,
            })
            .collect();
        SourceInput {
            root_id,
            rel_path: name.to_string(),
            format: "md",
            content_hash: blake3::hash(texts.join("\n").as_bytes()).to_hex().to_string(),
            bytes: 1,
            documents: vec![DocumentInput {
                path: format!("notes/{name}"),
                external_id: format!("notes/{name}"),
                title: None,
                media: "text/markdown",
                tags: vec![],
                body: texts.join("\n"),
                chunks,
            }],
        }
        .into_rows()
    }

    fn matches(store: &Store, table: &str, expr: &str) -> Vec<i64> {
        let sql = format!("SELECT rowid FROM {table} WHERE {table} MATCH ?1 ORDER BY rowid");
        let mut stmt = store.conn.prepare(&sql).unwrap();
        stmt.query_map([expr], |r| r.get(0)).unwrap().collect::<rusqlite::Result<_>>().unwrap()
    }

    fn chunk_ids(store: &Store) -> Vec<i64> {
        let mut stmt = store.conn.prepare("SELECT id FROM chunks ORDER BY id").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().collect::<rusqlite::Result<_>>().unwrap()
    }

    fn fresh(dir: &std::path::Path) -> (Store, i64) {
        let store = Store::open(&dir.join("k.db"), false).unwrap();
        let (root, _) = store.ensure_root(dir).unwrap();
        (store, root)
    }

    pub(in crate::store) fn assert_indexes_sound(store: &Store) {
        for (table, verdict) in store.check_fts().unwrap() {
            assert!(verdict.is_ok(), "{table}: {verdict:?}");
        }
    }

    #[test]
    fn every_chunk_is_word_indexed_and_only_hangul_words_trigram_indexed_through_updates() {
        let dir = tempfile::tempdir().unwrap();
        let (mut store, root) = fresh(dir.path());
        store.begin_batch().unwrap();
        store.apply_source(&source(root, "a.md", &["Cargo builds crates.", "소유권은 핵심 개념입니다. `rustup` 2024년에"]), false).unwrap();
        store.commit_batch().unwrap();
        let first = chunk_ids(&store);
        assert_eq!(matches(&store, "chunks_fts", "cargo"), vec![first[0]]);
        assert_eq!(matches(&store, "chunks_fts", "\"핵심\""), vec![first[1]]);
        assert_eq!(matches(&store, "chunks_fts", "rustup"), vec![first[1]]);
        assert_eq!(matches(&store, "chunks_trigram", "\"소유권\""), vec![first[1]]);
        assert_eq!(matches(&store, "chunks_trigram", "\"024년\""), vec![first[1]], "a number stays with the Hangul after it");
        assert!(matches(&store, "chunks_trigram", "\"cargo\"").is_empty(), "an English chunk stays out of the trigram index");
        assert!(matches(&store, "chunks_trigram", "\"rustup\"").is_empty(), "so do a Korean chunk's English words");
        assert_indexes_sound(&store);

        // The file changes: old rows leave both indexes (delete trigger), new ones enter.
        store.apply_source(&source(root, "a.md", &["Rustup installs toolchains.", "빌림 규칙"]), false).unwrap();
        let second = chunk_ids(&store);
        assert!(matches(&store, "chunks_fts", "cargo").is_empty());
        assert!(matches(&store, "chunks_trigram", "\"소유권\"").is_empty());
        assert_eq!(matches(&store, "chunks_fts", "rustup"), vec![second[0]]);
        assert_eq!(matches(&store, "chunks_trigram", "\"빌림 규\""), vec![second[1]]);
        assert_indexes_sound(&store);
    }

    #[test]
    fn a_failed_file_rolls_back_its_batch_and_leaves_the_store_usable() {
        let dir = tempfile::tempdir().unwrap();
        let (mut store, root) = fresh(dir.path());
        store.begin_batch().unwrap();
        store.apply_source(&source(root, "a.md", &["Cargo builds crates."]), false).unwrap();
        // No such root: the foreign key refuses this file.
        assert!(store.apply_source(&source(root + 100, "b.md", &["Borrowing."]), false).is_err());
        assert!(store.conn.is_autocommit(), "no transaction is left open");
        assert!(chunk_ids(&store).is_empty(), "nothing of the failed batch is kept");
        assert!(store.source_hash(root, "a.md").unwrap().is_none());
        // The next batch runs as usual.
        store.begin_batch().unwrap();
        store.apply_source(&source(root, "a.md", &["Cargo builds crates."]), false).unwrap();
        store.commit_batch().unwrap();
        assert_eq!(matches(&store, "chunks_fts", "cargo"), chunk_ids(&store));
        assert_indexes_sound(&store);
    }

    #[test]
    fn scope_matches_whole_path_components_only() {
        assert!(in_scope("a/b.md", ""));
        assert!(in_scope("a/b.md", "a"));
        assert!(in_scope("a/b.md", "a/b.md"));
        assert!(!in_scope("ab/c.md", "a"));
    }
}
