//! Gate: refuse before calling the model when the evidence does not answer
//! the question.
//!
//! Fused or normalised scores cannot do this (the top hit of any query looks
//! "good"), and no single signal separates answerable questions from the
//! rest once users paraphrase. So the gate measures several signals (see
//! `Signals`) and combines them with a logistic regression fitted on the dev
//! split of the labelled Rust Book sets (`kebab eval gate --fit`; the
//! coefficients are in `model.rs`, one model per mode and script). The
//! question passes when the fitted probability that it is answerable reaches
//! the mode's cut-off in `rag.score_gate` (docs/gate.md has the
//! ROC the cut-offs were read from).
//!
//! A question with no content words ("what is it?", "???", "🦀") is not
//! gated here: outside a conversation the ask pipeline refuses it before
//! searching (`no_content_words`); inside one it is a follow-up, and the turn
//! gate reads it together with the question it follows.

pub mod model;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::config::ScoreGate;
use crate::search::engine::Engine;
use crate::search::{Mode, SearchHit, query};
use crate::store::{FtsIndex, Store};

/// How many of the top hits compete for "best evidence".
const TOP: usize = 3;
/// The smallest index size IDF weights are computed for (the labelled Rust
/// Book index has 1,401 chunks, so the fitted weights are unaffected).
const MIN_IDF_CHUNKS: f64 = 1000.0;
/// A follow-up is read with the question before it only when less than this
/// share of its own words is missing from the notes.
const FOLLOW_UP_MAX_MISSING: f64 = 0.5;
/// The most the normalised BM25 signal counts.
const BM25_CAP: f64 = 2.5;
/// The cosine margin is taken over the nearest chunk at this rank.
const MARGIN_RANK: usize = 10;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TermWeight {
    pub term: String,
    pub idf: f64,
    /// Whether the best chunk contains it.
    pub covered: bool,
}

/// What the gate measures for one question. Every value is computed in every
/// mode the signal exists in; the fitted model decides what each is worth.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Signals {
    /// Share of the question's content words (after particle stripping and
    /// stemming), weighted by IDF², that the best of the top chunks contains.
    pub coverage: f64,
    /// Share of the question's content words found in no chunk at all: a
    /// crate, tool or place the notes never mention. Counted, not weighted:
    /// one everyday word of a paraphrase the notes happen to lack ("wifi",
    /// "주변") must not outweigh the rest.
    pub missing: f64,
    /// The best BM25 score among the hits divided by the sum of the query
    /// terms' IDFs: how well the best chunk matches, comparable across queries.
    pub bm25: f64,
    /// Cosine of the question and its nearest chunk (0 in lexical mode).
    pub cosine: f64,
    /// That cosine minus the cosine of the 10th nearest chunk: a question the
    /// notes answer has one clearly closest passage.
    pub margin: f64,
    /// Share of the top hits that both channels rank in their own top 10
    /// (hybrid only): lexical and vector search agreeing on the evidence.
    pub agreement: f64,
    /// How many content words the question has.
    pub content_words: usize,
}

impl Signals {
    /// The model's inputs, in the order of `model::FEATURES`.
    pub fn features(&self) -> [f64; model::N] {
        [
            self.coverage,
            self.missing,
            self.bm25,
            self.cosine,
            self.margin,
            self.agreement,
            (1.0 + self.content_words as f64).ln(),
        ]
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GateReport {
    /// The decision's figure: the fitted probability that the notes answer
    /// the question, compared with `threshold`.
    pub top_score: f64,
    /// The lexical coverage (also in `signals`; kept for older readers).
    #[serde(default)]
    pub coverage: f64,
    /// The cosine of the nearest chunk (vector and hybrid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cosine: Option<f64>,
    pub threshold: f64,
    pub passed: bool,
    pub best_chunk: Option<i64>,
    pub terms: Vec<TermWeight>,
    #[serde(default)]
    pub signals: Signals,
    /// Which fitted model decided (`lexical-en`, `hybrid-en`, `lexical-ko`, `hybrid-ko`).
    #[serde(default)]
    pub model: String,
    /// Whether the question was read together with the one it follows.
    #[serde(default)]
    pub with_previous: bool,
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

/// A question with nothing to search for: every word is a question word,
/// a stop word or a filler ("what is it?", "tell me more", "그게 뭐야?"), or
/// there are no words at all ("???", "🦀").
pub fn no_content_words(question: &str) -> bool {
    content_terms(question).is_empty()
}

fn content_terms(text: &str) -> Vec<query::Term> {
    crate::words::topic_terms(text, crate::words::Negation::Drop)
}

impl Gate<'_> {
    /// The cut-off the fitted probability is compared with.
    pub fn threshold(&self) -> f64 {
        self.thresholds.for_mode(self.mode, self.korean)
    }

    /// The gate for a turn: the question alone, or — for a follow-up that
    /// fails alone ("Why did they do so well?" names too little) — the
    /// question read together with `previous`, what it follows (the caller
    /// says which: the question before it, or what the conversation added to
    /// its search). Off-topic words, never in the notes, weigh most and
    /// still refuse.
    pub fn turn(&self, question: &str, previous: Option<&str>, hits: &[SearchHit]) -> Result<GateReport> {
        let alone = self.check(question, hits)?;
        // A follow-up whose own words are mostly not in the notes at all
        // ("What breed of bees did you keep?") changed the subject: reading
        // it with the earlier question would drown those words.
        let own_words_known = alone.signals.missing < FOLLOW_UP_MAX_MISSING;
        let Some(prev) = previous.filter(|_| !alone.passed && own_words_known) else { return Ok(alone) };
        let mut together = self.check(&format!("{question} {prev}"), hits)?;
        together.with_previous = true;
        Ok(if together.passed { together } else { alone })
    }

    fn check(&self, text: &str, hits: &[SearchHit]) -> Result<GateReport> {
        let mut r = lexical_signals(self.store, self.chunks, text, hits)?;
        if self.mode != Mode::Lexical {
            let near = self.engine.top_cosines(self.store, text, MARGIN_RANK)?;
            let best = near.first().copied().unwrap_or(0.0);
            r.signals.cosine = best;
            r.signals.margin = near.last().map_or(0.0, |last| best - last);
            r.signals.agreement = agreement(hits);
            r.cosine = Some(best);
        }
        let m = model::for_mode(self.mode, self.korean);
        r.model = m.name.to_string();
        r.top_score = m.probability(&r.signals.features());
        r.threshold = self.threshold();
        r.passed = !hits.is_empty() && r.signals.content_words > 0 && r.top_score >= r.threshold;
        Ok(r)
    }
}

/// Share of the top hits both channels put in their own top 10.
fn agreement(hits: &[SearchHit]) -> f64 {
    let top: Vec<&SearchHit> = hits.iter().take(TOP).collect();
    if top.is_empty() {
        return 0.0;
    }
    let both = |h: &&&SearchHit| {
        h.retrieval.lexical_rank.is_some_and(|r| r <= MARGIN_RANK) && h.retrieval.vector_rank.is_some_and(|r| r <= MARGIN_RANK)
    };
    top.iter().filter(both).count() as f64 / top.len() as f64
}

/// The lexical signals of `question` against the hits: coverage by the best
/// of the top hits, words missing from the notes, normalised best BM25.
pub fn lexical_signals(store: &Store, chunks: i64, question: &str, hits: &[SearchHit]) -> Result<GateReport> {
    let terms = content_terms(question);
    let top: Vec<i64> = hits.iter().take(TOP).map(|h| h.chunk_id).collect();
    let mut report = GateReport {
        top_score: 0.0,
        coverage: 0.0,
        cosine: None,
        threshold: 0.0,
        passed: false,
        best_chunk: top.first().copied(),
        terms: Vec::new(),
        signals: Signals { content_words: terms.len(), ..Signals::default() },
        model: String::new(),
        with_previous: false,
    };
    if terms.is_empty() || top.is_empty() {
        return Ok(report);
    }
    let n = chunks as f64;
    let exprs: Vec<String> = terms.iter().map(|t| gate_expr(store, t)).collect::<Result<_>>()?;
    // Which of the top chunks hold each term: asked of those chunks alone
    // (the store copies them aside), not of the whole index.
    let mut contains = store.which_match(&exprs, &top)?;
    let mut weights = Vec::new();
    let mut idf_sum = 0.0;
    let mut missing = 0.0;
    let mut phrasing = 0;
    let mut top_texts: Option<Vec<(i64, String)>> = None;
    for (k, (t, expr)) in terms.iter().zip(&exprs).enumerate() {
        // "what went wrong", "what happens if": how the question is put.
        if crate::words::OUTCOME_FRAMES.contains(&t.word.as_str()) {
            weights.push(0.0);
            phrasing += 1;
            continue;
        }
        // Counted once per state of the index (the store keeps the counts).
        let mut df = store.docs_matching(FtsIndex::Words, expr)? as f64;
        // A word the index holds only inside longer Korean words: a
        // compound (`찌개` in `김치찌개`, `시장` in `망원시장에서`), a unit
        // after a number (`그램` in `200그램`), a Latin word with a particle
        // on it (`API를`). The word index keeps those whole, so no word
        // starts with it; the top chunks' own text is read for it instead.
        if df == 0.0 && let Some(inside) = inside_korean_words(t) {
            let texts = match &mut top_texts {
                Some(texts) => texts,
                None => top_texts.insert(store.chunks_by_ids(&top)?.into_iter().map(|c| (c.chunk_id, c.text.to_lowercase())).collect()),
            };
            contains[k] = texts.iter().filter(|(_, text)| inside(text)).map(|&(id, _)| id).collect();
            df = contains[k].len() as f64;
        }
        // A verb in the past tense or a "must" the notes never write
        // (`샀었지`, `나왔어`, `내야 돼`) is how the asker put it, not a topic
        // the notes lack: notes write the noun (`구입`, `납부`) or another
        // form. It counts for nothing.
        if df == 0.0 && t.cjk && crate::script::is_verb_form(&t.word) {
            weights.push(0.0);
            phrasing += 1;
            continue;
        }
        idf_sum += ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
        // Weights read the index as at least MIN_IDF_CHUNKS chunks: in a
        // small one every everyday word is missing or rare, and would
        // outweigh the words that matter. Squared: one rare word the notes
        // lack (a crate, a tool, a place) should outweigh several common
        // words they have.
        let big = n.max(MIN_IDF_CHUNKS);
        let w = ((big - df + 0.5) / (df + 0.5) + 1.0).ln().powi(2);
        if df == 0.0 {
            missing += 1.0;
        }
        weights.push(w);
    }
    let total: f64 = weights.iter().sum();
    let coverage = |chunk: i64| -> f64 {
        let got: f64 = weights.iter().zip(&contains).filter(|(_, ids)| ids.contains(&chunk)).map(|(w, _)| w).sum();
        if total > 0.0 { got / total } else { 0.0 }
    };
    let (best, score) = top.iter().map(|&c| (c, coverage(c))).fold((top[0], -1.0), |a, b| if b.1 > a.1 { b } else { a });
    report.terms = terms
        .iter()
        .zip(weights.iter().zip(&contains))
        .filter(|(_, (w, _))| **w > 0.0)
        .map(|(t, (w, ids))| TermWeight { term: t.word.clone(), idf: w.sqrt(), covered: ids.contains(&best) })
        .collect();
    let bm25 = hits
        .iter()
        .filter_map(|h| if h.score_kind == "bm25" { Some(h.score) } else { h.retrieval.lexical_score })
        .fold(0.0, f64::max);
    report.best_chunk = Some(best);
    report.coverage = score;
    report.signals.coverage = score;
    let content = terms.len() - phrasing;
    report.signals.content_words = content;
    report.signals.missing = if content > 0 { missing / content as f64 } else { 0.0 };
    // Capped: past this every query's best chunk matches it fully (the
    // heading weight and Korean trigrams can push the ratio far beyond).
    report.signals.bm25 = if idf_sum > 0.0 { (bm25 / idf_sum).min(BM25_CAP) } else { 0.0 };
    Ok(report)
}

/// How a term is looked up for coverage. Korean words in questions come in
/// verb and polite forms the notes rarely share (`만들려면` vs `만들기`), so a
/// Hangul word counts as covered when a word starting with its first two
/// syllables is there.
/// A verb form of two syllables the notes lack (`헹군`) is looked up by the
/// first stem it may be written from that the notes hold (`헹구`, as in
/// `헹구고`; `빌려` for `빌렸`): `script::hangul_stems`. (An English word the
/// notes lack was already read as a spelling they hold: `search::spelling`.)
fn gate_expr(store: &Store, t: &query::Term) -> Result<String> {
    if !t.cjk {
        return Ok(t.word_expr.clone());
    }
    // Two syllables (after any leading number: `2024년`) match the word's inflections.
    let word = query::strip_particle(&t.word);
    let digits = word.chars().take_while(char::is_ascii_digit).count();
    let stem: String = word.chars().take(digits + if digits > 0 { 1 } else { 2 }).collect();
    let expr = format!("\"{stem}\"*");
    if store.docs_matching(FtsIndex::Words, &expr)? > 0 {
        return Ok(expr);
    }
    for verb in crate::script::hangul_stems(&stem) {
        let as_verb = format!("\"{verb}\"*");
        if store.docs_matching(FtsIndex::Words, &as_verb)? > 0 {
            return Ok(as_verb);
        }
    }
    Ok(expr)
}

/// How a term the index finds in no chunk may still be in a chunk's
/// (lowercased) text, inside a longer Korean word: a Latin word or number
/// starting one, with a Hangul particle right after it; a Hangul word's
/// first two syllables anywhere in one; or a verb stem they may be written
/// from, whatever final consonant an ending put on its last syllable
/// (`열려`, stem `열리`, in `열린다`). `None` for a term too short to look
/// for so.
fn inside_korean_words(t: &query::Term) -> Option<impl Fn(&str) -> bool> {
    let word = query::strip_particle(&t.word).to_lowercase();
    let hangul = word.chars().all(crate::script::is_hangul);
    let latin = word.chars().all(|c| c.is_ascii_alphanumeric());
    if word.chars().count() < 2 || !(hangul || latin) {
        return None;
    }
    let head: String = word.chars().take(2).collect();
    let stems: Vec<[char; 2]> = if hangul {
        crate::script::hangul_stems(&head).iter().filter_map(|k| k.chars().collect::<Vec<_>>().try_into().ok()).collect()
    } else {
        Vec::new()
    };
    Some(move |text: &str| {
        if hangul {
            let chars: Vec<char> = text.chars().collect();
            let stem_at = |w: &[char]| stems.iter().any(|k| w[0] == k[0] && crate::script::without_final(w[1]) == k[1]);
            return text.contains(&head) || chars.windows(2).any(stem_at);
        }
        text.match_indices(word.as_str()).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + word.len()..].chars().next();
            !before.is_some_and(|c| c.is_alphanumeric()) && after.is_some_and(crate::script::is_hangul)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_without_content_words_are_recognised() {
        for q in ["what is it?", "???", "🦀", "why?", "tell me more", "그게 뭐야?", "더 알려줘", "", "what does it do?", "Can you show an example?", "give me some sample code", "예를 들어 주세요", "예시를 보여줘", "how come?"] {
            assert!(no_content_words(q), "{q:?} has no content words");
        }
        for q in ["What is ownership?", "why borrow?", "소유권이란 무엇인가요?", "rustup update", "how do I bake bread?", "show me an example of a closure", "How do I document an example?"] {
            assert!(!no_content_words(q), "{q:?} has content words");
        }
    }
}
