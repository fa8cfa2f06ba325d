//! Generate: run the model, pass each piece of text to the sink as it
//! arrives, and stop when the user cancels — at once, even while the server
//! sends nothing (`ChatModel::chat_until`). A sink that went
//! away (a closed pipe) never stops generation: the answer is still built and
//! saved. A server that ignores the answer cap (`max_tokens`) is cut by
//! kebab at about that many tokens, so a model stuck in a loop cannot stream
//! until its context fills; the answer is kept and marked.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::llm::stream::piece_tokens;
use crate::llm::{ChatModel, ChatRequest, Flow, LlmError, Usage};

pub struct Generated {
    pub text: String,
    pub usage: Usage,
    /// Cancelled by the user, or cut short by an error after some text.
    pub aborted: bool,
    pub first_token: Option<Duration>,
    pub error: Option<LlmError>,
    /// The answer ended at the cap (`req.max_tokens`): the server said so,
    /// or kebab stopped reading there.
    pub length: bool,
    /// The server sent reasoning apart from the text (`Completion::reasoned`).
    pub reasoned: bool,
}

/// `sink` returns false once it can take no more text.
pub fn generate(model: &dyn ChatModel, req: &ChatRequest, sink: &mut dyn FnMut(&str) -> bool, cancel: &AtomicBool) -> Generated {
    let mut sink_alive = true;
    let mut capped = false;
    // A server model's reasoning is counted toward the cap where it is taken out (`llm::stream::Answer`).
    let mut received = 0usize;
    let cap = req.max_tokens.map(|n| n as usize);
    let mut on_text = |piece: &str| {
        if sink_alive {
            sink_alive = sink(piece);
        }
        if cancel.load(Ordering::SeqCst) {
            return Flow::Stop;
        }
        if let Some(cap) = cap {
            received += piece_tokens(piece);
            if received > cap {
                capped = true;
                return Flow::Stop;
            }
        }
        Flow::Continue
    };
    let result = model.chat_until(req, &mut on_text, cancel);
    match result {
        Ok(c) => Generated {
            aborted: (c.stopped && !capped) || cancel.load(Ordering::SeqCst),
            length: c.length || capped,
            text: c.text,
            usage: c.usage,
            first_token: c.first_token,
            error: None,
            reasoned: c.reasoned,
        },
        Err(e) => Generated {
            text: e.partial().to_string(),
            usage: Usage::default(),
            aborted: true,
            first_token: None,
            error: Some(e),
            length: false,
            reasoned: false,
        },
    }
}

/// The refusal reason of an ask whose model call failed: `model_error` when
/// the server answered with an error status (a wrong model name, a crashed
/// runner) — the user must fix something — else `llm_stream_aborted` (the
/// stream broke, timed out or never connected).
pub fn failure_reason(err: &LlmError) -> &'static str {
    match err {
        LlmError::Http { .. } => "model_error",
        _ => "llm_stream_aborted",
    }
}

/// How a front end introduces a model failure: whether any text arrived, and
/// whether the ask was saved (not when read-only) — so a refused connection
/// is not reported as an answer "cut short".
pub fn failure_lead(err: &LlmError, saved: bool) -> &'static str {
    match (err.partial().is_empty(), saved) {
        (true, true) => "the model did not answer; the question is saved",
        (true, false) => "the model did not answer",
        (false, true) => "the answer was cut short; the partial text is saved",
        (false, false) => "the answer was cut short",
    }
}
