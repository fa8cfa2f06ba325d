//! `kebab ask QUESTION`: an answer built only from the notes, streamed as it
//! is written, then its numbered sources and a one-line footer — or a clean
//! refusal. Ctrl-C stops the stream, keeps the partial answer and exits 130.
//! `--multi-hop` runs the ask in rounds of sub-questions (`rag::multihop`).

use std::sync::atomic::Ordering;

use anyhow::Result;
use serde::Serialize;

use super::Ctx;
use crate::error::UserError;
use crate::rag::answer::Answer;
use crate::rag::render::Template;
use crate::rag::explain::ExplainRecord;
use crate::rag::{self, AskOptions};
use crate::render::answer::{self, Shown, Streamer, ctrl_c_flag};
use crate::script::printable;
use crate::session;
use crate::search::Mode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The question (several words may be given without quotes); `-`, or
    /// nothing with stdin not a terminal, reads it from stdin
    #[arg(num_args = 0.., value_name = "QUESTION")]
    question: Vec<std::ffi::OsString>,
    /// Retrieval mode [default: search.default_mode, hybrid]
    #[arg(long, value_enum)]
    mode: Option<Mode>,
    /// Chunks to retrieve and pack [default: search.default_k]
    #[arg(short, value_name = "N", allow_negative_numbers = true)]
    k: Option<i128>,
    /// Also show retrieval, gate, packing and timings
    #[arg(long)]
    explain: bool,
    /// Prompt template [default: rag.prompt_template_version]
    #[arg(long, value_enum)]
    template: Option<Template>,
    /// Sampling temperature for a model server, 0–2 [default: the server's]
    #[arg(long, value_name = "T", allow_negative_numbers = true)]
    temperature: Option<f32>,
    /// Sampling seed for a model server, for repeatable answers
    #[arg(long, value_name = "S", allow_negative_numbers = true)]
    seed: Option<u64>,
    /// Ask the model for the whole answer at once and print it when complete
    #[arg(long)]
    no_stream: bool,
    /// Exit 3 when the answer is a refusal
    #[arg(long)]
    fail_on_refusal: bool,
    /// Ask as the next turn of this conversation (created on first use)
    #[arg(long, value_name = "NAME")]
    session: Option<String>,
    /// Let the model split the question into sub-questions, search each, and
    /// ask for more rounds before answering (needs a model server)
    #[arg(long)]
    multi_hop: bool,
    /// With --multi-hop: refuse when the model's sub-questions cannot be read,
    /// instead of answering the question single-pass
    #[arg(long, requires = "multi_hop")]
    strict_multi_hop: bool,
}

/// The question from the arguments, or from stdin when it is `-` or absent
/// and stdin is not a terminal (`echo "…" | kebab ask -`). A pasted question
/// over several lines is one question: its lines are joined with spaces.
fn question_text(parts: &[std::ffi::OsString]) -> Result<String> {
    use std::io::{IsTerminal, Read};
    let from_stdin = match parts {
        [one] => one == "-",
        [] => !std::io::stdin().is_terminal(),
        _ => false,
    };
    if !from_stdin {
        if parts.is_empty() {
            return Err(UserError::new("bad_input", "no question given")
                .with_hint("run `kebab ask QUESTION`, or pipe it in: `echo QUESTION | kebab ask -`")
                .into());
        }
        return super::text_arg("question", parts);
    }
    let mut raw = Vec::new();
    std::io::stdin().read_to_end(&mut raw)?;
    let text = String::from_utf8(raw).map_err(|_| {
        UserError::new("bad_input", "the question on stdin is not valid UTF-8").with_hint("pipe the question in as UTF-8 text")
    })?;
    let question = crate::script::one_question(crate::script::without_bom(&text));
    // Said here, where it is known the question was piped: the hint for an
    // empty argument suggests the very pipe that came up empty.
    if question.trim().is_empty() {
        let what = if text.is_empty() { "was empty" } else { "held only blank space" };
        return Err(UserError::new("bad_input", format!("no question on the standard input: it {what}"))
            .with_hint("pipe the question in, e.g. `echo \"What is ownership?\" | kebab ask -`, or give it as words: \
                        `kebab ask QUESTION`")
            .into());
    }
    Ok(question)
}

#[derive(Serialize)]
struct AnswerWithExplain<'a> {
    #[serde(flatten)]
    answer: &'a Answer,
    #[serde(skip_serializing_if = "Option::is_none")]
    explain: Option<ExplainRecord>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<i32> {
    let cfg = ctx.config()?;
    let question = question_text(&args.question)?;
    if question.trim().is_empty() {
        return Err(UserError::new("bad_input", "the question is empty")
            .with_hint("ask a question in words, e.g. `kebab ask \"What is ownership?\"`, or pipe it in with `kebab ask -`")
            .into());
    }
    let k = args.k.map(|k| super::k_flag(k, "leave -k out for the configured default (search.default_k)")).transpose()?;
    if let Some(t) = args.temperature
        && !(0.0..=2.0).contains(&t) {
            return Err(UserError::new("bad_input", format!("--temperature {t} is out of range 0–2"))
                .with_hint("give a temperature between 0 and 2 (0 answers the same way every time), or leave it out for llm.temperature")
                .into());
        }
    let store = ctx.store()?;
    if store.is_readonly() {
        // Said, not refused: answering reads only; the session just does not grow.
        match &args.session {
            Some(name) => ctx.out.notice(format!("read-only: this turn was not saved to session {}", printable(name))),
            None => ctx.out.notice("read-only: this answer is not saved"),
        }
    }
    let (kb, mode, model_note) = ctx.kb(cfg, store, args.mode)?;
    // Before anything is written: no session is created for an ask that cannot run.
    kb.check_length(&question)?;
    if args.multi_hop {
        crate::rag::multihop::check_model(kb.model.as_ref())?;
    }
    let turn = match &args.session {
        Some(name) if kb.store.is_readonly() => {
            // Read-only: earlier turns still give context, but nothing is created.
            session::check_name(name)?;
            session::find(&kb.store, name)?.map(|c| session::turn_of(&kb.store, &c, false)).transpose()?
        }
        Some(name) => Some(session::turn_of(&kb.store, &session::open_or_create(&kb.store, name)?, true)?),
        None => None,
    };
    if let Some(note) = &model_note {
        ctx.out.notice(note);
    }
    let cancel = ctrl_c_flag();
    let opts = AskOptions {
        question,
        mode,
        k,
        template: args.template,
        temperature: args.temperature,
        seed: args.seed,
        stream: !args.no_stream,
        turn,
        multi_hop: args.multi_hop,
        strict_multi_hop: args.strict_multi_hop,
    };
    let mut streamer = Streamer::new(!ctx.out.json && !args.no_stream);
    let outcome = kb.ask(&opts, &mut |piece| streamer.piece(piece), &cancel);
    let outcome = streamer.finish(&ctx.out, outcome)?;
    let a = &outcome.answer;

    if ctx.out.json {
        // One document on stdout: a model failure prints its `error.v1` instead (below).
        if outcome.error.is_none() {
            let explain = args.explain.then(|| outcome.explain.record());
            ctx.out.json(&AnswerWithExplain { answer: a, explain })?;
        }
    } else {
        answer::print_outcome(&ctx.out, &outcome, &Shown { streamed: streamer.streamed, explain: args.explain, notes: &[] })?;
    }
    if let Some(err) = outcome.error {
        // A model failure is a runtime failure (exit 2); the partial answer is saved.
        let lead = rag::generate::failure_lead(&err, outcome.answer_id.is_some());
        return Err(anyhow::Error::new(err).context(lead));
    }
    if cancel.load(Ordering::SeqCst) {
        return Ok(130);
    }
    // With --json too: scripts read the exit code and the document alike.
    if args.fail_on_refusal && !outcome.answer.grounded {
        return Ok(3);
    }
    Ok(0)
}
