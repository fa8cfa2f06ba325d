//! The ask pipeline: `retrieve → gate → pack → render → generate → extract →
//! validate → verify → build → persist`, one module per stage. `ask` runs
//! them in order and always returns an `Answer` that was saved — refusals
//! and aborted streams included. A multi-hop ask (`multihop`, prompts in
//! `plan`) replaces the single retrieve and gate with rounds of
//! sub-questions, then runs the same stages from pack on.

pub mod answer;
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
    /// Decompose the question into sub-questions and retrieve for each
    /// (`multihop`) instead of one retrieval.
    pub multi_hop: bool,
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
            multi_hop: false,
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
    check_length(&opts.question, cfg)?;
    if opts.multi_hop {
        multihop::check_model(model)?;
    }
    let run = Run::new(store, engine, cfg, model, opts)?;
    if opts.multi_hop {
        return multihop::ask(&run, sink, cancel);
    }
    let mut explain = Explain::default();
    if run.chunks == 0 {
        return run.finish(run.refused("no_index", None, Vec::new(), explain));
    }
    // Nothing to search for ("what is it?", "???"): outside a conversation
    // there is no earlier question to read it with (issue 14).
    if run.prior.is_empty() && gate::no_content_words(&opts.question) {
        return run.finish(run.refused("no_content_words", None, Vec::new(), explain));
    }

    // Retrieve.
    let t = Instant::now();
    let hits = retrieve::retrieve(store, engine, run.b.mode, &opts.question, &run.b.retrieval_query, run.b.k)?;
    explain.timings.retrieve = ms(t);
    if hits.is_empty() {
        return run.finish(run.refused("no_chunks", None, hits, explain));
    }

    // Gate.
    let t = Instant::now();
    let previous = run.prior.last().map(|p| p.question.as_str());
    let report = run.gate.turn(&opts.question, previous, &hits)?;
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

/// Refuses a question that would fill more than half the model's context by
/// itself (a paste gone wrong): no evidence would fit beside it, and a model
/// server would reject the request anyway.
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

/// An answer built but not yet saved, with what explains it.
struct Built {
    answer: Answer,
    explain: Explain,
    /// The model failed; the answer holds any partial text.
    error: Option<LlmError>,
    packed: Vec<pack::Packed>,
    /// How long the answering model call took, in milliseconds.
    generate_ms: f64,
}

/// One ask in progress: what every stage reads.
struct Run<'a> {
    store: &'a Store,
    engine: &'a Engine,
    cfg: &'a Config,
    model: &'a dyn ChatModel,
    opts: &'a AskOptions,
    /// Earlier turns of the conversation, oldest first.
    prior: &'a [PriorTurn],
    gate: gate::Gate<'a>,
    /// Chunks in the index.
    chunks: i64,
    b: Builder<'a>,
}

impl<'a> Run<'a> {
    fn new(store: &'a Store, engine: &'a Engine, cfg: &'a Config, model: &'a dyn ChatModel, opts: &'a AskOptions) -> Result<Run<'a>> {
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
        let prior: &[PriorTurn] = opts.conversation.as_ref().map_or(&[], |c| &c.history);
        let b = Builder {
            question: &opts.question,
            retrieval_query: expand::retrieval_query(&opts.question, prior.last(), cfg.rag.expansion_chars),
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
        Ok(Run { store, engine, cfg, model, opts, prior, gate, chunks, b })
    }

    /// The model's context taken before any evidence or history: `system`,
    /// the question and the room for the reply.
    fn fixed_tokens(&self, system: &str) -> usize {
        estimate_tokens(system) + estimate_tokens(&self.opts.question) + COMPLETION_RESERVE + 64
    }

    /// The evidence budget: `rag.max_context_tokens`, capped by what the
    /// model's context leaves.
    fn evidence_budget(&self, system: &str) -> usize {
        let room = self.cfg.llm.context_tokens.saturating_sub(self.fixed_tokens(system));
        self.cfg.rag.max_context_tokens.min(room).max(100)
    }

    /// A refusal decided before the answer was generated; a `score_gate`
    /// refusal lists the closest passages.
    fn refused(&self, reason: &'static str, top_score: Option<f64>, hits: Vec<SearchHit>, mut explain: Explain) -> Built {
        let candidates = if reason == "score_gate" {
            hits.iter()
                .take(3)
                .map(|h| Candidate {
                    path: h.citation.path.clone(),
                    start: h.citation.start,
                    end: h.citation.end,
                    section: h.citation.section.clone(),
                    score: h.score,
                })
                .collect()
        } else {
            Vec::new()
        };
        let answer = self.b.refusal(reason, top_score, hits.len(), candidates);
        explain.hits = hits;
        Built { answer, explain, error: None, packed: Vec::new(), generate_ms: 0.0 }
    }

    /// Pack → render → generate → extract → validate → verify → build, over
    /// `hits` (already retrieved and past the gate).
    fn build(
        &self,
        hits: Vec<SearchHit>,
        top_score: Option<f64>,
        mut explain: Explain,
        sink: &mut dyn FnMut(&str) -> bool,
        cancel: &AtomicBool,
    ) -> Result<Built> {
        let (opts, cfg, template, korean) = (self.opts, self.cfg, self.b.template, self.b.korean);
        let retrieval_query = &self.b.retrieval_query;

        // Pack.
        let t = Instant::now();
        let system = render::system_prompt(template, korean, !self.prior.is_empty());
        let packing = pack::pack(self.store, &hits, self.evidence_budget(&system))?;
        // Earlier turns get what the evidence left of the model's context.
        let fixed = self.fixed_tokens(&system);
        let history = history::select(
            self.prior,
            cfg.rag.history_max_turns,
            cfg.llm.context_tokens.saturating_sub(fixed + packing.used_tokens),
        );
        explain.history_kept = history.turns.len();
        explain.history_dropped = history.dropped;
        explain.timings.pack += ms(t);
        if packing.entries.is_empty() {
            explain.packing = packing;
            return Ok(self.refused("no_chunks", top_score, hits, explain));
        }

        // Render and generate.
        let req = ChatRequest {
            messages: render::render(template, korean, &packing.entries, &opts.question, &history.turns),
            temperature: opts.temperature.unwrap_or(cfg.llm.temperature),
            seed: Some(opts.seed.unwrap_or(cfg.llm.seed)),
            max_tokens: None,
            stream: opts.stream,
            grounding: Some(Grounding {
                question: grounding_question(&opts.question, retrieval_query),
                context: retrieval_query.strip_prefix(opts.question.as_str()).unwrap_or("").trim().to_string(),
                evidence: packing.entries.iter().map(|e| (e.n, e.text.clone())).collect(),
                korean,
            }),
        };
        explain.timings.before_model = ms(self.b.started);
        let t = Instant::now();
        let g = generate::generate(self.model, &req, sink, cancel);
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
        let answer = Answer {
            schema_version: "answer.v1",
            answer: g.text,
            citations: answer::citations(&valid, &packing.entries),
            grounded: refusal.is_none(),
            refusal_reason: refusal,
            model: self.b.model.clone(),
            embedding: self.b.embedding.clone(),
            prompt_template_version: template.as_str().to_string(),
            retrieval: self.b.retrieval(top_score, hits.len(), packing.entries.len()),
            usage: usage_info,
            created_at: now_rfc3339(),
            candidates: Vec::new(),
            verification,
            conversation_id: None,
            turn_index: None,
            hops: None,
        };
        explain.hits = hits;
        let packed = packing.entries.clone();
        explain.packing = packing;
        let generate_ms = explain.timings.generate;
        Ok(Built { answer, explain, error: g.error, packed, generate_ms })
    }

    /// Times, then persists the answer — with its turn, in one transaction,
    /// when the ask is part of a conversation.
    fn finish(&self, built: Built) -> Result<AskOutcome> {
        let Built { answer: mut a, mut explain, error, packed, .. } = built;
        let b = &self.b;
        explain.timings.total = ms(b.started);
        a.usage.latency_ms = b.started.elapsed().as_millis() as u64;
        if a.refused_before_model() {
            // Refused before any model call: all of it was "before the model".
            explain.timings.before_model = explain.timings.total;
        }
        let answer_id = if self.store.is_readonly() {
            None
        } else {
            let record = serde_json::to_string(&explain.record())?;
            let hops = a.hops.as_ref().map(serde_json::to_string).transpose()?;
            let saved = persist::persist(self.store, &a, b.question, &packed, &record, hops.as_deref(), b.conversation_id)?;
            if b.conversation_id.is_some() {
                a.conversation_id = b.conversation_id;
                a.turn_index = saved.turn_index;
            }
            Some(saved.answer_id)
        };
        a.retrieval.trace_id = answer_id.map_or_else(|| "unsaved".to_string(), |id| format!("ans-{id}"));
        Ok(AskOutcome { answer: a, explain, error, answer_id })
    }
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
            ("multi_hop_decompose_failed", false) => "The model did not split this question into sub-questions kebab could read, so nothing was looked up. Ask again without multi-hop, or rephrase the question.",
            ("multi_hop_decompose_failed", true) => "모델이 이 질문을 읽을 수 있는 하위 질문으로 나누지 못해 아무것도 찾지 않았습니다. 멀티홉 없이 다시 묻거나 질문을 바꿔 보세요.",
            ("no_content_words", false) => "This question names nothing to look up. Ask about a topic, e.g. \"What is ownership?\", or ask it as a follow-up in a conversation (`kebab ask --session NAME`, or the REPL).",
            ("no_content_words", true) => "이 질문에는 찾아볼 주제어가 없습니다. \"소유권이란 무엇인가요?\"처럼 주제를 넣어 묻거나, 대화 안에서 후속 질문으로 물어보세요 (`kebab ask --session NAME` 또는 REPL).",
            ("llm_stream_aborted", false) => "The model stopped before the answer was written.",
            ("llm_stream_aborted", true) => "답이 쓰이기 전에 모델이 멈췄습니다.",
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
            hops: None,
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
