//! The bookkeeping of a streamed answer, shared by the server providers:
//! the text so far, the time of the first piece, and the caller's callback;
//! and `relay`, which lets a caller stop waiting on a server at any moment.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use super::{ChatModel, ChatRequest, Completion, Flow, LlmError, Usage};

/// The answer being streamed: collects the text, times the first piece and
/// passes each piece to the caller's callback.
pub struct Answer<'a> {
    started: Instant,
    pub text: String,
    first_token: Option<Duration>,
    /// The server sent reasoning apart from the text (`Completion::reasoned`).
    pub reasoned: bool,
    on_text: &'a mut dyn FnMut(&str) -> Flow,
}

impl<'a> Answer<'a> {
    pub fn new(started: Instant, on_text: &'a mut dyn FnMut(&str) -> Flow) -> Answer<'a> {
        Answer { started, text: String::new(), first_token: None, reasoned: false, on_text }
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
        Completion { text: self.text, usage, stopped, first_token: self.first_token, length: false, reasoned: self.reasoned }
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
