//! `kebab eval answers`: asks every question of a BEIR-style set that has
//! gold answer strings (`answers.jsonl`, `{"_id", "answers": [...]}` per
//! line) through the full ask pipeline — single-pass or multi-hop, with
//! whatever model is configured — and scores the answers rather than the
//! retrieval: does the answer contain a gold string, was it grounded, why
//! was it refused, do its citations name evidence it was given, do its quotes
//! occur in that evidence, how long did it take and how many tokens did it
//! cost. Nothing is saved: the database is opened read-only by the caller.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::beir::read_queries;
use crate::error::UserError;
use crate::llm::ChatModel;
use crate::rag::{self, AskOptions, Kb, extract, verify};
use crate::search::Mode;

#[derive(Debug, Deserialize)]
struct GoldLine {
    #[serde(rename = "_id")]
    id: serde_json::Value,
    answers: Vec<String>,
}

/// One question as asked and scored.
#[derive(Debug, Serialize)]
pub struct Row {
    pub id: String,
    pub question: String,
    pub gold: Vec<String>,
    pub answer: String,
    /// The answer contains one of the gold strings (both normalised).
    pub contains_gold: bool,
    pub grounded: bool,
    pub refusal_reason: Option<&'static str>,
    /// `[#n]` markers in the answer, and how many name an evidence entry it was given.
    pub markers: usize,
    pub valid_markers: usize,
    /// Citations kebab attributed to sentences the model did not cite (`[n*]`).
    pub attributed_citations: usize,
    /// rag-v2 quotes found in (or missing from) the evidence they cite.
    pub quotes_supported: usize,
    pub quotes_unsupported: usize,
    pub latency_ms: u64,
    pub prompt_tokens: Option<u32>,
    pub completion_tokens: Option<u32>,
    /// The token counts are kebab's estimates: the server sent none.
    pub usage_estimated: bool,
    /// Steps of a multi-hop ask.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hops: Option<usize>,
    /// The model call failed (the ask is scored as the aborted answer it left).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub schema_version: &'static str,
    pub model: String,
    pub mode: Mode,
    pub multi_hop: bool,
    pub questions: usize,
    /// Queries in the file without a gold answer: not asked.
    pub without_gold: usize,
    /// Share of questions whose answer contains a gold string.
    pub contains_gold: f64,
    /// The same among grounded answers only.
    pub contains_gold_when_grounded: Option<f64>,
    pub grounded: f64,
    pub refused: f64,
    /// Refusal reason → share of all questions.
    pub refusals: BTreeMap<&'static str, f64>,
    /// Of the answers with any `[#n]` marker, the share whose every marker
    /// names an evidence entry the model was given.
    pub citation_validity: Option<f64>,
    /// Supported quotes over all quotes checked (rag-v2).
    pub quote_verification: Option<f64>,
    pub quotes_checked: usize,
    /// Share of grounded answers that are grounded only thanks to kebab's
    /// attribution (some sentence carries an attributed citation).
    pub attributed_when_grounded: Option<f64>,
    pub latency_ms_p50: u64,
    pub latency_ms_p95: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Asks whose token counts are kebab's estimates (the server sent none).
    pub usage_estimated: usize,
    /// Asks cut short by a model failure.
    pub model_errors: usize,
    pub elapsed_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<Vec<Row>>,
}

pub struct Options<'a> {
    pub queries: &'a Path,
    pub answers: &'a Path,
    /// Only the first N questions (in the queries file's order) that have gold answers.
    pub limit: Option<usize>,
    pub mode: Mode,
    pub multi_hop: bool,
    pub per_question: bool,
}

/// `progress(done, total)` is called after each question.
pub fn run(kb: &Kb, opts: &Options, progress: &mut dyn FnMut(usize, usize)) -> Result<Report> {
    let started = Instant::now();
    if opts.multi_hop {
        rag::multihop::check_model(kb.model.as_ref())?;
    }
    let queries = read_queries(opts.queries)?;
    let gold = read_gold(opts.answers)?;
    let all = queries.len();
    let with_gold: Vec<(String, String)> = queries.into_iter().filter(|(id, _)| gold.contains_key(id)).collect();
    let without_gold = all - with_gold.len();
    let asked: Vec<&(String, String)> = with_gold.iter().take(opts.limit.unwrap_or(usize::MAX)).collect();
    if asked.is_empty() {
        return Err(UserError::new(
            "bad_input",
            format!("no question of {} has a gold answer in {}", opts.queries.display(), opts.answers.display()),
        )
        .with_hint("the \"_id\" of each answers line must match a query's \"_id\"")
        .into());
    }
    if kb.store.chunk_count()? == 0 {
        return Err(UserError::new("no_index", "the index is empty: nothing to answer from")
            .with_hint("ingest the set's corpus first, e.g. `kebab ingest corpus.jsonl`")
            .into());
    }
    let never = AtomicBool::new(false);
    let mut rows = Vec::with_capacity(asked.len());
    for (i, (id, question)) in asked.iter().enumerate() {
        // Not streamed: nobody watches, and OpenAI-compatible servers report
        // real token counts for whole answers.
        let ask = AskOptions { mode: opts.mode, multi_hop: opts.multi_hop, stream: false, ..AskOptions::new(question.clone()) };
        let out = kb.ask(&ask, &mut |_| true, &never)?;
        let a = &out.answer;
        let markers = extract::markers(&a.answer);
        let used = a.retrieval.chunks_used;
        let golds = &gold[id];
        let (supported, unsupported) =
            a.verification.as_ref().map_or((0, 0), |v: &verify::Verification| (v.supported.len(), v.unsupported.len()));
        rows.push(Row {
            id: id.clone(),
            question: question.clone(),
            gold: golds.clone(),
            contains_gold: contains_gold(&a.answer, golds),
            answer: a.answer.clone(),
            grounded: a.grounded,
            refusal_reason: a.refusal_reason,
            markers: markers.len(),
            valid_markers: markers.iter().filter(|m| (1..=used).contains(&m.n)).count(),
            attributed_citations: a.citations.iter().filter(|c| c.origin == crate::rag::answer::Origin::Attributed).count(),
            quotes_supported: supported,
            quotes_unsupported: unsupported,
            latency_ms: a.usage.latency_ms,
            prompt_tokens: a.usage.prompt_tokens,
            completion_tokens: a.usage.completion_tokens,
            usage_estimated: a.usage.estimated,
            hops: a.hops.as_ref().map(Vec::len),
            error: out.error.as_ref().map(|e| e.to_string()),
        });
        progress(i + 1, asked.len());
    }
    Ok(summarise(rows, opts, kb.model.as_ref(), without_gold, started))
}

fn summarise(rows: Vec<Row>, opts: &Options, model: &dyn ChatModel, without_gold: usize, started: Instant) -> Report {
    let n = rows.len() as f64;
    let share = |f: &dyn Fn(&Row) -> bool| rows.iter().filter(|r| f(r)).count() as f64 / n;
    let mut refusals: BTreeMap<&'static str, f64> = BTreeMap::new();
    for r in &rows {
        if let Some(reason) = r.refusal_reason {
            *refusals.entry(reason).or_default() += 1.0 / n;
        }
    }
    let grounded: Vec<&Row> = rows.iter().filter(|r| r.grounded).collect();
    let cited: Vec<&Row> = rows.iter().filter(|r| r.markers > 0).collect();
    let quotes_checked: usize = rows.iter().map(|r| r.quotes_supported + r.quotes_unsupported).sum();
    let mut latencies: Vec<u64> = rows.iter().map(|r| r.latency_ms).collect();
    latencies.sort_unstable();
    Report {
        schema_version: "eval_answers.v1",
        model: format!("{}/{}", model.provider(), model.id()),
        mode: opts.mode,
        multi_hop: opts.multi_hop,
        questions: rows.len(),
        without_gold,
        contains_gold: share(&|r| r.contains_gold),
        contains_gold_when_grounded: (!grounded.is_empty())
            .then(|| grounded.iter().filter(|r| r.contains_gold).count() as f64 / grounded.len() as f64),
        grounded: grounded.len() as f64 / n,
        refused: share(&|r| r.refusal_reason.is_some()),
        refusals,
        citation_validity: (!cited.is_empty())
            .then(|| cited.iter().filter(|r| r.valid_markers == r.markers).count() as f64 / cited.len() as f64),
        quote_verification: (quotes_checked > 0)
            .then(|| rows.iter().map(|r| r.quotes_supported).sum::<usize>() as f64 / quotes_checked as f64),
        quotes_checked,
        attributed_when_grounded: (!grounded.is_empty())
            .then(|| grounded.iter().filter(|r| r.attributed_citations > 0).count() as f64 / grounded.len() as f64),
        latency_ms_p50: nearest_rank(&latencies, 0.50),
        latency_ms_p95: nearest_rank(&latencies, 0.95),
        prompt_tokens: rows.iter().filter_map(|r| r.prompt_tokens).map(u64::from).sum(),
        completion_tokens: rows.iter().filter_map(|r| r.completion_tokens).map(u64::from).sum(),
        usage_estimated: rows.iter().filter(|r| r.usage_estimated).count(),
        model_errors: rows.iter().filter(|r| r.error.is_some()).count(),
        elapsed_ms: started.elapsed().as_millis() as u64,
        rows: opts.per_question.then_some(rows),
    }
}

/// The `p` quantile of sorted values, nearest-rank (0 for no values).
fn nearest_rank(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Query id → its gold answer strings (blank strings dropped).
fn read_gold(path: &Path) -> Result<HashMap<String, Vec<String>>> {
    let shape = "{\"_id\": QUERY-ID, \"answers\": [\"gold answer\", …]}";
    let mut out = HashMap::new();
    let mut ids = super::Ids::new(path);
    for (line, g) in super::read_jsonl::<GoldLine>(path, "--answers file ", shape)? {
        let id = match g.id {
            serde_json::Value::String(s) => s,
            other => other.to_string(),
        };
        ids.id(&id, line)?;
        let answers: Vec<String> = g.answers.into_iter().filter(|a| !normalise_answer(a).is_empty()).collect();
        if !answers.is_empty() {
            out.insert(id, answers);
        }
    }
    Ok(out)
}

/// Whether `answer`, without its citation markers, contains any of `gold`
/// (both normalised).
pub fn contains_gold(answer: &str, gold: &[String]) -> bool {
    let mut text = String::with_capacity(answer.len());
    let mut at = 0;
    for m in extract::markers(answer) {
        text.push_str(&answer[at..m.start]);
        text.push(' ');
        at = m.end;
    }
    text.push_str(&answer[at..]);
    let text = normalise_answer(&text);
    gold.iter().map(|g| normalise_answer(g)).any(|g| !g.is_empty() && text.contains(&g))
}

/// Text as SQuAD's evaluation compares answers — lowercase, punctuation
/// removed, the English articles dropped, whitespace collapsed — after
/// folding fullwidth forms and the ideographic space to ASCII (the part of
/// NFKC that Korean and CJK text needs) and the typographic quotes and
/// Markdown marks that `verify` folds.
pub fn normalise_answer(text: &str) -> String {
    let folded: String = text.chars().map(fold_width).collect();
    let kept: String =
        verify::normalise(&folded).chars().filter(|c| c.is_alphanumeric() || c.is_whitespace()).collect();
    kept.split_whitespace().filter(|w| !matches!(*w, "a" | "an" | "the")).collect::<Vec<_>>().join(" ")
}

fn fold_width(c: char) -> char {
    match c as u32 {
        0xFF01..=0xFF5E => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        0x3000 => ' ',
        _ => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gold(g: &[&str]) -> Vec<String> {
        g.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn normalising_folds_case_punctuation_articles_and_width() {
        assert_eq!(normalise_answer("  The North-Atlantic  Conference! "), "northatlantic conference");
        assert_eq!(normalise_answer("３,６７７ Seated"), "3677 seated");
        assert_eq!(normalise_answer("“Pedro Rodríguez”"), "pedro rodríguez");
        assert_eq!(normalise_answer("1989년\u{3000}2월"), "1989년 2월");
    }

    #[test]
    fn an_answer_contains_gold_whatever_its_markers_and_particles() {
        assert!(contains_gold("It was \"the North Atlantic Conference\" [#2].", &gold(&["North Atlantic Conference"])));
        assert!(contains_gold("\"임수경은 방북했다\" [#1]", &gold(&["임수경"])));
        assert!(contains_gold("seated \"3,677\"", &gold(&["x", "3,677"])));
        // The marker's number is not part of the answer.
        assert!(!contains_gold("Yes [#1].", &gold(&["1"])));
        assert!(!contains_gold("anything", &gold(&["...", ""])));
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<u64> = (1..=20).collect();
        assert_eq!(nearest_rank(&v, 0.5), 10);
        assert_eq!(nearest_rank(&v, 0.95), 19);
        assert_eq!(nearest_rank(&[7], 0.95), 7);
        assert_eq!(nearest_rank(&[], 0.5), 0);
    }
}
