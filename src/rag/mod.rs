//! The ask pipeline: `retrieve → gate → pack → render → generate → extract →
//! validate → verify → build → persist`, one module per stage. `ask` runs
//! them in order and always returns an `Answer` that was saved — refusals
//! and aborted streams included.

pub mod answer;
pub mod expand;
pub mod explain;
pub mod extract;
pub mod gate;
pub mod generate;
pub mod history;
pub mod pack;
pub mod persist;
pub mod render;
pub mod retrieve;
pub mod validate;
pub mod verify;

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::Result;

use crate::config::Config;
use crate::llm::{ChatModel, ChatRequest, Grounding, LlmError};
use crate::script::estimate_tokens;
use crate::search::engine::Engine;
use crate::search::{Mode, SearchHit};
use crate::store::{Store, now_rfc3339};
use answer::{Answer, Candidate, ModelInfo, RetrievalInfo, UsageInfo};
pub use expand::PriorTurn;
use gate::GateReport;
use pack::Packing;
use render::Template;

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
    /// The conversation this ask is the next turn of; `None` for a single-shot ask.
    pub conversation: Option<TurnOf>,
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
            conversation: None,
        }
    }
}

/// A conversation an ask joins as its next turn.
#[derive(Debug, Clone)]
pub struct TurnOf {
    pub conversation_id: i64,
    /// The turns so far, oldest first.
    pub history: Vec<PriorTurn>,
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
    pub timings: Timings,
}

pub struct AskOutcome {
    pub answer: Answer,
    pub explain: Explain,
    /// The model failed; the answer holds any partial text and was saved as aborted.
    pub error: Option<LlmError>,
    /// Row id in `answers`, None when read-only.
    pub answer_id: Option<i64>,
}

/// Room kept for the model's reply when fitting evidence into its context.
const COMPLETION_RESERVE: usize = 1024;

pub fn ask(
    store: &Store,
    engine: &Engine,
    cfg: &Config,
    model: &dyn ChatModel,
    opts: &AskOptions,
    sink: &mut dyn FnMut(&str) -> bool,
    cancel: &AtomicBool,
) -> Result<AskOutcome> {
    let started = Instant::now();
    let template = match opts.template {
        Some(t) => t,
        None => Template::parse(&cfg.rag.prompt_template_version)?,
    };
    let korean = render::is_korean(&opts.question);
    let k = opts.k.unwrap_or(cfg.search.default_k).max(cfg.search.default_k);
    let chunks = store.chunk_count()?;
    // A question the embedder cannot read (Korean, for the English-only
    // built-in model) is answered from lexical search, and recorded so.
    let mode = engine.mode_for(&opts.question, opts.mode);
    let gate = gate::Gate { store, engine, mode, chunks, thresholds: &cfg.rag.score_gate, korean };
    let threshold = gate.threshold();
    let mut explain = Explain::default();
    let prior: &[PriorTurn] = opts.conversation.as_ref().map_or(&[], |c| &c.history);
    let retrieval_query = expand::retrieval_query(&opts.question, prior.last(), cfg.rag.expansion_chars);
    let b = Builder {
        question: &opts.question,
        retrieval_query: retrieval_query.clone(),
        conversation_id: opts.conversation.as_ref().map(|c| c.conversation_id),
        mode,
        template,
        k,
        threshold,
        korean,
        model: ModelInfo { id: model.id().to_string(), provider: model.provider().to_string() },
        embedding: engine.embedder().filter(|_| mode != Mode::Lexical).map(|e| e.model_id().to_string()),
        started,
    };

    if chunks == 0 {
        let a = b.refusal("no_index", None, 0, Vec::new());
        return finish(store, &b, a, explain, None, &[]);
    }

    // Retrieve.
    let t = Instant::now();
    let hits = retrieve::retrieve(store, engine, mode, &opts.question, &retrieval_query, k)?;
    explain.timings.retrieve = ms(t);
    if hits.is_empty() {
        let a = b.refusal("no_chunks", None, 0, Vec::new());
        return finish(store, &b, a, explain, None, &[]);
    }

    // Gate.
    let t = Instant::now();
    let previous = prior.last().map(|p| p.question.as_str());
    let report = gate.turn(&opts.question, previous, &hits)?;
    explain.timings.gate = ms(t);
    let top_score = Some(report.top_score);
    let passed = report.passed;
    explain.gate = Some(report);
    if !passed {
        let candidates = hits
            .iter()
            .take(3)
            .map(|h| Candidate {
                path: h.citation.path.clone(),
                start: h.citation.start,
                end: h.citation.end,
                section: h.citation.section.clone(),
                score: h.score,
            })
            .collect();
        let a = b.refusal("score_gate", top_score, hits.len(), candidates);
        explain.hits = hits;
        return finish(store, &b, a, explain, None, &[]);
    }

    // Pack.
    let t = Instant::now();
    let system = render::system_prompt(template, korean, !prior.is_empty());
    let fixed = estimate_tokens(&system) + estimate_tokens(&opts.question) + COMPLETION_RESERVE + 64;
    let room = cfg.llm.context_tokens.saturating_sub(fixed);
    let budget = cfg.rag.max_context_tokens.min(room).max(100);
    let packing = pack::pack(store, &hits, budget)?;
    // Earlier turns get what the evidence left of the model's context.
    let history = history::select(
        prior,
        cfg.rag.history_max_turns,
        cfg.llm.context_tokens.saturating_sub(fixed + packing.used_tokens),
    );
    explain.history_kept = history.turns.len();
    explain.history_dropped = history.dropped;
    explain.timings.pack = ms(t);
    if packing.entries.is_empty() {
        let a = b.refusal("no_chunks", top_score, hits.len(), Vec::new());
        explain.hits = hits;
        explain.packing = packing;
        return finish(store, &b, a, explain, None, &[]);
    }

    // Render and generate.
    let req = ChatRequest {
        messages: render::render(template, korean, &packing.entries, &opts.question, &history.turns),
        temperature: opts.temperature.unwrap_or(cfg.llm.temperature),
        seed: Some(opts.seed.unwrap_or(cfg.llm.seed)),
        max_tokens: None,
        stream: opts.stream,
        grounding: Some(Grounding {
            question: grounding_question(&opts.question, &retrieval_query),
            context: retrieval_query.strip_prefix(opts.question.as_str()).unwrap_or("").trim().to_string(),
            evidence: packing.entries.iter().map(|e| (e.n, e.text.clone())).collect(),
            korean,
        }),
    };
    explain.timings.before_model = ms(started);
    let t = Instant::now();
    let g = generate::generate(model, &req, sink, cancel);
    explain.timings.generate = ms(t);
    explain.timings.first_token = g.first_token.map(|d| d.as_secs_f64() * 1000.0);

    // Extract, validate, verify.
    let markers = extract::markers(&g.text);
    let verdict = validate::validate(&g.text, &markers, packing.entries.len());
    let verification = (template == Template::V2).then(|| {
        verify::verify(&g.text, &markers, |n| packing.entries.iter().find(|e| e.n == n).map(|e| e.text.as_str()))
    });
    let refusal = if g.aborted { Some("llm_stream_aborted") } else { verdict.err() };
    let valid: Vec<usize> =
        markers.iter().map(|m| m.n).filter(|&n| n >= 1 && n <= packing.entries.len()).collect();

    // Build.
    let usage_info = usage(&g, &req);
    let a = Answer {
        schema_version: "answer.v1",
        answer: g.text,
        citations: answer::citations(&valid, &packing.entries),
        grounded: refusal.is_none(),
        refusal_reason: refusal,
        model: b.model.clone(),
        embedding: b.embedding.clone(),
        prompt_template_version: template.as_str().to_string(),
        retrieval: b.retrieval(top_score, hits.len(), packing.entries.len()),
        usage: usage_info,
        created_at: now_rfc3339(),
        candidates: Vec::new(),
        verification,
        conversation_id: None,
        turn_index: None,
    };
    explain.hits = hits;
    let packed = packing.entries.clone();
    explain.packing = packing;
    finish(store, &b, a, explain, g.error, &packed)
}

/// Times, then persists the answer — with its turn, in one transaction, when
/// the ask is part of a conversation.
fn finish(
    store: &Store,
    b: &Builder,
    mut a: Answer,
    mut explain: Explain,
    error: Option<LlmError>,
    packed: &[pack::Packed],
) -> Result<AskOutcome> {
    explain.timings.total = ms(b.started);
    a.usage.latency_ms = b.started.elapsed().as_millis() as u64;
    if a.refused_before_model() {
        // Refused before any model call: all of it was "before the model".
        explain.timings.before_model = explain.timings.total;
    }
    let answer_id = if store.is_readonly() {
        None
    } else {
        let record = serde_json::to_string(&explain.record())?;
        let saved = persist::persist(store, &a, b.question, packed, &record, None, b.conversation_id)?;
        if b.conversation_id.is_some() {
            a.conversation_id = b.conversation_id;
            a.turn_index = saved.turn_index;
        }
        Some(saved.answer_id)
    };
    a.retrieval.trace_id = answer_id.map_or_else(|| "unsaved".to_string(), |id| format!("ans-{id}"));
    Ok(AskOutcome { answer: a, explain, error, answer_id })
}

/// The provider's token counts, or — when it reported none, as some
/// OpenAI-compatible servers do when streaming — kebab's estimates, marked so.
fn usage(g: &generate::Generated, req: &ChatRequest) -> UsageInfo {
    let estimated = g.usage.prompt_tokens.is_none() && g.usage.completion_tokens.is_none();
    let prompt = || req.messages.iter().map(|m| estimate_tokens(&m.content) as u32).sum();
    UsageInfo {
        prompt_tokens: if estimated { Some(prompt()) } else { g.usage.prompt_tokens },
        completion_tokens: if estimated { Some(estimate_tokens(&g.text) as u32) } else { g.usage.completion_tokens },
        latency_ms: 0,
        estimated,
    }
}

/// What a model without chat history (the extractive one) should answer: the
/// question, or — for a follow-up made only of question words ("Why?") —
/// the question with the context its retrieval query carries.
fn grounding_question(question: &str, retrieval_query: &str) -> String {
    let has_content = crate::search::query::terms(question).iter().any(|t| !crate::search::query::is_question_word(&t.word));
    if has_content { question.to_string() } else { retrieval_query.to_string() }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// The parts of an `Answer` every path shares.
struct Builder<'a> {
    question: &'a str,
    retrieval_query: String,
    conversation_id: Option<i64>,
    mode: Mode,
    template: Template,
    k: usize,
    threshold: f64,
    korean: bool,
    model: ModelInfo,
    embedding: Option<String>,
    started: Instant,
}

impl Builder<'_> {
    fn retrieval(&self, top_score: Option<f64>, returned: usize, used: usize) -> RetrievalInfo {
        RetrievalInfo {
            trace_id: String::new(),
            mode: self.mode.as_str().to_string(),
            k: self.k,
            score_gate: self.threshold,
            top_score,
            chunks_returned: returned,
            chunks_used: used,
            retrieval_query: self.retrieval_query.clone(),
        }
    }

    /// A refusal decided before any model call.
    fn refusal(&self, reason: &'static str, top_score: Option<f64>, returned: usize, candidates: Vec<Candidate>) -> Answer {
        let text = match (reason, self.korean) {
            ("no_index", false) => "There are no notes indexed yet, so there is nothing to answer from. Run `kebab ingest PATH` first.",
            ("no_index", true) => "아직 색인된 노트가 없어 답할 근거가 없습니다. 먼저 `kebab ingest PATH`를 실행하세요.",
            ("score_gate", false) => "Your notes do not seem to answer this: the closest passages match too little of the question.",
            ("score_gate", true) => "노트에서 이 질문의 답을 찾지 못했습니다. 가장 가까운 구절도 질문과 거의 맞지 않습니다.",
            (_, false) => "Nothing in your notes matches this question.",
            (_, true) => "노트에서 이 질문과 맞는 내용을 찾지 못했습니다.",
        };
        Answer {
            schema_version: "answer.v1",
            answer: text.to_string(),
            citations: Vec::new(),
            grounded: false,
            refusal_reason: Some(reason),
            // No model was called; the row still records which one would have answered.
            model: self.model.clone(),
            embedding: self.embedding.clone(),
            prompt_template_version: self.template.as_str().to_string(),
            retrieval: self.retrieval(top_score, returned, 0),
            usage: UsageInfo { latency_ms: self.started.elapsed().as_millis() as u64, ..UsageInfo::default() },
            created_at: now_rfc3339(),
            candidates,
            verification: None,
            conversation_id: None,
            turn_index: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{Message, Role, Usage};

    fn generated(usage: Usage) -> generate::Generated {
        generate::Generated { text: "abcdefgh".into(), usage, aborted: false, first_token: None, error: None }
    }

    fn request() -> ChatRequest {
        ChatRequest { messages: vec![Message::new(Role::User, "abcdefghijkl")], temperature: 0.0, seed: None, max_tokens: None, stream: true, grounding: None }
    }

    #[test]
    fn a_follow_up_of_only_question_words_is_grounded_on_its_context() {
        assert_eq!(grounding_question("Why?", "Why? values move"), "Why? values move");
        assert_eq!(grounding_question("Why is a move cheap?", "Why is a move cheap? x"), "Why is a move cheap?");
    }

    #[test]
    fn reported_usage_is_kept_as_reported() {
        let u = usage(&generated(Usage { prompt_tokens: Some(40), completion_tokens: Some(7) }), &request());
        assert_eq!((u.prompt_tokens, u.completion_tokens, u.estimated), (Some(40), Some(7), false));
    }

    #[test]
    fn missing_usage_is_estimated_and_marked() {
        let u = usage(&generated(Usage::default()), &request());
        assert_eq!((u.prompt_tokens, u.completion_tokens, u.estimated), (Some(3), Some(2), true));
    }
}
