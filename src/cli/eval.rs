//! `kebab eval retrieval | answers | gate | dialogues | attribution`:
//! retrieval quality on a BEIR-style set, answers scored against gold
//! strings, the gate on a labelled set, golden dialogues, and the attribution
//! of uncited answer sentences on a labelled sentence set.

use std::path::PathBuf;

use anyhow::Result;
use clap::Subcommand;

use super::Ctx;
use crate::rag::Kb;
use crate::error::UserError;
use crate::eval::{answers, dialogues, retrieval};
use crate::search::Mode;

#[derive(Debug, Subcommand)]
pub enum Command {
    /// nDCG@10, Recall@100 and MRR@10 of the index against judged queries
    Retrieval {
        /// queries.jsonl ({"_id","text"} per line)
        #[arg(long, value_name = "Q")]
        queries: PathBuf,
        /// qrels TSV (query-id, corpus-id, score; header line)
        #[arg(long, value_name = "R")]
        qrels: PathBuf,
        /// Retrieval mode [default: search.default_mode]
        #[arg(long, value_enum)]
        mode: Option<Mode>,
        /// Documents retrieved per query
        #[arg(short, value_name = "N", default_value_t = 100, allow_negative_numbers = true)]
        k: i128,
        /// RRF constant for hybrid [default: search.rrf_k]
        #[arg(long, value_name = "K", allow_negative_numbers = true)]
        rrf_k: Option<f64>,
        /// Only the judged queries of one split (FNV-1a of the query id, even = dev)
        #[arg(long, value_enum)]
        split: Option<crate::eval::split::Split>,
    },
    /// Ask every question of a set with gold answers and score the answers:
    /// gold string found, grounded, refusals by reason, citation validity,
    /// quote verification, latency, tokens. Saves nothing.
    Answers {
        /// queries.jsonl ({"_id","text"} per line)
        #[arg(long, value_name = "Q")]
        queries: PathBuf,
        /// answers.jsonl ({"_id","answers":["gold", …]} per line)
        #[arg(long, value_name = "A")]
        answers: PathBuf,
        /// Only the first N questions that have gold answers
        #[arg(long, value_name = "N", allow_negative_numbers = true)]
        limit: Option<i64>,
        /// Ask multi-hop (needs a model server)
        #[arg(long)]
        multi_hop: bool,
        /// Retrieval mode [default: search.default_mode]
        #[arg(long, value_enum)]
        mode: Option<Mode>,
    },
    /// Ask a labelled set (answerable / off_topic / near_miss) and report
    /// correct-source, false-refusal and false-answer rates
    Gate {
        /// JSONL: {"id","question","kind","sources":[file names],"facts":[[phrasings]]} per line
        #[arg(long, value_name = "FILE")]
        set: PathBuf,
        /// Retrieval mode [default: search.default_mode]
        #[arg(long, value_enum)]
        mode: Option<Mode>,
        /// Only this split of the set (by a stable hash of each id)
        #[arg(long, value_enum)]
        split: Option<crate::eval::split::Split>,
        /// Fit the gate's model on the dev split and print its coefficients and ROC
        #[arg(long)]
        fit: bool,
    },
    /// Run golden multi-turn dialogues as conversations and report, per turn
    /// kind, source hits (expanded query vs bare question), cited sources,
    /// required words and refusals. Saves nothing.
    Dialogues {
        /// JSONL: {"id","split","turns":[{"question","kind","sources","must_contain","refusal"}]} per line
        file: PathBuf,
        /// Only dialogues whose "split" is this (e.g. dev, test)
        #[arg(long)]
        split: Option<String>,
        /// Retrieval mode [default: search.default_mode]
        #[arg(long, value_enum)]
        mode: Option<Mode>,
    },
    /// Precision and recall of attributing uncited answer sentences, on a
    /// labelled sentence set split dev/test by a stable hash of each id
    Attribution {
        /// Folder with evidence.jsonl ({"id","entries"}) and sentences.jsonl
        /// ({"id","evidence","kind","label","sentence"}), e.g. fixtures/attribution
        #[arg(long, value_name = "DIR")]
        set: PathBuf,
        /// Re-derive the threshold on the dev split and report it on test
        #[arg(long)]
        fit: bool,
    },
}

pub fn run(ctx: &Ctx, cmd: Command) -> Result<i32> {
    match cmd {
        Command::Attribution { set, fit } => {
            let r = crate::eval::attribution::run(&crate::eval::attribution::Options { set: &set, fit, per_sentence: ctx.out.json })?;
            show(ctx, &r, || print_attribution(ctx, &r))
        }
        Command::Answers { queries, answers, limit, multi_hop, mode } => {
            let limit =
                limit.map(|n| super::at_least_one("--limit", n, "leave --limit out to ask every question of the set")).transpose()?;
            let (kb, mode) = asking(ctx, mode)?;
            let opts = answers::Options {
                queries: &queries,
                answers: &answers,
                limit,
                mode,
                multi_hop,
                per_question: ctx.out.json,
            };
            let mut counter = ctx.counter("questions asked");
            let r = answers::run(&kb, &opts, &mut |d, t| counter.set(d, t));
            counter.finish();
            let r = r?;
            show(ctx, &r, || print_answers(ctx, &r))
        }
        Command::Dialogues { file, split, mode } => {
            let (kb, mode) = asking(ctx, mode)?;
            let opts = dialogues::Options { file: &file, mode, split: split.as_deref(), per_turn: ctx.out.json };
            let r = dialogues::run(&kb, &opts)?;
            show(ctx, &r, || print_dialogues(ctx, &r))
        }
        Command::Gate { set, mode, split, fit } => {
            let (kb, mode, note) = ctx.kb(ctx.config()?, ctx.create_store()?, mode)?;
            if let Some(note) = &note {
                ctx.out.notice(note);
            }
            let opts = crate::eval::labelled::Options { set: &set, split, fit, per_question: ctx.out.json };
            let r = crate::eval::labelled::run(&kb, mode, &opts)?;
            show(ctx, &r, || print_gate(ctx, &r))
        }
        Command::Retrieval { queries, qrels, mode, k, rrf_k, split } => {
            let k = super::k_flag(k, "leave -k out to retrieve 100 documents per query")?;
            let mut cfg = ctx.config()?;
            if let Some(r) = rrf_k {
                if !(1.0..=10_000.0).contains(&r) {
                    return Err(UserError::new("bad_input", format!("--rrf-k {r} is out of range 1–10000")).into());
                }
                cfg.search.rrf_k = r;
            }
            let store = ctx.create_store()?;
            let (engine, mode) = ctx.engine(&cfg, &store, mode)?;
            let opts = retrieval::Options {
                queries: &queries,
                qrels: &qrels,
                mode,
                k,
                per_query: ctx.out.json,
                split,
            };
            let report = retrieval::run(&store, &engine, &opts)?;
            show(ctx, &report, || print_retrieval(ctx, &report, &queries))
        }
    }
}

/// A report as `--json` asks (one object), or as lines for a reader.
fn show<R: serde::Serialize>(ctx: &Ctx, r: &R, lines: impl FnOnce() -> Result<()>) -> Result<i32> {
    if ctx.out.json {
        ctx.out.json(r)?;
    } else {
        lines()?;
    }
    Ok(0)
}

/// `eval attribution`: the shipped threshold's scores per split, and the fitted one's.
fn print_attribution(ctx: &Ctx, r: &crate::eval::attribution::Report) -> Result<()> {
    let line = |name: &str, s: &crate::eval::attribution::Scores| {
        ctx.out.line(format!(
            "{name:<16} threshold {:.3}  sentences {:>3}  precision {:.3}  recall {:.3}  false attributions {}",
            s.threshold, s.sentences, s.precision, s.recall, s.false_attributions
        ))
    };
    line("shipped · dev", &r.dev)?;
    line("shipped · test", &r.test)?;
    if let Some(f) = &r.fitted {
        line("fitted · dev", &f.dev)?;
        line("fitted · test", &f.test)?;
    }
    Ok(())
}

/// `eval dialogues`: the figures per kind of turn.
fn print_dialogues(ctx: &Ctx, r: &dialogues::Report) -> Result<()> {
    ctx.out.line(format!(
        "{} dialogues · {} · k {} · expansion {} chars",
        r.dialogues, r.model, r.k, r.expansion_chars
    ))?;
    ctx.out.line("kind       turns  source@k  bare@k  cited  must_contain  refused")?;
    for (kind, s) in &r.by_kind {
        ctx.out.line(format!(
            "{kind:<10} {:>5}  {:>7.1}%  {:>5.1}%  {:>4.1}%  {:>11}  {:>6.1}%",
            s.turns,
            s.source_hit * 100.0,
            s.bare_source_hit * 100.0,
            s.cited_source * 100.0,
            s.must_contain.map_or("–".into(), |m| format!("{:.1}%", m * 100.0)),
            s.refused * 100.0
        ))?;
    }
    if r.unanswerable > 0 {
        ctx.out.line(format!("unanswerable turns {}: refused {:.1}%", r.unanswerable, r.unanswerable_refused * 100.0))?;
    }
    Ok(())
}

/// `eval retrieval`: the mode's figures, and the judged queries the set lacks.
fn print_retrieval(ctx: &Ctx, report: &retrieval::Report, queries: &std::path::Path) -> Result<()> {
    ctx.out.line(format!(
        "mode {}  queries {}  nDCG@10 {:.4}  Recall@100 {:.4}  MRR@10 {:.4}  ({:.1} s)",
        report.mode.as_str(),
        report.queries,
        report.ndcg_at_10,
        report.recall_at_100,
        report.mrr_at_10,
        report.elapsed_ms as f64 / 1000.0
    ))?;
    if report.missing_queries > 0 {
        ctx.out.notice(format!("{} judged queries were not in {}", report.missing_queries, queries.display()));
    }
    Ok(())
}

/// The knowledge base over the database opened read-only (evaluation asks
/// and turns must not land in the user's answers and sessions), and the mode.
fn asking(ctx: &Ctx, mode: Option<Mode>) -> Result<(Kb, Mode)> {
    let store = crate::store::Store::open(&ctx.paths.database, true)?;
    let (kb, mode, note) = ctx.kb(ctx.config()?, store, mode)?;
    if let Some(note) = &note {
        ctx.out.notice(note);
    }
    Ok((kb, mode))
}

fn print_answers(ctx: &Ctx, r: &answers::Report) -> Result<()> {
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    let line = |label: &str, value: String| ctx.out.line(format!("{label:<20}  {value}"));
    ctx.out.line(format!(
        "{} · {} · {} · {} questions ({:.1} s)",
        r.model,
        r.mode.as_str(),
        if r.multi_hop { "multi-hop" } else { "single-pass" },
        r.questions,
        r.elapsed_ms as f64 / 1000.0
    ))?;
    let when_grounded = r.contains_gold_when_grounded.map_or(String::new(), |g| format!(" (of grounded answers: {})", pct(g)));
    line("answer has gold", format!("{}{when_grounded}", pct(r.contains_gold)))?;
    line("grounded", pct(r.grounded))?;
    let reasons: Vec<String> = r.refusals.iter().map(|(k, v)| format!("{k} {}", pct(*v))).collect();
    let reasons = if reasons.is_empty() { String::new() } else { format!(": {}", reasons.join(", ")) };
    line("refused", format!("{}{reasons}", pct(r.refused)))?;
    line("citations valid", r.citation_validity.map_or("– (no answer cited)".into(), pct))?;
    if let Some(a) = r.attributed_when_grounded.filter(|&a| a > 0.0) {
        line("grounded by attribution [n*]", pct(a))?;
    }
    line("quotes verified", r.quote_verification.map_or("– (no quotes)".into(), |q| format!("{} of {}", pct(q), r.quotes_checked)))?;
    line("latency ms", format!("p50 {} · p95 {}", r.latency_ms_p50, r.latency_ms_p95))?;
    let estimated = if r.usage_estimated > 0 { format!(" ({} asks estimated)", r.usage_estimated) } else { String::new() };
    line("tokens", format!("prompt {} · completion {}{estimated}", r.prompt_tokens, r.completion_tokens))?;
    if r.model_errors > 0 {
        line("model errors", format!("{} asks cut short (see --json rows)", r.model_errors))?;
    }
    if r.without_gold > 0 {
        ctx.out.notice(format!("{} queries have no gold answer and were not asked", r.without_gold));
    }
    Ok(())
}

fn print_gate(ctx: &Ctx, r: &crate::eval::labelled::Report) -> Result<()> {
    ctx.out.line(format!("{}  {}", r.model, r.mode.as_str()))?;
    for s in &r.splits {
        ctx.out.line(format!(
            "{}: answerable {}: correct cited {:.1}%, cites gold {:.1}%, not refused {:.1}%  |  unanswerable {}: refused {:.1}% (near-miss {:.1}%, off-topic {:.1}%, partial {:.1}%)  |  no content {}: refused {:.1}%",
            s.split.as_str(),
            s.answerable,
            s.correct_cited * 100.0,
            s.cites_gold * 100.0,
            s.answerable_not_refused * 100.0,
            s.unanswerable,
            s.unanswerable_refused * 100.0,
            s.near_miss_refused * 100.0,
            s.off_topic_refused * 100.0,
            s.partial_refused * 100.0,
            s.no_content,
            s.no_content_refused * 100.0
        ))?;
    }
    if let Some(f) = &r.fit {
        ctx.out.line(format!("fit on {} dev examples:", f.examples))?;
        let w: Vec<String> = f.weights.iter().map(|w| format!("{w:.4}")).collect();
        ctx.out.line(format!("    weights: [{}],  // {}", w.join(", "), f.features.join(", ")))?;
        ctx.out.line(format!("    bias: {:.4},", f.bias))?;
        for p in &f.roc {
            ctx.out.line(format!(
                "cut-off {:.2}: false refusals {:.1}%, false answers {:.1}%",
                p.cutoff,
                p.false_refusal * 100.0,
                p.false_answer * 100.0
            ))?;
        }
    }
    Ok(())
}
