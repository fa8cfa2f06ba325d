//! A bulk ingest's batch: one write transaction that several files share,
//! and the postings built beside it (`postings::Builder`), settled when it
//! commits and when the ingest ends.

use anyhow::{Context, Result};
use rusqlite::TransactionBehavior;

use super::Store;
use super::postings::{self, Settle};

impl Store {
    /// Opens a write transaction that several `apply_source` calls share, or
    /// goes on with the one open: ingest opens it before making a new root,
    /// so the root's row is kept or rolled back with its notes.
    /// FTS5 writes a new index segment per commit, so committing every file
    /// separately costs several times the work of committing a batch of them.
    pub fn begin_batch(&mut self) -> Result<()> {
        self.ensure_writable()?;
        self.building.get_or_insert_with(postings::Builder::start);
        if self.conn.is_autocommit() {
            self.conn.execute_batch("BEGIN IMMEDIATE")?;
        }
        Ok(())
    }

    /// Whether a batch is open (a write transaction not yet committed).
    pub fn in_batch(&self) -> bool {
        !self.conn.is_autocommit()
    }

    /// Commits the open batch, if any.
    pub fn commit_batch(&self) -> Result<()> {
        if !self.conn.is_autocommit() {
            postings::settle(&self.conn, Settle::Full, self.building.as_ref())?;
            self.conn.execute_batch("COMMIT").context("committing the index update")?;
        }
        Ok(())
    }

    /// Rebuilds what a bulk ingest left of the postings (`commit_batch`
    /// leaves the block it is filling), in its own transaction.
    pub fn settle_postings(&mut self) -> Result<()> {
        self.ensure_writable()?;
        let building = self.building.take();
        if self.stale_postings()? == 0 {
            return Ok(());
        }
        // Immediate: a read that turns into a write fails at once if another
        // writer committed in between (SQLITE_BUSY_SNAPSHOT).
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        postings::settle(&tx, Settle::All, building.as_ref())?;
        tx.commit().context("committing the postings")?;
        Ok(())
    }

    /// Blocks of chunks whose postings wait to be rebuilt: left by an
    /// ingest stopped halfway; searches ask FTS5 until the next write.
    pub fn stale_postings(&self) -> Result<i64> {
        postings::stale_blocks(&self.conn)
    }

    /// Drops the open batch, if any, after a failure: nothing of it is kept.
    pub fn rollback_batch(&mut self) {
        // What it built is of chunks that are no longer there.
        self.building = None;
        if !self.conn.is_autocommit() {
            // Called on the way out with an error that says more; a failed
            // rollback keeps nothing either (SQLite rolls back on close).
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}
