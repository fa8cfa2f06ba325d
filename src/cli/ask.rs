//! `kebab ask QUESTION`: an answer built only from the notes, streamed as it
//! is written, then its numbered sources and a one-line footer — or a clean
//! refusal. Ctrl-C stops the stream, keeps the partial answer and exits 130.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;
use owo_colors::Style;
use serde::Serialize;

use super::Ctx;
use crate::error::UserError;
use crate::llm::auto;
use crate::rag::answer::Answer;
use crate::rag::render::Template;
use crate::rag::{self, AskOptions, Explain};
use crate::render::one_line;
use crate::script::printable;
use crate::search::Mode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The question (several words may be given without quotes)
    #[arg(required = true, num_args = 1.., value_name = "QUESTION")]
    question: Vec<String>,
    #[arg(long, value_enum, default_value = "lexical")]
    mode: Mode,
    /// Chunks to retrieve (at least search.default_k)
    #[arg(short, value_name = "N")]
    k: Option<usize>,
    /// Also show retrieval, gate, packing and timings
    #[arg(long)]
    explain: bool,
    /// Prompt template [default: rag.prompt_template_version]
    #[arg(long, value_enum)]
    template: Option<Template>,
    #[arg(long, value_name = "T")]
    temperature: Option<f32>,
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// Ask the model for the whole answer at once and print it when complete
    #[arg(long)]
    no_stream: bool,
    /// Exit 3 when the answer is a refusal
    #[arg(long)]
    fail_on_refusal: bool,
}

#[derive(Serialize)]
struct AnswerWithExplain<'a> {
    #[serde(flatten)]
    answer: &'a Answer,
    #[serde(skip_serializing_if = "Option::is_none")]
    explain: Option<ExplainDoc<'a>>,
}

#[derive(Serialize)]
struct ExplainDoc<'a> {
    gate: &'a Option<rag::gate::GateReport>,
    hits: Vec<serde_json::Value>,
    budget_tokens: usize,
    used_tokens: usize,
    packed: Vec<serde_json::Value>,
    timings_ms: &'a rag::Timings,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<i32> {
    let cfg = ctx.config()?;
    let question = args.question.join(" ");
    if question.trim().is_empty() {
        return Err(UserError::new("bad_input", "the question is empty").into());
    }
    if let Some(t) = args.temperature {
        if !(0.0..=2.0).contains(&t) {
            return Err(UserError::new("bad_input", format!("--temperature {t} is out of range 0–2")).into());
        }
    }
    let store = ctx.store()?;
    if store.is_readonly() {
        ctx.out.notice("read-only: this answer is not saved");
    }
    let selected = auto::select(&cfg.llm);
    if let Some(note) = &selected.note {
        ctx.out.notice(note);
    }
    let cancel = Arc::new(AtomicBool::new(false));
    {
        let cancel = cancel.clone();
        // Only fails if a handler is already set, which this process never does twice.
        let _ = ctrlc::set_handler(move || cancel.store(true, Ordering::SeqCst));
    }
    let opts = AskOptions {
        question,
        mode: args.mode,
        k: args.k,
        template: args.template,
        temperature: args.temperature,
        seed: args.seed,
        stream: !args.no_stream,
    };
    let stream = !ctx.out.json && !args.no_stream;
    let mut streamed = false;
    let mut sink = |piece: &str| -> bool {
        if !stream {
            return true;
        }
        streamed = true;
        let mut out = std::io::stdout().lock();
        write!(out, "{}", printable(piece)).and_then(|_| out.flush()).is_ok()
    };
    let outcome = rag::ask(&store, &cfg, selected.model.as_ref(), &opts, &mut sink, &cancel)?;
    let a = &outcome.answer;

    if ctx.out.json {
        let explain = args.explain.then(|| explain_doc(&outcome.explain));
        ctx.out.json(&AnswerWithExplain { answer: a, explain })?;
    } else {
        if streamed {
            ctx.out.line("")?;
        } else {
            ctx.out.line(printable(&a.answer))?;
        }
        print_sources(ctx, a)?;
        if args.explain {
            print_explain(ctx, &outcome.explain)?;
        }
        ctx.out.line(ctx.out.paint(footer(a), Style::new().dimmed()))?;
    }
    if let Some(err) = outcome.error {
        // A model failure is a runtime failure (exit 2); the partial answer is saved.
        return Err(anyhow::Error::new(err).context("the answer was cut short and saved as aborted"));
    }
    if cancel.load(Ordering::SeqCst) {
        return Ok(130);
    }
    if args.fail_on_refusal && !ctx.out.json && !a.grounded {
        return Ok(3);
    }
    Ok(0)
}

fn print_sources(ctx: &Ctx, a: &Answer) -> Result<()> {
    for c in &a.citations {
        let mut line = format!("{} {}:{}-{}", c.marker, one_line(&c.citation.path), c.citation.start, c.citation.end);
        if let Some(s) = &c.citation.section {
            line.push_str(&format!(" · {}", one_line(s)));
        }
        ctx.out.line(line)?;
    }
    if let Some(v) = &a.verification {
        for q in &v.unsupported {
            ctx.out.line(ctx.out.paint(
                format!("unsupported quote [{}]: \u{201C}{}\u{201D} is not in that source", q.marker, one_line(&q.text)),
                Style::new().yellow(),
            ))?;
        }
    }
    for c in &a.candidates {
        let section = c.section.as_deref().map(|s| format!(" · {}", one_line(s))).unwrap_or_default();
        ctx.out.line(format!("closest: {}:{}-{}{section} (bm25 {:.2})", one_line(&c.path), c.start, c.end, c.score))?;
    }
    Ok(())
}

fn footer(a: &Answer) -> String {
    let r = &a.retrieval;
    let verdict = match a.refusal_reason {
        None => "grounded".to_string(),
        Some(reason) => format!("refused: {reason}"),
    };
    let top = r.top_score.map_or("–".to_string(), |s| format!("{s:.2}"));
    format!(
        "{}/{} · {} · {}/{} chunks · top {top} (gate {:.2}) · {} ms · {verdict}",
        a.model.provider, a.model.id, r.mode, r.chunks_used, r.chunks_returned, r.score_gate, a.usage.latency_ms
    )
}

fn explain_doc(e: &Explain) -> ExplainDoc<'_> {
    let packed: Vec<i64> = e.packing.entries.iter().map(|p| p.chunk_id).collect();
    ExplainDoc {
        gate: &e.gate,
        hits: e
            .hits
            .iter()
            .map(|h| {
                serde_json::json!({
                    "rank": h.rank, "chunk_id": h.chunk_id, "path": h.citation.path, "start": h.citation.start,
                    "end": h.citation.end, "lexical_score": h.retrieval.lexical_score, "lexical_rank": h.retrieval.lexical_rank,
                    "packed": packed.contains(&h.chunk_id),
                })
            })
            .collect(),
        budget_tokens: e.packing.budget_tokens,
        used_tokens: e.packing.used_tokens,
        packed: e
            .packing
            .entries
            .iter()
            .map(|p| serde_json::json!({"n": p.n, "chunk_id": p.chunk_id, "path": p.doc_path, "tokens": p.tokens, "truncated": p.truncated}))
            .collect(),
        timings_ms: &e.timings,
    }
}

fn print_explain(ctx: &Ctx, e: &Explain) -> Result<()> {
    let d = explain_doc(e);
    if let Some(g) = &e.gate {
        ctx.out.line(format!("gate: coverage {:.2} vs threshold {:.2} → {}", g.top_score, g.threshold, if g.passed { "pass" } else { "refuse" }))?;
        let terms: Vec<String> =
            g.terms.iter().map(|t| format!("{}{} (idf {:.1})", if t.covered { "+" } else { "-" }, t.term, t.idf)).collect();
        ctx.out.line(format!("      terms: {}", terms.join(", ")))?;
    }
    for h in &d.hits {
        ctx.out.line(format!(
            "hit {:>2} {} {}:{}-{} bm25 {:.2}",
            h["rank"],
            if h["packed"] == true { "packed" } else { "      " },
            one_line(h["path"].as_str().unwrap_or("")),
            h["start"],
            h["end"],
            h["lexical_score"].as_f64().unwrap_or(0.0)
        ))?;
    }
    ctx.out.line(format!("budget: {} of {} evidence tokens used", d.used_tokens, d.budget_tokens))?;
    let t = &e.timings;
    ctx.out.line(format!(
        "timings ms: retrieve {:.1}, gate {:.1}, pack {:.1}, before model {:.1}, first token {}, generate {:.1}, total {:.1}",
        t.retrieve,
        t.gate,
        t.pack,
        t.before_model,
        t.first_token.map_or("–".into(), |f| format!("{f:.1}")),
        t.generate,
        t.total
    ))?;
    Ok(())
}
