//! The `embeddings` table: which chunks still need a vector, writing a batch
//! of vectors in one transaction (so an interrupted ingest resumes where it
//! stopped), and loading every vector for an exact scan. A row with an empty
//! vector (dimension 0) records that the model does not read the chunk (Korean
//! for an English model): it is not embedded again, and searched lexically.

use anyhow::{Context, Result};
use rusqlite::{OptionalExtension, params};

use super::Store;

/// Every vector of a model, contiguous: row `i` is `data[i*dim..(i+1)*dim]`.
#[derive(Debug, Default)]
pub struct VectorSet {
    pub dim: usize,
    pub ids: Vec<i64>,
    pub data: Vec<f32>,
}

impl Store {
    /// The model the stored vectors belong to, if any, and their dimension
    /// (0 while the model has only passed over chunks it does not read).
    pub fn embedding_model(&self) -> Result<Option<(String, usize)>> {
        let model: Option<String> = self.conn.query_row("SELECT model FROM embeddings LIMIT 1", [], |r| r.get(0)).optional()?;
        let Some(model) = model else { return Ok(None) };
        let dim: Option<i64> = self.conn.query_row("SELECT dim FROM embeddings WHERE dim > 0 LIMIT 1", [], |r| r.get(0)).optional()?;
        Ok(Some((model, dim.unwrap_or(0) as usize)))
    }

    /// Chunks the model passed over because it does not read their script.
    pub fn count_unread(&self) -> Result<i64> {
        Ok(self.conn.query_row("SELECT count(*) FROM embeddings WHERE dim = 0", [], |r| r.get(0))?)
    }

    /// Whether any chunk has a vector of `model`.
    pub fn has_vectors(&self, model: &str) -> Result<bool> {
        Ok(self.conn.query_row("SELECT EXISTS (SELECT 1 FROM embeddings WHERE model = ?1)", [model], |r| r.get(0))?)
    }

    /// SQLite's `data_version`: it changes when another connection commits,
    /// which is when vectors held in memory may be out of date.
    pub fn data_version(&self) -> Result<i64> {
        Ok(self.conn.query_row("PRAGMA data_version", [], |r| r.get(0))?)
    }

    /// Up to `limit` chunks without a vector: id and the text to embed
    /// (title and headings, then the chunk).
    pub fn chunks_without_vectors(&self, limit: usize) -> Result<Vec<(i64, String)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT c.id, c.context, c.text FROM chunks c
             WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.chunk_id = c.id)
             ORDER BY c.id LIMIT ?1",
        )?;
        let rows = stmt.query_map([limit as i64], |r| {
            let context: String = r.get(1)?;
            let text: String = r.get(2)?;
            Ok((r.get(0)?, if context.is_empty() { text } else { format!("{context}\n{text}") }))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    pub fn count_without_vectors(&self) -> Result<i64> {
        Ok(self.conn.query_row(
            "SELECT count(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.chunk_id = c.id)",
            [],
            |r| r.get(0),
        )?)
    }

    /// Saves one batch; a chunk deleted meanwhile (by another process) is
    /// skipped. An empty vector marks a chunk the model does not read.
    pub fn put_vectors(&self, model: &str, batch: &[(i64, Vec<f32>)]) -> Result<()> {
        self.ensure_writable()?;
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, rusqlite::TransactionBehavior::Immediate)?;
        {
            let mut stmt = tx.prepare_cached(
                "INSERT OR REPLACE INTO embeddings(chunk_id, model, dim, vector)
                 SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM chunks WHERE id = ?1)",
            )?;
            for (id, v) in batch {
                stmt.execute(params![id, model, v.len() as i64, to_blob(v)])?;
            }
        }
        tx.commit().context("saving vectors")?;
        Ok(())
    }

    /// Drops every vector (a change of model).
    pub fn clear_vectors(&self) -> Result<usize> {
        self.ensure_writable()?;
        Ok(self.conn.execute("DELETE FROM embeddings", [])?)
    }

    /// Every vector of `model`, for an exact scan. Rows of another dimension
    /// (which one model never writes) are skipped.
    pub fn load_vectors(&self, model: &str, dim: usize) -> Result<VectorSet> {
        // Room for every row, from the id range (two B-tree probes): a
        // count(*) would read every 1.5 KB row once more before loading.
        let span: i64 = self
            .conn
            .query_row("SELECT coalesce(max(chunk_id) - min(chunk_id) + 1, 0) FROM embeddings", [], |r| r.get(0))?;
        // Capped: ids left sparse by re-chunking must not reserve gigabytes.
        let n = span.clamp(0, 1_000_000) as usize;
        let mut set = VectorSet { dim, ids: Vec::with_capacity(n), data: Vec::with_capacity(n * dim) };
        let mut stmt = self.conn.prepare_cached("SELECT chunk_id, vector FROM embeddings WHERE model = ?1")?;
        let mut rows = stmt.query([model])?;
        while let Some(r) = rows.next()? {
            // Borrow the blob in place: no per-row allocation.
            let blob = r.get_ref(1)?.as_blob()?;
            if read_blob(blob, dim, &mut set.data) {
                set.ids.push(r.get(0)?);
            }
        }
        Ok(set)
    }
}

/// A vector as stored: little-endian f32s.
pub fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Appends a stored vector's floats to `out`; false if the blob is not `dim` floats.
pub fn read_blob(blob: &[u8], dim: usize, out: &mut Vec<f32>) -> bool {
    if blob.len() != dim * 4 {
        return false;
    }
    out.extend(blob.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_round_trip_little_endian() {
        let v = [1.0f32, -0.5, 3.25e-3];
        let blob = to_blob(&v);
        assert_eq!(&blob[..4], &1.0f32.to_le_bytes());
        let mut out = Vec::new();
        assert!(read_blob(&blob, 3, &mut out));
        assert_eq!(out, v);
        assert!(!read_blob(&blob, 4, &mut out));
    }
}
