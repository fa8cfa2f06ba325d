//! How an answer reads on a terminal, shared by `kebab ask` and the REPL: the
//! answer as it streams, the numbered sources, unsupported quotes, near misses
//! of a refusal, the one-line footer, and the explain block.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;
use owo_colors::Style;

use super::Output;
use crate::rag::AskOutcome;
use crate::rag::answer::{Answer, Origin};
use crate::rag::attribute::SentenceOrigin;
use crate::rag::explain::ExplainRecord;
use crate::script::{one_line, printable};

/// A flag Ctrl-C sets, for stopping a streamed answer: the partial text is
/// kept, and the caller decides what stopping means (exit 130, a new prompt).
pub fn ctrl_c_flag() -> Arc<AtomicBool> {
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    // Only fails if a handler is already set, which no kebab process does twice.
    let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    cancel
}

/// The token sink of a streamed answer: pieces go to stdout as they come,
/// made terminal-safe; `streamed` says whether any did.
pub struct Streamer {
    on: bool,
    pub streamed: bool,
}

impl Streamer {
    /// `on`: print the pieces (off for `--json` and `--no-stream`).
    pub fn new(on: bool) -> Streamer {
        Streamer { on, streamed: false }
    }

    /// Prints one piece; false when stdout is gone, which stops the model.
    pub fn piece(&mut self, piece: &str) -> bool {
        if !self.on {
            return true;
        }
        self.streamed = true;
        let mut out = std::io::stdout().lock();
        write!(out, "{}", printable(piece)).and_then(|_| out.flush()).is_ok()
    }

    /// An ask's outcome: an error after the answer streamed (its turn could
    /// not be saved) first ends the streamed line, so it starts one of its own.
    pub fn finish<T>(&self, out: &Output, outcome: anyhow::Result<T>) -> anyhow::Result<T> {
        if outcome.is_err() && self.streamed {
            out.line("")?;
        }
        outcome
    }
}

/// How to show an outcome.
pub struct Shown<'a> {
    /// The answer already streamed to the terminal.
    pub streamed: bool,
    /// Add the explain block.
    pub explain: bool,
    /// Lines between the answer and its sources (the REPL's error or stop note).
    pub notes: &'a [String],
}

/// An ask's outcome as `kebab ask` and the REPL print it: the answer (unless
/// it streamed), notes, sources, the explain block when asked, the footer.
pub fn print_outcome(out: &Output, outcome: &AskOutcome, shown: &Shown) -> Result<()> {
    let a = &outcome.answer;
    if shown.streamed {
        out.line("")?;
    } else if !a.answer.is_empty() {
        // Empty only when the model failed before any text: the error says so.
        let text = with_attributed_markers(a);
        // Kebab's own words (`Run kebab ingest PATH first`), not a model's: its commands name this run's flags.
        let text = if a.refused_before_model() { out.as_run(&text) } else { text };
        out.line(printable(&text))?;
    }
    for note in shown.notes {
        out.line(note)?;
    }
    // A misspelt word was searched as the notes spell it: say so, or the
    // answer would seem to be about a word the user never typed.
    for r in &a.retrieval.respelled {
        out.line(out.paint(format!("read \"{}\" as \"{}\"", r.typed, r.read), Style::new().dimmed()))?;
    }
    print_sources(out, a)?;
    if shown.explain {
        print_explain(out, a, &outcome.explain.record())?;
    }
    print_footer(out, a)
}

/// Sources (`[n] path:a-b · section`), unsupported quotes and near candidates.
pub fn print_sources(out: &Output, a: &Answer) -> Result<()> {
    print_saved_sources(out, a, &[])
}

/// `print_sources` for a saved answer: a stale source is "(changed since)",
/// or "(deleted since)" when its chunk id is in `deleted` (its note is no
/// longer indexed).
pub fn print_saved_sources(out: &Output, a: &Answer, deleted: &[i64]) -> Result<()> {
    for c in &a.citations {
        let mut line = format!("{} {}", c.shown_marker(), out.location(&c.citation.path, c.citation.start, c.citation.end));
        if let Some(s) = &c.citation.section {
            line.push_str(&format!(" · {}", one_line(s)));
        }
        if c.stale {
            line.push_str(if deleted.contains(&c.chunk_id) { " (deleted since)" } else { " (changed since)" });
        }
        out.line(line)?;
    }
    if let Some(v) = &a.verification {
        for q in &v.unsupported {
            out.line(out.paint(
                format!("unsupported quote [{}]: \u{201C}{}\u{201D} is not in that source", q.marker, one_line(&q.text)),
                Style::new().yellow(),
            ))?;
        }
    }
    if a.citations.iter().any(|c| c.origin == Origin::Attributed) {
        out.line(out.paint(ATTRIBUTED_LEGEND, Style::new().dimmed()))?;
    }
    for s in a.attribution.iter().flat_map(|t| &t.sentences).filter(|s| s.origin == SentenceOrigin::Unsupported) {
        let why = s.invented.as_ref().map_or("no evidence entry supports it".to_string(), |t| format!("“{}” is in no evidence entry", one_line(t)));
        let text = a.answer.get(s.start..s.end).unwrap_or("");
        out.line(out.paint(format!("unsupported: \u{201C}{}\u{201D} ({why})", one_line(text)), Style::new().yellow()))?;
    }
    for c in &a.candidates {
        let section = c.section.as_deref().map(|s| format!(" · {}", one_line(s))).unwrap_or_default();
        out.line(format!("closest: {}{section} ({} {:.2})", out.location(&c.path, c.start, c.end), c.score_kind, c.score))?;
    }
    Ok(())
}

/// The legend under sources when kebab attributed any sentence.
pub const ATTRIBUTED_LEGEND: &str = "* attributed by kebab: the model did not cite this sentence";

/// The answer text with `[n*]` after each sentence kebab attributed.
pub fn with_attributed_markers(a: &Answer) -> String {
    let mut text = a.answer.clone();
    let Some(t) = &a.attribution else { return text };
    let mut ends: Vec<(usize, usize)> =
        t.sentences.iter().filter(|s| s.origin == SentenceOrigin::Attributed).filter_map(|s| Some((s.end, s.n?))).collect();
    ends.sort_unstable();
    for (end, n) in ends.into_iter().rev() {
        if text.is_char_boundary(end) {
            text.insert_str(end, &format!(" [{n}*]"));
        }
    }
    text
}

/// `provider/model · mode · used/returned chunks · top (gate) · ms · verdict`
pub fn footer(a: &Answer) -> String {
    let r = &a.retrieval;
    let mut verdict = match a.refusal_reason {
        None => "grounded".to_string(),
        Some(reason) => format!("refused: {reason}"),
    };
    if a.finish == Some(crate::rag::answer::Finish::Length) {
        verdict.push_str(" · cut at llm.max_answer_tokens");
    }
    // `+ 0.0` turns a coverage of -0.0 into 0.0 for display.
    let top = r.top_score.map_or("–".to_string(), |s| format!("{:.2}", s + 0.0));
    format!(
        "{}/{} · {} · {}/{} chunks · top {top} (gate {:.2}) · {} ms · {verdict}",
        a.model.provider, a.model.id, r.mode, r.chunks_used, r.chunks_returned, r.score_gate, a.usage.latency_ms
    )
}

pub fn print_footer(out: &Output, a: &Answer) -> Result<()> {
    out.line(out.paint(footer(a), Style::new().dimmed()))?;
    Ok(())
}

/// The explain block: what was searched, what the gate saw, every hit and
/// whether it was packed, the budget, history, template, model and timings.
pub fn print_explain(out: &Output, a: &Answer, e: &ExplainRecord) -> Result<()> {
    let r = &a.retrieval;
    out.line(format!("retrieval query: {}", one_line(&r.retrieval_query)))?;
    out.line(format!(
        "mode {} · k {} · template {} · model {}/{}",
        r.mode, r.k, a.prompt_template_version, a.model.provider, a.model.id
    ))?;
    match &e.gate {
        Some(g) => {
            out.line(format!(
                "gate: {} p(answerable) {:.2} vs cut-off {:.2} → {}{}",
                if g.model.is_empty() { "score" } else { g.model.as_str() },
                g.top_score,
                g.threshold,
                if g.passed { "pass" } else { "refuse" },
                if g.with_previous { " (read with the previous question)" } else { "" }
            ))?;
            let s = &g.signals;
            out.line(format!(
                "      signals: coverage {:.2} · missing {:.2} · bm25 {:.2} · cosine {:.2} · margin {:.2} · agreement {:.2} · content words {}",
                s.coverage, s.missing, s.bm25, s.cosine, s.margin, s.agreement, s.content_words
            ))?;
            let terms: Vec<String> =
                g.terms.iter().map(|t| format!("{}{} (idf {:.1})", if t.covered { "+" } else { "-" }, t.term, t.idf)).collect();
            out.line(format!("      terms: {}", one_line(&terms.join(", "))))?;
        }
        None => out.line("gate: not reached")?,
    }
    for h in a.hops.iter().flatten() {
        out.line(one_line(&crate::rag::multihop::describe(h)))?;
    }
    for h in &e.hits {
        // The score the hit was ranked by, as `kebab search` labels it, then
        // its BM25 unless that is the one; an older saved explain has BM25 only.
        let ranked = match (h.score, h.score_kind.as_deref()) {
            (Some(s), Some(kind)) if kind != "bm25" => format!("{kind} {s:.2} · "),
            _ => String::new(),
        };
        out.line(format!(
            "hit {:>2} {} {}:{}-{} {ranked}bm25 {}",
            h.rank,
            if h.packed { "packed" } else { "      " },
            one_line(&h.path),
            h.start,
            h.end,
            // A hit only the vectors found has no BM25 score; "0.00" said its words matched for nothing.
            h.lexical_score.map_or("–".to_string(), |s| format!("{s:.2}"))
        ))?;
    }
    out.line(format!("budget: {} of {} evidence tokens used", e.used_tokens, e.budget_tokens))?;
    let attributed: Vec<String> = a
        .citations
        .iter()
        .filter(|c| c.origin == Origin::Attributed)
        .map(|c| format!("{} (support {:.2})", c.shown_marker(), c.support.unwrap_or(0.0)))
        .collect();
    if !attributed.is_empty() {
        out.line(format!("attributed by kebab (the model did not cite them): {}", attributed.join(", ")))?;
    }
    let mut history = format!("history: {} earlier turns kept, {} dropped", e.history_kept, e.history_dropped);
    if e.history_dropped > 0 {
        history.push_str(" (no room left in the model's context, or over rag.history_max_turns)");
    }
    if e.history_shortened {
        history.push_str("; the previous answer is shortened to fit");
    }
    out.line(history)?;
    let t = &e.timings_ms;
    out.line(format!(
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

/// A saved turn in full: question, answer, sources, footer.
pub fn print_turn(out: &Output, turn: &crate::session::Turn) -> Result<()> {
    let mark = super::sessions::fork_mark(turn.forked_from.as_ref());
    out.line(out.paint(format!("[{}] {}{mark}", turn.turn_index + 1, one_line(&turn.question)), Style::new().bold()))?;
    match turn.answer.answer.as_str() {
        "" => out.line(crate::session::UNANSWERED)?,
        text => out.line(crate::script::printable(text))?,
    }
    print_saved_sources(out, &turn.answer, &turn.deleted)?;
    print_footer(out, &turn.answer)
}

/// One line per turn for `:history` and `sessions list`-style overviews.
pub fn turn_summary(turn: &crate::session::Turn) -> String {
    let a = &turn.answer;
    let verdict = match a.refusal_reason {
        None => format!("grounded, {}", super::count(a.citations.len(), "source")),
        Some(reason) => format!("refused: {reason}"),
    };
    let mark = super::sessions::fork_mark(turn.forked_from.as_ref());
    format!("{:>3}. {} ({verdict}){mark}", turn.turn_index + 1, one_line(&turn.question))
}

/// `name  N turns  updated  title`, for `sessions list` and `:session list`.
pub fn session_line(s: &crate::session::Summary) -> String {
    let c = &s.conversation;
    format!(
        "{}\t{}\t{}\t{}",
        one_line(&c.name),
        super::count(s.turns, "turn"),
        c.updated_at,
        one_line(c.title.as_deref().unwrap_or(""))
    )
}
