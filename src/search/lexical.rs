//! Lexical retrieval: BM25 over the word index, plus the trigram index for
//! Hangul/CJK, fused into one ranking.
//!
//! Each index ranks by BM25 summed over the query's phrases, each phrase's
//! scores from the postings the store keeps beside FTS5 (FTS5's BM25
//! exactly), FTS5 scoring any phrase those cannot answer (see
//! `store::terms`). A phrase in half an index's chunks or more weighs
//! nothing in BM25 and is left out (`rank`).
//!
//! The two indexes' BM25 values are summed per chunk: each is a BM25 over a
//! different cut of the same text (words, trigrams), so a chunk that matches
//! both ways ranks above one that matches one way — measured on KorQuAD
//! against reciprocal-rank fusion (see README, Evaluation).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use serde::Serialize;

use super::best::Best;
use super::query::{self, LexicalQuery};
use super::{Citation, Retrieval, SearchHit};
use crate::store::{FtsIndex, Scored, Store};

/// What `--trace` shows for a lexical search.
#[derive(Debug, Clone, Serialize)]
pub struct Trace {
    pub word_match: Option<String>,
    pub trigram_match: Option<String>,
    pub word_candidates: usize,
    pub trigram_candidates: usize,
    /// Phrases in half an index's chunks or more, left out (see `rank`).
    pub weightless: Vec<String>,
    pub timings_ms: Timings,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Timings {
    pub word_index: f64,
    pub trigram_index: f64,
    pub load_chunks: f64,
    pub total: f64,
}

/// How to search.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Hits wanted.
    pub k: usize,
    /// BM25 weight of the title/heading column relative to the body.
    pub heading_weight: f64,
    /// Cut snippets for the hits (evaluation does not need them).
    pub snippets: bool,
}

struct Candidate {
    chunk_id: i64,
    score: f64,
    /// Which index found it first: the one its snippet is cut from.
    index: FtsIndex,
}

/// The `k` best chunks for `text`, best first.
pub fn search(store: &Store, text: &str, opts: Options) -> Result<(Vec<SearchHit>, Trace)> {
    let k = opts.k;
    let started = Instant::now();
    let q: LexicalQuery = query::build(text);
    let mut timings = Timings::default();
    // Fusion needs more than k from each index: a chunk at rank k+5 in both
    // can beat one at rank 1 in only one.
    let pool = if !q.words.is_empty() && !q.trigram.is_empty() { (k * 3).max(30) } else { k };

    let t = Instant::now();
    let (word, mut weightless) = rank(store, &q, FtsIndex::Words, pool, opts.heading_weight)?;
    timings.word_index = ms(t);
    let t = Instant::now();
    let (tri, left_out) = rank(store, &q, FtsIndex::Trigrams, pool, opts.heading_weight)?;
    weightless.extend(left_out);
    timings.trigram_index = ms(t);
    let trace_counts = (word.len(), tri.len());

    let mut fused: HashMap<i64, Candidate> = HashMap::new();
    for c in word.into_iter().chain(tri) {
        match fused.get_mut(&c.chunk_id) {
            Some(have) => have.score += c.score,
            None => {
                fused.insert(c.chunk_id, c);
            }
        }
    }
    let mut ranked: Vec<Candidate> = fused.into_values().collect();
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.chunk_id.cmp(&b.chunk_id)));
    ranked.truncate(k);

    let t = Instant::now();
    let ids: Vec<i64> = ranked.iter().map(|c| c.chunk_id).collect();
    let mut rows: HashMap<i64, _> = store.chunks_by_ids(&ids)?.into_iter().map(|r| (r.chunk_id, r)).collect();
    // Snippets only for the hits kept: cutting one re-reads the chunk's text.
    let mut snippets = HashMap::new();
    for index in [FtsIndex::Words, FtsIndex::Trigrams] {
        let ids: Vec<i64> = ranked.iter().filter(|c| index == c.index).map(|c| c.chunk_id).collect();
        if let (Some(expr), false, true) = (q.expr(index), ids.is_empty(), opts.snippets) {
            snippets.extend(store.snippets(index, &expr, &ids)?);
        }
    }
    timings.load_chunks = ms(t);

    let mut hits = Vec::with_capacity(ranked.len());
    for c in ranked {
        // A chunk deleted between the index read and this one is skipped.
        let Some(row) = rows.remove(&c.chunk_id) else { continue };
        let rank = hits.len() + 1;
        let section = if row.heading_path.is_empty() { None } else { Some(row.heading_path.join(" > ")) };
        hits.push(SearchHit {
            schema_version: "search_hit.v1",
            rank,
            score: c.score,
            score_kind: "bm25",
            chunk_id: row.chunk_id,
            doc_id: row.doc_id,
            doc_path: row.doc_path.clone(),
            heading_path: row.heading_path,
            snippet: snippets.remove(&c.chunk_id).unwrap_or_default(),
            citation: Citation::of_chunk(row.doc_path, row.line_start, row.line_end, section),
            retrieval: Retrieval {
                method: "lexical",
                lexical_score: Some(c.score),
                lexical_rank: Some(rank),
                ..Retrieval::default()
            },
            indexed_at: row.indexed_at,
            external_id: row.external_id,
        });
    }
    timings.total = ms(started);
    let trace = Trace {
        word_match: q.expr(FtsIndex::Words),
        trigram_match: q.expr(FtsIndex::Trigrams),
        word_candidates: trace_counts.0,
        trigram_candidates: trace_counts.1,
        weightless,
        timings_ms: timings,
    };
    Ok((hits, trace))
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// One index's top `limit` for `q`, best first (ties by chunk id).
///
/// A phrase in half the index's rows or more weighs nothing: FTS5's BM25
/// floors its IDF, log((N − n + ½) / (n + ½)) ≤ 0, at 10⁻⁶. Yet scoring
/// every row it matches is most of what a query with a common word costs
/// (about a microsecond a row). So such phrases are left out while another
/// phrase remains, as long as the others still find `limit` chunks (not
/// tried when their counts add up to fewer); the scores then lack parts
/// below 10⁻⁵ each. Returns the phrases left out too.
fn rank(store: &Store, q: &LexicalQuery, index: FtsIndex, limit: usize, heading_weight: f64) -> Result<(Vec<Candidate>, Vec<String>)> {
    let phrases: Vec<&str> = q.phrases(index).iter().map(String::as_str).collect();
    if phrases.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let rows = store.index_rows(index)?;
    let (mut weighty, mut reach) = (Vec::new(), 0);
    for &p in &phrases {
        let docs = store.docs_matching(index, p)?;
        if 2 * docs < rows {
            weighty.push(p);
            reach += docs;
        }
    }
    if !weighty.is_empty() && weighty.len() < phrases.len() && reach >= limit as i64 {
        let top = rank_phrases(store, index, &weighty, limit, heading_weight)?;
        if top.len() >= limit {
            let left_out = phrases.iter().filter(|p| !weighty.contains(p)).map(|p| p.to_string()).collect();
            return Ok((top, left_out));
        }
    }
    Ok((rank_phrases(store, index, &phrases, limit, heading_weight)?, Vec::new()))
}

/// The top `limit` for `phrases` ORed. BM25 is a sum over phrases, each
/// part from the whole index: each phrase's scores from the postings kept
/// beside FTS5, plus FTS5's for any those cannot answer, give FTS5's ranking.
fn rank_phrases(store: &Store, index: FtsIndex, phrases: &[&str], limit: usize, heading_weight: f64) -> Result<Vec<Candidate>> {
    let candidate = |(chunk_id, score)| Candidate { chunk_id, score, index };
    let mut lists: Vec<Arc<Scored>> = Vec::new();
    let mut rest: Vec<&str> = Vec::new();
    for &p in phrases {
        match store.phrase_scores(index, p, heading_weight)? {
            Some(s) => lists.push(s),
            None => rest.push(p),
        }
    }
    if lists.is_empty() {
        // FTS5 ranks the whole query and stops at `limit`.
        let top = store.bm25(index, &phrases.join(" OR "), heading_weight, Some(limit))?;
        return Ok(top.into_iter().map(candidate).collect());
    }
    if !rest.is_empty() {
        // Every chunk the others match: a phrase from the postings may lift any of them.
        let (ids, scores) = store.bm25(index, &rest.join(" OR "), heading_weight, None)?.into_iter().unzip();
        lists.push(Arc::new(Scored { ids, scores }));
    }
    Ok(top_by_chunk(&lists, limit).into_iter().map(candidate).collect())
}

/// The `limit` chunks of `lists` (each in chunk-id order) with the highest
/// sum of scores, best first, ties by chunk id. A common word's list holds
/// most chunks: the sums are made a span of ids at a time in a dense array
/// (each list adding its part in list order, as a sum per chunk would), and
/// only the best `limit` are kept.
fn top_by_chunk(lists: &[Arc<Scored>], limit: usize) -> Vec<(i64, f64)> {
    /// Ids summed at a time: 32 KB of sums, which stay in the cache.
    const SPAN: i64 = 1 << 12;
    let mut best = Best::new(limit);
    let mut at = vec![0; lists.len()];
    let (mut sums, mut held) = (vec![0.0; SPAN as usize], vec![false; SPAN as usize]);
    let mut touched: Vec<usize> = Vec::new();
    while let Some(&first) = lists.iter().zip(&at).filter_map(|(l, &i)| l.ids.get(i)).min() {
        let start = first.div_euclid(SPAN) * SPAN;
        for (l, i) in lists.iter().zip(at.iter_mut()) {
            while let Some(&id) = l.ids.get(*i).filter(|&&id| id < start + SPAN) {
                let slot = (id - start) as usize;
                if !held[slot] {
                    held[slot] = true;
                    touched.push(slot);
                }
                sums[slot] += l.scores[*i];
                *i += 1;
            }
        }
        for slot in touched.drain(..) {
            best.offer(sums[slot], start + slot as i64);
            (sums[slot], held[slot]) = (0.0, false);
        }
    }
    best.into_sorted().into_iter().map(|(score, id)| (id, score)).collect()
}

/// Snippets for hits another channel found: cut around the query's words
/// where the chunk has them, else the chunk's opening words.
pub fn fill_snippets(store: &Store, text: &str, hits: &mut [SearchHit]) -> Result<()> {
    let q = query::build(text);
    for index in [FtsIndex::Words, FtsIndex::Trigrams] {
        let ids: Vec<i64> = hits.iter().filter(|h| h.snippet.is_empty()).map(|h| h.chunk_id).collect();
        if let (Some(expr), false) = (q.expr(index), ids.is_empty()) {
            let mut found = store.snippets(index, &expr, &ids)?;
            for h in hits.iter_mut().filter(|h| h.snippet.is_empty()) {
                h.snippet = found.remove(&h.chunk_id).unwrap_or_default();
            }
        }
    }
    let ids: Vec<i64> = hits.iter().filter(|h| h.snippet.is_empty()).map(|h| h.chunk_id).collect();
    if !ids.is_empty() {
        let mut rows: HashMap<i64, String> = store.chunks_by_ids(&ids)?.into_iter().map(|r| (r.chunk_id, r.text)).collect();
        for h in hits.iter_mut().filter(|h| h.snippet.is_empty()) {
            let text = rows.remove(&h.chunk_id).unwrap_or_default();
            let words: Vec<&str> = text.split_whitespace().take(24).collect();
            let more = text.split_whitespace().nth(24).is_some();
            h.snippet = format!("{}{}", words.join(" "), if more { " …" } else { "" });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_source as source;

    /// Chunks where "data" is nearly everywhere, "index" often, the others rarely,
    /// with lengths and repeats that give each chunk its own score.
    fn store_with(dir: &std::path::Path) -> Store {
        let mut store = Store::open(&dir.join("k.db"), false).unwrap();
        let (root, _) = store.ensure_root(dir).unwrap();
        let texts: Vec<String> = (0..60)
            .map(|i| {
                let mut t = String::from("data ");
                t.push_str(&"index ".repeat(i % 4));
                if i % 7 == 0 {
                    t.push_str("archive cluster ");
                }
                if i % 11 == 0 {
                    t.push_str("검색은 색인 ");
                }
                t.push_str(&"filler words here ".repeat(i % 5 + 1));
                t
            })
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        store.apply_source(&source(root, "a.md", &refs), false).unwrap();
        store
    }

    fn ranked(store: &Store, text: &str) -> Vec<(i64, f64)> {
        let opts = Options { k: 20, heading_weight: 2.0, snippets: false };
        search(store, text, opts).unwrap().0.into_iter().map(|h| (h.chunk_id, h.score)).collect()
    }

    fn same(a: &[(i64, f64)], b: &[(i64, f64)]) {
        assert_eq!(a.iter().map(|h| h.0).collect::<Vec<_>>(), b.iter().map(|h| h.0).collect::<Vec<_>>());
        for (x, y) in a.iter().zip(b) {
            assert!((x.1 - y.1).abs() < 1e-9, "{x:?} vs {y:?}");
        }
    }

    #[test]
    fn the_postings_rank_as_fts5_does() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_with(dir.path());
        // "archive" and "검색" find 15 chunks, fewer than 20: the whole query is ranked.
        let query = "data index archive 검색";
        let fts5 = store.bm25(FtsIndex::Words, "\"data\" OR \"index\" OR \"archive\" OR \"검색\"*", 2.0, Some(20)).unwrap();
        assert_eq!(fts5.len(), 20);
        same(&ranked(&store, query), &fts5);
        // Asked again, from the postings this connection keeps: the same.
        same(&ranked(&store, query), &fts5);
        // With the postings stale (a commit that did not rebuild them), FTS5 ranks: the same.
        let other = rusqlite::Connection::open(dir.path().join("k.db")).unwrap();
        other.execute("INSERT INTO postings_stale(block) VALUES (99)", []).unwrap();
        same(&ranked(&store, query), &fts5);
    }

    #[test]
    fn words_in_half_the_chunks_are_left_out_and_fts5s_ranking_stays() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_with(dir.path());
        // "data" is in all 60 chunks and "index" in 45: BM25 gives them no
        // weight. "archive" is in 9, enough for a top 5 without them.
        let (query, expr) = ("data index archive", "\"data\" OR \"index\" OR \"archive\"");
        let top = |k| {
            let (hits, trace) = search(&store, query, Options { k, heading_weight: 2.0, snippets: false }).unwrap();
            (hits.into_iter().map(|h| (h.chunk_id, h.score)).collect::<Vec<_>>(), trace.weightless)
        };
        let fts5 = store.bm25(FtsIndex::Words, expr, 2.0, Some(5)).unwrap();
        let (got, left_out) = top(5);
        assert_eq!(left_out, ["\"data\"", "\"index\""]);
        assert_eq!(got.iter().map(|h| h.0).collect::<Vec<_>>(), fts5.iter().map(|h| h.0).collect::<Vec<_>>());
        for (x, y) in got.iter().zip(&fts5) {
            assert!((x.1 - y.1).abs() < 1e-5 && x.1 > 0.5, "{x:?} vs {y:?}");
        }
        // Asked again, from the postings this connection keeps: the same.
        assert_eq!(top(5), (got, left_out));
        // Top 20: "archive" alone finds 9, so the whole query is ranked and
        // chunks only the common words match fill the rest.
        let (got, left_out) = top(20);
        assert!(left_out.is_empty());
        same(&got, &store.bm25(FtsIndex::Words, expr, 2.0, Some(20)).unwrap());
    }

    #[test]
    fn rankings_follow_a_change_to_the_index() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = store_with(dir.path());
        let query = "data archive";
        ranked(&store, query);
        let before = ranked(&store, query);
        let (root, _) = store.ensure_root(dir.path()).unwrap();
        store.apply_source(&source(root, "b.md", &["archive archive archive data"]), false).unwrap();
        let after = ranked(&store, query);
        let fresh = Store::open(&dir.path().join("k.db"), false).unwrap();
        same(&after, &ranked(&fresh, query));
        assert_ne!(after[0].0, before[0].0, "the new chunk, all archive, ranks first");
    }
}
