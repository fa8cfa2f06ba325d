//! The `embeddings` table and its int8 copy, `embedding_codes`: which chunks
//! still need a vector, writing a batch of vectors in one transaction (so an
//! interrupted ingest resumes where it stopped), loading every code for the
//! scan, and reading the f32 vectors of the scan's best candidates for their
//! exact cosines. A row with an empty vector (dimension 0) records that the
//! model does not read the chunk (Korean for an English model): it is not
//! embedded again, has no code, and is searched lexically.
//!
//! Why two tables: at a million chunks the f32 vectors are 1.5 GB. The scan
//! reads a code of one byte a dimension (a quarter of that) from a table of
//! its own, so loading never reads the f32 rows' pages; the f32 vectors are
//! read only for the few hundred candidates the scan keeps.

use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, params};

use super::Store;

/// Every code of a model, contiguous: row `i` is `codes[i*dim..(i+1)*dim]`,
/// standing for `scales[i] * code` (see [`quantize`]).
#[derive(Debug, Default)]
pub struct VectorSet {
    pub dim: usize,
    pub ids: Vec<i64>,
    pub scales: Vec<f32>,
    pub codes: Vec<i8>,
}

impl VectorSet {
    /// Appends one vector, encoding it.
    pub fn push(&mut self, id: i64, v: &[f32]) {
        let (scale, code) = quantize(v);
        self.ids.push(id);
        self.scales.push(scale);
        self.codes.extend(code);
    }

    /// Bytes held in memory (what a search process keeps for the scan).
    pub fn bytes(&self) -> usize {
        self.ids.len() * 8 + self.scales.len() * 4 + self.codes.len()
    }
}

/// The code columns, listed once: [`insert_code`] writes them in this order
/// and [`LOAD_CODES`] reads `chunk_id, scale, code` back.
const CODE_COLUMNS: &str = "chunk_id, model, scale, code";
const LOAD_CODES: &str = "SELECT chunk_id, scale, code FROM embedding_codes WHERE model = ?1";

/// Writes (or replaces) one chunk's code.
fn insert_code(conn: &Connection, id: i64, model: &str, v: &[f32]) -> Result<()> {
    let (scale, code) = quantize(v);
    let mut stmt = conn.prepare_cached(&format!("INSERT OR REPLACE INTO embedding_codes({CODE_COLUMNS}) VALUES (?1, ?2, ?3, ?4)"))?;
    stmt.execute(params![id, model, scale as f64, code_blob(&code)])?;
    Ok(())
}

/// Reads one row of [`LOAD_CODES`] into `set`; false (and `set` untouched)
/// when the code is not `set.dim` bytes.
fn read_code(row: &rusqlite::Row, set: &mut VectorSet) -> Result<bool> {
    let code = row.get_ref(2)?.as_blob()?;
    if code.len() != set.dim {
        return Ok(false);
    }
    set.ids.push(row.get(0)?);
    set.scales.push(row.get::<_, f64>(1)? as f32);
    set.codes.extend(code.iter().map(|&b| b as i8));
    Ok(true)
}

/// Encodes every stored vector that has no code yet: the schema-6
/// migration's step for a database written before the codes existed. Runs
/// inside the migration's transaction.
pub(super) fn encode_existing(conn: &Connection) -> Result<()> {
    let mut stmt = conn.prepare(
        "SELECT e.chunk_id, e.model, e.dim, e.vector FROM embeddings e
         WHERE e.dim > 0 AND NOT EXISTS (SELECT 1 FROM embedding_codes c WHERE c.chunk_id = e.chunk_id)",
    )?;
    let mut rows = stmt.query([])?;
    let mut v = Vec::new();
    while let Some(r) = rows.next()? {
        let dim = r.get::<_, i64>(2)? as usize;
        v.clear();
        // A blob that is not `dim` floats was never searchable; it stays without a code.
        if read_blob(r.get_ref(3)?.as_blob()?, dim, &mut v) {
            let model: String = r.get(1)?;
            insert_code(conn, r.get(0)?, &model, &v).context("encoding a stored vector")?;
        }
    }
    Ok(())
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

    /// Whether the newest chunk has no vector (nor a mark that the model does
    /// not read it). Ingest embeds chunks oldest first and commits as it goes,
    /// so while one is embedding, or after one stopped, the newest chunk is
    /// among those without: one row looked up, cheap enough for every search.
    pub fn newest_chunk_lacks_vector(&self) -> Result<bool> {
        Ok(self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM chunks c WHERE c.id = (SELECT max(id) FROM chunks)
             AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.chunk_id = c.id))",
            [],
            |r| r.get(0),
        )?)
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

    /// Saves one batch, each vector with its code; a chunk deleted meanwhile
    /// (by another process) is skipped. An empty vector marks a chunk the
    /// model does not read, and has no code.
    pub fn put_vectors(&self, model: &str, batch: &[(i64, Vec<f32>)]) -> Result<()> {
        self.ensure_writable()?;
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, rusqlite::TransactionBehavior::Immediate)?;
        {
            let mut stmt = tx.prepare_cached(
                "INSERT OR REPLACE INTO embeddings(chunk_id, model, dim, vector)
                 SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM chunks WHERE id = ?1)",
            )?;
            for (id, v) in batch {
                let written = stmt.execute(params![id, model, v.len() as i64, to_blob(v)])?;
                if written > 0 && !v.is_empty() {
                    insert_code(&tx, *id, model, v)?;
                }
            }
        }
        tx.commit().context("saving vectors")?;
        Ok(())
    }

    /// Drops every vector (a change of model).
    pub fn clear_vectors(&self) -> Result<usize> {
        self.ensure_writable()?;
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, rusqlite::TransactionBehavior::Immediate)?;
        // The codes first: the trigger would otherwise delete them one by one.
        tx.execute("DELETE FROM embedding_codes", [])?;
        let n = tx.execute("DELETE FROM embeddings", [])?;
        tx.commit()?;
        Ok(n)
    }

    /// Every code of `model`, for the scan. Rows of another dimension (which
    /// one model never writes) are skipped.
    pub fn load_vectors(&self, model: &str, dim: usize) -> Result<VectorSet> {
        // Room for every row, from the id range (two B-tree probes): a
        // count(*) would read every row once more before loading.
        let span: i64 = self
            .conn
            .query_row("SELECT coalesce(max(chunk_id) - min(chunk_id) + 1, 0) FROM embedding_codes", [], |r| r.get(0))?;
        // Capped: ids left sparse by re-chunking must not reserve gigabytes.
        let n = span.clamp(0, 2_000_000) as usize;
        let mut set =
            VectorSet { dim, ids: Vec::with_capacity(n), scales: Vec::with_capacity(n), codes: Vec::with_capacity(n * dim) };
        let mut stmt = self.conn.prepare_cached(LOAD_CODES)?;
        let mut rows = stmt.query([model])?;
        while let Some(r) = rows.next()? {
            read_code(r, &mut set)?;
        }
        Ok(set)
    }

    /// The f32 vectors of `ids` (the scan's best candidates), in the order
    /// given; an id without a vector of `dim` floats (deleted since the codes
    /// were loaded) is left out.
    pub fn exact_vectors(&self, ids: &[i64], dim: usize) -> Result<Vec<(i64, Vec<f32>)>> {
        let mut stmt = self.conn.prepare_cached("SELECT vector FROM embeddings WHERE chunk_id = ?1")?;
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            let mut rows = stmt.query([id])?;
            if let Some(r) = rows.next()? {
                let mut v = Vec::with_capacity(dim);
                if read_blob(r.get_ref(0)?.as_blob()?, dim, &mut v) {
                    out.push((id, v));
                }
            }
        }
        Ok(out)
    }
}

/// A vector's int8 code and scale: `scale` is its largest absolute value
/// over 127, and `code[i] = round(v[i] / scale)`, so `scale * code[i]` is
/// within `scale / 2` of `v[i]`. One scale per vector rather than per
/// dimension: the dot product of two codes is then an integer sum, scaled
/// once (docs/performance.md has the measured choice). A zero vector has
/// scale 0 and a zero code.
pub fn quantize(v: &[f32]) -> (f32, Vec<i8>) {
    let max = v.iter().fold(0.0f32, |m, x| if x.abs() > m { x.abs() } else { m });
    if max == 0.0 || !max.is_finite() {
        return (0.0, vec![0; v.len()]);
    }
    let scale = max / 127.0;
    (scale, v.iter().map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8).collect())
}

/// A code as stored: one byte per dimension, two's complement.
fn code_blob(code: &[i8]) -> Vec<u8> {
    code.iter().map(|&c| c as u8).collect()
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

    #[test]
    fn a_code_stays_within_half_a_step_of_its_vector() {
        let v = [0.5f32, -0.25, 0.0, 0.125, -0.499];
        let (scale, code) = quantize(&v);
        assert_eq!(scale, 0.5 / 127.0);
        assert_eq!(code[0], 127, "the largest value takes the whole range");
        assert_eq!(code[1], -64, "-0.25 / (0.5 / 127) = -63.5, rounded away from zero");
        for (x, c) in v.iter().zip(&code) {
            assert!((x - scale * *c as f32).abs() <= scale / 2.0 + 1e-7, "{x} coded as {c}");
        }
        assert_eq!(quantize(&[0.0, 0.0]), (0.0, vec![0, 0]), "a zero vector has no scale to divide by");
    }

    #[test]
    fn codes_are_written_with_their_vectors_and_follow_them() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("k.db"), false).unwrap();
        let conn = &store.conn;
        conn.execute_batch(
            "INSERT INTO roots(id, name, abs_path, created_at) VALUES (1, 'notes', '/notes', 'now');
             INSERT INTO sources(id, root_id, rel_path, format, content_hash, bytes, indexed_at)
                 VALUES (1, 1, 'a.md', 'md', 'h', 1, 'now');
             INSERT INTO documents(id, source_id, path, external_id, media, lang, content_hash, bytes, indexed_at, updated_at)
                 VALUES (1, 1, 'notes/a.md', 'notes/a.md', 'text/markdown', 'en', 'h', 1, 'now', 'now');
             INSERT INTO chunks(id, doc_id, ordinal, heading_path_json, context, text, line_start, line_end,
                                token_estimate, content_hash, has_cjk)
                 VALUES (7, 1, 0, '[]', '', 'x', 1, 1, 1, 'h7', 0), (8, 1, 1, '[]', '', 'y', 2, 2, 1, 'h8', 0),
                        (9, 1, 2, '[]', '', 'z', 3, 3, 1, 'h9', 0);
             -- The writer indexes its chunks itself (migration 0006); the delete trigger expects it.
             INSERT INTO chunks_fts(rowid, context, text) SELECT id, context, text FROM chunks;",
        )
        .unwrap();
        store.put_vectors("m", &[(7, vec![0.6, 0.8]), (8, vec![]), (9, vec![-1.0, 0.0]), (99, vec![1.0, 0.0])]).unwrap();
        let set = store.load_vectors("m", 2).unwrap();
        assert_eq!(set.ids, [7, 9], "no code for an unread chunk (8) nor for a chunk that does not exist (99)");
        assert_eq!(set.codes, [95, 127, -127, 0]);
        let exact = store.exact_vectors(&[9, 8, 7], 2).unwrap();
        assert_eq!(exact, [(9, vec![-1.0, 0.0]), (7, vec![0.6, 0.8])]);

        conn.execute("UPDATE embeddings SET model = 'n'", []).unwrap();
        assert!(store.load_vectors("m", 2).unwrap().ids.is_empty());
        assert_eq!(store.load_vectors("n", 2).unwrap().ids, [7, 9], "the codes follow a change of model");
        conn.execute("DELETE FROM chunks WHERE id = 7", []).unwrap();
        conn.execute("DELETE FROM embeddings WHERE chunk_id = 9", []).unwrap();
        assert!(store.load_vectors("n", 2).unwrap().ids.is_empty(), "the codes follow deleted chunks and vectors");
    }
}
