//! Generate: run the model on the calling thread, pass each piece of text to
//! the sink as it arrives, and stop when the user cancels. A sink that went
//! away (a closed pipe) never stops generation: the answer is still built and
//! saved.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::llm::{ChatModel, ChatRequest, Flow, LlmError, Usage};

pub struct Generated {
    pub text: String,
    pub usage: Usage,
    /// Cancelled by the user, or cut short by an error after some text.
    pub aborted: bool,
    pub first_token: Option<Duration>,
    pub error: Option<LlmError>,
}

/// `sink` returns false once it can take no more text.
pub fn generate(model: &dyn ChatModel, req: &ChatRequest, sink: &mut dyn FnMut(&str) -> bool, cancel: &AtomicBool) -> Generated {
    let mut sink_alive = true;
    let mut on_text = |piece: &str| {
        if sink_alive {
            sink_alive = sink(piece);
        }
        if cancel.load(Ordering::SeqCst) { Flow::Stop } else { Flow::Continue }
    };
    match model.chat(req, &mut on_text) {
        Ok(c) => Generated {
            aborted: c.stopped || cancel.load(Ordering::SeqCst),
            text: c.text,
            usage: c.usage,
            first_token: c.first_token,
            error: None,
        },
        Err(e) => Generated { text: e.partial().to_string(), usage: Usage::default(), aborted: true, first_token: None, error: Some(e) },
    }
}

/// How a front end introduces a model failure: whether any text arrived, and
/// whether the ask was saved (not when read-only) — so a refused connection
/// is not reported as an answer "cut short".
pub fn failure_lead(err: &LlmError, saved: bool) -> &'static str {
    match (err.partial().is_empty(), saved) {
        (true, true) => "the model did not answer; the question is saved as aborted",
        (true, false) => "the model did not answer",
        (false, true) => "the answer was cut short; the partial text is saved as aborted",
        (false, false) => "the answer was cut short",
    }
}
