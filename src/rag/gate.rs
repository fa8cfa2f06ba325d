//! Gate: refuse before calling the model when the best evidence is too weak.
//!
//! Fused or normalised scores cannot do this (the top hit of any query looks
//! "good"), so the gate weighs evidence that separates answerable questions
//! from the rest, per mode (calibration: README "The gate"):
//! - lexical: coverage, the share of the question's content words, weighted by
//!   how rare each word is in the index (IDF), that the best of the top chunks
//!   contains. A question about things the notes never mention leaves its
//!   rarest words uncovered. Words are matched through the word index itself,
//!   so stemming and Korean prefixes behave as in search.
//! - vector and hybrid: the mean of that coverage and the raw cosine of the
//!   question and its nearest chunk, or the lexical coverage alone when it
//!   passes the lexical threshold (so strong word evidence is never refused
//!   for a weak cosine). On our labelled Rust Book questions the mean
//!   separated answerable from unanswerable better than the cosine alone
//!   (correct source 80% vs 75% at equal or better refusal, vector mode).

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::config::ScoreGate;
use crate::search::engine::Engine;
use crate::search::{Mode, SearchHit, lexical, query};
use crate::store::Store;

/// How many of the top hits compete for "best evidence".
const TOP: usize = 3;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TermWeight {
    pub term: String,
    pub idf: f64,
    /// Whether the best chunk contains it.
    pub covered: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GateReport {
    /// The evidence strength compared with the threshold, 0–1: coverage
    /// (lexical), cosine (vector) or their combination (hybrid).
    pub top_score: f64,
    /// The lexical evidence: IDF²-weighted share of the question's words in the best chunk.
    #[serde(default)]
    pub coverage: f64,
    /// The vector evidence: cosine of the question and its nearest chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cosine: Option<f64>,
    pub threshold: f64,
    pub passed: bool,
    pub best_chunk: Option<i64>,
    pub terms: Vec<TermWeight>,
}

/// What the gate weighs evidence with.
pub struct Gate<'a> {
    pub store: &'a Store,
    pub engine: &'a Engine,
    pub mode: Mode,
    /// Chunks in the index (the caller has counted them).
    pub chunks: i64,
    pub thresholds: &'a ScoreGate,
    pub korean: bool,
}

impl Gate<'_> {
    /// The threshold the mode's evidence is compared with.
    pub fn threshold(&self) -> f64 {
        self.thresholds.for_mode(self.mode, self.korean)
    }

    /// The gate for a turn: the question alone, or — for a follow-up that
    /// fails alone ("Why did they do so well?" names too little) — the
    /// question read together with the one it follows. Off-topic words, never
    /// in the notes, weigh most and still refuse.
    pub fn turn(&self, question: &str, previous: Option<&str>, hits: &[SearchHit]) -> Result<GateReport> {
        let alone = self.check(question, hits)?;
        let Some(prev) = previous.filter(|_| !alone.passed) else { return Ok(alone) };
        let together = self.check(&format!("{question} {prev}"), hits)?;
        Ok(if together.passed { together } else { alone })
    }

    fn check(&self, text: &str, hits: &[SearchHit]) -> Result<GateReport> {
        let lexical_threshold = self.thresholds.lexical_for(self.korean);
        let mut r = lexical(self.store, self.chunks, text, hits, lexical_threshold)?;
        if self.mode == Mode::Lexical {
            return Ok(r);
        }
        let cosine = self.engine.best_cosine(self.store, text)?.unwrap_or(0.0);
        r.cosine = Some(cosine);
        r.threshold = self.threshold();
        r.top_score = hybrid_evidence(r.coverage, cosine);
        r.passed = !hits.is_empty() && (r.top_score >= r.threshold || r.coverage >= lexical_threshold);
        Ok(r)
    }
}

/// Vector and hybrid evidence: the mean of coverage and cosine, so either
/// kind can carry a question the other half-misses (a paraphrase shares few
/// words; a rare name means little to MiniLM).
pub fn hybrid_evidence(coverage: f64, cosine: f64) -> f64 {
    (coverage + cosine) / 2.0
}

/// Lexical coverage of `question` by the best of the top hits.
pub fn lexical(store: &Store, chunks: i64, question: &str, hits: &[SearchHit], threshold: f64) -> Result<GateReport> {
    let terms: Vec<query::Term> = query::terms(question)
        .into_iter()
        .filter(|t| !query::is_question_word(&t.word))
        .collect();
    let top: Vec<i64> = hits.iter().take(TOP).map(|h| h.chunk_id).collect();
    if terms.is_empty() || top.is_empty() {
        // Nothing to weigh (a question of only question words): let the
        // model judge rather than refuse blindly.
        let passed = !top.is_empty();
        let score = if passed { 1.0 } else { 0.0 };
        return Ok(GateReport {
            top_score: score,
            coverage: score,
            cosine: None,
            threshold,
            passed,
            best_chunk: top.first().copied(),
            terms: Vec::new(),
        });
    }
    let n = chunks as f64;
    let marks = vec!["?"; top.len()].join(",");
    let in_top_sql = format!("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid IN ({marks})");
    let mut weights = Vec::new();
    let mut contains: Vec<Vec<i64>> = Vec::new();
    for t in &terms {
        let expr = gate_expr(t);
        let df: f64 = store
            .conn()
            .prepare_cached("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?1")?
            .query_row([&expr], |r| r.get::<_, i64>(0))? as f64;
        // Squared: one rare word the notes lack (a crate, a tool, a place)
        // should outweigh several common words they have.
        weights.push(((n - df + 0.5) / (df + 0.5) + 1.0).ln().powi(2));
        let mut stmt = store.conn().prepare_cached(&in_top_sql)?;
        let ids: Vec<i64> =
            stmt.query_map(lexical::match_among_params(&expr, &top), |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        contains.push(ids);
    }
    let total: f64 = weights.iter().sum();
    let coverage = |chunk: i64| -> f64 {
        let got: f64 = weights.iter().zip(&contains).filter(|(_, ids)| ids.contains(&chunk)).map(|(w, _)| w).sum();
        if total > 0.0 { got / total } else { 0.0 }
    };
    let (best, score) = top.iter().map(|&c| (c, coverage(c))).fold((top[0], -1.0), |a, b| if b.1 > a.1 { b } else { a });
    let terms = terms
        .iter()
        .zip(weights.iter().zip(&contains))
        .map(|(t, (w, ids))| TermWeight { term: t.word.clone(), idf: w.sqrt(), covered: ids.contains(&best) })
        .collect();
    Ok(GateReport { top_score: score, coverage: score, cosine: None, threshold, passed: score >= threshold, best_chunk: Some(best), terms })
}

/// How a term is looked up for coverage. Korean words in questions come in
/// verb and polite forms the notes rarely share (`만들려면` vs `만들기`), so a
/// Hangul word counts as covered when a word starting with its first two
/// syllables is there.
fn gate_expr(t: &query::Term) -> String {
    if !t.cjk {
        return t.word_expr.clone();
    }
    // Two syllables (after any leading number: `2024년`) match the word's inflections.
    let word = query::strip_particle(&t.word);
    let digits = word.chars().take_while(char::is_ascii_digit).count();
    let stem: String = word.chars().take(digits + if digits > 0 { 1 } else { 2 }).collect();
    format!("\"{stem}\"*")
}
