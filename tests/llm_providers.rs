//! The Ollama and OpenAI-compatible providers against fake model servers
//! (`common::fake_server`: 127.0.0.1:0 playing a scripted HTTP exchange):
//! streaming, slow and stalled servers, broken connections, error statuses,
//! malformed and oversized lines, cancellation, and the API key's handling.

mod common;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::fake_server::{BOTH, Kind, Server, Step, chunk, end, response, server_home, stream_head, wait};
use kebab::llm::ollama::{self, Ollama};
use kebab::llm::openai::OpenAi;
use kebab::llm::{ChatModel, ChatRequest, Completion, Flow, LlmError, Message, Role, Usage};
use serde_json::json;

/// The provider that speaks a wire format, as a library object.
trait ModelOf {
    fn model(self, url: &str, timeout: Duration) -> Box<dyn ChatModel>;
}

impl ModelOf for Kind {
    fn model(self, url: &str, timeout: Duration) -> Box<dyn ChatModel> {
        match self {
            Kind::Ollama => Box::new(Ollama::new(url, "qwen", timeout)),
            Kind::OpenAi => Box::new(OpenAi::new(url, "qwen", None, timeout)),
        }
    }
}

fn request() -> ChatRequest {
    ChatRequest {
        messages: vec![Message::new(Role::System, "be brief"), Message::new(Role::User, "why?")],
        temperature: 0.0,
        seed: Some(42),
        max_tokens: None,
        stream: true,
        grounding: None,
    }
}

/// Runs a chat, collecting the pieces the callback saw.
fn chat(model: &dyn ChatModel) -> (Result<Completion, LlmError>, Vec<String>) {
    let mut seen = Vec::new();
    let result = model.chat(&request(), &mut |p| {
        seen.push(p.to_string());
        Flow::Continue
    });
    (result, seen)
}

const SEC: Duration = Duration::from_secs(1);

#[test]
fn a_chunked_stream_arrives_in_order_with_text_and_usage() {
    for kind in BOTH {
        let mut script = kind.stream(&["The", " answer", " is", " 42 [#1]"], 0);
        // Keep-alive comments and event lines are not text.
        script.insert(1, chunk(if matches!(kind, Kind::OpenAi) { ": keep-alive\n\nevent: message\n" } else { "\n" }));
        let server = Server::start(vec![script]);
        let (result, seen) = chat(&*kind.model(&server.url, SEC));
        let done = result.unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        assert_eq!(seen, ["The", " answer", " is", " 42 [#1]"], "{kind:?}");
        assert_eq!(done.text, "The answer is 42 [#1]");
        assert_eq!(done.usage, Usage { prompt_tokens: Some(11), completion_tokens: Some(3) });
        assert!(!done.stopped && done.first_token.is_some());
    }
}

#[test]
fn ollama_request_carries_model_messages_and_options() {
    let server = Server::start(vec![Kind::Ollama.stream(&["ok"], 0)]);
    let mut req = request();
    req.max_tokens = Some(128);
    Ollama::new(format!("{}/", server.url), "qwen", SEC).chat(&req, &mut |_| Flow::Continue).unwrap();
    let sent = &server.requests()[0];
    assert!(sent.starts_with("POST /api/chat HTTP/1.1"), "{sent}");
    let body: serde_json::Value = serde_json::from_str(sent.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body["model"], "qwen");
    assert_eq!(body["stream"], true);
    assert_eq!(body["messages"][1], json!({"role": "user", "content": "why?"}));
    assert_eq!(body["options"], json!({"temperature": 0.0, "seed": 42, "num_predict": 128}));
}

#[test]
fn openai_request_has_no_doubled_v1_no_key_header_and_asks_for_usage() {
    let server = Server::start(vec![Kind::OpenAi.stream(&["ok"], 0)]);
    OpenAi::new(format!("{}/v1", server.url), "qwen", None, SEC).chat(&request(), &mut |_| Flow::Continue).unwrap();
    let sent = &server.requests()[0];
    assert!(sent.starts_with("POST /v1/chat/completions HTTP/1.1"), "{sent}");
    assert!(!sent.to_ascii_lowercase().contains("authorization:"), "{sent}");
    let body: serde_json::Value = serde_json::from_str(sent.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["seed"], 42);
}

#[test]
fn slow_tokens_within_the_idle_timeout_are_fine_even_past_it_in_total() {
    // 5 pieces 300 ms apart: 1.5 s in all, against a 1 s idle timeout.
    for kind in BOTH {
        let server = Server::start(vec![kind.stream(&["a", " b", " c", " d", " e"], 300)]);
        let started = Instant::now();
        let (result, seen) = chat(&*kind.model(&server.url, SEC));
        assert_eq!(result.unwrap_or_else(|e| panic!("{kind:?}: {e}")).text, "a b c d e");
        assert_eq!(seen.len(), 5);
        assert!(started.elapsed() > SEC);
    }
}

#[test]
fn a_stall_after_the_headers_times_out() {
    for kind in BOTH {
        let server = Server::start(vec![vec![stream_head(kind.content_type()), wait(5000)]]);
        let started = Instant::now();
        let err = chat(&*kind.model(&server.url, SEC)).0.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(4), "{kind:?} took {:?}", started.elapsed());
        assert!(
            matches!(err, LlmError::Timeout { secs: 1, ref partial, .. } if partial.is_empty()),
            "{kind:?}: {err:?}"
        );
    }
}

#[test]
fn a_stall_before_any_response_times_out() {
    let server = Server::start(vec![vec![wait(5000)]]);
    let started = Instant::now();
    let err = chat(&Ollama::new(&server.url, "qwen", SEC)).0.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(4));
    assert!(matches!(err, LlmError::Timeout { .. }), "{err:?}");
}

#[test]
fn a_stall_mid_stream_times_out_keeping_the_partial_text() {
    for kind in BOTH {
        let script = vec![stream_head(kind.content_type()), kind.piece("Half"), kind.piece(" an answer"), wait(5000)];
        let server = Server::start(vec![script]);
        let started = Instant::now();
        let err = chat(&*kind.model(&server.url, SEC)).0.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(4), "{kind:?} took {:?}", started.elapsed());
        assert!(matches!(err, LlmError::Timeout { .. }), "{kind:?}: {err:?}");
        assert_eq!(err.partial(), "Half an answer");
    }
}

#[test]
fn keep_alives_without_text_time_out_keeping_the_partial_text() {
    // A proxy keeps the connection busy (SSE comments; blank NDJSON lines) but no answer comes.
    for kind in BOTH {
        let ping = if matches!(kind, Kind::OpenAi) { ": keep-alive\n\n" } else { "\n" };
        let mut script = vec![stream_head(kind.content_type()), kind.piece("Half")];
        script.extend((0..50).flat_map(|_| [chunk(ping), wait(100)]));
        let server = Server::start(vec![script]);
        let started = Instant::now();
        let err = chat(&*kind.model(&server.url, SEC)).0.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(3), "{kind:?} took {:?}", started.elapsed());
        assert!(matches!(err, LlmError::Timeout { secs: 1, .. }), "{kind:?}: {err:?}");
        assert_eq!(err.partial(), "Half");
    }
}

#[test]
fn a_response_head_trickling_in_times_out() {
    // One byte every 100 ms: each read is on time, the head takes 8 s.
    for kind in BOTH {
        let head = format!("HTTP/1.1 200 OK\r\nContent-Type: {}\r\nTransfer-Encoding: chunked\r\n\r\n", kind.content_type());
        let server = Server::start(vec![head.bytes().flat_map(|b| [Step::Send(vec![b]), wait(100)]).collect()]);
        let started = Instant::now();
        let err = chat(&*kind.model(&server.url, SEC)).0.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(3), "{kind:?} took {:?}", started.elapsed());
        assert!(matches!(err, LlmError::Timeout { secs: 1, .. }), "{kind:?}: {err:?}");
    }
}

#[test]
fn a_line_trickling_in_is_a_stream_error_keeping_the_partial_text() {
    for kind in BOTH {
        let mut script = vec![stream_head(kind.content_type()), kind.piece("Half")];
        script.extend((0..50).flat_map(|_| [chunk("x"), wait(100)]));
        let server = Server::start(vec![script]);
        let started = Instant::now();
        let err = chat(&*kind.model(&server.url, SEC)).0.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(3), "{kind:?} took {:?}", started.elapsed());
        assert!(err.to_string().ends_with("a line took over 1 s to arrive"), "{kind:?}: {err}");
        assert_eq!(err.partial(), "Half");
    }
}

#[test]
fn a_connection_cut_mid_stream_is_a_stream_error_keeping_the_partial_text() {
    for kind in BOTH {
        // The socket closes inside the chunked body: no terminating chunk.
        let server =
            Server::start(vec![vec![stream_head(kind.content_type()), kind.piece("Half"), kind.piece(" done")]]);
        let err = chat(&*kind.model(&server.url, SEC)).0.unwrap_err();
        assert!(matches!(err, LlmError::Stream { .. }), "{kind:?}: {err:?}");
        assert_eq!(err.partial(), "Half done");
    }
}

#[test]
fn a_stream_that_ends_cleanly_before_the_finish_is_a_stream_error() {
    for kind in BOTH {
        let server = Server::start(vec![vec![stream_head(kind.content_type()), kind.piece("Half"), end()]]);
        let err = chat(&*kind.model(&server.url, SEC)).0.unwrap_err();
        assert!(matches!(err, LlmError::Stream { .. }), "{kind:?}: {err:?}");
        assert!(err.to_string().contains("ended before the model finished"), "{err}");
        assert_eq!(err.partial(), "Half");
    }
}

#[test]
fn ollama_404_for_a_missing_model_says_how_to_pull_it() {
    let body = r#"{"error":"model \"qwen\" not found, try pulling it first"}"#;
    let server = Server::start(vec![vec![response("404 Not Found", "application/json", body)]]);
    let err = chat(&Ollama::new(&server.url, "qwen", SEC)).0.unwrap_err();
    assert!(matches!(err, LlmError::Http { status: 404, .. }), "{err:?}");
    assert!(err.to_string().contains("model \"qwen\" not found"), "{err}");
    assert_eq!(err.hint().as_deref(), Some("run `ollama pull qwen`"));
}

#[test]
fn openai_404_surfaces_the_servers_message() {
    let body = r#"{"error":{"message":"The model `qwen` does not exist","type":"invalid_request_error","code":"model_not_found"}}"#;
    let server = Server::start(vec![vec![response("404 Not Found", "application/json", body)]]);
    let err = chat(&OpenAi::new(&server.url, "qwen", None, SEC)).0.unwrap_err();
    assert!(matches!(err, LlmError::Http { status: 404, .. }), "{err:?}");
    assert!(err.to_string().contains("The model `qwen` does not exist"), "{err}");
    assert!(err.hint().is_some_and(|h| h.contains("llm.model")));
}

#[test]
fn a_500_with_a_json_error_body_surfaces_the_message() {
    for (kind, body) in [
        (Kind::Ollama, r#"{"error":"llama runner process has terminated"}"#),
        (Kind::OpenAi, r#"{"error":{"message":"llama runner process has terminated","code":500}}"#),
    ] {
        let server = Server::start(vec![vec![response("500 Internal Server Error", "application/json", body)]]);
        let err = chat(&*kind.model(&server.url, SEC)).0.unwrap_err();
        assert!(matches!(err, LlmError::Http { status: 500, .. }), "{kind:?}: {err:?}");
        assert!(err.to_string().ends_with("answered 500: llama runner process has terminated"), "{err}");
    }
}

#[test]
fn a_refused_connection_is_unreachable() {
    let dead = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    for kind in BOTH {
        let started = Instant::now();
        let err = chat(&*kind.model(&dead, SEC)).0.unwrap_err();
        assert!(matches!(err, LlmError::Unreachable { .. }), "{kind:?}: {err:?}");
        assert!(err.hint().is_some());
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}

#[test]
fn a_malformed_line_is_a_stream_error_that_quotes_it() {
    for kind in BOTH {
        let bad = match kind {
            Kind::Ollama => "this is not json\n",
            Kind::OpenAi => "data: this is not json\n\n",
        };
        let server = Server::start(vec![vec![stream_head(kind.content_type()), kind.piece("ok"), chunk(bad), end()]]);
        let err = chat(&*kind.model(&server.url, SEC)).0.unwrap_err();
        assert!(matches!(err, LlmError::Stream { .. }), "{kind:?}: {err:?}");
        assert!(err.to_string().contains("\"this is not json\""), "{err}");
        assert_eq!(err.partial(), "ok");
    }
}

#[test]
fn a_line_over_one_mebibyte_is_a_stream_error() {
    for kind in BOTH {
        let mut script = vec![stream_head(kind.content_type()), kind.piece("ok")];
        let block = "x".repeat(64 * 1024);
        script.extend((0..40).map(|_| chunk(&block))); // 2.5 MiB, no newline
        script.push(end());
        let server = Server::start(vec![script]);
        let err = chat(&*kind.model(&server.url, SEC)).0.unwrap_err();
        assert!(matches!(err, LlmError::Stream { .. }), "{kind:?}: {err:?}");
        assert!(err.to_string().contains("a line longer than"), "{err}");
        assert_eq!(err.partial(), "ok");
    }
}

#[test]
fn an_html_page_with_status_200_is_a_clear_error() {
    for kind in BOTH {
        let page = "<!doctype html><html><head><title>Router login</title></head><body>Sign in</body></html>";
        let server = Server::start(vec![vec![response("200 OK", "text/html; charset=utf-8", page)]]);
        let err = chat(&*kind.model(&server.url, SEC)).0.unwrap_err();
        assert!(matches!(err, LlmError::Http { status: 200, hint: Some(_), .. }), "{kind:?}: {err:?}");
        let text = err.to_string();
        assert!(text.contains("web page") && text.contains("Router login"), "{text}");
    }
}

#[test]
fn a_plain_text_body_with_status_200_is_quoted_as_not_a_stream() {
    // What `GET /` on an Ollama server answers, as a server on the wrong path might.
    for (kind, expected) in [
        (Kind::Ollama, "malformed line from the server: \"Ollama is running\""),
        (Kind::OpenAi, "expected server-sent events, got \"Ollama is running\""),
    ] {
        let server = Server::start(vec![vec![response("200 OK", "text/plain; charset=utf-8", "Ollama is running")]]);
        let err = chat(&*kind.model(&server.url, SEC)).0.unwrap_err();
        assert!(matches!(err, LlmError::Stream { .. }), "{kind:?}: {err:?}");
        assert!(err.to_string().ends_with(expected), "{kind:?}: {err}");
    }
}

#[test]
fn stop_after_two_pieces_returns_promptly_with_the_partial_text() {
    for kind in BOTH {
        let script = vec![
            stream_head(kind.content_type()),
            kind.piece("one"),
            kind.piece(" two"),
            wait(3000),
            kind.piece(" three"),
        ];
        let server = Server::start(vec![script]);
        let model = kind.model(&server.url, Duration::from_secs(5));
        let mut calls = 0;
        let started = Instant::now();
        let done = model
            .chat(&request(), &mut |_| {
                calls += 1;
                if calls == 2 { Flow::Stop } else { Flow::Continue }
            })
            .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        assert!(started.elapsed() < Duration::from_secs(1), "{kind:?} took {:?}", started.elapsed());
        assert!(done.stopped);
        assert_eq!(done.text, "one two");
    }
}

#[test]
fn ollama_error_line_mid_stream_is_a_stream_error_and_before_text_an_http_error() {
    let error = "{\"error\":\"out of memory\"}\n";
    let server = Server::start(vec![
        vec![stream_head("application/x-ndjson"), Kind::Ollama.piece("So"), chunk(error), end()],
        vec![stream_head("application/x-ndjson"), chunk(error), end()],
    ]);
    let model = Ollama::new(&server.url, "qwen", SEC);
    let err = chat(&model).0.unwrap_err();
    assert!(matches!(err, LlmError::Stream { ref message, .. } if message == "out of memory"), "{err:?}");
    assert_eq!(err.partial(), "So");
    let err = chat(&model).0.unwrap_err();
    assert!(matches!(err, LlmError::Http { ref message, .. } if message == "out of memory"), "{err:?}");
}

#[test]
fn openai_error_event_mid_stream_is_a_stream_error() {
    for bad in [
        "data: {\"error\":{\"message\":\"context length exceeded\",\"type\":\"server_error\"}}\n\n",
        "error: {\"code\":500,\"message\":\"context length exceeded\"}\n\n",
    ] {
        let server =
            Server::start(vec![vec![stream_head("text/event-stream"), Kind::OpenAi.piece("So"), chunk(bad), end()]]);
        let err = chat(&OpenAi::new(&server.url, "qwen", None, SEC)).0.unwrap_err();
        assert!(matches!(err, LlmError::Stream { ref message, .. } if message == "context length exceeded"), "{err:?}");
        assert_eq!(err.partial(), "So");
    }
}

#[test]
fn openai_accepts_a_server_that_ignores_stream_and_sends_one_json_answer() {
    let body = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "Whole [#1]"}, "finish_reason": "stop"}],
                      "usage": {"prompt_tokens": 5, "completion_tokens": 2}});
    let server = Server::start(vec![vec![response("200 OK", "application/json", &body.to_string())]]);
    let (result, seen) = chat(&OpenAi::new(&server.url, "qwen", None, SEC));
    let done = result.unwrap();
    assert_eq!((done.text.as_str(), seen.len()), ("Whole [#1]", 1));
    assert_eq!(done.usage, Usage { prompt_tokens: Some(5), completion_tokens: Some(2) });
}

#[test]
fn openai_sends_the_key_as_bearer_and_never_shows_it() {
    let key = "sk-test-DO-NOT-LEAK-1234567890";
    // A server that echoes the credentials it got, as some proxies do.
    let body = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: Bearer {key}","type":"invalid_request_error"}}}}"#
    );
    let server = Server::start(vec![vec![response("401 Unauthorized", "application/json", &body)]]);
    let model = OpenAi::new(&server.url, "qwen", Some(key.to_string()), SEC);
    let err = chat(&model).0.unwrap_err();
    assert!(server.requests()[0].contains(&format!("authorization: Bearer {key}\r\n")), "{}", server.requests()[0]);
    assert!(matches!(err, LlmError::Http { status: 401, .. }), "{err:?}");
    for shown in [err.to_string(), format!("{err:?}"), format!("{model:?}"), err.hint().unwrap_or_default()] {
        assert!(!shown.contains(key), "key leaked in: {shown}");
    }
    assert!(err.to_string().contains("Incorrect API key provided"));
}

fn tags_server(names: &[&str]) -> Server {
    let models: Vec<_> = names.iter().map(|n| json!({"name": n, "model": n, "size": 1})).collect();
    Server::start(vec![vec![response("200 OK", "application/json", &json!({"models": models}).to_string())]])
}

#[test]
fn probe_finds_a_listed_model_with_or_without_latest() {
    let server = tags_server(&["llama3:latest", "qwen2.5:7b-instruct"]);
    assert!(ollama::probe(&server.url, "llama3", SEC).unwrap());
    assert!(server.requests()[0].starts_with("GET /api/tags HTTP/1.1"));
    let server = tags_server(&["llama3:latest", "qwen2.5:7b-instruct"]);
    assert!(ollama::probe(&server.url, "qwen2.5:7b-instruct", SEC).unwrap());
    let server = tags_server(&["llama3"]);
    assert!(ollama::probe(&server.url, "llama3:latest", SEC).unwrap());
}

#[test]
fn probe_is_false_when_the_model_is_not_listed() {
    let server = tags_server(&["llama3:latest"]);
    assert!(!ollama::probe(&server.url, "qwen2.5:7b-instruct", SEC).unwrap());
    let server = tags_server(&["llama3:8b"]);
    assert!(!ollama::probe(&server.url, "llama3", SEC).unwrap());
}

#[test]
fn probe_of_a_server_that_is_down_is_an_error() {
    let dead = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let err = ollama::probe(&dead, "llama3", Duration::from_millis(500)).unwrap_err();
    assert!(matches!(err, LlmError::Unreachable { .. }), "{err:?}");
    // A server that accepts but never answers is bounded by the same short timeout.
    let server = Server::start(vec![vec![wait(5000)]]);
    let started = Instant::now();
    assert!(ollama::probe(&server.url, "llama3", Duration::from_millis(500)).is_err());
    assert!(started.elapsed() < Duration::from_secs(2));
}

const QUESTION: &str = "How do I create a new project with cargo?";

#[test]
fn ollama_is_sent_the_planned_context_capped_at_the_models_maximum_and_the_answer_cap() {
    // (what /api/show reports, llm.context_tokens) → (num_ctx, num_predict)
    for (reported, configured, num_ctx, num_predict) in
        [(Some(4096), 8192, 4096, 1024), (Some(32768), 8192, 8192, 1024), (None, 8192, 8192, 1024), (Some(2048), 8192, 2048, 512)]
    {
        let server = Server::with_show(vec![Kind::Ollama.stream(&["Run `cargo new` [#1]."], 0)], reported);
        let env = server_home(Kind::Ollama, &server, 5, &format!("context_tokens = {configured}"));
        env.json(&["ask", QUESTION]);
        let body = &server.bodies()[0];
        assert_eq!(body["options"]["num_ctx"], json!(num_ctx), "{reported:?}: {body}");
        assert_eq!(body["options"]["num_predict"], json!(num_predict), "{reported:?}: {body}");
        assert_eq!(server.show_requests().len(), 1, "/api/show is asked once");
        assert!(server.show_requests()[0].contains(r#""model":"qwen""#), "{:?}", server.show_requests());
    }
}

#[test]
fn evidence_is_planned_within_the_context_the_ollama_server_reports() {
    let server = Server::with_show(vec![Kind::Ollama.stream(&["Run `cargo new` [#1]."], 0)], Some(2048));
    let env = server_home(Kind::Ollama, &server, 5, "context_tokens = 8192");
    // Enough matching text to fill kebab's own 6000-token evidence budget.
    let paragraph = "To create a new project with cargo, run cargo new and a folder with a manifest appears. ".repeat(20);
    for i in 0..20 {
        env.write(&format!("notes/more{i}.md"), format!("# Cargo projects {i}\n\n{paragraph}\n"));
    }
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let a = env.json(&["ask", "-k", "30", QUESTION]);
    assert!(a["retrieval"]["chunks_returned"].as_u64().unwrap() > 10, "{a}");
    let body = &server.bodies()[0];
    let chars: usize = body["messages"].as_array().unwrap().iter().map(|m| m["content"].as_str().unwrap().len()).sum();
    // About four characters a token: the prompt fits the 2048 tokens less the 512 kept for the answer.
    assert!(chars / 4 <= 2048 - 512, "{chars} characters sent to a 2048-token model");
    assert_eq!(body["options"]["num_ctx"], json!(2048));
}

#[test]
fn openai_servers_are_sent_the_answer_cap_as_max_tokens() {
    let server = Server::start(vec![Kind::OpenAi.stream(&["Run `cargo new` [#1]."], 0)]);
    let env = server_home(Kind::OpenAi, &server, 5, "max_answer_tokens = 300");
    env.json(&["ask", QUESTION]);
    let body = &server.bodies()[0];
    assert_eq!(body["max_tokens"], json!(300), "{body}");
    assert!(body.get("options").is_none(), "{body}");
}

#[test]
fn a_model_that_streams_forever_is_cut_at_the_answer_cap_and_the_answer_is_kept_and_marked() {
    for kind in BOTH {
        // Never finishes: far more pieces than the cap, and no end event.
        let mut script = vec![stream_head(kind.content_type()), kind.piece("Run `cargo new hello` [#1].")];
        script.extend((0..5000).map(|_| kind.piece(" again")));
        let server = Server::start(vec![script]);
        let env = server_home(kind, &server, 5, "max_answer_tokens = 32");
        let a = env.json(&["ask", QUESTION]);
        assert_eq!(a["finish"], json!("length"), "{kind:?}: {a}");
        let text = a["answer"].as_str().unwrap();
        assert!(text.starts_with("Run `cargo new hello` [#1]."), "{kind:?}: {text}");
        assert!(text.matches(" again").count() < 40, "{kind:?}: not cut: {} pieces", text.matches(" again").count());
        // Validated as usual: the cut answer cites a packed entry.
        assert_eq!(a["grounded"], json!(true), "{kind:?}: {a}");
        assert_eq!(a["refusal_reason"], json!(null), "{kind:?}: {a}");
    }
}

#[test]
fn a_server_that_reports_stopping_at_the_cap_marks_the_answer() {
    for kind in BOTH {
        let last = match kind {
            Kind::Ollama => chunk(&format!(
                "{}\n",
                json!({"model": "qwen", "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "length", "eval_count": 3})
            )),
            Kind::OpenAi => chunk(&format!(
                "data: {}\n\ndata: [DONE]\n\n",
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]})
            )),
        };
        let script = vec![stream_head(kind.content_type()), kind.piece("Run `cargo new hello` [#1]"), last, end()];
        let server = Server::start(vec![script]);
        let env = server_home(kind, &server, 5, "");
        let a = env.json(&["ask", QUESTION]);
        assert_eq!(a["finish"], json!("length"), "{kind:?}: {a}");
        assert_eq!(a["grounded"], json!(true), "{kind:?}: {a}");
        // A whole answer carries no mark.
        let server = Server::start(vec![kind.stream(&["Run `cargo new hello` [#1]"], 0)]);
        let env = server_home(kind, &server, 5, "");
        assert!(env.json(&["ask", QUESTION]).get("finish").is_none(), "{kind:?}");
    }
}

#[test]
fn doctor_says_which_context_kebab_plans_with() {
    let tags = response("200 OK", "application/json", r#"{"models":[{"name":"qwen"}]}"#);
    let server = Server::with_show(vec![vec![tags]], Some(4096));
    let env = common::Env::new();
    let config = format!("[llm]\nprovider = \"ollama\"\nmodel = \"qwen\"\nbase_url = \"{}\"\n\n[embedding]\nprovider = \"none\"\n", server.url);
    env.write("config/kebab/config.toml", config);
    let out = env.run(&["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("context 4096 tokens (the model's maximum, below llm.context_tokens = 8192)"), "{text}");
}

#[test]
fn a_refused_key_names_the_variable_it_came_from_or_that_none_is_named() {
    let refusal = || vec![vec![response("401 Unauthorized", "application/json", r#"{"error":{"message":"Missing bearer token"}}"#)]];
    let cases = [
        ("api_key_env = \"MY_LLM_KEY\"", None, "hint: MY_LLM_KEY is unset or empty: set it to the server's API key (llm.api_key_env names it)"),
        ("api_key_env = \"MY_LLM_KEY\"", Some("sk-wrong"), "hint: check the API key in MY_LLM_KEY (llm.api_key_env names it)"),
        ("api_key_env = \"\"", None, "hint: set llm.api_key_env to the name of the environment variable that holds the API key"),
    ];
    for (setting, key, hint) in cases {
        let server = Server::start(refusal());
        let env = server_home(Kind::OpenAi, &server, 5, setting);
        let mut cmd = env.cmd(&["ask", QUESTION]);
        if let Some(key) = key {
            cmd.env("MY_LLM_KEY", key);
        }
        let out = cmd.output().unwrap();
        let err = common::stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{setting}: {err}");
        assert!(err.contains("answered 401: Missing bearer token"), "{setting}: {err}");
        assert!(err.contains(hint), "{setting} {key:?}: {err}");
    }
}
