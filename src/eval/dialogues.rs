//! `kebab eval dialogues FILE`: golden multi-turn dialogues run through the
//! real conversation pipeline (each turn expanded with the previous answer,
//! earlier turns in the prompt), scored per turn: did retrieval find an
//! expected source in the top k — with the pipeline's retrieval query and,
//! for comparison, with the bare question — did the answer cite one, does it
//! contain the required words, and was a turn the notes cannot answer refused.
//! Nothing is saved: the database is opened read-only.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::error::UserError;
use crate::rag::{AskOptions, Kb, PriorTurn, TurnOf};
use crate::search::{Mode, SearchHit};

#[derive(Debug, Deserialize)]
struct Dialogue {
    id: String,
    #[serde(default)]
    split: Option<String>,
    turns: Vec<TurnSpec>,
}

#[derive(Debug, Deserialize)]
struct TurnSpec {
    question: String,
    /// `first`, `followup` or `switch`.
    #[serde(default = "default_kind")]
    kind: String,
    /// File names (the last path component) any of which answers the turn.
    #[serde(default)]
    sources: Vec<String>,
    #[serde(default)]
    must_contain: Vec<String>,
    /// The notes cannot answer this turn: it should be refused.
    #[serde(default)]
    refusal: bool,
}

fn default_kind() -> String {
    "turn".into()
}

#[derive(Debug, Serialize)]
pub struct TurnRow {
    pub dialogue: String,
    pub turn: usize,
    pub kind: String,
    pub retrieval_query: String,
    /// An expected source is among the top k hits of the pipeline's query.
    pub source_hit: bool,
    /// The same for the bare question.
    pub bare_source_hit: bool,
    /// The answer is grounded and cites an expected source.
    pub cited_source: bool,
    pub must_contain: Option<bool>,
    pub refusal_expected: bool,
    pub refusal_reason: Option<&'static str>,
}

#[derive(Debug, Default, Serialize)]
pub struct KindSummary {
    pub turns: usize,
    pub source_hit: f64,
    pub bare_source_hit: f64,
    pub cited_source: f64,
    /// Share of turns with `must_contain` whose answer has every string.
    pub must_contain: Option<f64>,
    /// Answerable turns refused.
    pub refused: f64,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub schema_version: &'static str,
    pub model: String,
    pub k: usize,
    pub expansion_chars: usize,
    pub dialogues: usize,
    /// Per turn kind (`first`, `followup`, `switch`), answerable turns only.
    pub by_kind: BTreeMap<String, KindSummary>,
    /// Turns the notes cannot answer, and the share refused.
    pub unanswerable: usize,
    pub unanswerable_refused: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<Vec<TurnRow>>,
}

pub struct Options<'a> {
    pub file: &'a Path,
    pub mode: Mode,
    /// Only dialogues of this split (`dev`, `test`).
    pub split: Option<&'a str>,
    pub per_turn: bool,
}

pub fn run(kb: &Kb, opts: &Options) -> Result<Report> {
    let (store, engine, cfg) = (&kb.store, &kb.engine, &kb.cfg);
    let dialogues = read(opts.file)?;
    let dialogues: Vec<Dialogue> =
        dialogues.into_iter().filter(|d| opts.split.is_none_or(|s| d.split.as_deref() == Some(s))).collect();
    if dialogues.is_empty() {
        return Err(UserError::new("bad_input", format!("no dialogues in {}", opts.file.display()))
            .with_hint("check --split against the file's \"split\" values")
            .into());
    }
    let k = cfg.search.default_k;
    let never = AtomicBool::new(false);
    let mut rows = Vec::new();
    for d in &dialogues {
        let mut history: Vec<PriorTurn> = Vec::new();
        for (i, t) in d.turns.iter().enumerate() {
            let ask = AskOptions {
                turn: Some(TurnOf { history: history.clone(), save_to: None }),
                mode: opts.mode,
                ..AskOptions::new(t.question.clone())
            };
            let out = kb.ask(&ask, &mut |_| true, &never)?;
            let bare = engine.search(store, &t.question, opts.mode, k)?;
            let a = &out.answer;
            let expected = |path: &str| t.sources.iter().any(|s| path.rsplit('/').next() == Some(s.as_str()));
            let hit = |hits: &[SearchHit]| hits.iter().take(k).any(|h| expected(&h.citation.path));
            let answer = a.answer.to_lowercase();
            rows.push(TurnRow {
                dialogue: d.id.clone(),
                turn: i,
                kind: t.kind.clone(),
                retrieval_query: a.retrieval.retrieval_query.clone(),
                source_hit: hit(&out.explain.hits),
                bare_source_hit: hit(&bare),
                cited_source: a.grounded && a.citations.iter().any(|c| expected(&c.citation.path)),
                must_contain: (!t.must_contain.is_empty())
                    .then(|| t.must_contain.iter().all(|m| answer.contains(&m.to_lowercase()))),
                refusal_expected: t.refusal,
                refusal_reason: a.refusal_reason,
            });
            history.push(PriorTurn { question: t.question.clone(), answer: a.answer.clone(), grounded: a.grounded });
        }
    }
    let mut by_kind: BTreeMap<String, KindSummary> = BTreeMap::new();
    for kind in rows.iter().filter(|r| !r.refusal_expected).map(|r| r.kind.clone()) {
        by_kind.entry(kind).or_default();
    }
    for (kind, s) in by_kind.iter_mut() {
        let sel: Vec<&TurnRow> = rows.iter().filter(|r| &r.kind == kind && !r.refusal_expected).collect();
        let share = |f: &dyn Fn(&TurnRow) -> bool| sel.iter().filter(|r| f(r)).count() as f64 / sel.len() as f64;
        s.turns = sel.len();
        s.source_hit = share(&|r| r.source_hit);
        s.bare_source_hit = share(&|r| r.bare_source_hit);
        s.cited_source = share(&|r| r.cited_source);
        s.refused = share(&|r| r.refusal_reason.is_some());
        let with_must: Vec<bool> = sel.iter().filter_map(|r| r.must_contain).collect();
        s.must_contain =
            (!with_must.is_empty()).then(|| with_must.iter().filter(|&&b| b).count() as f64 / with_must.len() as f64);
    }
    let unanswerable: Vec<&TurnRow> = rows.iter().filter(|r| r.refusal_expected).collect();
    Ok(Report {
        schema_version: "eval_dialogues.v1",
        model: format!("{}/{}", kb.model.provider(), kb.model.id()),
        k,
        expansion_chars: cfg.rag.expansion_chars,
        dialogues: dialogues.len(),
        by_kind,
        unanswerable: unanswerable.len(),
        unanswerable_refused: if unanswerable.is_empty() {
            0.0
        } else {
            unanswerable.iter().filter(|r| r.refusal_reason.is_some()).count() as f64 / unanswerable.len() as f64
        },
        rows: opts.per_turn.then_some(rows),
    })
}

/// One dialogue per line (JSONL); blank lines are skipped.
fn read(file: &Path) -> Result<Vec<Dialogue>> {
    let shape = "{\"id\", \"turns\": [{\"question\", \"kind\", \"sources\", \"must_contain\", \"refusal\"}]}";
    let mut out = Vec::new();
    let mut ids = super::Ids::new(file);
    for (line, d) in super::read_jsonl::<Dialogue>(file, "", shape)? {
        ids.id(&d.id, line)?;
        if d.turns.is_empty() {
            return Err(UserError::new("bad_input", format!("{}:{line}: dialogue {:?} has no turns", file.display(), d.id)).into());
        }
        // Asked, it would be scored as a refusal, silently.
        if let Some(n) = d.turns.iter().position(|t| t.question.trim().is_empty()) {
            let message = format!("{}:{line}: turn {} of dialogue {:?} has an empty question", file.display(), n + 1, d.id);
            return Err(UserError::new("bad_input", message).with_hint(format!("each line is {shape}")).into());
        }
        out.push(d);
    }
    Ok(out)
}
