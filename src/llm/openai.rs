//! The OpenAI-compatible provider: `POST /v1/chat/completions` with
//! `stream: true`, read as server-sent events (`data: {json}` lines ending
//! with `data: [DONE]`). Written to the common subset that OpenAI, the
//! llama.cpp server, vLLM and LM Studio all speak.
//!
//! The API key comes from the environment, goes only into the
//! `Authorization` header, and is cut out of anything shown: `Debug` redacts
//! it and a server that echoes it back has it replaced in the error.

use std::fmt;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::stream::{self, Answer};
use crate::http::{self, LineError, Lines, MAX_LINE_BYTES};
use super::{ChatModel, ChatRequest, Completion, Flow, LlmError, Usage};
use crate::config::LlmConfig;

/// The largest non-streamed answer read, for servers that ignore `stream`.
const MAX_JSON_BODY: u64 = 16 * 1024 * 1024;

#[derive(Clone)]
pub struct OpenAi {
    /// `https://api.openai.com` or `http://127.0.0.1:8080/v1`; `/v1` is added when missing.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// The variable the key is read from (`llm.api_key_env`), named in
    /// the hint for a refused key; empty when none is named.
    pub api_key_env: String,
    /// Idle timeout: the longest wait for the next piece of the answer.
    pub timeout: Duration,
}

impl fmt::Debug for OpenAi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAi")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl OpenAi {
    pub fn new(
        base_url: impl Into<String>,
        model: impl Into<String>,
        api_key: Option<String>,
        timeout: Duration,
    ) -> OpenAi {
        OpenAi { base_url: base_url.into(), model: model.into(), api_key, api_key_env: String::new(), timeout }
    }

    /// Reads the key from the environment variable named by `llm.api_key_env`;
    /// an unset or empty variable means no key (local servers need none).
    pub fn from_config(cfg: &LlmConfig) -> OpenAi {
        let api_key = http::api_key(&cfg.api_key_env);
        let model = OpenAi::new(cfg.base_url.clone(), cfg.model.clone(), api_key, Duration::from_secs(cfg.timeout_secs));
        OpenAi { api_key_env: cfg.api_key_env.clone(), ..model }
    }

    fn url(&self) -> String {
        http::openai_url(&self.base_url, "chat/completions")
    }

    fn body(&self, req: &ChatRequest) -> Value {
        let messages: Vec<Value> =
            req.messages.iter().map(|m| json!({"role": m.role.as_str(), "content": m.content})).collect();
        let mut body = json!({
            "model": self.model,
            "messages": messages,
            "stream": req.stream,
            "temperature": http::temperature(req.temperature),
        });
        if req.stream {
            body["stream_options"] = json!({"include_usage": true});
        }
        if let Some(seed) = req.seed {
            body["seed"] = json!(seed);
        }
        if let Some(max) = req.max_tokens {
            body["max_tokens"] = json!(max);
        }
        body
    }

    fn secret(&self) -> Option<&str> {
        self.api_key.as_deref()
    }

    fn status_error(&self, url: &str, resp: ureq::http::Response<ureq::Body>) -> LlmError {
        super::with_context_hint(http::openai_status_error(url, resp, self.secret(), &self.api_key_env, "llm", &self.model))
    }

    /// A server that ignored `stream: true` sent one JSON completion.
    fn whole_answer(
        &self,
        url: &str,
        resp: ureq::http::Response<ureq::Body>,
        mut answer: Answer,
    ) -> Result<Completion, LlmError> {
        let status = resp.status().as_u16();
        // Cut short, what came is no answer: the error says it broke off (or stalled), not that it is malformed.
        let body = http::read_whole_body(resp, MAX_JSON_BODY)
            .map_err(|e| http::read_error(url, self.timeout, LineError::Io(e), ""))?
            .ok_or_else(|| too_large(url, status))?;
        let json: Value = serde_json::from_str(&body)
            .map_err(|_| http::stream_error(url, format!("malformed JSON answer: {}", http::excerpt(&body)), ""))?;
        if json.get("error").is_some_and(|e| !e.is_null()) {
            return Err(self.reported(url, status, &http::json_message(&json).unwrap_or_default(), &answer));
        }
        let Some(text) = json.pointer("/choices/0/message/content").and_then(Value::as_str) else {
            return Err(http::stream_error(url, "the answer has no choices[0].message.content", ""));
        };
        // All of it has come: past the cap (reasoning included), it is kept and marked as cut there.
        answer.reason(reasoning(json.pointer("/choices/0/message")));
        let stopped = answer.push(text) == Flow::Stop;
        let mut done = answer.finish(usage_of(&json).unwrap_or_default(), stopped);
        done.length |= json.pointer("/choices/0/finish_reason").and_then(Value::as_str) == Some("length");
        Ok(done)
    }
}

impl ChatModel for OpenAi {
    fn id(&self) -> &str {
        &self.model
    }

    fn provider(&self) -> &'static str {
        "openai"
    }

    /// The call runs on a thread of its own, so a Ctrl-C is heeded while the server is silent.
    fn chat_until(
        &self,
        req: &ChatRequest,
        on_text: &mut dyn FnMut(&str) -> Flow,
        cancel: &AtomicBool,
    ) -> Result<Completion, LlmError> {
        stream::chat_on_thread(self, req, on_text, cancel)
    }

    fn chat(&self, req: &ChatRequest, on_text: &mut dyn FnMut(&str) -> Flow) -> Result<Completion, LlmError> {
        let url = self.url();
        let started = Instant::now();
        let mut headers = vec![("Accept", "text/event-stream".to_string())];
        if let Some(key) = &self.api_key {
            headers.push(("Authorization", format!("Bearer {key}")));
        }
        let resp = http::post_json(&url, self.timeout, &headers, &self.body(req))?;
        if !resp.status().is_success() {
            return Err(self.status_error(&url, resp));
        }
        let answer = Answer::new(started, on_text).within(req.max_tokens);
        match http::content_type(&resp).as_str() {
            "text/html" => return Err(http::html_error(&url, resp)),
            "application/json" => return self.whole_answer(&url, resp, answer),
            _ => {}
        }
        let status = resp.status().as_u16();
        let lines = Lines::new(resp.into_body().into_reader(), MAX_LINE_BYTES).within(self.timeout);
        self.read_events(&url, status, lines, answer)
    }
}

impl OpenAi {
    /// An error the server reported in place of the answer (an `error` event
    /// or field; `raw` is its message): before any text, the server turning
    /// the request down with success `status`, as Ollama's error line is;
    /// after some, a stream that broke, keeping that text. A context overrun gets its hint either way.
    fn reported(&self, url: &str, status: u16, raw: &str, answer: &Answer) -> LlmError {
        let message = http::redact(&http::error_message(raw), self.secret());
        if answer.shown_nothing() {
            super::with_context_hint(LlmError::Http { url: url.to_string(), status, message, hint: None })
        } else {
            super::with_context_hint(http::stream_error(url, message, &answer.partial()))
        }
    }

    /// Reads the server-sent events of a chat answer from `lines` (the body
    /// of a response from `url` with success `status`) until `[DONE]` or the
    /// end after a finish reason. Public so the stream parser can be fuzzed without a server.
    pub fn read_events(
        &self,
        url: &str,
        status: u16,
        mut lines: Lines<impl std::io::Read>,
        mut answer: Answer,
    ) -> Result<Completion, LlmError> {
        let mut usage = Usage::default();
        let mut finished = false;
        // The server stopped at `max_tokens`.
        let mut length = false;
        // The first line that was not an event, while no event has come: a
        // body that ends with only such lines was not a stream of events at all.
        let mut stray: Option<String> = None;
        let mut events = 0usize;
        let mut quiet = http::Quiet::new(self.timeout);
        loop {
            let line = match lines.next_line() {
                Ok(Some(line)) => line,
                // Some servers close without `[DONE]`; a finish reason means the answer is whole.
                Ok(None) if finished => {
                    let mut done = answer.finish(usage, false);
                    done.length |= length;
                    return Ok(done);
                }
                Ok(None) => {
                    let msg = match stray.filter(|_| events == 0) {
                        Some(line) => format!("expected server-sent events, got {}", http::excerpt(&line)),
                        None => "the stream ended before the model finished".to_string(),
                    };
                    return Err(http::stream_error(url, http::redact(&msg, self.secret()), &answer.partial()));
                }
                Err(e) => return Err(http::read_error(url, self.timeout, e, &answer.partial())),
            };
            // Comments (`: keep-alive`), blank separators and other SSE fields carry no text.
            let data = if let Some(rest) = line.strip_prefix("data:") {
                events += 1;
                rest.trim()
            } else if let Some(rest) = line.strip_prefix("error:") {
                // llama.cpp reports a failure mid-stream as an `error` event.
                return Err(self.reported(url, status, rest, &answer));
            } else if line.trim_start().starts_with('{') {
                // A bare JSON line: not SSE, but surface its error if it has one.
                line.trim()
            } else {
                if stray.is_none() && !is_sse_field(&line) {
                    stray = Some(line);
                }
                quiet.check(url, &answer.partial())?;
                continue;
            };
            if data == "[DONE]" {
                let mut done = answer.finish(usage, false);
                done.length |= length;
                return Ok(done);
            }
            if data.is_empty() {
                quiet.check(url, &answer.partial())?;
                continue;
            }
            quiet.progress();
            let Ok(event) = serde_json::from_str::<Value>(data) else {
                let msg = format!("malformed event from the server: {}", http::excerpt(data));
                return Err(http::stream_error(url, http::redact(&msg, self.secret()), &answer.partial()));
            };
            if event.get("error").is_some_and(|e| !e.is_null()) {
                return Err(self.reported(url, status, &http::json_message(&event).unwrap_or_default(), &answer));
            }
            if !line.starts_with("data:") {
                let msg = format!("expected server-sent events, got {}", http::excerpt(data));
                return Err(http::stream_error(url, http::redact(&msg, self.secret()), &answer.partial()));
            }
            if let Some(found) = usage_of(&event) {
                usage = found;
            }
            let choice = event.pointer("/choices/0");
            if let Some(reason) = choice.and_then(|c| c.get("finish_reason")).filter(|r| !r.is_null()) {
                finished = true;
                length |= reason.as_str() == Some("length");
            }
            let thought = reasoning(choice.and_then(|c| c.get("delta")));
            let piece = choice.and_then(|c| c.pointer("/delta/content")).and_then(Value::as_str);
            if answer.reason(thought) == Flow::Stop || piece.is_some_and(|p| answer.push(p) == Flow::Stop) {
                // Dropping the response closes the connection, which stops the generation.
                return Ok(answer.finish(usage, true));
            }
        }
    }
}

/// An answer sent whole past `MAX_JSON_BODY`: far more than any
/// `llm.max_answer_tokens` asks for, so the server ignored the cap, which kebab
/// applies itself only to an answer it reads as a stream (`Answer::within`).
/// Asking again gets the same: an answer with a hint, as a web page is.
fn too_large(url: &str, status: u16) -> LlmError {
    let message = format!("an answer sent whole of over {} MiB, more than kebab reads", MAX_JSON_BODY >> 20);
    let hint = "the server wrote past llm.max_answer_tokens (does it honour max_tokens?): kebab cuts a streamed answer \
                there itself, so ask without --no-stream, or set the server to honour max_tokens";
    LlmError::Http { url: url.to_string(), status, message, hint: Some(hint.into()) }
}

/// A line SSE allows that carries no data: blank, a comment, or a field.
fn is_sse_field(line: &str) -> bool {
    line.trim().is_empty()
        || line.starts_with(':')
        || ["event:", "id:", "retry:"].iter().any(|f| line.starts_with(f))
        || ["event", "id", "retry"].contains(&line)
}

/// The model's reasoning a message or delta carries apart from its answer
/// ("" when none): `reasoning_content` (DeepSeek, llama.cpp, vLLM) or
/// `reasoning` (OpenRouter, Ollama, newer vLLM).
fn reasoning(message: Option<&Value>) -> &str {
    let Some(m) = message else { return "" };
    let field = |k: &str| m.get(k).and_then(Value::as_str).filter(|t| !t.is_empty());
    field("reasoning_content").or_else(|| field("reasoning")).unwrap_or("")
}

fn usage_of(event: &Value) -> Option<Usage> {
    let usage = event.get("usage").filter(|u| u.is_object())?;
    let count = |key: &str| usage.get(key).and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok());
    Some(Usage { prompt_tokens: count("prompt_tokens"), completion_tokens: count("completion_tokens") })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{Message, Role};

    fn model(base: &str, key: Option<&str>) -> OpenAi {
        OpenAi::new(base, "m", key.map(String::from), Duration::from_secs(1))
    }

    #[test]
    fn v1_is_added_once() {
        assert_eq!(model("http://h:1", None).url(), "http://h:1/v1/chat/completions");
        assert_eq!(model("http://h:1/v1/", None).url(), "http://h:1/v1/chat/completions");
    }

    #[test]
    fn debug_output_never_shows_the_key() {
        let shown = format!("{:?}", model("http://h:1", Some("sk-secret-123")));
        assert!(!shown.contains("sk-secret-123"), "{shown}");
        assert!(shown.contains("[redacted]"));
    }

    #[test]
    fn a_bare_json_line_echoing_the_key_is_reported_without_it() {
        // Found by the `stream_sse` fuzz check: this error quoted the line unredacted.
        let key = "sk-secret-123";
        let body = format!("{{\"echo\": \"Bearer {key}\"}}\n");
        let mut on_text = |_: &str| Flow::Continue;
        let answer = Answer::new(Instant::now(), &mut on_text);
        let err = model("http://h:1", Some(key)).read_events("u", 200, Lines::new(body.as_bytes(), 1024), answer).unwrap_err();
        let shown = err.to_string();
        assert!(shown.contains("expected server-sent events") && shown.contains("[redacted]"), "{shown}");
        assert!(!shown.contains(key), "{shown}");
    }

    #[test]
    fn an_error_event_without_a_message_still_says_what_happened() {
        // Found by the `stream_sse` fuzz target: `error:` with nothing after it gave "… broke: ".
        for body in ["error: \n", "data: {\"error\": \"\"}\n", "data: {\"error\": {\"message\": \" \"}}\n"] {
            let mut on_text = |_: &str| Flow::Continue;
            let answer = Answer::new(Instant::now(), &mut on_text);
            let err = model("http://h:1", None).read_events("u", 200, Lines::new(body.as_bytes(), 1024), answer).unwrap_err();
            assert!(err.to_string().ends_with("the server reported an error without a message"), "{body:?}: {err}");
        }
    }

    #[test]
    fn request_body_asks_for_a_stream_with_usage() {
        let req = ChatRequest {
            messages: vec![Message::new(Role::System, "s"), Message::new(Role::User, "q")],
            temperature: 0.2,
            seed: None,
            max_tokens: Some(10),
            stream: true,
            grounding: None,
        };
        let body = model("http://h:1", None).body(&req);
        assert_eq!(body["stream_options"]["include_usage"], json!(true));
        assert_eq!(body["max_tokens"], json!(10));
        assert!(body.get("seed").is_none());
        assert_eq!(body["messages"][1]["role"], json!("user"));
    }

    #[test]
    fn a_request_without_stream_asks_for_one_answer() {
        let req = ChatRequest {
            messages: vec![Message::new(Role::User, "q")],
            temperature: 0.0,
            seed: Some(1),
            max_tokens: None,
            stream: false,
            grounding: None,
        };
        let body = model("http://h:1", None).body(&req);
        assert_eq!(body["stream"], json!(false));
        assert!(body.get("stream_options").is_none());
    }
}
