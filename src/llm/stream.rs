//! The bookkeeping of a streamed answer, shared by the server providers:
//! the text so far, the time of the first piece, and the caller's callback;
//! and `relay`, which lets a caller stop waiting on a server at any moment.
//!
//! Some servers stream a thinking model's reasoning (deepseek-r1, qwen3) in
//! the answer text, as a leading `<think>…</think>` block, rather than in a
//! field of its own. `Answer` takes that block out as it comes — holding back
//! the few characters that may be a tag cut between two pieces — so it is
//! neither shown nor checked, and counts as reasoning (`Completion::reasoned`).
//!
//! Some templates open `<think>` in the prompt, so the server streams the
//! reasoning, `</think>` and the answer with no opening tag. Text before the
//! first such `</think>` is reasoning too: never saved or checked. Until that
//! tag comes nothing tells it from an answer, and holding text back would
//! delay every answer and lose what a Ctrl-C in a stall keeps; so it is shown
//! as it comes, and when the tag does come kebab says so (`REASONING_SHOWN`)
//! rather than let the text above pass for the answer. A block that arrives
//! whole in the first piece is never shown.
//!
//! The answer cap (`ChatRequest::max_tokens`) bounds the reasoning and the
//! answer together, as servers that honour it count them (Ollama's
//! `num_predict`, an OpenAI-compatible `max_tokens`): `Answer` stops reading
//! a server that ignores it, or a model that would reason forever would never
//! stop — its reasoning is not shown, so the ask pipeline's count of the text
//! it shows never grows.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use super::{ChatModel, ChatRequest, Completion, Flow, LlmError, Usage};
use crate::script::estimate_tokens;

/// The tags around the reasoning some servers put at the start of the answer text.
const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

/// Shown after reasoning that streamed before its `</think>` was seen.
pub const REASONING_SHOWN: &str = "\n\n[the text above is the model's reasoning, not saved or checked; its answer follows]\n\n";

/// Where the streamed text is with respect to a leading `<think>` block.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Think {
    /// Nothing yet but blanks and the start of `<think>`: held back until it is known.
    Undecided,
    /// In the block: only its last few characters, which may start `</think>`, are held.
    Inside,
    /// No opening tag: shown as it comes, and reasoning if a `</think>`
    /// comes before any `<think>`.
    Headless,
    /// Past `</think>`: the blanks before the answer are dropped.
    After,
    /// The answer: passed on as it comes.
    Answer,
}

/// A streamed piece's share of the answer cap: on a real server each piece is
/// about one token; a larger one counts as its estimate.
pub fn piece_tokens(piece: &str) -> usize {
    estimate_tokens(piece).max(1)
}

/// The answer being streamed: collects the text, times the first piece and
/// passes each piece to the caller's callback.
pub struct Answer<'a> {
    started: Instant,
    pub text: String,
    first_token: Option<Duration>,
    /// The server sent reasoning apart from the text (`Completion::reasoned`).
    pub reasoned: bool,
    think: Think,
    /// Text received but not yet known to be answer or reasoning.
    held: String,
    /// The answer cap, in tokens, for reasoning and answer together (`within`).
    cap: Option<usize>,
    /// Tokens of reasoning and answer received (`piece_tokens` each).
    spent: usize,
    /// Stopped at the cap.
    capped: bool,
    on_text: &'a mut dyn FnMut(&str) -> Flow,
}

impl<'a> Answer<'a> {
    pub fn new(started: Instant, on_text: &'a mut dyn FnMut(&str) -> Flow) -> Answer<'a> {
        let (text, held) = (String::new(), String::new());
        let think = Think::Undecided;
        let (cap, spent, capped) = (None, 0, false);
        Answer { started, text, first_token: None, reasoned: false, think, held, cap, spent, capped, on_text }
    }

    /// Stops reading, as at the server's own length cap, once reasoning and
    /// answer come to more than `max_tokens` (`ChatRequest::max_tokens`).
    pub fn within(self, max_tokens: Option<u32>) -> Answer<'a> {
        Answer { cap: max_tokens.map(|n| n as usize), ..self }
    }

    /// Adds a piece of the server's text: a leading `<think>` block, or the
    /// text before a `</think>` that had no opening tag, is reasoning; the
    /// rest is the answer. Empty pieces are not passed on.
    pub fn push(&mut self, piece: &str) -> Flow {
        let flow = self.take(piece);
        self.spend(piece, flow)
    }

    /// Notes reasoning the server sent apart from the text (Ollama's
    /// `thinking`, `reasoning_content`), which counts toward the cap.
    pub fn reason(&mut self, thought: &str) -> Flow {
        self.reasoned |= !thought.is_empty();
        self.spend(thought, Flow::Continue)
    }

    /// Counts a piece toward the cap: `Flow::Stop` once past it.
    fn spend(&mut self, piece: &str, flow: Flow) -> Flow {
        if !piece.is_empty() {
            self.spent += piece_tokens(piece);
        }
        if flow == Flow::Continue && self.cap.is_some_and(|cap| self.spent > cap) {
            self.capped = true;
            return Flow::Stop;
        }
        flow
    }

    /// `push` before the piece is counted.
    fn take(&mut self, piece: &str) -> Flow {
        if self.think == Think::Answer {
            return self.pass(piece);
        }
        self.held.push_str(piece);
        loop {
            match self.think {
                Think::Undecided => {
                    let start = self.held.trim_start();
                    if let Some(rest) = start.strip_prefix(OPEN) {
                        self.held = rest.to_string();
                        self.think = Think::Inside;
                    } else if OPEN.starts_with(start) || CLOSE.starts_with(start) {
                        return Flow::Continue;
                    } else {
                        self.think = Think::Headless;
                    }
                }
                Think::Inside => {
                    if let Some(at) = self.held.find(CLOSE) {
                        self.reasoned |= !self.held[..at].trim().is_empty();
                        self.held.drain(..at + CLOSE.len());
                        self.think = Think::After;
                        continue;
                    }
                    let thought = self.tag_tail();
                    self.reasoned |= !self.held[..thought].trim().is_empty();
                    self.held.drain(..thought);
                    return Flow::Continue;
                }
                Think::Headless => {
                    let piece = std::mem::take(&mut self.held);
                    let before = self.text.len();
                    self.text.push_str(&piece);
                    // A tag may have begun in an earlier piece.
                    let mut from = before.saturating_sub(CLOSE.len() - 1);
                    while !self.text.is_char_boundary(from) {
                        from -= 1;
                    }
                    let open = self.text[from..].find(OPEN);
                    match self.text[from..].find(CLOSE).map(|at| from + at) {
                        Some(at) if open.is_none_or(|o| from + o > at) => {
                            let end = at + CLOSE.len();
                            let shown = !self.text[..before].trim().is_empty();
                            self.reasoned |= !self.text[..at].trim().is_empty();
                            self.held = self.text.split_off(end);
                            self.text.clear();
                            self.think = Think::After;
                            // The tag ends in this piece (an earlier one would have been found then).
                            if shown {
                                let flow = self.show(&piece[..end - before]);
                                if flow == Flow::Stop || self.show(REASONING_SHOWN) == Flow::Stop {
                                    return Flow::Stop;
                                }
                            }
                        }
                        // `<think>` in the text first: it is about the tags, not reasoning.
                        _ => {
                            if open.is_some() {
                                self.think = Think::Answer;
                            }
                            return self.show(&piece);
                        }
                    }
                }
                Think::After | Think::Answer => {
                    let answer = self.held.trim_start().to_string();
                    self.held.clear();
                    if answer.is_empty() {
                        return Flow::Continue;
                    }
                    self.think = Think::Answer;
                    return self.pass(&answer);
                }
            }
        }
    }

    /// Where the held text's last few characters, which may start a tag cut between pieces, begin.
    fn tag_tail(&self) -> usize {
        let mut at = self.held.len().saturating_sub(CLOSE.len() - 1);
        while !self.held.is_char_boundary(at) {
            at += 1;
        }
        at
    }

    /// Passes a piece of the answer on.
    fn pass(&mut self, piece: &str) -> Flow {
        self.text.push_str(piece);
        self.show(piece)
    }

    /// Shows a piece, which is not (or no longer) part of the answer's text.
    fn show(&mut self, piece: &str) -> Flow {
        if piece.is_empty() {
            return Flow::Continue;
        }
        if self.first_token.is_none() {
            self.first_token = Some(self.started.elapsed());
        }
        (self.on_text)(piece)
    }

    /// The answer so far, for the error of a stream that broke: what was
    /// shown of it (a tag's start held back was not, and is not kept).
    pub fn partial(&self) -> String {
        self.text.clone()
    }

    /// Nothing has been shown yet, reasoning included: an error now is the
    /// server turning the request down, not a stream breaking under the reader's eyes.
    pub fn shown_nothing(&self) -> bool {
        self.first_token.is_none()
    }

    pub fn finish(mut self, usage: Usage, stopped: bool) -> Completion {
        // Stopped at the cap, the answer is cut as by the server's own cap, not stopped by the caller.
        let (stopped, length) = (stopped && !self.capped, self.capped);
        let held = std::mem::take(&mut self.held);
        match self.think {
            // A whole answer that is blank or only the start of `<think>` ("<th"), or had no `</think>`, is the
            // answer: kept, and shown unless the caller asked to stop (it is called no more).
            Think::Undecided | Think::Headless if stopped => self.text.push_str(&held),
            Think::Undecided | Think::Headless => {
                self.pass(&held);
            }
            // Cut inside the block (at the answer cap): all of it was reasoning.
            Think::Inside => self.reasoned |= !held.trim().is_empty(),
            Think::After | Think::Answer => {}
        }
        Completion { text: self.text, usage, stopped, first_token: self.first_token, length, reasoned: self.reasoned }
    }
}

/// What the thread talking to the server passes back.
enum Relayed {
    Piece(String),
    Done(Result<Completion, LlmError>),
}

/// How often the waiting caller looks at the cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// Runs `call` — a server call, streaming through the callback it is given —
/// on a thread of its own and relays its pieces to `on_text`, so the caller
/// can stop waiting the moment `cancel` is set: a blocking socket read would
/// otherwise hold a Ctrl-C until the server sent something or timed out. The
/// stopped completion carries the text so far; the abandoned thread drops
/// its connection (which makes the server stop) at its next piece, or ends at
/// the idle timeout.
pub fn relay<F>(cancel: &AtomicBool, on_text: &mut dyn FnMut(&str) -> Flow, call: F) -> Result<Completion, LlmError>
where
    F: FnOnce(&mut dyn FnMut(&str) -> Flow) -> Result<Completion, LlmError> + Send + 'static,
{
    let started = Instant::now();
    let stopped = |text: String, first_token: Option<Duration>| {
        Ok(Completion { text, stopped: true, first_token, ..Completion::default() })
    };
    if cancel.load(Ordering::SeqCst) {
        return stopped(String::new(), None);
    }
    let (tx, rx) = mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let stop_worker = stop.clone();
    let spawned = thread::Builder::new().name("model server".into()).spawn(move || {
        let pieces = tx.clone();
        let mut forward = |piece: &str| {
            let gone = pieces.send(Relayed::Piece(piece.to_string())).is_err();
            if gone || stop_worker.load(Ordering::SeqCst) { Flow::Stop } else { Flow::Continue }
        };
        let result = call(&mut forward);
        let _ = tx.send(Relayed::Done(result));
    });
    if let Err(e) = spawned {
        return Err(LlmError::Other(format!("cannot start a thread for the model server: {e}")));
    }
    let mut text = String::new();
    let mut first_token = None;
    loop {
        if cancel.load(Ordering::SeqCst) {
            stop.store(true, Ordering::SeqCst);
            return stopped(text, first_token);
        }
        match rx.recv_timeout(CANCEL_POLL) {
            Ok(Relayed::Piece(piece)) => {
                first_token.get_or_insert_with(|| started.elapsed());
                text.push_str(&piece);
                if on_text(&piece) == Flow::Stop {
                    stop.store(true, Ordering::SeqCst);
                    return stopped(text, first_token);
                }
            }
            // The pieces came before it, in order: its text is the text relayed.
            Ok(Relayed::Done(result)) => return result,
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                return Err(LlmError::Other("the model server call ended without an answer (a kebab bug)".into()));
            }
        }
    }
}

/// `model.chat` run through `relay`: a server provider's `chat_until`.
pub fn chat_on_thread<M>(
    model: &M,
    req: &ChatRequest,
    on_text: &mut dyn FnMut(&str) -> Flow,
    cancel: &AtomicBool,
) -> Result<Completion, LlmError>
where
    M: ChatModel + Clone + Send + 'static,
{
    let (model, req) = (model.clone(), req.clone());
    relay(cancel, on_text, move |on_text| model.chat(&req, on_text))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` pushed in pieces of `size` bytes (or less, at a character's end): what was passed on, and the completion.
    fn streamed(text: &str, size: usize) -> (Vec<String>, Completion) {
        let mut passed = Vec::new();
        let mut on_text = |p: &str| {
            passed.push(p.to_string());
            Flow::Continue
        };
        let mut answer = Answer::new(Instant::now(), &mut on_text);
        let mut rest = text;
        while !rest.is_empty() {
            let mut at = size.min(rest.len());
            while !rest.is_char_boundary(at) {
                at += 1;
            }
            answer.push(&rest[..at]);
            rest = &rest[at..];
        }
        let done = answer.finish(Usage::default(), false);
        (passed, done)
    }

    #[test]
    fn a_leading_think_block_is_reasoning_however_the_stream_cuts_its_tags() {
        let cases = [
            ("\n<think>\nIs it [#9]? Über-careful.</think>\n\nRun it [#1].", "Run it [#1].", true),
            ("<think>\n\n</think>\n\nRun it [#1].", "Run it [#1].", false),
            ("<think>all of it is reasoning", "", true),
            ("<thinker> is a word [#1].", "<thinker> is a word [#1].", false),
            ("Run it [#1]. <think>later</think>", "Run it [#1]. <think>later</think>", false),
            ("<th", "<th", false),
            ("", "", false),
            // The opening tag was in the prompt, and the block is empty.
            ("\n\n</think>\n\nRun it [#1].", "Run it [#1].", false),
            ("A `<think>` block ends at `</think>` [#1].", "A `<think>` block ends at `</think>` [#1].", false),
        ];
        for (text, answer, reasoned) in cases {
            for size in 1..=text.len().max(1) {
                let (passed, done) = streamed(text, size);
                assert_eq!((done.text.as_str(), done.reasoned), (answer, reasoned), "{text:?} in pieces of {size}");
                assert_eq!(passed.concat(), done.text, "{text:?} in pieces of {size}");
                assert!(passed.iter().all(|p| !p.is_empty()), "{text:?} in pieces of {size}");
            }
        }
    }

    #[test]
    fn reasoning_whose_opening_tag_was_in_the_prompt_is_not_kept_and_once_shown_is_marked_however_the_stream_cuts_its_tag() {
        let thought = "Über-careful: the user asks about cargo [#9] and the notes say cargo new.\n";
        let text = format!("{thought}</think>\n\nRun it [#1].");
        let marked = format!("{thought}</think>{REASONING_SHOWN}Run it [#1].");
        for size in 1..=text.len() {
            let (passed, done) = streamed(&text, size);
            assert_eq!((done.text.as_str(), done.reasoned), ("Run it [#1].", true), "in pieces of {size}");
            // Whole in the first piece, it was never shown.
            let whole = size >= thought.len() + CLOSE.len();
            assert_eq!(passed.concat(), if whole { done.text.clone() } else { marked.clone() }, "in pieces of {size}");
        }
    }

    #[test]
    fn a_stream_that_breaks_keeps_what_was_shown_and_says_whether_anything_was_reasoning_included() {
        let mut on_text = |_: &str| Flow::Continue;
        let mut answer = Answer::new(Instant::now(), &mut on_text);
        // The start of a tag is held back, so nothing is shown and nothing kept.
        answer.push("<th");
        assert_eq!((answer.partial(), answer.shown_nothing()), (String::new(), true));
        let mut answer = Answer::new(Instant::now(), &mut on_text);
        answer.push("Let me check the notes.");
        answer.push(" Cargo it is.</think>");
        // Reasoning was shown, then said to be reasoning: no answer text, but not nothing shown.
        assert_eq!((answer.partial(), answer.shown_nothing()), (String::new(), false));
        answer.push("Run it");
        assert_eq!(answer.partial(), "Run it");
    }

    #[test]
    fn an_ordinary_answer_is_shown_as_it_comes() {
        let text = "Run `cargo new hello` in a terminal [#1].";
        let (passed, done) = streamed(text, 1);
        assert_eq!(done.text, text);
        assert_eq!(passed.len(), text.len(), "{passed:?}");
    }
}
