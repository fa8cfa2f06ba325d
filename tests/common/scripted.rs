//! A chat model for tests and benchmarks: it answers each call with the next
//! of a list of scripted replies, streams it word by word, and records every
//! request so a test can inspect the prompts it was sent. No server, no
//! latency unless asked for (a per-piece delay, for cancellation tests).
//! It lives with the tests, not in the shipped library; a test or bench
//! includes it with `#[path]`.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use kebab::llm::{ChatModel, ChatRequest, Completion, Flow, LlmError, Usage};

/// Clones share the replies and the recorded requests, so a test can hand a
/// clone to a `Kb` and still inspect what the model was sent. A `Mutex` (not
/// a `RefCell`) so the model can be shared across threads.
#[derive(Debug, Clone)]
pub struct Scripted {
    id: String,
    replies: Arc<Mutex<VecDeque<String>>>,
    requests: Arc<Mutex<Vec<ChatRequest>>>,
    delay: Duration,
}

impl Scripted {
    /// A model that answers call n with `replies[n]`.
    pub fn new<S: Into<String>>(replies: impl IntoIterator<Item = S>) -> Scripted {
        Scripted {
            id: "scripted".into(),
            replies: Arc::new(Mutex::new(replies.into_iter().map(Into::into).collect())),
            requests: Arc::new(Mutex::new(Vec::new())),
            delay: Duration::ZERO,
        }
    }

    /// Waits `delay` before each piece, so a test can stop a stream mid-way.
    pub fn with_delay(mut self, delay: Duration) -> Scripted {
        self.delay = delay;
        self
    }

    /// Reports a different model id (default `scripted`).
    pub fn with_id(mut self, id: impl Into<String>) -> Scripted {
        self.id = id.into();
        self
    }

    /// Queues one more reply after the existing ones.
    pub fn push_reply(&self, reply: impl Into<String>) {
        lock(&self.replies).push_back(reply.into());
    }

    /// Replies not yet used.
    pub fn remaining(&self) -> usize {
        lock(&self.replies).len()
    }

    /// Every request received so far, in order (including ones that found no reply).
    pub fn requests(&self) -> Vec<ChatRequest> {
        lock(&self.requests).clone()
    }

    /// The last request received.
    pub fn last_request(&self) -> Option<ChatRequest> {
        lock(&self.requests).last().cloned()
    }
}

impl ChatModel for Scripted {
    fn id(&self) -> &str {
        &self.id
    }

    fn provider(&self) -> &'static str {
        "scripted"
    }

    fn chat(&self, req: &ChatRequest, on_text: &mut dyn FnMut(&str) -> Flow) -> Result<Completion, LlmError> {
        let started = Instant::now();
        lock(&self.requests).push(req.clone());
        let Some(reply) = lock(&self.replies).pop_front() else {
            return Err(LlmError::Other("scripted model has no reply left".into()));
        };
        let prompt_chars: usize = req.messages.iter().map(|m| m.content.chars().count()).sum();
        let mut completion = Completion::default();
        let mut pieces = 0u32;
        for piece in pieces_of(&reply) {
            if !self.delay.is_zero() {
                std::thread::sleep(self.delay);
            }
            if completion.first_token.is_none() {
                completion.first_token = Some(started.elapsed());
            }
            completion.text.push_str(piece);
            pieces += 1;
            if on_text(piece) == Flow::Stop {
                completion.stopped = true;
                break;
            }
        }
        completion.usage = Usage {
            prompt_tokens: Some(u32::try_from(prompt_chars / 4).unwrap_or(u32::MAX)),
            completion_tokens: Some(pieces),
        };
        Ok(completion)
    }
}

/// Splits text where whitespace follows a non-space, so each piece is a word
/// with the whitespace before it: `"a b\n"` → `"a"`, `" b"`, `"\n"`. The
/// pieces join back to the text exactly.
pub fn pieces_of(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    let mut prev_space = true;
    let mut bounds = Vec::new();
    for (i, c) in text.char_indices() {
        let space = c.is_whitespace();
        if space && !prev_space && i > start {
            bounds.push((start, i));
            start = i;
        }
        prev_space = space;
    }
    if start < text.len() {
        bounds.push((start, text.len()));
    }
    bounds.into_iter().map(move |(a, b)| &text[a..b])
}

/// Locks even if another thread panicked while holding the lock: the data
/// (a queue of strings, a list of requests) cannot be left half-updated.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kebab::llm::{Message, Role};

    fn request(text: &str) -> ChatRequest {
        ChatRequest {
            messages: vec![Message::new(Role::User, text)],
            temperature: 0.0,
            seed: Some(0),
            max_tokens: None,
            stream: true,
            grounding: None,
        }
    }

    #[test]
    fn pieces_keep_the_whitespace_and_join_back_exactly() {
        let text = "  Hello world,\n\nnext  line [#1] ";
        let pieces: Vec<&str> = pieces_of(text).collect();
        assert_eq!(pieces, vec!["  Hello", " world,", "\n\nnext", "  line", " [#1]", " "]);
        assert_eq!(pieces.concat(), text);
        assert_eq!(pieces_of("").count(), 0);
        assert_eq!(pieces_of("한국어 답변").collect::<Vec<_>>(), vec!["한국어", " 답변"]);
    }

    #[test]
    fn replies_come_in_order_and_streamed_in_pieces() {
        let model = Scripted::new(["one two three", "second"]);
        let mut seen = Vec::new();
        let done = model
            .chat(&request("12345678"), &mut |p| {
                seen.push(p.to_string());
                Flow::Continue
            })
            .unwrap();
        assert_eq!(seen, vec!["one", " two", " three"]);
        assert_eq!(done.text, "one two three");
        assert_eq!(done.usage, Usage { prompt_tokens: Some(2), completion_tokens: Some(3) });
        assert!(!done.stopped && done.first_token.is_some());
        assert_eq!(model.chat(&request("q"), &mut |_| Flow::Continue).unwrap().text, "second");
        assert_eq!(model.remaining(), 0);
    }

    #[test]
    fn an_empty_queue_is_an_error_and_the_request_is_still_recorded() {
        let model = Scripted::new(Vec::<String>::new());
        let err = model.chat(&request("why?"), &mut |_| Flow::Continue).unwrap_err();
        assert_eq!(err.to_string(), "scripted model has no reply left");
        assert_eq!(model.requests().len(), 1);
        assert_eq!(model.last_request().unwrap().messages[0].content, "why?");
    }

    #[test]
    fn stop_ends_the_stream_with_the_partial_text() {
        let model = Scripted::new(["a b c d e"]).with_delay(Duration::from_millis(1));
        let mut calls = 0;
        let done = model
            .chat(&request("q"), &mut |_| {
                calls += 1;
                if calls == 2 { Flow::Stop } else { Flow::Continue }
            })
            .unwrap();
        assert!(done.stopped);
        assert_eq!(done.text, "a b");
        assert_eq!(done.usage.completion_tokens, Some(2));
    }
}
