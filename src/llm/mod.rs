//! Chat models: one small trait, and the providers behind it (one file each).
//!
//! A model streams its answer through a callback that receives each piece of
//! text as it arrives and may ask to stop (Ctrl-C). Errors are typed so the
//! ask pipeline can keep the partial text of a stream that broke.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub mod auto;
pub mod extractive;
pub mod stream;
pub mod ollama;
pub mod openai;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    System,
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn new(role: Role, content: impl Into<String>) -> Message {
        Message { role, content: content.into() }
    }
}

/// One chat completion request.
#[derive(Debug, Clone)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    pub temperature: f32,
    pub seed: Option<u64>,
    /// Upper bound on completion tokens, reasoning included, if the caller wants one.
    pub max_tokens: Option<u32>,
    /// Ask the server to stream. Without it an OpenAI-compatible server sends
    /// one answer with its token usage — which some (llama-cpp-python) only
    /// report that way. Ollama always streams; its final line carries usage.
    pub stream: bool,
    /// The question and numbered evidence behind the prompt, for models that
    /// work on them directly (the built-in extractive model); `None` outside
    /// the ask pipeline. Server models read the rendered messages instead.
    pub grounding: Option<Grounding>,
}

/// The structured side of a grounded prompt.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Grounding {
    pub question: String,
    /// `(n, text)`: evidence entry `[#n]` and its chunk text.
    pub evidence: Vec<(usize, String)>,
    /// Answer in Korean wording (the question is in Korean).
    pub korean: bool,
    /// In a conversation: what the previous turn was about (the expansion of
    /// the retrieval query), so a follow-up's "that" can be resolved.
    pub context: String,
    /// In a conversation: the previous turn's whole answer (empty after a
    /// refusal), so what it quoted is not quoted again.
    pub said: String,
    /// How close in meaning the question is to each of the built-in
    /// answerer's candidates (`extractive::candidates`), by index: the
    /// search embedder's cosine, lent by the ask pipeline when it can read
    /// the question. Empty when it cannot (lexical mode, no model).
    pub closeness: Vec<(usize, f32)>,
    /// The heading each entry's text goes on from, where it opens under one.
    pub headings: Vec<Heading>,
}

/// The heading evidence entry `[#n]`'s first sentence goes on from.
#[derive(Debug, Clone, PartialEq)]
pub struct Heading {
    pub n: usize,
    pub text: String,
    /// A JSONL record's title: its text never repeats it ("BM25" over "A
    /// ranking function that …"), so the first sentence is always read as
    /// about it. A Markdown heading ("## Autolyse" over "Mixing only the
    /// flour and water …") only when no sentence answers in its own words,
    /// or over a section of a sentence or two (a label and its value): a
    /// longer section's first sentence is often about something else.
    pub record: bool,
}

/// What the token callback tells the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// Token counts as the provider reported them (None when it did not).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: Option<u32>,
    pub completion_tokens: Option<u32>,
}

/// A finished (or deliberately stopped) completion.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Completion {
    /// The full text received, whether or not the stream ran to its end.
    pub text: String,
    pub usage: Usage,
    /// True when the callback returned `Flow::Stop` before the model finished.
    pub stopped: bool,
    /// Time from sending the request to the first piece of text.
    pub first_token: Option<Duration>,
    /// The server ended the answer at its length cap (`done_reason` /
    /// `finish_reason` "length").
    pub length: bool,
    /// The server sent the model's reasoning apart from its answer (Ollama's
    /// `thinking`, an OpenAI-style `reasoning_content`, or a leading
    /// `<think>…</think>` block of the text, or the text before a `</think>`
    /// with no opening tag, taken out of `text`), which kebab
    /// neither shows nor checks: an answer with no text then says why it has none.
    pub reasoned: bool,
}

/// A model server's failure, as the chat providers report it.
pub use crate::http::ServerError as LlmError;

/// The advice for a prompt longer than the context the server runs the model
/// with: kebab fits the evidence to `llm.context_tokens` (docs/configuration.md),
/// so that is the setting to bring down to the server's own context; where it
/// already is, kebab's estimate of the prompt fell short, and less evidence fits.
const CONTEXT_HINT: &str = "the prompt was longer than the model's context on the server: set llm.context_tokens to \
                            that context or lower (kebab fits its evidence to it), or lower rag.max_context_tokens to send \
                            less evidence";
/// The advice for a context overrun after some of the answer streamed: the
/// prompt fitted, the answer did not. kebab keeps room for an answer of
/// `llm.max_answer_tokens` in `llm.context_tokens`, so that is still the
/// setting to bring down; less evidence leaves the answer more room, and a
/// lower answer cap has the server stop before the context runs out.
const MID_ANSWER_CONTEXT_HINT: &str = "the prompt and the answer so far ran past the model's context on the server: set \
                                       llm.context_tokens to that context or lower (kebab keeps room in it for the answer), \
                                       or lower rag.max_context_tokens to send less evidence, or llm.max_answer_tokens to \
                                       ask for a shorter answer";

/// `err` with a context hint when the server said the context overran
/// (llama.cpp's "exceeds the available context size", OpenAI's and
/// vLLM's "maximum context length", Ollama's "context length") and no hint
/// of its own applies: `CONTEXT_HINT` where it said so in place of an answer,
/// `MID_ANSWER_CONTEXT_HINT` where some of one had streamed (llama.cpp
/// running out of context mid-answer).
pub(crate) fn with_context_hint(err: LlmError) -> LlmError {
    let context_hint = |message: &str, hint: &str| {
        let lower = message.to_lowercase();
        let overran =
            ["context length", "context size", "context_length", "context window"].iter().any(|w| lower.contains(w));
        overran.then(|| hint.to_string())
    };
    match err {
        LlmError::Http { url, status, message, hint: None } => {
            LlmError::Http { hint: context_hint(&message, CONTEXT_HINT), url, status, message }
        }
        LlmError::Stream { url, message, partial, hint: None } => {
            LlmError::Stream { hint: context_hint(&message, MID_ANSWER_CONTEXT_HINT), url, message, partial }
        }
        other => other,
    }
}

/// A chat model. `chat` runs on the calling thread and calls `on_text` with
/// each piece of the answer as it arrives.
pub trait ChatModel {
    /// The model's id as the provider names it (`qwen2.5:7b-instruct`).
    fn id(&self) -> &str;
    /// `ollama`, `openai`, `extractive` (tests add their own).
    fn provider(&self) -> &'static str;
    fn chat(&self, req: &ChatRequest, on_text: &mut dyn FnMut(&str) -> Flow) -> Result<Completion, LlmError>;
    /// `chat` that also stops, as `on_text` returning `Flow::Stop` does, as
    /// soon as `cancel` is set — for a server model, even while it sends
    /// nothing (evaluating a long prompt, stalled, composing a whole answer),
    /// when `on_text` is never called. A model that answers at once needs
    /// nothing more than `chat`.
    fn chat_until(
        &self,
        req: &ChatRequest,
        on_text: &mut dyn FnMut(&str) -> Flow,
        _cancel: &AtomicBool,
    ) -> Result<Completion, LlmError> {
        self.chat(req, on_text)
    }
    /// Whether the model follows written instructions beyond answering from
    /// evidence — a multi-hop ask needs it to reply with a JSON list of
    /// sub-questions. The built-in extractive model only quotes evidence.
    fn follows_instructions(&self) -> bool {
        true
    }
    /// Whether the model chooses what to quote with `Grounding::closeness`
    /// (the built-in extractive model); others read the prompt alone.
    fn reads_closeness(&self) -> bool {
        false
    }
    /// The largest context, in tokens, the server reports for this model
    /// (Ollama's `/api/show`); `None` when it reports none, and kebab plans
    /// with `llm.context_tokens` alone.
    fn context_window(&self) -> Option<usize> {
        None
    }
}
