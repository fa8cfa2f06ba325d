//! What the gate, the lexical ranking and the snippets ask of the full-text
//! indexes about a few chunks or one term, answered without walking the
//! whole index each time.
//!
//! * Each chunk's BM25 score for one phrase (the lexical search's word or
//!   trigram), and how many chunks hold it (the gate's IDF, and the words
//!   the lexical search leaves out as weighing nothing): from the postings
//!   kept beside FTS5 (`postings`), FTS5's formula exactly. FTS5 itself
//!   scores every row a query matches, about two microseconds a row, and
//!   keeps no document frequency. A phrase's scores are kept per process
//!   until the index changes: this connection's own writes to chunks clear
//!   them, and `PRAGMA data_version` says when another connection
//!   committed. When the postings cannot answer (stale blocks, a phrase of
//!   several tokens) FTS5 ranks and counts. How many rows an index holds,
//!   and their tokens, is one read of FTS5's own record of it.
//! * Which of a few chunks match an expression, and their snippets: asked of
//!   the whole index as `MATCH … AND rowid IN (…)`, FTS5 builds the full
//!   postings of a prefix query once per listed id (hundreds of milliseconds
//!   for a common Korean prefix). Instead the chunks' rows are copied into a
//!   small in-memory FTS5 table with the same columns and tokenizer, and the
//!   expression runs there: the same rows give the same matches and the same
//!   snippets (a snippet reads only its own row). The trigram index holds
//!   only a chunk's words with Hangul/CJK (migration 0008); its probe holds
//!   the whole text, where those words stand as they do in the index, so a
//!   chunk the index matches matches there too and its snippet shows the
//!   words around the match.

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::{Context, Result};
use rusqlite::OptionalExtension;

use super::postings::{self, Lists, Sizes};
use super::Store;

/// The most document counts kept; past it the cache starts over.
const MAX_CACHED_TERMS: usize = 20_000;

/// The most chunk scores kept over all phrases (16 bytes each): 64 MB.
/// Past it the scores cache starts over.
const MAX_CACHED_SCORES: usize = 4 << 20;

/// The most bytes of postings lists kept over all phrases (a word in every
/// one of a million chunks takes about 3 MB). Past it that cache starts over.
const MAX_CACHED_LIST_BYTES: usize = 64 << 20;

/// One of the two full-text indexes over chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FtsIndex {
    /// `chunks_fts`: words, Porter-stemmed.
    Words,
    /// `chunks_trigram`: trigrams of the chunks with Hangul/CJK.
    Trigrams,
}

impl FtsIndex {
    /// The index's FTS5 table.
    pub fn table(self) -> &'static str {
        match self {
            FtsIndex::Words => "chunks_fts",
            FtsIndex::Trigrams => "chunks_trigram",
        }
    }

    /// The in-memory probe table for this index (named bare: FTS5's MATCH
    /// and `snippet` take no schema prefix; no main table has the name), and
    /// how to create it: the columns and tokenizer of the index in `0001_init.sql`.
    fn probe(self) -> (&'static str, &'static str) {
        match self {
            FtsIndex::Words => (
                "probe_words",
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.probe_words USING fts5(
                     context, text, tokenize='porter unicode61 remove_diacritics 2')",
            ),
            FtsIndex::Trigrams => (
                "probe_trigram",
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.probe_trigram USING fts5(context, text, tokenize='trigram')",
            ),
        }
    }

    /// Which chunks the index holds (the trigram index only those with Hangul/CJK).
    fn rows_filter(self) -> &'static str {
        match self {
            FtsIndex::Words => "1",
            FtsIndex::Trigrams => "has_cjk",
        }
    }
}

/// Chunks with their BM25 scores for a MATCH expression, in chunk-id order.
#[derive(Debug)]
pub struct Scored {
    pub ids: Vec<i64>,
    pub scores: Vec<f64>,
}

/// Document counts and postings of phrases, valid for one state of the index.
#[derive(Debug, Default)]
pub(super) struct TermCache {
    /// `PRAGMA data_version` when they were read.
    version: Option<i64>,
    docs: HashMap<(FtsIndex, String), i64>,
    /// By index, phrase and heading weight (its bits).
    scores: HashMap<(FtsIndex, String, u64), Arc<Scored>>,
    /// Entries held in `scores`.
    held: usize,
    lists: HashMap<(FtsIndex, String), Arc<Lists>>,
    /// Bytes held in `lists`.
    list_bytes: usize,
    sizes: Sizes,
}

impl TermCache {
    /// Forgets everything: this connection changed the chunks.
    pub(super) fn clear(&mut self) {
        *self = TermCache::default();
    }

    /// Starts over when the index changed since `version`.
    fn at(&mut self, version: i64) -> &mut TermCache {
        if self.version != Some(version) {
            self.clear();
            self.version = Some(version);
        }
        self
    }
}

impl Store {
    /// How many chunks `index` finds for `expr` (an FTS5 MATCH
    /// expression), counted once per state of the index.
    pub fn docs_matching(&self, index: FtsIndex, expr: &str) -> Result<i64> {
        // Inside an open transaction the counts may include rows a rollback
        // takes back: not kept.
        if !self.conn.is_autocommit() {
            return self.count_uncached(index, expr);
        }
        let version = self.data_version()?;
        let key = (index, expr.to_string());
        {
            let mut cache = self.terms.borrow_mut();
            let cache = cache.at(version);
            if cache.docs.len() >= MAX_CACHED_TERMS {
                cache.docs.clear();
            }
            if let Some(&n) = cache.docs.get(&key) {
                return Ok(n);
            }
        }
        let n = self.count_uncached(index, expr)?;
        self.terms.borrow_mut().docs.insert(key, n);
        Ok(n)
    }

    /// Counted from the postings where they can answer (whose lists the
    /// phrase's scores then read again from memory), else by FTS5.
    fn count_uncached(&self, index: FtsIndex, expr: &str) -> Result<i64> {
        match self.lists(index, expr)? {
            Some(lists) => lists.count(),
            None => self.count_matching(index, expr),
        }
    }

    fn count_matching(&self, index: FtsIndex, expr: &str) -> Result<i64> {
        let table = index.table();
        self.conn
            .prepare_cached(&format!("SELECT count(*) FROM {table} WHERE {table} MATCH ?1"))?
            .query_row([expr], |r| r.get(0))
            .with_context(|| format!("counting the chunks that match {expr}"))
    }

    /// How many rows `index` holds, as its BM25 counts them: the first
    /// number of FTS5's "averages" record (row 1 of its `_data` table, a
    /// SQLite varint; FTS5's file format is stable). Counting the rows
    /// instead would read every chunk for the trigram index, whose rows are
    /// the chunks with Hangul/CJK.
    pub fn index_rows(&self, index: FtsIndex) -> Result<i64> {
        Ok(self.averages(index)?.0)
    }

    /// How many rows `index` holds and how many tokens they hold in all:
    /// FTS5's "averages" record, the row count then each column's tokens.
    fn averages(&self, index: FtsIndex) -> Result<(i64, i64)> {
        let sql = format!("SELECT block FROM {}_data WHERE id = 1", index.table());
        let block: Option<Vec<u8>> = self.conn.prepare_cached(&sql)?.query_row([], |r| r.get(0)).optional()?;
        // No record, or an empty one (a new table): no rows.
        let Some(block) = block.filter(|b| !b.is_empty()) else { return Ok((0, 0)) };
        let damaged = || format!("reading the row count of {}", index.table());
        let (rows, mut at) = read_varint(&block).with_context(damaged)?;
        let mut tokens = 0;
        // The index's two columns: heading context and text.
        for _ in 0..2 {
            let (n, used) = read_varint(&block[at..]).with_context(damaged)?;
            tokens += n;
            at += used;
        }
        Ok((rows as i64, tokens as i64))
    }

    /// BM25 for `expr` in `index`, higher is better, the title/heading
    /// column weighted `heading_weight` against the body's 1: the best
    /// `limit` (ties by chunk id), or with `None` every match in chunk-id order.
    pub fn bm25(&self, index: FtsIndex, expr: &str, heading_weight: f64, limit: Option<usize>) -> Result<Vec<(i64, f64)>> {
        let table = index.table();
        // FTS5's bm25 is negative, lower is better: negated here. FTS5 walks
        // its matches in rowid order, so `ORDER BY rowid` costs no sort.
        let order = if limit.is_some() { "score DESC, rowid" } else { "rowid" };
        let sql = format!(
            "SELECT rowid, -bm25({table}, ?1, 1.0) AS score FROM {table} WHERE {table} MATCH ?2 ORDER BY {order} LIMIT ?3"
        );
        // LIMIT -1: no limit.
        let limit = limit.map_or(-1, |n| n as i64);
        self.conn
            .prepare_cached(&sql)?
            .query_map(rusqlite::params![heading_weight, expr, limit], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .with_context(|| format!("searching {table}"))
    }

    /// The BM25 scores of `phrase` alone in `index`, FTS5's exactly, from
    /// the postings kept beside it, once per state of the index; `None`
    /// when those cannot answer (see `postings::lists`) and FTS5 must rank the phrase.
    pub fn phrase_scores(&self, index: FtsIndex, phrase: &str, heading_weight: f64) -> Result<Option<Arc<Scored>>> {
        let bm25 = |store: &Store| -> Result<postings::Bm25> {
            let (rows, tokens) = store.averages(index)?;
            Ok(postings::Bm25 { rows, tokens, heading_weight })
        };
        if !self.conn.is_autocommit() {
            let Some(lists) = self.lists(index, phrase)? else { return Ok(None) };
            return Ok(Some(Arc::new(lists.scores(&self.conn, index, bm25(self)?, &mut Sizes::default())?)));
        }
        let version = self.data_version()?;
        let key = (index, phrase.to_string(), heading_weight.to_bits());
        if let Some(s) = self.terms.borrow_mut().at(version).scores.get(&key) {
            return Ok(Some(s.clone()));
        }
        let Some(lists) = self.lists(index, phrase)? else { return Ok(None) };
        let bm25 = bm25(self)?;
        let mut cache = self.terms.borrow_mut();
        let cache = cache.at(version);
        let s = Arc::new(lists.scores(&self.conn, index, bm25, &mut cache.sizes)?);
        if cache.held + s.ids.len() > MAX_CACHED_SCORES {
            cache.scores.clear();
            cache.held = 0;
        }
        cache.held += s.ids.len();
        cache.scores.insert(key, s.clone());
        Ok(Some(s))
    }

    /// The postings lists of `phrase`, read once per state of the index
    /// (inside a transaction every time: a rollback may take rows back).
    fn lists(&self, index: FtsIndex, phrase: &str) -> Result<Option<Arc<Lists>>> {
        if !self.conn.is_autocommit() {
            return Ok(postings::lists(&self.conn, index, phrase)?.map(Arc::new));
        }
        let version = self.data_version()?;
        let key = (index, phrase.to_string());
        if let Some(l) = self.terms.borrow_mut().at(version).lists.get(&key) {
            return Ok(Some(l.clone()));
        }
        let Some(lists) = postings::lists(&self.conn, index, phrase)?.map(Arc::new) else { return Ok(None) };
        let mut cache = self.terms.borrow_mut();
        let cache = cache.at(version);
        if cache.list_bytes + lists.bytes() > MAX_CACHED_LIST_BYTES {
            cache.lists.clear();
            cache.list_bytes = 0;
        }
        cache.list_bytes += lists.bytes();
        cache.lists.insert(key, lists.clone());
        Ok(Some(lists))
    }

    /// For each expression, which of `ids` the word index matches for it.
    pub fn which_match(&self, exprs: &[String], ids: &[i64]) -> Result<Vec<Vec<i64>>> {
        let table = self.load_probe(FtsIndex::Words, ids)?;
        let sql = format!("SELECT rowid FROM {table} WHERE {table} MATCH ?1");
        let mut stmt = self.conn.prepare_cached(&sql)?;
        exprs
            .iter()
            .map(|e| Ok(stmt.query_map([e], |r| r.get(0))?.collect::<rusqlite::Result<Vec<i64>>>()?))
            .collect()
    }

    /// Snippets of `ids` for `expr` in `index`: up to 24 tokens of the text
    /// around the matches, matched terms between « and », gaps as ` … `.
    /// Chunks without a match have none.
    pub fn snippets(&self, index: FtsIndex, expr: &str, ids: &[i64]) -> Result<HashMap<i64, String>> {
        let table = self.load_probe(index, ids)?;
        let sql = format!("SELECT rowid, snippet({table}, 1, '«', '»', ' … ', 24) FROM {table} WHERE {table} MATCH ?1");
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map([expr], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Fills `index`'s probe table with exactly the rows of `ids` it holds,
    /// and returns the table's name.
    fn load_probe(&self, index: FtsIndex, ids: &[i64]) -> Result<&'static str> {
        let (table, create) = index.probe();
        // A temporary table is private to this connection and lives in
        // memory or a temp file: a read-only database can have one too.
        self.conn.execute_batch(create).context("creating a temporary full-text table")?;
        self.conn.execute(&format!("DELETE FROM {table}"), [])?;
        for batch in ids.chunks(200) {
            let marks = vec!["?"; batch.len()].join(",");
            let sql = format!(
                "INSERT INTO {table}(rowid, context, text)
                 SELECT id, context, text FROM chunks WHERE {} AND id IN ({marks})",
                index.rows_filter()
            );
            self.conn.prepare_cached(&sql)?.execute(rusqlite::params_from_iter(batch))?;
        }
        Ok(table)
    }
}

/// SQLite's variable-length integer: big-endian groups of 7 bits, the high
/// bit set on every byte but the last; a ninth byte gives all its 8 bits.
/// Returns the number and the bytes it took.
fn read_varint(bytes: &[u8]) -> Result<(u64, usize)> {
    let mut v: u64 = 0;
    for (i, &b) in bytes.iter().take(9).enumerate() {
        if i == 8 {
            return Ok(((v << 8) | u64::from(b), 9));
        }
        v = (v << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            return Ok((v, i + 1));
        }
    }
    anyhow::bail!("the record ends inside a number")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::write::tests::source;

    const TEXTS: &[&str] = &[
        "The borrow checker runs before code generation.",
        "Borrowing rules keep references valid.",
        "소유권은 러스트의 핵심 개념입니다.",
        "소유자가 범위를 벗어나면 값이 해제됩니다.",
        "Cargo builds the crate.",
    ];

    fn store_with(dir: &std::path::Path) -> (Store, i64) {
        let mut store = Store::open(&dir.join("k.db"), false).unwrap();
        let (root, _) = store.ensure_root(dir).unwrap();
        store.apply_source(&source(root, "a.md", TEXTS), false).unwrap();
        (store, root)
    }

    fn ids(store: &Store) -> Vec<i64> {
        let mut stmt = store.conn.prepare("SELECT id FROM chunks ORDER BY id").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().collect::<rusqlite::Result<_>>().unwrap()
    }

    /// The whole index's answer: which of `among` match `expr`, and their snippets.
    fn in_index(store: &Store, table: &str, expr: &str, among: &[i64]) -> HashMap<i64, String> {
        let sql = format!("SELECT rowid, snippet({table}, 1, '«', '»', ' … ', 24) FROM {table} WHERE {table} MATCH ?1");
        let mut stmt = store.conn.prepare(&sql).unwrap();
        let rows = stmt.query_map([expr], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))).unwrap();
        rows.map(Result::unwrap).filter(|(id, _)| among.contains(id)).collect()
    }

    #[test]
    fn probing_a_few_chunks_matches_and_cuts_snippets_as_the_whole_index_does() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = store_with(dir.path());
        let all = ids(&store);
        let among = [all[0], all[2], all[3], all[4]];
        for expr in ["\"borrow\"", "\"소유\"*", "\"cargo\" OR \"borrow\"", "\"absent\""] {
            let want = in_index(&store, "chunks_fts", expr, &among);
            assert_eq!(store.snippets(FtsIndex::Words, expr, &among).unwrap(), want, "{expr}");
            let mut matched: Vec<i64> = want.keys().copied().collect();
            matched.sort();
            let mut got = store.which_match(&[expr.to_string()], &among).unwrap().remove(0);
            got.sort();
            assert_eq!(got, matched, "{expr}");
        }
        // The first expression matches chunk 0 only; the probe holds no chunk outside `among`.
        assert_eq!(store.which_match(&["\"borrow\"".to_string()], &among).unwrap(), vec![vec![all[0]]]);
        // The trigram index holds only Hangul words; its snippets are cut
        // from the chunks' own text, punctuation and all.
        let tri = "\"소유권\" OR \"범위를\"";
        let probed = store.snippets(FtsIndex::Trigrams, tri, &among).unwrap();
        let mut matched: Vec<i64> = in_index(&store, "chunks_trigram", tri, &among).into_keys().collect();
        matched.sort();
        assert_eq!(matched, vec![all[2], all[3]]);
        let mut got: Vec<i64> = probed.keys().copied().collect();
        got.sort();
        assert_eq!(got, matched);
        assert_eq!(probed[&all[2]], "«소유권»은 러스트의 핵심 개념입니다.");
    }

    #[test]
    fn document_counts_follow_writes_of_this_and_other_connections() {
        let dir = tempfile::tempdir().unwrap();
        let (mut store, root) = store_with(dir.path());
        assert_eq!(store.docs_matching(FtsIndex::Words, "\"borrow\"").unwrap(), 2);
        assert_eq!(store.docs_matching(FtsIndex::Words, "\"소유\"*").unwrap(), 2);
        // This connection writes: the count is read again.
        store.apply_source(&source(root, "b.md", &["Another borrow."]), false).unwrap();
        assert_eq!(store.docs_matching(FtsIndex::Words, "\"borrow\"").unwrap(), 3);
        // Another connection writes: data_version tells.
        let other = Store::open(&dir.path().join("k.db"), false);
        other.unwrap().apply_source(&source(root, "c.md", &["Borrow once more.", "소유권"]), false).unwrap();
        assert_eq!(store.docs_matching(FtsIndex::Words, "\"borrow\"").unwrap(), 4);
        assert_eq!(store.docs_matching(FtsIndex::Words, "\"소유\"*").unwrap(), 3);
    }

    #[test]
    fn index_rows_are_what_each_index_holds() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("k.db"), false).unwrap();
        assert_eq!(store.index_rows(FtsIndex::Words).unwrap(), 0);
        let (root, _) = store.ensure_root(dir.path()).unwrap();
        store.apply_source(&source(root, "a.md", TEXTS), false).unwrap();
        let count = |store: &Store, sql: &str| -> i64 { store.conn.query_row(sql, [], |r| r.get(0)).unwrap() };
        assert_eq!(store.index_rows(FtsIndex::Words).unwrap(), count(&store, "SELECT count(*) FROM chunks"));
        assert_eq!(store.index_rows(FtsIndex::Trigrams).unwrap(), count(&store, "SELECT count(*) FROM chunks WHERE has_cjk"));
        assert_eq!(store.index_rows(FtsIndex::Trigrams).unwrap(), 2);
        // Past 127 the count takes two bytes.
        let many: Vec<String> = (0..300).map(|i| format!("Note number {i} about borrowing.")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        store.apply_source(&source(root, "b.md", &many), false).unwrap();
        assert_eq!(store.index_rows(FtsIndex::Words).unwrap(), count(&store, "SELECT count(*) FROM chunks"));
        assert!(store.index_rows(FtsIndex::Words).unwrap() > 127);
        // `chunk_count` reads the word index's record, and counts the table
        // inside a batch, where FTS5 has not written its record yet.
        store.begin_batch().unwrap();
        store.apply_source(&source(root, "c.md", &["One more note."]), false).unwrap();
        assert_eq!(store.chunk_count().unwrap(), count(&store, "SELECT count(*) FROM chunks"));
        store.commit_batch().unwrap();
        let seen = ["a.md".to_string(), "c.md".to_string()].into_iter().collect();
        assert_eq!(store.prune(root, "", &seen).unwrap(), 1);
        assert_eq!(store.chunk_count().unwrap(), count(&store, "SELECT count(*) FROM chunks"));
        assert_eq!(store.chunk_count().unwrap(), TEXTS.len() as i64 + 1);
    }

    #[test]
    fn varints_read_as_sqlite_writes_them() {
        assert_eq!(read_varint(&[0x05]).unwrap(), (5, 1));
        assert_eq!(read_varint(&[0x81, 0x00]).unwrap(), (128, 2));
        assert_eq!(read_varint(&[0x86, 0x93, 0x17, 0x99]).unwrap(), (100_759, 3));
        assert_eq!(read_varint(&[0xff; 9]).unwrap(), (u64::MAX, 9));
        assert!(read_varint(&[0x81]).is_err());
    }

    #[test]
    fn a_readonly_store_probes_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = store_with(dir.path());
        let all = ids(&store);
        drop(store);
        let ro = Store::open(&dir.path().join("k.db"), true).unwrap();
        assert_eq!(ro.which_match(&["\"cargo\"".to_string()], &all).unwrap(), vec![vec![all[4]]]);
        assert_eq!(ro.docs_matching(FtsIndex::Words, "\"cargo\"").unwrap(), 1);
    }
}
