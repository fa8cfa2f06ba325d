//! Multi-hop asks (`kebab ask --multi-hop`, `:multihop on`), for questions
//! that need more than one lookup ("Which chapter introduces the trait that
//! `Box<T>` implements to be dereferenced, and what does it require?").
//!
//! decompose: the model splits the question into sub-questions (prompts and
//! reply parsing in `plan`) → each sub-question is searched and gated like a
//! question of its own; the hits that pass join one pool, one entry per chunk
//! → decide: the model sees the pool and names what is still missing, or
//! stops → rounds repeat under the `rag.multi_hop_*` caps → synthesize: the
//! normal stages (pack → render → generate → … → persist) answer the
//! original question over the pool. Every step is a `HopRecord`, returned in
//! `answer.v1.hops` and saved in `answers.hops_json`, refusals included.

use std::collections::HashSet;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::gate::GateReport;
use super::pack::{self, Packed};
use super::run::{Built, Run, ms};
use super::{AskOutcome, Explain, generate, plan};
use crate::config::RagConfig;
use crate::error::UserError;
use crate::llm::{ChatModel, ChatRequest, LlmError, Message};
use crate::script::shorten;
use crate::search::SearchHit;

/// What one pooled chunk costs the answer's prompt, for sizing the pool to
/// the model's context: the chunker's 800-character target at about four
/// characters a token.
const TYPICAL_CHUNK_TOKENS: usize = 200;

/// The smallest pool, however small the context: one chunk per hop of a
/// two-hop question.
const MIN_POOL: usize = 2;

/// Longest planning reply: a JSON list of a few questions fits easily, and a
/// model that starts answering instead is cut short.
const PLAN_MAX_TOKENS: u32 = 400;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HopKind {
    Decompose,
    Decide,
    Synthesize,
}

impl HopKind {
    pub fn as_str(self) -> &'static str {
        match self {
            HopKind::Decompose => "decompose",
            HopKind::Decide => "decide",
            HopKind::Synthesize => "synthesize",
        }
    }
}

/// One step of a multi-hop ask.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HopRecord {
    /// The step's position in the ask, from 1.
    pub iter: usize,
    pub kind: HopKind,
    /// The sub-questions this step searched (after the caps).
    pub sub_queries: Vec<String>,
    /// Chunks this step's searches added to the pool (chunks already there do not count).
    pub context_chunks_added: usize,
    /// The rounds ended here because a cap was reached, not because the model said so.
    pub forced_stop: bool,
    /// How long the step's model call took; 0 when it made none.
    pub llm_call_ms: u64,
    /// What else happened: an unreadable reply, sub-questions the gate turned
    /// down, the cap that stopped the rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Multi-hop needs a model that follows instructions; the built-in extractive
/// model only quotes evidence, so it is refused up front rather than
/// quietly answering single-pass.
pub fn check_model(model: &dyn ChatModel) -> Result<(), UserError> {
    if model.follows_instructions() {
        return Ok(());
    }
    Err(UserError::new(
        "bad_input",
        format!(
            "multi-hop needs a chat model that can write sub-questions, and {}/{} only quotes evidence",
            model.provider(),
            model.id()
        ),
    )
    .with_hint(
        "set llm.provider to \"ollama\" or \"openai\" with a running server (`auto` uses the built-in model when none answers), or ask without multi-hop",
    ))
}

struct Caps {
    depth: usize,
    per_iter: usize,
    total: usize,
    pool: usize,
    /// The pool is smaller than `rag.multi_hop_max_pool_chunks`: that many
    /// chunks would not reach the answer through the model's context.
    pool_by_context: bool,
}

impl Caps {
    fn of(rag: &RagConfig) -> Caps {
        Caps {
            depth: rag.multi_hop_max_depth,
            per_iter: rag.multi_hop_max_sub_queries_per_iter,
            total: rag.multi_hop_max_total_sub_queries,
            pool: rag.multi_hop_max_pool_chunks,
            pool_by_context: false,
        }
    }

    /// Caps the pool at what the answer's evidence budget can take.
    fn within(mut self, evidence_tokens: usize) -> Caps {
        let fits = (evidence_tokens / TYPICAL_CHUNK_TOKENS).max(MIN_POOL);
        if fits < self.pool {
            self.pool = fits;
            self.pool_by_context = true;
        }
        self
    }
}

/// The chunks gathered so far, in the order they joined, one hit per chunk.
struct Pool {
    hits: Vec<SearchHit>,
    ids: HashSet<i64>,
    cap: usize,
}

impl Pool {
    /// Adds the hits of one round's sub-questions — rank 1 of each, then
    /// rank 2 of each, … — so that every sub-question gets its best chunks in
    /// before the cap fills the pool. Returns how many chunks were new.
    fn add(&mut self, lists: Vec<Vec<SearchHit>>) -> usize {
        let before = self.hits.len();
        let deepest = lists.iter().map(Vec::len).max().unwrap_or(0);
        let mut lists: Vec<std::vec::IntoIter<SearchHit>> = lists.into_iter().map(Vec::into_iter).collect();
        for _ in 0..deepest {
            for list in &mut lists {
                let Some(mut hit) = list.next() else { continue };
                if self.full() {
                    return self.hits.len() - before;
                }
                if self.ids.insert(hit.chunk_id) {
                    hit.rank = self.hits.len() + 1;
                    self.hits.push(hit);
                }
            }
        }
        self.hits.len() - before
    }

    fn full(&self) -> bool {
        self.hits.len() >= self.cap
    }
}

/// A planning call's result.
struct Call {
    text: String,
    ms: u64,
    error: Option<LlmError>,
    aborted: bool,
}

/// A multi-hop ask between its steps.
struct Hops<'r, 'a> {
    run: &'r Run<'a>,
    caps: Caps,
    records: Vec<HopRecord>,
    pool: Pool,
    /// Every sub-question searched so far.
    searched: Vec<String>,
    explain: Explain,
    /// The strongest gate evidence of any sub-question that passed.
    best_gate: Option<GateReport>,
    /// Sub-questions the gate turned down.
    gated_out: usize,
    /// Token counts of the planning calls, added to the answer's.
    prompt_tokens: u32,
    completion_tokens: u32,
    estimated: bool,
}

pub(super) fn ask(run: &Run, sink: &mut dyn FnMut(&str) -> bool, cancel: &AtomicBool) -> Result<AskOutcome> {
    let system = super::render::system_prompt(run.b.template, run.b.korean, !run.prior.is_empty());
    let caps = Caps::of(&run.cfg.rag).within(run.evidence_budget(&system));
    let mut h = Hops {
        run,
        pool: Pool { hits: Vec::new(), ids: HashSet::new(), cap: caps.pool },
        caps,
        records: Vec::new(),
        searched: Vec::new(),
        explain: Explain::default(),
        best_gate: None,
        gated_out: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        estimated: false,
    };
    if run.chunks == 0 {
        return h.refuse("no_index");
    }
    // Read as the single-pass ask reads it (misspelt words respelt): the
    // retrieval query, whose conversation context follows it, starts with it.
    let (question, korean) = (run.b.reading.as_str(), run.b.korean);

    // Decompose. In a conversation the expansion of the retrieval query says
    // what the previous turn was about.
    let context = run.b.context();
    let call = h.plan(plan::decompose_messages(question, context, h.caps.per_iter, korean), cancel);
    if call.error.is_some() || call.aborted {
        return h.abort(HopKind::Decompose, call);
    }
    let Some(subs) = plan::parse_questions(&call.text) else {
        let note = format!("unreadable reply: {:?}", shorten(&call.text, 80));
        if run.opts.strict_multi_hop {
            h.record(HopKind::Decompose, Vec::new(), 0, call.ms, Some(note));
            return h.refuse("multi_hop_decompose_failed");
        }
        // Answer single-pass: the question searched as asked, no decide rounds.
        let subs = h.take(vec![question.to_string()]);
        let (added, dropped) = h.search(&subs)?;
        let note = join_notes([Some(format!("{note}; answered single-pass from the question as asked")), dropped]);
        h.record(HopKind::Decompose, subs, added, call.ms, note);
        return h.synthesize(None, sink, cancel);
    };
    let (mut subs, fragments) = drop_fragments(subs);
    let mut note = fragments;
    if subs.is_empty() {
        // `[]`: the model sees nothing to split; the question is its own lookup.
        subs.push(question.to_string());
        note = join_notes([note, Some("the model did not split the question; searched it as asked".to_string())]);
    }
    let subs = h.take(subs);
    let (added, dropped) = h.search(&subs)?;
    h.record(HopKind::Decompose, subs, added, call.ms, join_notes([note, dropped]));

    // Decide, and search again, until the model stops or a cap does.
    let mut rounds = 1;
    let stop = loop {
        let caps = &h.caps;
        if rounds >= caps.depth {
            break Some(format!("stopped at rag.multi_hop_max_depth = {}", caps.depth));
        }
        if h.searched.len() >= caps.total {
            break Some(format!("stopped at rag.multi_hop_max_total_sub_queries = {}", caps.total));
        }
        if h.pool.full() {
            break Some(if caps.pool_by_context {
                format!("stopped at {} pooled chunks, what the model's context (llm.context_tokens) can take", caps.pool)
            } else {
                format!("stopped at rag.multi_hop_max_pool_chunks = {}", caps.pool)
            });
        }
        let room = caps.per_iter.min(caps.total - h.searched.len());
        let evidence = h.evidence()?;
        let call = h.plan(plan::decide_messages(question, &evidence, &h.searched, room, korean), cancel);
        if call.error.is_some() || call.aborted {
            return h.abort(HopKind::Decide, call);
        }
        let Some(wanted) = plan::parse_questions(&call.text) else {
            let note = format!(
                "unreadable reply, answering from the {} pooled chunks: {:?}",
                h.pool.hits.len(),
                shorten(&call.text, 80)
            );
            h.record(HopKind::Decide, Vec::new(), 0, call.ms, Some(note));
            break None;
        };
        let (wanted, fragments) = drop_fragments(wanted);
        let asked_for = wanted.len();
        let subs = h.take(wanted);
        if subs.is_empty() {
            let note = (asked_for > 0).then(|| "only sub-questions already searched".to_string());
            h.record(HopKind::Decide, Vec::new(), 0, call.ms, join_notes([fragments, note]));
            break None;
        }
        rounds += 1;
        let (added, dropped) = h.search(&subs)?;
        h.record(HopKind::Decide, subs, added, call.ms, join_notes([fragments, dropped]));
    };
    h.synthesize(stop, sink, cancel)
}

/// Sub-questions that are not searches — fragments of one or two words
/// without a question mark, copies of an evidence entry's header — split
/// from the rest, with a note naming them.
fn drop_fragments(subs: Vec<String>) -> (Vec<String>, Option<String>) {
    let (kept, dropped): (Vec<String>, Vec<String>) = subs.into_iter().partition(|q| is_search(q));
    let note = (!dropped.is_empty()).then(|| {
        let names: Vec<String> = dropped.iter().map(|q| format!("{:?}", shorten(q, 60))).collect();
        format!("dropped sub-questions that are not searches: {}", names.join(", "))
    });
    (kept, note)
}

fn is_search(q: &str) -> bool {
    let q = q.trim();
    let copied = q.starts_with("[#") || q.contains(" · lines ");
    let words = q.split_whitespace().count();
    !copied && (words >= 3 || (q.ends_with('?') && q.chars().filter(|c| c.is_alphanumeric()).count() >= 4))
}

/// The notes that are there, joined with "; ".
fn join_notes<const N: usize>(notes: [Option<String>; N]) -> Option<String> {
    let kept: Vec<String> = notes.into_iter().flatten().collect();
    (!kept.is_empty()).then(|| kept.join("; "))
}

impl Hops<'_, '_> {
    fn record(&mut self, kind: HopKind, sub_queries: Vec<String>, added: usize, llm_call_ms: u64, note: Option<String>) {
        self.records.push(HopRecord {
            iter: self.records.len() + 1,
            kind,
            sub_queries,
            context_chunks_added: added,
            forced_stop: false,
            llm_call_ms,
            note,
        });
    }

    /// One planning call: not streamed to the user (its reply is JSON), the
    /// ask's temperature and seed, its tokens counted towards the answer's.
    fn plan(&mut self, messages: Vec<Message>, cancel: &AtomicBool) -> Call {
        let (opts, cfg) = (self.run.opts, self.run.cfg);
        let req = ChatRequest {
            messages,
            temperature: opts.temperature.unwrap_or(cfg.llm.temperature),
            seed: Some(opts.seed.unwrap_or(cfg.llm.seed)),
            max_tokens: Some(PLAN_MAX_TOKENS),
            stream: false,
            grounding: None,
        };
        let t = Instant::now();
        let g = generate::generate(self.run.model, &req, &mut |_| true, cancel);
        let call_ms = t.elapsed().as_millis() as u64;
        let u = super::run::usage(&g, &req);
        self.prompt_tokens += u.prompt_tokens.unwrap_or(0);
        self.completion_tokens += u.completion_tokens.unwrap_or(0);
        self.estimated |= u.estimated;
        Call { text: g.text, ms: call_ms, error: g.error, aborted: g.aborted }
    }

    /// The sub-questions not searched yet, within the per-step cap and what
    /// the total cap leaves; they are recorded as searched.
    fn take(&mut self, wanted: Vec<String>) -> Vec<String> {
        let room = self.caps.per_iter.min(self.caps.total.saturating_sub(self.searched.len()));
        let seen: HashSet<String> = self.searched.iter().map(|q| q.to_lowercase()).collect();
        let subs: Vec<String> = wanted.into_iter().filter(|q| !seen.contains(&q.to_lowercase())).take(room).collect();
        self.searched.extend(subs.iter().cloned());
        subs
    }

    /// Searches each sub-question and gates it as a question of its own:
    /// hits of a sub-question the notes barely touch stay out of the pool.
    /// Returns the chunks added and a note naming the sub-questions turned down.
    fn search(&mut self, subs: &[String]) -> Result<(usize, Option<String>)> {
        let run = self.run;
        let mut lists = Vec::new();
        let mut dropped = Vec::new();
        for sub in subs {
            let t = Instant::now();
            let hits = run.engine.search(run.store, sub, run.b.mode, run.b.k)?;
            self.explain.timings.retrieve += ms(t);
            if hits.is_empty() {
                continue;
            }
            let t = Instant::now();
            let report = run.gate.turn(sub, None, &hits)?;
            self.explain.timings.gate += ms(t);
            if !report.passed {
                self.gated_out += 1;
                dropped.push(format!("{sub:?}"));
                continue;
            }
            if self.best_gate.as_ref().is_none_or(|b| report.top_score > b.top_score) {
                self.best_gate = Some(report);
            }
            lists.push(hits);
        }
        let note = (!dropped.is_empty()).then(|| format!("too little in the notes for {} (score gate)", dropped.join(", ")));
        Ok((self.pool.add(lists), note))
    }

    /// The pool packed as the decide prompt shows it.
    fn evidence(&self) -> Result<Vec<Packed>> {
        let system = plan::decide_system(self.caps.per_iter, self.run.b.korean);
        Ok(pack::pack(self.run.store, &self.pool.hits, self.run.evidence_budget(&system))?.entries)
    }

    /// The answer over the pool, through the normal stages.
    fn synthesize(mut self, stop: Option<String>, sink: &mut dyn FnMut(&str) -> bool, cancel: &AtomicBool) -> Result<AskOutcome> {
        if self.pool.hits.is_empty() {
            let reason = if self.gated_out > 0 { "score_gate" } else { "no_chunks" };
            return self.refuse(reason);
        }
        let top_score = self.best_gate.as_ref().map(|g| g.top_score);
        let mut explain = std::mem::take(&mut self.explain);
        explain.gate = self.best_gate.take();
        let hits = std::mem::take(&mut self.pool.hits);
        let built = self.run.build(hits, top_score, explain, sink, cancel)?;
        self.record(HopKind::Synthesize, Vec::new(), 0, built.generate_ms as u64, stop.clone());
        if let Some(last) = self.records.last_mut() {
            last.forced_stop = stop.is_some();
        }
        self.finish(built)
    }

    /// A refusal that keeps the steps taken so far.
    fn refuse(mut self, reason: &'static str) -> Result<AskOutcome> {
        let top_score = self.best_gate.as_ref().map(|g| g.top_score);
        let mut explain = std::mem::take(&mut self.explain);
        explain.gate = self.best_gate.take();
        let hits = std::mem::take(&mut self.pool.hits);
        let built = self.run.refused(reason, top_score, hits, explain);
        self.finish(built)
    }

    /// A planning call failed or was cancelled: saved as `llm_stream_aborted`
    /// (`model_error` for an error status) with the error, so the command
    /// exits as a single-pass ask would.
    fn abort(mut self, kind: HopKind, call: Call) -> Result<AskOutcome> {
        let note = match &call.error {
            Some(e) => format!("the model call failed: {e}"),
            None => "stopped".to_string(),
        };
        self.record(kind, Vec::new(), 0, call.ms, Some(note));
        let explain = std::mem::take(&mut self.explain);
        let reason = call.error.as_ref().map_or("llm_stream_aborted", super::generate::failure_reason);
        let mut built = self.run.refused(reason, None, Vec::new(), explain);
        built.error = call.error;
        self.finish(built)
    }

    /// Adds the steps and the planning calls' tokens to the answer, then saves it.
    fn finish(self, mut built: Built) -> Result<AskOutcome> {
        let u = &mut built.answer.usage;
        if self.prompt_tokens + self.completion_tokens > 0 {
            u.prompt_tokens = Some(u.prompt_tokens.unwrap_or(0) + self.prompt_tokens);
            u.completion_tokens = Some(u.completion_tokens.unwrap_or(0) + self.completion_tokens);
            u.estimated |= self.estimated;
        }
        built.answer.hops = Some(self.records);
        self.run.finish(built)
    }
}

/// How a step reads in `:explain` and `ask --explain`.
pub fn describe(h: &HopRecord) -> String {
    let mut s = format!("hop {} {}", h.iter, h.kind.as_str());
    if !h.sub_queries.is_empty() {
        let subs: Vec<String> = h.sub_queries.iter().map(|q| format!("{q:?}")).collect();
        s.push_str(&format!(": {}", subs.join(", ")));
    }
    if h.kind != HopKind::Synthesize {
        s.push_str(&format!(" · +{} chunks", h.context_chunks_added));
    }
    s.push_str(&format!(" · model {} ms", h.llm_call_ms));
    if h.forced_stop {
        s.push_str(" · forced stop");
    }
    if let Some(n) = &h.note {
        s.push_str(&format!(" · {n}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(chunk_id: i64) -> SearchHit {
        SearchHit::stub(chunk_id, 1.0)
    }

    fn pool(cap: usize) -> Pool {
        Pool { hits: Vec::new(), ids: HashSet::new(), cap }
    }

    #[test]
    fn the_pool_takes_each_sub_questions_best_first_and_renumbers() {
        let mut p = pool(10);
        assert_eq!(p.add(vec![vec![hit(1), hit(2), hit(3)], vec![hit(7), hit(8)]]), 5);
        let ids: Vec<i64> = p.hits.iter().map(|h| h.chunk_id).collect();
        assert_eq!(ids, [1, 7, 2, 8, 3]);
        assert_eq!(p.hits.iter().map(|h| h.rank).collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
    }

    #[test]
    fn the_pool_holds_a_chunk_once_and_stops_at_its_cap() {
        let mut p = pool(3);
        assert_eq!(p.add(vec![vec![hit(1), hit(2)], vec![hit(1), hit(2)]]), 2);
        assert_eq!(p.add(vec![vec![hit(2), hit(5), hit(6), hit(7)]]), 1);
        assert!(p.full());
        assert_eq!(p.hits.iter().map(|h| h.chunk_id).collect::<Vec<_>>(), [1, 2, 5]);
    }

    #[test]
    fn a_step_reads_as_one_line() {
        let h = HopRecord {
            iter: 2,
            kind: HopKind::Decide,
            sub_queries: vec!["who?".into()],
            context_chunks_added: 3,
            forced_stop: false,
            llm_call_ms: 12,
            note: None,
        };
        assert_eq!(describe(&h), "hop 2 decide: \"who?\" · +3 chunks · model 12 ms");
        let json = serde_json::to_value(&h).unwrap();
        assert_eq!(json["kind"], "decide");
        assert!(json.get("note").is_none());
    }
}
