//! The bookkeeping of a streamed answer, shared by the server providers:
//! the text so far, the time of the first piece, and the caller's callback.

use std::time::{Duration, Instant};

use super::{Completion, Flow, Usage};

/// The answer being streamed: collects the text, times the first piece and
/// passes each piece to the caller's callback.
pub struct Answer<'a> {
    started: Instant,
    pub text: String,
    first_token: Option<Duration>,
    on_text: &'a mut dyn FnMut(&str) -> Flow,
}

impl<'a> Answer<'a> {
    pub fn new(started: Instant, on_text: &'a mut dyn FnMut(&str) -> Flow) -> Answer<'a> {
        Answer { started, text: String::new(), first_token: None, on_text }
    }

    /// Adds a piece; empty pieces are not passed on.
    pub fn push(&mut self, piece: &str) -> Flow {
        if piece.is_empty() {
            return Flow::Continue;
        }
        if self.first_token.is_none() {
            self.first_token = Some(self.started.elapsed());
        }
        self.text.push_str(piece);
        (self.on_text)(piece)
    }

    pub fn finish(self, usage: Usage, stopped: bool) -> Completion {
        Completion { text: self.text, usage, stopped, first_token: self.first_token, length: false }
    }
}

