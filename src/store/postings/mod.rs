//! The `postings` table: each token's chunks, kept beside the two FTS5
//! indexes so that a common word is ranked without FTS5 scoring its every row.
//!
//! FTS5 ranks a query by computing BM25 for every row any phrase matches,
//! reading the row's positions and its size (about two microseconds a row),
//! and merges the postings of every word sharing a prefix first: a Korean
//! word in a third of 100,000 chunks took 90–170 ms, against a 30 ms budget
//! for a whole question (docs/performance.md, issue 20). Here each token of
//! each chunk is kept with what BM25 needs: the chunk, the token's count in
//! each column and the chunk's size in tokens. A phrase's scores are then a
//! read of a few blobs and arithmetic, FTS5's formula exactly (`Lists::scores`).
//!
//! The tokens are FTS5's own (`tokens`). Chunks are grouped in blocks of
//! 16,384 ids, one row per (index, block, token) and one of the chunks'
//! sizes per (index, block) (the format: migration 0009; the block size:
//! 0011). The writer marks
//! a block stale when it inserts a chunk there, triggers when a chunk is
//! deleted or updated; `settle` rebuilds the stale blocks before the write
//! commits, in the same transaction, so the table never disagrees with a
//! committed index (a block that lost chunks or gained newer ones is patched
//! instead: `patch`). A bulk ingest leaves the block it is filling until it
//! ends. A reader that finds any block stale (a writer's open transaction,
//! an ingest stopped halfway) asks FTS5 instead.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, params};

mod build;
mod patch;

use super::FtsIndex;
use super::terms::Scored;
use super::tokens::{Purpose, Tokenizer, Tokens};
use build::BlockLists;
pub use build::{Builder, ChunkText};

/// Chunk ids per block: `id >> BLOCK_BITS` (also in migration 0011's triggers).
/// A phrase's lists take one index seek per block, which at a million
/// chunks in blocks of 4,096 ids was most of a one-shot ask's reads. An
/// edited file's blocks are patched, not rebuilt (`patch`), so a larger
/// block costs an edit little; a block is still rebuilt whole when a chunk
/// is updated in place, and built whole in memory by a bulk ingest.
pub const BLOCK_BITS: u32 = 14;

/// FTS5's BM25 constants (`fts5Bm25Function`).
const K1: f64 = 1.2;
const B: f64 = 0.75;

impl FtsIndex {
    /// The index's number in the `postings` table.
    fn code(self) -> i64 {
        match self {
            FtsIndex::Words => 0,
            FtsIndex::Trigrams => 1,
        }
    }
}

/// What FTS5's BM25 takes from the whole index and the query.
#[derive(Debug, Clone, Copy)]
pub struct Bm25 {
    /// Rows (chunks) the index holds, and their tokens in all.
    pub rows: i64,
    pub tokens: i64,
    /// The heading column's weight against the text's 1.
    pub heading_weight: f64,
}

/// A phrase's rows of the table as stored, read once: its token's list in
/// each block, or (a prefix phrase) the lists of every token starting so.
/// A common word's are a few MB at a million chunks (2–3 bytes an entry):
/// counting it and scoring it read these, not the database again.
#[derive(Debug)]
pub struct Lists {
    prefix: bool,
    /// (block, list), in block order.
    rows: Vec<(i64, Vec<u8>)>,
    /// How many chunks they hold, once counted.
    chunks: OnceLock<i64>,
}

/// The lists of `phrase` (a query's `"word"` or `"word"*`) in `index`, or
/// `None` when the table cannot answer: a block is stale, or the phrase is
/// not one token (FTS5 matches those as phrases of adjacent tokens).
pub fn lists(conn: &Connection, index: FtsIndex, phrase: &str) -> Result<Option<Lists>> {
    let Some((inner, prefix)) = phrase.strip_prefix('"').and_then(|p| match p.strip_suffix("\"*") {
        Some(inner) => Some((inner, true)),
        None => p.strip_suffix('"').map(|inner| (inner, false)),
    }) else {
        return Ok(None);
    };
    if inner.contains('"') || any_stale(conn)? {
        return Ok(None);
    }
    let mut tokens = Tokens::default();
    Tokenizer::new(conn, index)?.tokenize(inner, Purpose::Query { prefix }, &mut tokens)?;
    let Some(token) = tokens.iter().next().filter(|_| tokens.len() == 1) else { return Ok(None) };
    // A prefix phrase: every token from these bytes up to them followed by
    // 0xFF, which no UTF-8 holds, so they all sort below it.
    let mut past = token.to_vec();
    past.push(if prefix { 0xFF } else { 0x00 });
    let mut stmt = conn.prepare_cached("SELECT data FROM postings WHERE idx = ?1 AND block = ?2 AND term >= ?3 AND term < ?4")?;
    let mut rows = Vec::new();
    for b in 0..=last_block(conn, index)? {
        let mut found = stmt.query(params![index.code(), b, token, past])?;
        while let Some(r) = found.next()? {
            rows.push((b, r.get::<_, Vec<u8>>(0)?));
        }
    }
    Ok(Some(Lists { prefix, rows, chunks: OnceLock::new() }))
}

impl Lists {
    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.rows.iter().map(|(_, data)| data.len() + 16).sum()
    }

    /// How many chunks hold the phrase.
    pub fn count(&self) -> Result<i64> {
        if let Some(&n) = self.chunks.get() {
            return Ok(n);
        }
        let mut n = 0;
        self.each_chunk(|_, _| {
            n += 1;
            Ok(())
        })?;
        Ok(*self.chunks.get_or_init(|| n))
    }

    /// FTS5's BM25 of the phrase alone for each chunk holding it, in id
    /// order, higher is better.
    pub fn scores(&self, conn: &Connection, index: FtsIndex, bm25: Bm25, sizes: &mut Sizes) -> Result<Scored> {
        let chunks = self.count()?;
        let (n, rows) = (chunks as f64, bm25.rows as f64);
        let idf = ((rows - n + 0.5) / (n + 0.5)).ln();
        // FTS5 floors a phrase in half the rows or more.
        let idf = if idf <= 0.0 { 1e-6 } else { idf };
        let avgdl = bm25.tokens as f64 / rows;
        let capacity = usize::try_from(chunks).unwrap_or(0);
        let mut out = Scored { ids: Vec::with_capacity(capacity), scores: Vec::with_capacity(capacity) };
        let mut block: (i64, Arc<[u32]>) = (-1, Arc::from([]));
        self.each_chunk(|id, [head, body]| {
            let b = id >> BLOCK_BITS;
            if block.0 != b {
                block = (b, sizes.of_block(conn, index, b)?);
            }
            let size = f64::from(block.1[(id - (b << BLOCK_BITS)) as usize]);
            let f = bm25.heading_weight * f64::from(head) + f64::from(body);
            out.ids.push(id);
            out.scores.push(idf * (f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * size / avgdl)));
            Ok(())
        })?;
        Ok(out)
    }

    /// Each chunk holding the phrase, in id order, with its counts in the heading and the text.
    fn each_chunk(&self, mut entry: impl FnMut(i64, [u32; 2]) -> Result<()>) -> Result<()> {
        if !self.prefix {
            // One token: a list per block, its entries in id order.
            for (b, data) in &self.rows {
                decode(*b, data, &mut entry)?;
            }
            return Ok(());
        }
        // Several tokens' lists a block: their counts summed per chunk.
        let mut counts: Vec<Option<[u32; 2]>> = vec![None; 1 << BLOCK_BITS];
        let mut at = 0;
        while let Some(&(b, _)) = self.rows.get(at) {
            let base = b << BLOCK_BITS;
            while let Some((_, data)) = self.rows.get(at).filter(|(rb, _)| *rb == b) {
                decode(b, data, |id, [head, body]| {
                    let c = counts[(id - base) as usize].get_or_insert([0, 0]);
                    c[0] += head;
                    c[1] += body;
                    Ok(())
                })?;
                at += 1;
            }
            for (i, c) in counts.iter_mut().enumerate() {
                if let Some(c) = c.take() {
                    entry(base + i as i64, c)?;
                }
            }
        }
        Ok(())
    }
}

/// Chunks' sizes in tokens, per block as read from its size list (the
/// row of the empty token), for one state of the index.
#[derive(Debug, Default)]
pub struct Sizes(HashMap<(FtsIndex, i64), Arc<[u32]>>);

impl Sizes {
    /// Block `b`'s sizes, by the chunk's place in the block.
    fn of_block(&mut self, conn: &Connection, index: FtsIndex, b: i64) -> Result<Arc<[u32]>> {
        if let Some(sizes) = self.0.get(&(index, b)) {
            return Ok(sizes.clone());
        }
        let sizes: Arc<[u32]> = read_sizes(conn, index, b)?.into();
        self.0.insert((index, b), sizes.clone());
        Ok(sizes)
    }
}

/// Block `b`'s size list, by the chunk's place in the block.
fn read_sizes(conn: &Connection, index: FtsIndex, b: i64) -> Result<Vec<u32>> {
    let data = size_row(conn, index, b)?.ok_or_else(damaged)?;
    let mut sizes = vec![0; 1 << BLOCK_BITS];
    each_size(&data, |place, size| {
        *sizes.get_mut(place).ok_or_else(damaged)? = size as u32;
        Ok(())
    })?;
    Ok(sizes)
}

/// Block `b`'s size list in `index` as stored (the empty token's row), if it has one.
fn size_row(conn: &Connection, index: FtsIndex, b: i64) -> Result<Option<Vec<u8>>> {
    let mut stmt = conn.prepare_cached("SELECT data FROM postings WHERE idx = ?1 AND block = ?2 AND term = x''")?;
    Ok(stmt.query_row(params![index.code(), b], |r| r.get(0)).optional()?)
}

/// The last block `index` has postings in (-1: none).
fn last_block(conn: &Connection, index: FtsIndex) -> Result<i64> {
    let sql = "SELECT coalesce(max(block), -1) FROM postings WHERE idx = ?1";
    Ok(conn.prepare_cached(sql)?.query_row([index.code()], |r| r.get(0))?)
}

fn damaged() -> anyhow::Error {
    anyhow::anyhow!("a postings list of the index is damaged: run `kebab ingest --force`")
}

/// Each entry of a block's list: (chunk id, counts in the heading and the text).
fn decode(block: i64, data: &[u8], mut entry: impl FnMut(i64, [u32; 2]) -> Result<()>) -> Result<()> {
    let (mut at, mut id) = (0, block << BLOCK_BITS);
    while at < data.len() {
        // The distance from the last id, doubled, plus one if the heading
        // holds the token; the count in the text; the count in the heading if any.
        let step = varint(data, &mut at).ok_or_else(damaged)?;
        let body = varint(data, &mut at).ok_or_else(damaged)?;
        let head = if step & 1 == 1 { varint(data, &mut at).ok_or_else(damaged)? } else { 0 };
        id += (step >> 1) as i64;
        entry(id, [head as u32, body as u32])?;
    }
    Ok(())
}

/// Appends chunk `id`'s entry as `decode` reads it; `last` is the id of the
/// list's entry before it, or the block's first id.
fn put_entry(out: &mut Vec<u8>, last: i64, id: i64, [head, body]: [u32; 2]) {
    put_varint(out, ((id - last) as u64) << 1 | u64::from(head > 0));
    put_varint(out, u64::from(body));
    if head > 0 {
        put_varint(out, u64::from(head));
    }
}

/// Each (place in the block, size in tokens) of a size list.
fn each_size(data: &[u8], mut entry: impl FnMut(usize, u64) -> Result<()>) -> Result<()> {
    let (mut at, mut place) = (0, 0);
    while at < data.len() {
        place += varint(data, &mut at).ok_or_else(damaged)? as usize;
        entry(place, varint(data, &mut at).ok_or_else(damaged)?)?;
    }
    Ok(())
}

/// Appends a chunk's size as `each_size` reads it: its place's distance
/// from the last one sized (the first from the block's start), then the size.
fn put_size(out: &mut Vec<u8>, step: u64, size: u64) {
    put_varint(out, step);
    put_varint(out, size);
}

/// Marks the block of a chunk just inserted for `settle` to rebuild.
pub fn mark_stale(conn: &Connection, chunk_id: i64) -> Result<()> {
    conn.prepare_cached("INSERT OR IGNORE INTO postings_stale(block) VALUES (?1)")?.execute([chunk_id >> BLOCK_BITS])?;
    Ok(())
}

/// How many blocks wait for `settle`.
pub fn stale_blocks(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("SELECT count(*) FROM postings_stale", [], |r| r.get(0))?)
}

fn any_stale(conn: &Connection) -> Result<bool> {
    Ok(conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM postings_stale)")?.query_row([], |r| r.get(0))?)
}

/// Which stale blocks `settle` rebuilds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settle {
    All,
    /// All but the block of the newest chunk, which a bulk ingest's next
    /// batch goes on filling: rebuilt once, when the ingest ends.
    Full,
}

/// Rebuilds the postings of the stale blocks from the chunks they hold now.
/// Called inside the transaction that wrote the chunks, before it commits.
///
/// A block `building` built as its chunks were written is taken as it is
/// when it holds exactly the chunks the block holds. A block that lost
/// chunks or gained newer ones is patched from its stored lists (`patch`).
/// The others are read back: a second thread tokenizes each block while this
/// one writes the lists of the block before.
pub fn settle(conn: &Connection, which: Settle, building: Option<&Builder>) -> Result<()> {
    let newest: i64 = conn.query_row("SELECT coalesce(max(id), 0) FROM chunks", [], |r| r.get(0))?;
    let blocks: Vec<i64> = conn
        .prepare_cached("SELECT block FROM postings_stale ORDER BY block")?
        .query_map([], |r| r.get(0))?
        .filter(|b| which == Settle::All || b.as_ref().is_ok_and(|&b| b != newest >> BLOCK_BITS))
        .collect::<rusqlite::Result<_>>()?;
    if blocks.is_empty() {
        return Ok(());
    }
    let mut built = match building {
        Some(b) => b.take(which, newest >> BLOCK_BITS)?,
        None => Default::default(),
    };
    let mut ids = conn.prepare_cached("SELECT id FROM chunks WHERE id >= ?1 AND id < ?2 ORDER BY id")?;
    let mut changed_in_place = conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM postings_rebuild WHERE block = ?1)")?;
    let mut write = Writer::new(conn)?;
    let mut rebuild = Vec::new();
    for &b in &blocks {
        let holds: Vec<i64> = ids.query_map(params![b << BLOCK_BITS, (b + 1) << BLOCK_BITS], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        match built.remove(&b) {
            Some(block) if block.ids == holds => write.block(b, block.lists)?,
            _ if !changed_in_place.query_row([b], |r| r.get::<_, bool>(0))? && patch::patch(conn, b, &holds)? => {}
            _ => rebuild.push(b),
        }
    }
    rebuild_blocks(conn, &rebuild, &mut write)?;
    let mut done = conn.prepare_cached("DELETE FROM postings_stale WHERE block = ?1")?;
    let mut rebuilt = conn.prepare_cached("DELETE FROM postings_rebuild WHERE block = ?1")?;
    for b in blocks {
        done.execute([b]).context("settling the postings")?;
        rebuilt.execute([b])?;
    }
    Ok(())
}

/// Replaces a block's rows with its new lists.
struct Writer<'c> {
    clear: rusqlite::CachedStatement<'c>,
    insert: rusqlite::CachedStatement<'c>,
}

impl<'c> Writer<'c> {
    fn new(conn: &'c Connection) -> Result<Writer<'c>> {
        Ok(Writer {
            clear: conn.prepare_cached("DELETE FROM postings WHERE idx IN (0, 1) AND block = ?1")?,
            insert: conn.prepare_cached("INSERT INTO postings(idx, term, block, data) VALUES (?1, ?2, ?3, ?4)")?,
        })
    }

    fn block(&mut self, b: i64, lists: [BlockLists; 2]) -> Result<()> {
        self.clear.execute([b])?;
        for (index, lists) in [FtsIndex::Words, FtsIndex::Trigrams].into_iter().zip(lists) {
            if lists.sizes.is_empty() {
                continue;
            }
            self.insert.execute(params![index.code(), &[] as &[u8], b, lists.sizes])?;
            for list in lists.lists {
                self.insert.execute(params![index.code(), list.term, b, list.data])?;
            }
        }
        Ok(())
    }
}

/// The columns each index holds of the chunks with ids in `from..to`: every
/// chunk's heading context and text in the word index; the Hangul/CJK words
/// of those with any in the trigram index.
fn block_texts(conn: &Connection, from: i64, to: i64) -> Result<Vec<ChunkText>> {
    let mut chunks = conn.prepare_cached(
        "SELECT id, context, text, CASE WHEN has_cjk THEN coalesce(cjk_context, '') END, coalesce(cjk_text, '')
         FROM chunks WHERE id >= ?1 AND id < ?2 ORDER BY id",
    )?;
    let rows = chunks.query_map(params![from, to], |r| {
        let cjk = match r.get::<_, Option<String>>(3)? {
            Some(context) => Some([context, r.get(4)?]),
            None => None,
        };
        Ok(ChunkText { id: r.get(0)?, words: [r.get(1)?, r.get(2)?], cjk })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Builds `blocks` from the chunks they hold, read back from the table.
fn rebuild_blocks(conn: &Connection, blocks: &[i64], write: &mut Writer) -> Result<()> {
    let read = |b: i64| block_texts(conn, b << BLOCK_BITS, (b + 1) << BLOCK_BITS);
    std::thread::scope(|scope| -> Result<()> {
        let (to_helper, texts) = std::sync::mpsc::sync_channel::<(i64, Vec<ChunkText>)>(1);
        let (to_writer, built) = std::sync::mpsc::sync_channel::<Result<(i64, [BlockLists; 2])>>(1);
        scope.spawn(move || {
            let made = build::Tokenizers::new();
            for (b, chunks) in texts {
                let lists = made.as_ref().map_err(|e| anyhow::anyhow!("{e:#}")).and_then(|t| build::build(&t.both, b, &chunks));
                // The writer stopped (an error): stop too.
                if to_writer.send(lists.map(|l| (b, l))).is_err() {
                    break;
                }
            }
        });
        let mut pending = blocks.iter();
        if let Some(&b) = pending.next() {
            to_helper.send((b, read(b)?))?;
        }
        for _ in blocks {
            if let Some(&b) = pending.next() {
                to_helper.send((b, read(b)?))?;
            }
            let (b, lists) = built.recv().context("the postings thread stopped")??;
            write.block(b, lists)?;
        }
        Ok(())
    })
}

/// Every stale block (a migration's step).
pub fn settle_all(conn: &Connection) -> Result<()> {
    settle(conn, Settle::All, None)
}

/// LEB128: seven bits a byte, low first, the high bit on every byte but the last.
fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The LEB128 number at `at`, moving `at` past it.
#[inline]
fn varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use crate::store::write::tests::source_with_headings as notes;

    /// (heading, text): headings weigh apart in BM25.
    pub(super) const CHUNKS: &[(&str, &str)] = &[
        ("Borrowing", "The borrow checker runs before code generation; data flows."),
        ("", "Borrowed data, borrowed twice: borrowing rules keep references valid."),
        ("검색 기능", "검색은 색인에서 시작합니다. 검색을 다시 하면 검색어가 바뀝니다. data"),
        ("", "소유권은 러스트의 핵심 개념입니다. 소유권을 이해하면 검색도 쉽습니다."),
        ("Cargo", "Cargo builds the crate and its data."),
        ("", "A note with nothing in common but data."),
    ];

    /// Phrases as the query builder writes them: exact words, Korean
    /// prefixes, trigrams; one in most chunks.
    const PHRASES: &[(FtsIndex, &str)] = &[
        (FtsIndex::Words, "\"borrow\""),
        (FtsIndex::Words, "\"검색\"*"),
        (FtsIndex::Words, "\"검색은\""),
        (FtsIndex::Words, "\"data\""),
        (FtsIndex::Words, "\"cargo\""),
        (FtsIndex::Trigrams, "\"소유권\""),
        (FtsIndex::Trigrams, "\"검색은\""),
    ];

    /// The postings' scores and counts of every phrase are FTS5's own, chunk for chunk.
    pub(super) fn same_as_fts5(store: &Store) {
        for &(index, phrase) in PHRASES {
            for weight in [1.0, 2.5] {
                let got = store.phrase_scores(index, phrase, weight).unwrap().expect("the postings answer");
                let want = store.bm25(index, phrase, weight, None).unwrap();
                assert!(!want.is_empty(), "{phrase} matches something");
                assert_eq!(got.ids, want.iter().map(|w| w.0).collect::<Vec<_>>(), "{phrase}");
                // A chunk holding several tokens of a prefix is counted once.
                assert_eq!(store.docs_matching(index, phrase).unwrap(), want.len() as i64, "{phrase}: chunks counted");
                for (g, (id, w)) in got.scores.iter().zip(&want) {
                    assert!((g - w).abs() < 1e-9, "{phrase}, chunk {id}: {g} against FTS5's {w}");
                }
            }
        }
    }

    fn stale_blocks(store: &Store) -> i64 {
        store.conn.query_row("SELECT count(*) FROM postings_stale", [], |r| r.get(0)).unwrap()
    }

    #[test]
    fn scores_from_the_postings_are_fts5s_through_writes_across_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("k.db"), false).unwrap();
        let (root, _) = store.ensure_root(dir.path()).unwrap();
        // A bulk ingest's batch: the builder's thread makes the lists, taken as they are.
        store.begin_batch().unwrap();
        store.apply_source(&notes(root, "a.md", CHUNKS), false).unwrap();
        store.commit_batch().unwrap();
        store.settle_postings().unwrap();
        same_as_fts5(&store);
        // The next chunks take ids on both sides of a block's end.
        let next = (1 << BLOCK_BITS) - 3;
        store.conn.execute("UPDATE sqlite_sequence SET seq = ?1 WHERE name = 'chunks'", [next]).unwrap();
        store.apply_source(&notes(root, "b.md", CHUNKS), false).unwrap();
        let blocks: Vec<i64> = store.conn.prepare("SELECT DISTINCT block FROM postings ORDER BY block").unwrap()
            .query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
        assert_eq!(blocks, [0, 1]);
        same_as_fts5(&store);
        // A file changes (its chunks leave and come back with new ids), in a batch.
        let mut changed = CHUNKS.to_vec();
        changed[0] = ("Borrowing", "Nothing about it here.");
        store.begin_batch().unwrap();
        store.apply_source(&notes(root, "a.md", &changed), false).unwrap();
        assert!(stale_blocks(&store) > 0);
        assert!(store.phrase_scores(FtsIndex::Words, "\"borrow\"", 1.0).unwrap().is_none(), "stale: FTS5 answers");
        store.commit_batch().unwrap();
        assert_eq!(stale_blocks(&store), 1, "the newest chunk's block waits for the ingest's end");
        store.settle_postings().unwrap();
        assert_eq!(stale_blocks(&store), 0);
        same_as_fts5(&store);
        // A file leaves.
        let seen = ["a.md".to_string()].into_iter().collect();
        assert_eq!(store.prune(root, "", &seen).unwrap(), 1);
        same_as_fts5(&store);
    }

    #[test]
    fn a_phrase_of_several_tokens_is_left_to_fts5() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("k.db"), false).unwrap();
        let (root, _) = store.ensure_root(dir.path()).unwrap();
        store.apply_source(&notes(root, "a.md", CHUNKS), false).unwrap();
        assert!(store.phrase_scores(FtsIndex::Words, "\"borrow checker\"", 1.0).unwrap().is_none());
        assert!(store.phrase_scores(FtsIndex::Words, "borrow", 1.0).unwrap().is_none(), "not a quoted phrase");
        assert_eq!(store.docs_matching(FtsIndex::Words, "\"borrow checker\"").unwrap(), 1);
    }

    #[test]
    fn lists_read_back_as_written_and_a_damaged_one_says_what_to_do() {
        let mut data = Vec::new();
        // Chunk +5: twice in the text, once in the heading; chunk +7: once in the text.
        for v in [5 << 1 | 1, 2, 1, 2 << 1, 1] {
            put_varint(&mut data, v);
        }
        let mut got = Vec::new();
        decode(1, &data, |id, counts| {
            got.push((id, counts));
            Ok(())
        })
        .unwrap();
        let base = 1 << BLOCK_BITS;
        assert_eq!(got, [(base + 5, [1, 2]), (base + 7, [0, 1])]);
        data.push(0x80);
        let err = decode(1, &data, |_, _| Ok(())).unwrap_err();
        assert!(err.to_string().contains("kebab ingest --force"), "{err}");
    }
}
