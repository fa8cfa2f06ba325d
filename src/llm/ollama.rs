//! The Ollama provider: native `POST /api/chat` with an NDJSON stream, one
//! JSON object per line, the last one (`"done": true`) carrying the token
//! counts. Also `probe`, which the `auto` selector uses to ask whether a
//! server is up and has the model.

use std::sync::OnceLock;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::stream::{self, Answer};
use crate::http::{self, Lines, MAX_LINE_BYTES};
use super::{ChatModel, ChatRequest, Completion, Flow, LlmError, Usage};
use crate::config::LlmConfig;

/// The advice for a server that answers 404 where Ollama answers (`/api/tags`
/// always; `/api/chat` only for a missing model, which says so), or answers
/// `/api/tags` with something other than Ollama's model list.
const NOT_OLLAMA: &str = "the server at llm.base_url answers, but not as Ollama does: \
                          for an OpenAI-compatible server set llm.provider = \"openai\", else fix llm.base_url";

/// The advice for a server that wants a key to list its models: Ollama asks
/// for none, and kebab sends one only to an OpenAI-compatible server.
const WANTS_KEY: &str = "the server at llm.base_url wants an API key, which kebab sends only as provider \"openai\": \
                         for an OpenAI-compatible server set llm.provider = \"openai\" and llm.api_key_env, \
                         else fix llm.base_url";

/// The advice for a server that failed to list its models (a proxy answers
/// 502–504 when the server behind it is down), or whose list broke off.
const FAILED: &str = "the server at llm.base_url answers, but failed to list its models: \
                      check that server (or, behind a proxy, the one it forwards to) and its log";

/// The advice for a model list longer than `MAX_TAGS_BODY`: thousands of
/// models is more than an Ollama server holds, but only the list is in the way.
const TOO_LONG: &str = "the server at llm.base_url sent a longer model list than kebab reads: check that llm.base_url is \
                        the Ollama server's; for one with that many models set llm.provider = \"ollama\" \
                        (only \"auto\" and `kebab doctor` read the list)";

/// The largest `/api/tags` answer `probe` reads (a few thousand models).
const MAX_TAGS_BODY: u64 = 4 * 1024 * 1024;

/// The largest `/api/show` answer read (it carries the model's template and licence).
const MAX_SHOW_BODY: u64 = 16 * 1024 * 1024;

/// The longest wait for `/api/show` (or the idle timeout, when shorter): it
/// only reads the model's metadata.
const SHOW_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone)]
pub struct Ollama {
    /// `http://127.0.0.1:11434`, without `/api`.
    pub base_url: String,
    pub model: String,
    /// Idle timeout: the longest wait for the next piece of the answer.
    pub timeout: Duration,
    /// The context kebab plans with (`llm.context_tokens`), sent as
    /// `options.num_ctx` — capped at the model's maximum — because Ollama
    /// otherwise runs the model with its own small default and silently cuts
    /// the prompt. `None`: no `num_ctx` is sent.
    pub context_tokens: Option<usize>,
    /// The model's maximum context from `/api/show`, asked once.
    window: OnceLock<Option<usize>>,
}

impl Ollama {
    pub fn new(base_url: impl Into<String>, model: impl Into<String>, timeout: Duration) -> Ollama {
        Ollama { base_url: base_url.into(), model: model.into(), timeout, context_tokens: None, window: OnceLock::new() }
    }

    pub fn from_config(cfg: &LlmConfig) -> Ollama {
        let mut model = Ollama::new(cfg.base_url.clone(), cfg.model.clone(), Duration::from_secs(cfg.timeout_secs));
        model.context_tokens = Some(cfg.context_tokens);
        model
    }

    /// `num_ctx`: the planned context, never above the model's maximum.
    fn num_ctx(&self) -> Option<usize> {
        let planned = self.context_tokens?;
        Some(self.context_window().map_or(planned, |max| planned.min(max)))
    }

    fn url(&self) -> String {
        format!("{}/api/chat", self.base_url.trim_end_matches('/'))
    }

    fn body(&self, req: &ChatRequest) -> Value {
        let messages: Vec<Value> =
            req.messages.iter().map(|m| json!({"role": m.role.as_str(), "content": m.content})).collect();
        let mut options = json!({"temperature": http::temperature(req.temperature)});
        if let Some(seed) = req.seed {
            options["seed"] = json!(seed);
        }
        if let Some(max) = req.max_tokens {
            options["num_predict"] = json!(max);
        }
        if let Some(ctx) = self.num_ctx() {
            options["num_ctx"] = json!(ctx);
        }
        json!({"model": self.model, "messages": messages, "stream": true, "options": options})
    }

    /// A 404 from Ollama usually means the model is not pulled; say how to get it.
    /// Under a base URL ending in /v1 every path is 404: say that instead.
    /// A prompt over the context gets the context's hint.
    fn with_hint(&self, err: LlmError) -> LlmError {
        match err {
            LlmError::Http { url, status, message, hint: None } => {
                let wrong_api = (status == 404).then(|| http::other_api_hint(&url, "llm")).flatten();
                let hint = if wrong_api.is_some() {
                    wrong_api
                } else if is_missing_model(&message) || status == 404 && message == "not found" {
                    Some(format!("run `ollama pull {}`", self.model))
                } else if status == 404 {
                    Some(NOT_OLLAMA.into())
                } else {
                    None
                };
                super::with_context_hint(LlmError::Http { url, status, message, hint })
            }
            other => other,
        }
    }
}

impl ChatModel for Ollama {
    fn id(&self) -> &str {
        &self.model
    }

    fn provider(&self) -> &'static str {
        "ollama"
    }

    /// Asked once per model: a server that does not answer `/api/show` (or
    /// names no context length) leaves kebab with `llm.context_tokens`.
    fn context_window(&self) -> Option<usize> {
        *self.window.get_or_init(|| show_context_length(&self.base_url, &self.model, self.timeout.min(SHOW_TIMEOUT)))
    }

    /// The call runs on a thread of its own, so a Ctrl-C is heeded while the server is silent.
    fn chat_until(
        &self,
        req: &ChatRequest,
        on_text: &mut dyn FnMut(&str) -> Flow,
        cancel: &AtomicBool,
    ) -> Result<Completion, LlmError> {
        if self.context_tokens.is_some() {
            // Asked here, where the answer is kept, not by the clone that is dropped with its thread.
            let _ = self.context_window();
        }
        stream::chat_on_thread(self, req, on_text, cancel)
    }

    fn chat(&self, req: &ChatRequest, on_text: &mut dyn FnMut(&str) -> Flow) -> Result<Completion, LlmError> {
        let url = self.url();
        let started = Instant::now();
        let resp = http::post_json(&url, self.timeout, &[], &self.body(req))?;
        let status = resp.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(self.with_hint(http::status_error(&url, resp, None)));
        }
        if http::content_type(&resp) == "text/html" {
            return Err(http::html_error(&url, resp));
        }

        let lines = Lines::new(resp.into_body().into_reader(), MAX_LINE_BYTES).within(self.timeout);
        self.read_stream(&url, status, lines, Answer::new(started, on_text).within(req.max_tokens))
    }
}

impl Ollama {
    /// Reads the NDJSON events of a chat answer from `lines` (the body of a
    /// response from `url` with success `status`) until the `done` event.
    /// Public so the stream parser can be fuzzed without a server.
    pub fn read_stream(
        &self,
        url: &str,
        status: u16,
        mut lines: Lines<impl std::io::Read>,
        mut answer: Answer,
    ) -> Result<Completion, LlmError> {
        let url = url.to_string();
        let mut quiet = http::Quiet::new(self.timeout);
        loop {
            let line = match lines.next_line() {
                Ok(Some(line)) => line,
                Ok(None) => {
                    return Err(http::stream_error(&url, "the stream ended before the model finished", &answer.partial()));
                }
                Err(e) => return Err(http::read_error(&url, self.timeout, e, &answer.partial())),
            };
            let line = line.trim();
            if line.is_empty() {
                quiet.check(&url, &answer.partial())?;
                continue;
            }
            quiet.progress();
            let Ok(event) = serde_json::from_str::<Value>(line) else {
                let msg = format!("malformed line from the server: {}", http::excerpt(line));
                return Err(http::stream_error(&url, msg, &answer.partial()));
            };
            if let Some(message) = event.get("error").and_then(|_| http::json_message(&event)) {
                return Err(if answer.shown_nothing() {
                    self.with_hint(LlmError::Http { url, status, message: http::error_message(&message), hint: None })
                } else {
                    super::with_context_hint(http::stream_error(&url, http::error_message(&message), &answer.partial()))
                });
            }
            // A thinking model's reasoning comes apart from the answer: not shown, but counted toward the cap.
            let thought = event.pointer("/message/thinking").and_then(Value::as_str).unwrap_or("");
            let piece = event.pointer("/message/content").and_then(Value::as_str);
            if answer.reason(thought) == Flow::Stop || piece.is_some_and(|p| answer.push(p) == Flow::Stop) {
                // Dropping the response closes the connection, which makes Ollama stop generating.
                return Ok(answer.finish(Usage::default(), true));
            }
            if event.get("done").and_then(Value::as_bool) == Some(true) {
                let usage = Usage {
                    prompt_tokens: count(&event, "prompt_eval_count"),
                    completion_tokens: count(&event, "eval_count"),
                };
                let mut done = answer.finish(usage, false);
                done.length |= event.get("done_reason").and_then(Value::as_str) == Some("length");
                return Ok(done);
            }
        }
    }
}

/// Whether an Ollama server at `base_url` answers within `connect_timeout`
/// and has `model` (`qwen2.5:7b` matches `qwen2.5:7b`; `llama3` matches
/// `llama3:latest`). A server that answers but lacks the model is `Ok(false)`;
/// a server that is down or answers nonsense is an error. A server that
/// answers, but with an error status, not with a model list or with one that
/// breaks off or is too long to read, is one that is not Ollama, one that wants
/// a key, or one that failed: its error's hint says what to set or check (a
/// 404's also an address under another API's path).
pub fn probe(base_url: &str, model: &str, connect_timeout: Duration) -> Result<bool, LlmError> {
    let url = format!("{}/api/tags", base_url.trim_end_matches('/'));
    let resp = http::get(&url, connect_timeout)?;
    let status = resp.status().as_u16();
    if !resp.status().is_success() {
        return Err(match http::status_error(&url, resp, None) {
            LlmError::Http { url, status, message, hint: None } => {
                let hint = Some(match status {
                    404 => http::other_api_hint(&url, "llm").unwrap_or_else(|| NOT_OLLAMA.into()),
                    401 | 403 => WANTS_KEY.into(),
                    500..=599 => FAILED.into(),
                    _ => NOT_OLLAMA.into(),
                });
                LlmError::Http { url, status, message, hint }
            }
            other => other,
        });
    }
    // A reply that broke off is the server failing, not "no server" (nor, cut short, a list that is not Ollama's).
    let body = http::read_whole_body(resp, MAX_TAGS_BODY).map_err(|e| {
        let why = match ureq::Error::from(e) {
            ureq::Error::Timeout(_) => format!("nothing more came within {} ms", connect_timeout.as_millis()),
            e => e.to_string(),
        };
        LlmError::Http { url: url.clone(), status, message: format!("its reply broke off ({why})"), hint: Some(FAILED.into()) }
    })?;
    // Cut at the cap, it would read as a list that is not Ollama's.
    let Some(body) = body else {
        let message = format!("a model list of over {} MiB, more than kebab reads", MAX_TAGS_BODY >> 20);
        return Err(LlmError::Http { url, status, message, hint: Some(TOO_LONG.into()) });
    };
    // A web page (a proxy's login, a web UI on Ollama's port) or another API's answer.
    let not_a_list = |what: String| LlmError::Http {
        url: url.clone(),
        status,
        message: format!("not Ollama's model list: {what}"),
        hint: Some(NOT_OLLAMA.into()),
    };
    let tags: Value = serde_json::from_str(&body).map_err(|_| not_a_list(http::excerpt(&body)))?;
    let Some(models) = tags.get("models").and_then(Value::as_array) else {
        return Err(not_a_list("no `models`".into()));
    };
    let wanted = without_latest(model);
    Ok(models.iter().any(|m| {
        ["name", "model"]
            .iter()
            .any(|key| m.get(*key).and_then(Value::as_str).is_some_and(|n| without_latest(n) == wanted))
    }))
}

/// The model's maximum context from `POST /api/show`: the
/// `model_info.<architecture>.context_length` entry. `None` on any failure —
/// an older server, another kind of server, no such field.
fn show_context_length(base_url: &str, model: &str, timeout: Duration) -> Option<usize> {
    let url = format!("{}/api/show", base_url.trim_end_matches('/'));
    let resp = http::post_json(&url, timeout, &[], &json!({"model": model})).ok()?;
    if !resp.status().is_success() {
        return None;
    }
    let body = http::read_body(resp, MAX_SHOW_BODY).ok()?;
    let show: Value = serde_json::from_str(&body).ok()?;
    context_of(&show)
}

/// The context a `/api/show` answer reports: `model_info.<arch>.context_length`,
/// lowered to the `num_ctx` in the model's `parameters` when that is set
/// smaller (the model is configured to run with less). Never raised.
fn context_of(show: &Value) -> Option<usize> {
    let trained = show
        .get("model_info")
        .and_then(Value::as_object)
        .and_then(|info| info.iter().find(|(key, _)| key.ends_with(".context_length")))
        .and_then(|(_, v)| v.as_u64());
    let configured = show.get("parameters").and_then(Value::as_str).and_then(|p| {
        p.lines().find_map(|l| l.trim().strip_prefix("num_ctx").and_then(|n| n.trim().parse::<u64>().ok()))
    });
    let n = match (trained, configured) {
        (Some(t), Some(c)) => t.min(c),
        (t, c) => t.or(c)?,
    };
    usize::try_from(n).ok().filter(|&n| n > 0)
}

fn without_latest(name: &str) -> &str {
    name.strip_suffix(":latest").unwrap_or(name)
}

fn is_missing_model(message: &str) -> bool {
    let lower = message.to_lowercase();
    lower.contains("model") && lower.contains("not found")
}

fn count(event: &Value, key: &str) -> Option<u32> {
    event.get(key).and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{Message, Role};

    #[test]
    fn request_body_carries_options_and_num_predict_only_when_asked() {
        let model = Ollama::new("http://h:1/", "m", Duration::from_secs(1));
        let mut req = ChatRequest {
            messages: vec![Message::new(Role::User, "hi")],
            temperature: 0.0,
            seed: Some(7),
            max_tokens: None,
            stream: true,
            grounding: None,
        };
        let body = model.body(&req);
        assert_eq!(body["stream"], json!(true));
        assert_eq!(body["options"]["seed"], json!(7));
        assert!(body["options"].get("num_predict").is_none());
        assert_eq!(body["messages"][0], json!({"role": "user", "content": "hi"}));
        req.max_tokens = Some(64);
        assert_eq!(model.body(&req)["options"]["num_predict"], json!(64));
        assert_eq!(model.url(), "http://h:1/api/chat");
    }

    #[test]
    fn the_shown_context_is_the_trained_length_capped_by_a_smaller_num_ctx() {
        let info = json!({"model_info": {"qwen2.context_length": 32768}});
        assert_eq!(context_of(&info), Some(32768));
        let capped = json!({"model_info": {"qwen2.context_length": 32768}, "parameters": "stop \"<|im_end|>\"\nnum_ctx 4096"});
        assert_eq!(context_of(&capped), Some(4096));
        // A num_ctx above the trained length does not raise it.
        let above = json!({"model_info": {"llama.context_length": 2048}, "parameters": "num_ctx   8192"});
        assert_eq!(context_of(&above), Some(2048));
        assert_eq!(context_of(&json!({"parameters": "num_ctx 1024"})), Some(1024));
        assert_eq!(context_of(&json!({"license": "x"})), None);
    }

    #[test]
    fn model_names_match_with_or_without_latest() {
        assert_eq!(without_latest("llama3:latest"), without_latest("llama3"));
        assert_ne!(without_latest("llama3:8b"), without_latest("llama3"));
    }
}
