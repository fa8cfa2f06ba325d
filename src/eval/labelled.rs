//! `kebab eval gate`: asks every question of a labelled set (answerable,
//! off-topic, near-miss; see fixtures/labelled/) through the real pipeline
//! and reports how often answerable questions get a correct source and how
//! often the others are refused — the figures the gate is calibrated on.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::error::UserError;
use crate::rag::{AskOptions, Kb};
use crate::search::Mode;

#[derive(Debug, Deserialize)]
struct Item {
    id: String,
    question: String,
    kind: String,
    #[serde(default)]
    sources: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct Row {
    pub id: String,
    pub kind: String,
    pub grounded: bool,
    pub refusal_reason: Option<&'static str>,
    pub top_score: Option<f64>,
    /// The gate's lexical and vector evidence (calibration reads these).
    pub coverage: Option<f64>,
    pub cosine: Option<f64>,
    pub cited: Vec<String>,
    pub correct_source: bool,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub schema_version: &'static str,
    pub model: String,
    pub mode: Mode,
    pub score_gate: crate::config::ScoreGate,
    pub answerable: usize,
    pub unanswerable: usize,
    /// Answerable questions answered (grounded) citing one of their source files.
    pub answered_with_correct_source: f64,
    /// Answerable questions not refused.
    pub answerable_not_refused: f64,
    /// Off-topic and near-miss questions refused (any reason).
    pub unanswerable_refused: f64,
    pub off_topic_refused: f64,
    pub near_miss_refused: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<Vec<Row>>,
}

pub fn run(kb: &Kb, mode: Mode, set: &Path, per_question: bool) -> Result<Report> {
    let text = std::fs::read_to_string(set)
        .map_err(|e| UserError::new("bad_input", format!("cannot read {}: {e}", set.display())))?;
    let mut items = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let item: Item = serde_json::from_str(line)
            .map_err(|e| UserError::new("bad_input", format!("{}:{}: {e}", set.display(), i + 1)))?;
        items.push(item);
    }
    let never = AtomicBool::new(false);
    let mut rows = Vec::new();
    for item in items {
        let opts = AskOptions { mode, ..AskOptions::new(item.question.clone()) };
        let out = kb.ask(&opts, &mut |_| true, &never)?;
        let gate = out.explain.gate.as_ref();
        let a = out.answer;
        let cited: Vec<String> = a.citations.iter().map(|c| c.citation.path.clone()).collect();
        let correct_source = a.grounded
            && cited.iter().any(|p| item.sources.iter().any(|s| p.rsplit('/').next() == Some(s.as_str())));
        rows.push(Row {
            id: item.id,
            kind: item.kind,
            grounded: a.grounded,
            refusal_reason: a.refusal_reason,
            top_score: a.retrieval.top_score,
            coverage: gate.map(|g| g.coverage),
            cosine: gate.and_then(|g| g.cosine),
            cited,
            correct_source,
        });
    }
    let rate = |kinds: &[&str], f: &dyn Fn(&Row) -> bool| -> f64 {
        let sel: Vec<&Row> = rows.iter().filter(|r| kinds.contains(&r.kind.as_str())).collect();
        if sel.is_empty() { 0.0 } else { sel.iter().filter(|r| f(r)).count() as f64 / sel.len() as f64 }
    };
    let refused = |r: &Row| r.refusal_reason.is_some();
    Ok(Report {
        schema_version: "eval_gate.v1",
        model: format!("{}/{}", kb.model.provider(), kb.model.id()),
        mode,
        score_gate: kb.cfg.rag.score_gate.clone(),
        answerable: rows.iter().filter(|r| r.kind == "answerable").count(),
        unanswerable: rows.iter().filter(|r| r.kind != "answerable").count(),
        answered_with_correct_source: rate(&["answerable"], &|r| r.correct_source),
        answerable_not_refused: rate(&["answerable"], &|r| !refused(r)),
        unanswerable_refused: rate(&["off_topic", "near_miss"], &refused),
        off_topic_refused: rate(&["off_topic"], &refused),
        near_miss_refused: rate(&["near_miss"], &refused),
        rows: if per_question { Some(rows) } else { None },
    })
}
