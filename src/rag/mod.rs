//! The ask pipeline: `retrieve → gate → pack → render → generate → extract →
//! attribute → validate → verify → build → persist`, one module per stage. `ask` runs
//! them in order and always returns an `Answer` that was saved — refusals
//! and aborted streams included. A multi-hop ask (`multihop`, prompts in
//! `plan`) replaces the single retrieve and gate with rounds of
//! sub-questions, then runs the same stages from pack on.

pub mod answer;
pub mod attribute;
mod closeness;
pub mod expand;
pub mod explain;
pub mod extract;
pub mod gate;
pub mod generate;
pub mod history;
pub mod multihop;
pub mod pack;
pub mod persist;
pub mod plan;
pub mod render;
pub mod retrieve;
pub mod sentences;
mod run;
pub mod validate;
pub mod verify;

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::Result;

use crate::config::Config;
use crate::llm::{ChatModel, LlmError};
use crate::script::estimate_tokens;
use crate::search::engine::Engine;
use crate::search::{Mode, SearchHit};
use crate::store::Store;
use answer::Answer;
pub use expand::PriorTurn;
use gate::GateReport;
use pack::Packing;
use render::Template;
use run::{Run, ms};

/// The knowledge base one process asks: the config, the database, the search
/// engine (which holds the loaded vectors from one ask to the next) and the
/// model that answers. Built once per process by the command line.
pub struct Kb {
    pub cfg: Config,
    pub store: Store,
    pub engine: Engine,
    pub model: Box<dyn ChatModel>,
}

/// What opening the knowledge base may do to the database (see `Opener`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Open {
    /// Reads: the database must exist (a read never leaves an empty one behind).
    Existing,
    /// The database is created when missing (`ingest`, the REPL).
    Create,
}

/// Opens the knowledge base the command line's way, with its notices: for a
/// front end that keeps one open while other processes change the index
/// (the REPL, `kebab mcp`), to open it again (see `Kb::reopen_if_replaced`).
pub type Opener = Box<dyn Fn(Open) -> Result<Kb> + Send>;

/// What one ask asks for; `None` means the config's value.
#[derive(Debug, Clone)]
pub struct AskOptions {
    pub question: String,
    pub mode: Mode,
    pub k: Option<usize>,
    pub template: Option<Template>,
    pub temperature: Option<f32>,
    pub seed: Option<u64>,
    /// Ask the model server to stream (tokens reach the sink as they come).
    pub stream: bool,
    /// The conversation this ask continues; `None` for a single-shot ask.
    pub turn: Option<TurnOf>,
    /// Decompose the question into sub-questions and retrieve for each
    /// (`multihop`) instead of one retrieval.
    pub multi_hop: bool,
    /// Multi-hop only: refuse (`multi_hop_decompose_failed`) when the model's
    /// decomposition cannot be read, instead of answering single-pass.
    pub strict_multi_hop: bool,
}

impl AskOptions {
    /// A single-shot, streamed, lexical ask with the config's settings.
    pub fn new(question: impl Into<String>) -> AskOptions {
        AskOptions {
            question: question.into(),
            mode: Mode::Lexical,
            k: None,
            template: None,
            temperature: None,
            seed: None,
            stream: true,
            turn: None,
            multi_hop: false,
            strict_multi_hop: false,
        }
    }
}

/// The conversation an ask continues: what the prompt and the retrieval see
/// of it, and where (if anywhere) the new turn is saved.
#[derive(Debug, Clone, Default)]
pub struct TurnOf {
    /// The turns so far, oldest first.
    pub history: Vec<PriorTurn>,
    /// The conversation the turn is saved in; `None` asks with the history
    /// but saves no turn (an evaluation replaying a dialogue).
    pub save_to: Option<i64>,
}

/// Stage timings, in milliseconds.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Timings {
    pub retrieve: f64,
    pub gate: f64,
    pub pack: f64,
    /// Everything before the model was called.
    pub before_model: f64,
    pub first_token: Option<f64>,
    pub generate: f64,
    pub total: f64,
}

/// What `--explain` shows.
#[derive(Debug, Clone, Default)]
pub struct Explain {
    pub hits: Vec<SearchHit>,
    pub gate: Option<GateReport>,
    pub packing: Packing,
    /// Earlier turns put into the prompt, and how many were left out.
    pub history_kept: usize,
    pub history_dropped: usize,
    /// The previous turn went in with its answer shortened.
    pub history_shortened: bool,
    pub timings: Timings,
}

pub struct AskOutcome {
    pub answer: Answer,
    pub explain: Explain,
    /// The model failed; the answer holds any partial text and was saved (as `llm_stream_aborted` or `model_error`).
    pub error: Option<LlmError>,
    /// Row id in `answers`, None when read-only.
    pub answer_id: Option<i64>,
}

impl Kb {
    /// Opens this knowledge base again (`open` with `how`) when its database
    /// file was removed, or replaced by a new index, since it was opened
    /// (`Store::replaced`): the open file is then one no other kebab sees,
    /// read and written as if it were the index. True when it was opened
    /// again. On an error this one is still the stale one: not to be used.
    pub fn reopen_if_replaced(&mut self, open: &Opener, how: Open) -> Result<bool> {
        if !self.store.replaced() {
            return Ok(false);
        }
        *self = open(how)?;
        Ok(true)
    }

    /// Asks `opts.question`: the answer streams to `sink` as it is written
    /// (`sink` returning false, or `cancel` set, stops it), and the outcome
    /// comes back saved — refusals and aborted streams included.
    pub fn ask(&self, opts: &AskOptions, sink: &mut dyn FnMut(&str) -> bool, cancel: &AtomicBool) -> Result<AskOutcome> {
        let kb = self;
        kb.check_length(&opts.question)?;
        if opts.multi_hop {
            multihop::check_model(kb.model.as_ref())?;
        }
        let run = Run::new(kb, opts)?;
        if opts.multi_hop {
            return multihop::ask(&run, sink, cancel);
        }
        let mut explain = Explain::default();
        if run.chunks == 0 {
            return run.finish(run.refused("no_index", None, Vec::new(), explain));
        }

        // Nothing to search for ("what is it?", "???"): outside a conversation
        // there is no earlier question to read it with.
        let names_nothing = gate::no_content_words(&run.b.reading);
        if run.prior.is_empty() && names_nothing {
            return run.finish(run.refused("no_content_words", None, Vec::new(), explain));
        }

        // Retrieve.
        let t = Instant::now();
        let query = retrieve::Query { question: &run.b.reading, retrieval_query: &run.b.retrieval_query, mode: run.b.mode, k: run.b.k };
        let hits = retrieve::retrieve(kb, &query)?;
        explain.timings.retrieve = ms(t);
        if hits.is_empty() {
            return run.finish(run.refused("no_chunks", None, hits, explain));
        }

        // Gate.
        let t = Instant::now();
        // A follow-up is read with the question before it; one that names
        // nothing ("Can you show an example?") asks for more of what its
        // search read: the start of the answer before it (or that question,
        // after a refusal).
        let previous = match run.prior.last() {
            Some(_) if names_nothing => Some(run.b.context()),
            prior => prior.map(|p| p.question.as_str()),
        };
        let report = run.gate.turn(&run.b.reading, previous, &hits)?;
        explain.timings.gate = ms(t);
        let top_score = Some(report.top_score);
        let passed = report.passed;
        explain.gate = Some(report);
        if !passed {
            return run.finish(run.refused("score_gate", top_score, hits, explain));
        }
        let built = run.build(hits, top_score, explain, sink, cancel)?;
        run.finish(built)
    }
}

impl Kb {
    /// Refuses a question that would fill more than half the model's context
    /// by itself (a paste gone wrong): no evidence would fit beside it, and a
    /// model server would reject the request anyway. Callers that create a
    /// session for the question check first, so a refused one leaves none.
    pub fn check_length(&self, question: &str) -> Result<()> {
        check_length(question, &self.cfg)
    }
}

fn check_length(question: &str, cfg: &Config) -> Result<()> {
    let tokens = estimate_tokens(question);
    let most = cfg.llm.context_tokens / 2;
    if tokens > most {
        return Err(crate::error::UserError::new(
            "bad_input",
            format!("the question is too long: about {tokens} tokens, and at most {most} (half of llm.context_tokens) leave room for evidence"),
        )
        .with_hint("ask a shorter question; to search a long text, save it as a note and `kebab ingest` it")
        .into());
    }
    Ok(())
}

