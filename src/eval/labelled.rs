//! `kebab eval gate`: asks every question of a labelled set (answerable,
//! near-miss, off-topic, partly matching, no content words; see
//! fixtures/labelled/) through the real pipeline and reports, per dev/test
//! split and per category, how often answerable questions get a correct cited
//! answer and how often the others are refused. `--fit` fits the gate's
//! logistic regression on the dev split's signals and prints its ROC.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::split::Split;
use crate::error::UserError;
use crate::rag::gate::{Signals, model};
use crate::rag::{AskOptions, Kb};
use crate::search::Mode;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Answerable,
    NearMiss,
    OffTopic,
    /// Half-matching: shares words with the notes but asks something else
    /// ("How do I bake bread?").
    Partial,
    NoContent,
}

#[derive(Debug, Deserialize)]
struct Item {
    id: String,
    question: String,
    kind: Kind,
    #[serde(default)]
    sources: Vec<String>,
    /// Facts a correct answer states: each a list of acceptable lowercase phrasings.
    #[serde(default)]
    facts: Vec<Vec<String>>,
}

#[derive(Debug, Serialize)]
pub struct Row {
    pub id: String,
    pub split: Split,
    pub kind: Kind,
    pub grounded: bool,
    pub refusal_reason: Option<&'static str>,
    /// The gate's fitted probability and every signal it weighed.
    pub gate_probability: Option<f64>,
    pub signals: Option<Signals>,
    pub cited: Vec<String>,
    /// Grounded and citing one of the gold files.
    pub cites_gold: bool,
    /// Every fact has a phrasing in the answer text.
    pub states_facts: bool,
    pub answer: String,
}

impl Row {
    fn refused(&self) -> bool {
        self.refusal_reason.is_some()
    }

    fn correct(&self) -> bool {
        self.cites_gold && self.states_facts
    }
}

/// The figures of one split.
#[derive(Debug, Serialize)]
pub struct SplitReport {
    pub split: Split,
    pub answerable: usize,
    /// Grounded, cites a gold file and states every fact.
    pub correct_cited: f64,
    /// Grounded and cites a gold file (facts not checked).
    pub cites_gold: f64,
    pub answerable_not_refused: f64,
    /// Near-miss, off-topic and partly matching questions.
    pub unanswerable: usize,
    pub unanswerable_refused: f64,
    pub near_miss_refused: f64,
    pub off_topic_refused: f64,
    pub partial_refused: f64,
    pub no_content: usize,
    pub no_content_refused: f64,
}

/// One operating point of the gate on the dev split.
#[derive(Debug, Serialize)]
pub struct RocPoint {
    pub cutoff: f64,
    /// Answerable questions the gate would refuse.
    pub false_refusal: f64,
    /// Unanswerable questions the gate would pass.
    pub false_answer: f64,
}

#[derive(Debug, Serialize)]
pub struct Fit {
    pub features: [&'static str; model::N],
    pub weights: [f64; model::N],
    pub bias: f64,
    pub examples: usize,
    pub roc: Vec<RocPoint>,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub schema_version: &'static str,
    pub model: String,
    pub mode: Mode,
    pub score_gate: crate::config::ScoreGate,
    pub splits: Vec<SplitReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fit: Option<Fit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<Vec<Row>>,
}

/// What to run.
pub struct Options<'a> {
    pub set: &'a Path,
    /// Only this split; both when `None`.
    pub split: Option<Split>,
    /// Fit the gate on the dev split's signals.
    pub fit: bool,
    pub per_question: bool,
}

/// Asks every question of the set (of `opts.split`) in `mode`.
pub fn run(kb: &Kb, mode: Mode, opts: &Options) -> Result<Report> {
    if opts.fit && opts.split == Some(Split::Test) {
        return Err(UserError::new("bad_input", "--fit fits on the dev split; drop --split test").into());
    }
    let items: Vec<Item> = read(opts.set)?.into_iter().filter(|i| opts.split.is_none_or(|s| Split::of(&i.id) == s)).collect();
    // A report of 0% everywhere (and a fit on nothing) would read as a result.
    if items.is_empty() {
        let which = if opts.split.is_some() { " of that split" } else { "" };
        return Err(UserError::new("bad_input", format!("no questions{which} in {}", opts.set.display()))
            .with_hint("each line is {\"id\",\"question\",\"kind\",\"sources\"}; see docs/gate.md")
            .into());
    }
    let never = AtomicBool::new(false);
    let mut rows = Vec::new();
    for item in items {
        let ask = AskOptions { mode, ..AskOptions::new(item.question.clone()) };
        let out = kb.ask(&ask, &mut |_| true, &never)?;
        let gate = out.explain.gate.as_ref();
        let a = out.answer;
        let cited: Vec<String> = a.citations.iter().map(|c| c.citation.path.clone()).collect();
        let cites_gold = a.grounded
            // A JSONL record's path (`glossary.jsonl#g-bm25`) cites its file.
            && cited.iter().any(|p| item.sources.iter().any(|s| file_name(p) == s));
        rows.push(Row {
            split: Split::of(&item.id),
            id: item.id,
            kind: item.kind,
            grounded: a.grounded,
            refusal_reason: a.refusal_reason,
            gate_probability: gate.map(|g| g.top_score),
            signals: gate.map(|g| g.signals.clone()),
            cited,
            cites_gold,
            states_facts: a.grounded && states_facts(&a.answer, &item.facts),
            answer: a.answer,
        });
    }
    let splits = [Split::Dev, Split::Test]
        .into_iter()
        .filter(|s| opts.split.is_none_or(|o| o == *s))
        .map(|s| split_report(s, &rows))
        .collect();
    let fit = if opts.fit { Some(fit(&rows)) } else { None };
    Ok(Report {
        schema_version: "eval_gate.v2",
        model: format!("{}/{}", kb.model.provider(), kb.model.id()),
        mode,
        score_gate: kb.cfg.rag.score_gate.clone(),
        splits,
        fit,
        rows: if opts.per_question { Some(rows) } else { None },
    })
}

fn read(set: &Path) -> Result<Vec<Item>> {
    let shape = "{\"id\",\"question\",\"kind\",\"sources\",\"facts\"}; see docs/gate.md";
    let mut out = Vec::new();
    let mut ids = super::Ids::new(set);
    for (line, item) in super::read_jsonl::<Item>(set, "", shape)? {
        ids.id(&item.id, line)?;
        // Either would be scored, silently: a blank question as refused (an
        // off-topic success), an answerable one without sources as never
        // citing them.
        let wrong = if item.question.trim().is_empty() {
            Some("has an empty question")
        } else if item.kind == Kind::Answerable && item.sources.is_empty() {
            Some("is answerable but names no \"sources\" (the file names an answer should cite)")
        } else {
            None
        };
        if let Some(wrong) = wrong {
            let message = format!("{}:{line}: question {:?} {wrong}", set.display(), item.id);
            return Err(UserError::new("bad_input", message).with_hint(format!("each line is {shape}")).into());
        }
        out.push(item);
    }
    Ok(out)
}

/// Whether every fact has one of its phrasings in `answer` (case and
/// whitespace folded).
pub fn states_facts(answer: &str, facts: &[Vec<String>]) -> bool {
    // Both sides folded: a set written with capitals ("20 May") must not
    // fail every answer that states it.
    let fold = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    let text = fold(answer);
    facts.iter().all(|f| f.iter().any(|p| text.contains(&fold(p))))
}

fn split_report(split: Split, rows: &[Row]) -> SplitReport {
    let of = |kinds: &[Kind]| -> Vec<&Row> { rows.iter().filter(|r| r.split == split && kinds.contains(&r.kind)).collect() };
    let rate = |sel: &[&Row], f: &dyn Fn(&Row) -> bool| -> f64 {
        if sel.is_empty() { 0.0 } else { sel.iter().filter(|r| f(r)).count() as f64 / sel.len() as f64 }
    };
    let answerable = of(&[Kind::Answerable]);
    let unanswerable = of(&[Kind::NearMiss, Kind::OffTopic, Kind::Partial]);
    let no_content = of(&[Kind::NoContent]);
    SplitReport {
        split,
        answerable: answerable.len(),
        correct_cited: rate(&answerable, &Row::correct),
        cites_gold: rate(&answerable, &|r| r.cites_gold),
        answerable_not_refused: rate(&answerable, &|r| !r.refused()),
        unanswerable: unanswerable.len(),
        unanswerable_refused: rate(&unanswerable, &Row::refused),
        near_miss_refused: rate(&of(&[Kind::NearMiss]), &Row::refused),
        off_topic_refused: rate(&of(&[Kind::OffTopic]), &Row::refused),
        partial_refused: rate(&of(&[Kind::Partial]), &Row::refused),
        no_content: no_content.len(),
        no_content_refused: rate(&no_content, &Row::refused),
    }
}

/// The file a cited path is in: its last component, without a record's `#id`.
fn file_name(path: &str) -> &str {
    let file = crate::search::record_file(path).unwrap_or(path);
    file.rsplit('/').next().unwrap_or(file)
}

/// Fits the gate on the dev rows that reached it: answerable → pass, the
/// rest → refuse; then the operating points of the fitted model.
fn fit(rows: &[Row]) -> Fit {
    let (mut xs, mut labels) = (Vec::new(), Vec::new());
    for r in rows.iter().filter(|r| r.split == Split::Dev && r.kind != Kind::NoContent) {
        if let Some(s) = &r.signals {
            xs.push(s.features());
            labels.push(r.kind == Kind::Answerable);
        }
    }
    let (weights, bias) = model::fit(&xs, &labels, &model::FitOptions::default());
    let m = model::Model { name: "fit", weights, bias };
    let ps: Vec<f64> = xs.iter().map(|x| m.probability(x)).collect();
    let roc = (1..20)
        .map(|i| {
            let cutoff = i as f64 * 0.05;
            let count = |want: bool| labels.iter().filter(|&&l| l == want).count().max(1) as f64;
            let refused_pos = ps.iter().zip(&labels).filter(|(p, l)| **l && **p < cutoff).count() as f64;
            let passed_neg = ps.iter().zip(&labels).filter(|(p, l)| !**l && **p >= cutoff).count() as f64;
            RocPoint { cutoff, false_refusal: refused_pos / count(true), false_answer: passed_neg / count(false) }
        })
        .collect();
    Fit { features: model::FEATURES, weights, bias, examples: xs.len(), roc }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_need_one_phrasing_each_with_case_and_spacing_folded() {
        let facts = vec![vec!["cargo new".to_string()], vec!["four bytes".to_string(), "4 bytes".to_string()]];
        assert!(states_facts("\"Run `Cargo  New`; a char is four\nbytes.\" [#1]", &facts));
        assert!(!states_facts("\"Run cargo new.\" [#1]", &facts));
        // A phrasing written with capitals or two spaces is folded too.
        let facts = vec![vec!["Group  Gasket".to_string()]];
        assert!(states_facts("\"group gasket replaced 20 May\" [#1]", &facts));
    }
}
