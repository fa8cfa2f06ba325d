//! The state of one ask in progress (`Run`) and the parts of an `Answer`
//! every path shares (`Builder`): what the single-pass ask in `mod.rs` and the
//! multi-hop rounds in `multihop.rs` both drive, stage by stage.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::Result;

use super::answer::{self, Answer, Candidate, ModelInfo, RetrievalInfo, UsageInfo};
use super::render::{self, Template};
use super::{AskOptions, AskOutcome, Explain, Kb, PriorTurn, attribute, closeness, expand, extract, gate, generate, history, pack, persist, validate, verify};
use crate::config::{self, Config};
use crate::llm::{ChatModel, ChatRequest, Grounding, LlmError};
use crate::script::estimate_tokens;
use crate::search::engine::Engine;
use crate::search::spelling::{self, Respelling};
use crate::search::{Mode, SearchHit};
use crate::store::{Store, now_rfc3339};

/// The answer cap is at most this share (1/n) of the model's context, so a
/// small context keeps most of itself for the evidence and the conversation.
const ANSWER_SHARE: usize = 4;

/// An answer built but not yet saved, with what explains it.
pub(super) struct Built {
    pub(super) answer: Answer,
    pub(super) explain: Explain,
    /// The model failed; the answer holds any partial text.
    pub(super) error: Option<LlmError>,
    pub(super) packed: Vec<pack::Packed>,
    /// How long the answering model call took, in milliseconds.
    pub(super) generate_ms: f64,
}

/// A generated answer checked: what the `Answer` records of the checks.
struct Checked {
    verification: Option<verify::Verification>,
    attribution: Option<attribute::Attribution>,
    /// Why the answer is refused, if it is.
    refusal: Option<&'static str>,
    citations: Vec<answer::CitationRef>,
}

/// One ask in progress: what every stage reads.
pub(super) struct Run<'a> {
    pub(super) store: &'a Store,
    pub(super) engine: &'a Engine,
    pub(super) cfg: &'a Config,
    pub(super) model: &'a dyn ChatModel,
    pub(super) opts: &'a AskOptions,
    /// Earlier turns of the conversation, oldest first.
    pub(super) prior: &'a [PriorTurn],
    pub(super) gate: gate::Gate<'a>,
    /// Chunks in the index.
    pub(super) chunks: i64,
    /// The context planned with: `llm.context_tokens`, never above the
    /// model's maximum when its server reports one.
    pub(super) context: usize,
    /// The longest answer asked for (room kept for the reply).
    pub(super) answer_cap: usize,
    pub(super) b: Builder<'a>,
}

impl<'a> Run<'a> {
    pub(super) fn new(kb: &'a Kb, opts: &'a AskOptions) -> Result<Run<'a>> {
        let started = Instant::now();
        let (store, engine, cfg, model) = (&kb.store, &kb.engine, &kb.cfg, kb.model.as_ref());
        let template = match opts.template {
            Some(t) => t,
            None => cfg.rag.prompt_template_version,
        };
        let korean = render::is_korean(&opts.question);
        let k = opts.k.unwrap_or(cfg.search.default_k).max(1);
        let chunks = store.chunk_count()?;
        // A question the embedder cannot read (Korean, for the English-only
        // built-in model) is answered from lexical search, and recorded so.
        let mode = engine.mode_for(&opts.question, opts.mode);
        let gate = gate::Gate { store, engine, mode, chunks, thresholds: &cfg.rag.score_gate, korean };
        let threshold = gate.threshold();
        let prior: &[PriorTurn] = opts.turn.as_ref().map_or(&[], |c| &c.history);
        let (reading, respelled) = spelling::respell(store, &opts.question)?;
        let b = Builder {
            question: &opts.question,
            retrieval_query: expand::retrieval_query(&reading, prior.last(), cfg.rag.expansion_chars),
            reading,
            respelled,
            conversation_id: opts.turn.as_ref().and_then(|c| c.save_to),
            mode,
            template,
            k,
            threshold,
            korean,
            model: ModelInfo { id: model.id().to_string(), provider: model.provider().to_string() },
            embedding: engine.embedder().filter(|_| mode != Mode::Lexical).map(|e| e.model_id().to_string()),
            started,
        };
        let context = model.context_window().map_or(cfg.llm.context_tokens, |max| cfg.llm.context_tokens.min(max));
        let answer_cap = cfg.llm.max_answer_tokens.min(context / ANSWER_SHARE);
        Ok(Run { store, engine, cfg, model, opts, prior, gate, chunks, context, answer_cap, b })
    }

    /// The model's context taken before any evidence or history: `system`,
    /// the question and the room for the reply.
    pub(super) fn fixed_tokens(&self, system: &str) -> usize {
        estimate_tokens(system) + estimate_tokens(&self.opts.question) + self.answer_cap + 64
    }

    /// The evidence budget: `rag.max_context_tokens`, capped by what the
    /// model's context leaves.
    pub(super) fn evidence_budget(&self, system: &str) -> usize {
        // In a conversation, room for the previous turn's short form is kept
        // back from the evidence, so a small context does not lose it.
        let room = self.context.saturating_sub(self.fixed_tokens(system) + history::reserve(self.prior));
        self.cfg.rag.max_context_tokens.min(room).max(100)
    }

    /// A refusal decided before the answer was generated; a `score_gate`
    /// refusal lists the closest passages.
    pub(super) fn refused(&self, reason: &'static str, top_score: Option<f64>, hits: Vec<SearchHit>, mut explain: Explain) -> Built {
        let candidates = if reason == "score_gate" {
            hits.iter()
                .take(3)
                .map(|h| {
                    // A follow-up's hits are in the order of the two searches
                    // fused, each with its own search's score: the fused one says why.
                    let (score, score_kind) = h.ranked_by();
                    Candidate {
                        path: h.citation.path.clone(),
                        start: h.citation.start,
                        end: h.citation.end,
                        section: h.citation.section.clone(),
                        score,
                        score_kind,
                    }
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
    pub(super) fn build(
        &self,
        hits: Vec<SearchHit>,
        top_score: Option<f64>,
        mut explain: Explain,
        sink: &mut dyn FnMut(&str) -> bool,
        cancel: &AtomicBool,
    ) -> Result<Built> {
        let t = Instant::now();
        let (packing, history) = self.pack(&hits)?;
        explain.history_kept = history.turns.len();
        explain.history_dropped = history.dropped;
        explain.history_shortened = history.shortened;
        explain.timings.pack += ms(t);
        if packing.entries.is_empty() {
            explain.packing = packing;
            return Ok(self.refused("no_chunks", top_score, hits, explain));
        }

        let mut req = self.request(&packing, &history);
        explain.timings.before_model = ms(self.b.started);
        let t = Instant::now();
        // The built-in answerer's reading of the evidence is part of its answering time.
        if let Some(g) = req.grounding.as_mut() {
            closeness::measure(self.engine, self.b.mode, self.model, g);
        }
        let g = generate::generate(self.model, &req, sink, cancel);
        explain.timings.generate = ms(t);
        explain.timings.first_token = g.first_token.map(|d| d.as_secs_f64() * 1000.0);

        let Checked { verification, attribution, refusal, citations } = self.check(&g, &packing);
        let usage_info = usage(&g, &req);
        // A reply with no text is refused as any ungrounded one, but in kebab's words saying why,
        // or the refusal would explain nothing.
        let text = match refusal {
            Some("llm_self_judge") if g.text.trim().is_empty() => no_answer_text(g.reasoned, g.length, self.b.korean),
            _ => g.text,
        };
        let answer = Answer {
            schema_version: "answer.v1",
            answer: text,
            citations,
            grounded: refusal.is_none(),
            refusal_reason: refusal,
            model: self.b.model.clone(),
            embedding: self.b.embedding.clone(),
            prompt_template_version: self.b.template.as_str().to_string(),
            retrieval: self.b.retrieval(top_score, hits.len(), packing.entries.len()),
            usage: usage_info,
            created_at: now_rfc3339(),
            candidates: Vec::new(),
            verification,
            attribution,
            conversation_id: None,
            turn_index: None,
            hops: None,
            finish: g.length.then_some(answer::Finish::Length),
        };
        explain.hits = hits;
        let packed = packing.entries.clone();
        explain.packing = packing;
        let generate_ms = explain.timings.generate;
        Ok(Built { answer, explain, error: g.error, packed, generate_ms })
    }

    /// The evidence packed into the budget, and the earlier turns that fit in
    /// what it leaves of the model's context.
    fn pack(&self, hits: &[SearchHit]) -> Result<(pack::Packing, history::HistorySelection)> {
        let system = render::system_prompt(self.b.template, self.b.korean, !self.prior.is_empty());
        let fixed = self.fixed_tokens(&system);
        let (budget_tokens, rag) = (self.evidence_budget(&system), &self.cfg.rag);
        let spec = pack::Spec { budget_tokens, evidence: rag.evidence, query: &self.b.retrieval_query };
        let packing = pack::pack_with(self.store, hits, &spec)?;
        // Earlier turns get what the evidence left of the model's context.
        let history = history::select(self.prior, rag.history_max_turns, self.context.saturating_sub(fixed + packing.used_tokens));
        Ok((packing, history))
    }

    /// The request to the model: the prompt rendered over the packed
    /// evidence and the turns kept, and what the built-in answerer reads.
    fn request(&self, packing: &pack::Packing, history: &history::HistorySelection) -> ChatRequest {
        let (opts, cfg, template, korean) = (self.opts, self.cfg, self.b.template, self.b.korean);
        ChatRequest {
            messages: render::render(template, korean, &packing.entries, &opts.question, &history.turns),
            temperature: opts.temperature.unwrap_or(cfg.llm.temperature),
            seed: Some(opts.seed.unwrap_or(cfg.llm.seed)),
            max_tokens: u32::try_from(self.answer_cap).ok(),
            stream: opts.stream,
            grounding: Some(Grounding {
                // The question as read; a follow-up that names nothing
                // ("why?") is read with `context` by the model itself.
                question: self.b.reading.clone(),
                context: self.b.context().to_string(),
                evidence: packing.entries.iter().map(|e| (e.n, e.text.clone())).collect(),
                korean,
                closeness: Vec::new(),
                headings: packing.entries.iter().filter_map(pack::Packed::heading).collect(),
                said: self.prior.last().filter(|p| p.grounded).map(|p| p.answer.clone()).unwrap_or_default(),
            }),
        }
    }

    /// What the model wrote, checked: its markers extracted, its quotes
    /// verified (rag-v2), its sentences attributed, the verdict, and the
    /// citations it earns.
    fn check(&self, g: &generate::Generated, packing: &pack::Packing) -> Checked {
        let markers = extract::markers(&g.text);
        let verification = (self.b.template == Template::V2).then(|| {
            verify::verify(&g.text, &markers, |n| packing.entries.iter().find(|e| e.n == n).map(|e| e.text.as_str()))
        });
        let finished = g.error.is_none() && !g.aborted;
        let attribution = (finished && self.cfg.rag.attribution == config::Attribution::Auto)
            .then(|| attribution(&g.text, &markers, &packing.entries, &self.b.reading))
            .flatten();
        let refusal = match &g.error {
            Some(e) => Some(generate::failure_reason(e)),
            None if g.aborted => Some("llm_stream_aborted"),
            None => {
                let checks = validate::Checks {
                    markers: &markers,
                    packed: packing.entries.len(),
                    verification: verification.as_ref(),
                    attribution: attribution.as_ref(),
                };
                validate::verdict(&g.text, &checks).err()
            }
        };
        let valid: Vec<usize> =
            markers.iter().map(|m| m.n).filter(|&n| n >= 1 && n <= packing.entries.len()).collect();
        let mut citations = answer::citations(&valid, &packing.entries);
        if let Some(a) = &attribution {
            let attributed = a.attributed_entries().into_iter().map(|(n, s)| (n, answer::Origin::Attributed, Some(s)));
            answer::add_citations(&mut citations, attributed, &packing.entries);
        }
        Checked { verification, attribution, refusal, citations }
    }

    /// Times, then persists the answer — with its turn, in one transaction,
    /// when the ask is part of a conversation.
    pub(super) fn finish(&self, built: Built) -> Result<AskOutcome> {
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
            let record = persist::Record {
                question: b.question,
                packed: &packed,
                explain_json: serde_json::to_string(&explain.record())?,
                hops_json: a.hops.as_ref().map(serde_json::to_string).transpose()?,
                conversation_id: b.conversation_id,
            };
            let saved = persist::persist(self.store, &a, record)?;
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

/// The attribution of an answer the model did not cite in full, or of one
/// with no substantive sentence (nothing but the question restated: not
/// grounded, however cited); `None` when every substantive sentence carries
/// the model's own marker (nothing for kebab to add).
pub(super) fn attribution(text: &str, markers: &[extract::Marker], entries: &[pack::Packed], question: &str) -> Option<attribute::Attribution> {
    let ev = attribute::Evidence::new(entries.iter().map(|e| (e.n, e.text.as_str()))).for_question(question);
    let a = attribute::attribute(text, markers, &ev, attribute::THRESHOLD);
    (a.any_attributed() || a.sentences.is_empty()).then_some(a)
}

/// kebab's words in place of an answer the model wrote no text for, by
/// `[reasoned][korean]`: a thinking model that sent only its reasoning, or a
/// server that sent an empty reply; each says what to change.
const NO_ANSWER: [[&str; 2]; 2] = [
    [
        "The model wrote no answer text: its server sent an empty reply, so there is nothing to check against your notes. \
         Ask again, or set llm.model to a model that answers in the reply's text \
         (some reasoning models' servers put everything in a field of their own).",
        "모델이 답을 쓰지 않았습니다. 서버가 빈 응답을 보내 노트와 대조할 내용이 없습니다. \
         다시 묻거나, llm.model을 응답 본문에 답하는 모델로 바꾸세요 (일부 추론 모델의 서버는 모든 내용을 별도 필드에 넣습니다).",
    ],
    [
        "The model sent only its reasoning and wrote no answer, so there is nothing to check against your notes. \
         Set llm.model to a model that answers without a separate reasoning part, \
         or turn the model's thinking off on its server.",
        "모델이 추론 과정만 보내고 답은 쓰지 않아 노트와 대조할 내용이 없습니다. \
         llm.model을 추론을 따로 내보내지 않고 답하는 모델로 바꾸거나, 서버에서 모델의 생각(thinking) 기능을 끄세요.",
    ],
];

/// `NO_ANSWER`, with the answer cap named when a thinking model reached it
/// while reasoning: it may only have run out of room.
fn no_answer_text(reasoned: bool, cut: bool, korean: bool) -> String {
    let said = NO_ANSWER[usize::from(reasoned)][usize::from(korean)];
    match (reasoned && cut, korean) {
        (false, _) => said.to_string(),
        (true, false) => {
            format!("{said} It stopped at llm.max_answer_tokens while reasoning: a larger cap leaves it room to answer.")
        }
        (true, true) => format!("{said} 모델이 추론하는 중에 llm.max_answer_tokens에 이르렀습니다. 값을 늘리면 추론 뒤에 답할 여유가 생깁니다."),
    }
}

/// Whether a saved answer is kebab's words for a reply with no text: no
/// exchange the next turn's prompt should show the model as its own.
pub(super) fn is_no_answer_text(answer: &str) -> bool {
    NO_ANSWER.iter().flatten().any(|said| answer.starts_with(said))
}

/// The provider's token counts, or — when it reported none, as some
/// OpenAI-compatible servers do when streaming — kebab's estimates, marked so.
pub(super) fn usage(g: &generate::Generated, req: &ChatRequest) -> UsageInfo {
    let estimated = g.usage.prompt_tokens.is_none() && g.usage.completion_tokens.is_none();
    let prompt = || req.messages.iter().map(|m| estimate_tokens(&m.content) as u32).sum();
    UsageInfo {
        prompt_tokens: if estimated { Some(prompt()) } else { g.usage.prompt_tokens },
        completion_tokens: if estimated { Some(estimate_tokens(&g.text) as u32) } else { g.usage.completion_tokens },
        latency_ms: 0,
        estimated,
    }
}

pub(super) fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// The parts of an `Answer` every path shares.
pub(super) struct Builder<'a> {
    /// The question as asked (saved and shown as typed).
    pub(super) question: &'a str,
    /// The question as the search, the gate and the answerer read it: its
    /// misspelt words respelt (`search::spelling`).
    pub(super) reading: String,
    pub(super) respelled: Vec<Respelling>,
    pub(super) retrieval_query: String,
    pub(super) conversation_id: Option<i64>,
    pub(super) mode: Mode,
    pub(super) template: Template,
    pub(super) k: usize,
    pub(super) threshold: f64,
    pub(super) korean: bool,
    pub(super) model: ModelInfo,
    pub(super) embedding: Option<String>,
    pub(super) started: Instant,
}

impl Builder<'_> {
    /// What the conversation added to the retrieval query after the
    /// question as read: the start of the previous answer (or the previous
    /// question, after a refusal); empty outside a conversation.
    pub(super) fn context(&self) -> &str {
        self.retrieval_query.strip_prefix(self.reading.as_str()).unwrap_or("").trim()
    }

    pub(super) fn retrieval(&self, top_score: Option<f64>, returned: usize, used: usize) -> RetrievalInfo {
        RetrievalInfo {
            trace_id: String::new(),
            mode: self.mode.as_str().to_string(),
            k: self.k,
            score_gate: self.threshold,
            top_score,
            chunks_returned: returned,
            chunks_used: used,
            retrieval_query: self.retrieval_query.clone(),
            respelled: self.respelled.clone(),
        }
    }

    /// A refusal decided before any model call.
    pub(super) fn refusal(&self, reason: &'static str, top_score: Option<f64>, returned: usize, candidates: Vec<Candidate>) -> Answer {
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
            ("model_error", false) => "The model server turned the request down, so nothing was answered.",
            ("model_error", true) => "모델 서버가 요청을 거절해 답하지 못했습니다.",
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
            attribution: None,
            conversation_id: None,
            turn_index: None,
            hops: None,
            finish: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{Message, Role, Usage};

    fn generated(usage: Usage) -> generate::Generated {
        let text = "abcdefgh".into();
        generate::Generated { text, usage, aborted: false, first_token: None, error: None, length: false, reasoned: false }
    }

    fn request() -> ChatRequest {
        ChatRequest { messages: vec![Message::new(Role::User, "abcdefghijkl")], temperature: 0.0, seed: None, max_tokens: None, stream: true, grounding: None }
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
