//! Moving notes in the index without re-reading them: a renamed file
//! (`kebab watch`), and a root that turns out to lie inside a folder being
//! ingested, whose notes join that folder's root. Rows are kept, not
//! rewritten, so chunk ids, vectors and the citations of saved answers that
//! point at them stay valid; only paths change.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::postings::{self, Settle};
use super::write::delete_document;
use super::{Store, now_rfc3339};

/// Where a source moves: its root, its root's name and its root-relative path.
pub struct SourcePlace<'a> {
    pub root_id: i64,
    pub root_name: &'a str,
    pub rel_path: &'a str,
}

/// A root as `roots_inside` lists it.
pub struct InnerRoot {
    pub id: i64,
    pub name: String,
    pub dir: PathBuf,
}

impl Store {
    /// Moves a source file and its documents to a new path, in one
    /// transaction, keeping their rows: chunk ids, vectors and the citations
    /// that point at them stay valid. Returns how many documents moved.
    pub fn move_source(&mut self, from: &SourcePlace, to: &SourcePlace) -> Result<usize> {
        self.ensure_writable()?;
        self.terms.get_mut().clear();
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let moved = move_in(&tx, from, to)?;
        tx.commit().context("committing the move")?;
        Ok(moved)
    }

    /// The roots whose folders lie strictly inside `dir`.
    pub fn roots_inside(&self, dir: &Path) -> Result<Vec<InnerRoot>> {
        let mut stmt = self.conn.prepare("SELECT id, name, abs_path FROM roots ORDER BY id")?;
        let rows = stmt.query_map([], |r| Ok(InnerRoot { id: r.get(0)?, name: r.get(1)?, dir: super::dir_on_disk(&r.get::<_, String>(2)?) }))?;
        let mut inside = Vec::new();
        for row in rows {
            let row = row?;
            if row.dir != dir && row.dir.starts_with(dir) {
                inside.push(row);
            }
        }
        Ok(inside)
    }

    /// Moves every source of root `inner` into root `into` at `prefix/…`
    /// (`prefix`: the inner folder's path inside the other's, as the index
    /// spells paths) and removes `inner`, in one transaction. Otherwise each
    /// note there would be indexed, found and quoted twice. A source `into`
    /// already holds at that path (indexed twice by an older kebab) gives
    /// way to the moved one, whose rows saved answers cite. Returns how many
    /// documents moved.
    pub fn absorb_root(&mut self, inner: &InnerRoot, into: (i64, &str), prefix: &str) -> Result<usize> {
        self.ensure_writable()?;
        self.terms.get_mut().clear();
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let sources: Vec<String> = {
            let mut stmt = tx.prepare("SELECT rel_path FROM sources WHERE root_id = ?1")?;
            stmt.query_map([inner.id], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?
        };
        let mut moved = 0;
        for rel in &sources {
            let from = SourcePlace { root_id: inner.id, root_name: &inner.name, rel_path: rel };
            let to_rel = format!("{prefix}/{rel}");
            let to = SourcePlace { root_id: into.0, root_name: into.1, rel_path: &to_rel };
            moved += move_in(&tx, &from, &to)?;
        }
        tx.execute("DELETE FROM roots WHERE id = ?1", [inner.id])?;
        tx.commit().with_context(|| format!("committing the move of {}/ into {}/", inner.name, into.1))?;
        Ok(moved)
    }
}

/// `move_source` inside the caller's transaction.
fn move_in(tx: &Connection, from: &SourcePlace, to: &SourcePlace) -> Result<usize> {
    let source_id: i64 = tx.query_row(
        "SELECT id FROM sources WHERE root_id = ?1 AND rel_path = ?2",
        params![from.root_id, from.rel_path],
        |r| r.get(0),
    )?;
    // Whatever the index held at the new path is replaced by the moved file.
    let stale: Option<i64> = tx
        .query_row("SELECT id FROM sources WHERE root_id = ?1 AND rel_path = ?2", params![to.root_id, to.rel_path], |r| r.get(0))
        .optional()?;
    if let Some(stale) = stale.filter(|&s| s != source_id) {
        let ids: Vec<i64> = {
            let mut stmt = tx.prepare("SELECT id FROM documents WHERE source_id = ?1")?;
            stmt.query_map([stale], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?
        };
        for id in ids {
            delete_document(tx, id)?;
        }
        tx.execute("DELETE FROM sources WHERE id = ?1", [stale])?;
        postings::settle(tx, Settle::All, None)?;
    }
    tx.execute(
        "UPDATE sources SET root_id = ?2, rel_path = ?3, indexed_at = ?4 WHERE id = ?1",
        params![source_id, to.root_id, to.rel_path, now_rfc3339()],
    )?;
    let old_prefix = format!("{}/{}", from.root_name, from.rel_path);
    let new_prefix = format!("{}/{}", to.root_name, to.rel_path);
    let docs: Vec<(i64, String, String)> = {
        let mut stmt = tx.prepare("SELECT id, path, external_id FROM documents WHERE source_id = ?1")?;
        stmt.query_map([source_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<rusqlite::Result<_>>()?
    };
    for (id, path, external_id) in &docs {
        // `ROOT/rel.md`, or `ROOT/rel.jsonl#ID` for a record.
        let Some(rest) = path.strip_prefix(&old_prefix) else { continue };
        let new_path = format!("{new_prefix}{rest}");
        // A note's external id is its path; a record's is its own `_id`.
        let new_external = if external_id == path { new_path.clone() } else { external_id.clone() };
        tx.execute(
            "UPDATE documents SET path = ?2, external_id = ?3, updated_at = ?4 WHERE id = ?1",
            params![id, new_path, new_external, now_rfc3339()],
        )?;
    }
    Ok(docs.len())
}
