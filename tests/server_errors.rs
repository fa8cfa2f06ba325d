//! A model server that answers with an error through the real binary: an
//! error the server reports before any text — as an error status, as the
//! first line of an Ollama stream, as the first event of an OpenAI-compatible
//! stream — is the server turning the request down (`model_error`, with a
//! hint where the user can act), not a stream that broke, while one after some
//! text is a stream that broke, keeping it (for a context overrun, with a
//! hint that the prompt and the answer so far overran it); and an answer that
//! broke off mid-body, or one too large to read (a chat answer sent whole, an
//! embedding server's), says so rather than calling what came malformed; a
//! turn the model never answered says so where its saved answer would be.

mod common;

use common::fake_server::{Kind, Server, Step, chunk, end, response, server_home, stream_head, wait};
use common::stderr;

const QUESTION: &str = "How do I create a new project with cargo?";

/// `kebab ask`, giving up on a silent server after `timeout_secs`, against one
/// scripted reply: its stderr, after checking that the ask failed and was saved as `reason`.
fn failed(kind: Kind, reply: Vec<Step>, reason: &str, timeout_secs: u64) -> String {
    let server = Server::start(vec![reply]);
    let env = server_home(kind, &server, timeout_secs, "");
    let out = env.run(&["ask", QUESTION]);
    let (shown, err) = (String::from_utf8_lossy(&out.stdout).to_string(), stderr(&out));
    assert_eq!(out.status.code(), Some(2), "{kind:?}: {shown}{err}");
    assert!(shown.contains(&format!("refused: {reason}")), "{kind:?}: {shown}{err}");
    err
}

/// A stream whose first line is `line`.
fn opened_with(kind: Kind, line: &str) -> Vec<Step> {
    vec![stream_head(kind.content_type()), chunk(line), end()]
}

#[test]
fn an_error_before_any_text_is_the_server_answering_with_an_error_for_both_apis() {
    let cases = [
        (Kind::Ollama, opened_with(Kind::Ollama, "{\"error\":\"out of memory\"}\n")),
        (Kind::OpenAi, opened_with(Kind::OpenAi, "data: {\"error\":{\"message\":\"out of memory\",\"code\":500}}\n\n")),
        // llama.cpp's own form of an error event.
        (Kind::OpenAi, opened_with(Kind::OpenAi, "error: {\"code\":500,\"message\":\"out of memory\"}\n\n")),
        // A server that ignored `stream` and answered one JSON error.
        (Kind::OpenAi, vec![response("200 OK", "application/json", r#"{"error":{"message":"out of memory"}}"#)]),
    ];
    for (kind, reply) in cases {
        let err = failed(kind, reply, "model_error", 5);
        assert!(err.contains("error: the model did not answer; the question is saved: "), "{kind:?}: {err}");
        assert!(err.contains(&format!("{} answered 200: out of memory", kind.chat_path())), "{kind:?}: {err}");
        // Nothing in the user's settings answers it.
        assert!(!err.contains("hint:"), "{kind:?}: {err}");
    }
}

#[test]
fn a_prompt_longer_than_the_servers_context_gets_a_hint_naming_llm_context_tokens() {
    // What llama-server, OpenAI and Ollama say.
    let llama = concat!(
        r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","#,
        r#""type":"exceed_context_size_error"}}"#
    );
    let openai = concat!(
        r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in "#,
        r#"9000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#
    );
    let ollama = r#"{"error":"the input length exceeds the context length"}"#;
    let cases = [
        (Kind::OpenAi, vec![response("400 Bad Request", "application/json", llama)]),
        (Kind::OpenAi, vec![response("400 Bad Request", "application/json", openai)]),
        (Kind::OpenAi, opened_with(Kind::OpenAi, &format!("data: {llama}\n\n"))),
        (Kind::Ollama, vec![response("400 Bad Request", "application/json", ollama)]),
        (Kind::Ollama, opened_with(Kind::Ollama, &format!("{ollama}\n"))),
    ];
    for (kind, reply) in cases {
        let err = failed(kind, reply, "model_error", 5);
        let hint = "hint: the prompt was longer than the model's context on the server: set llm.context_tokens to that context \
                    or lower (kebab fits its evidence to it), or lower rag.max_context_tokens to send less evidence";
        assert!(err.contains(hint), "{kind:?}: {err}");
    }
}

#[test]
fn an_openai_answer_sent_whole_that_breaks_off_says_it_broke_off_not_that_it_is_malformed() {
    // A server that ignored `stream` and promised a JSON answer longer than what it sent.
    let whole = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"Run `cargo new hello` [#1]."}}]}"#;
    let head = format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", whole.len());
    let half = Step::Send(format!("{head}{}", &whole[..40]).into_bytes());
    let cases = [
        // The connection closes there.
        (vec![half.clone()], "broke: the server closed the connection mid-answer"),
        // The server goes quiet there.
        (vec![half, wait(60_000)], "sent nothing for 1 s"),
    ];
    for (reply, said) in cases {
        let err = failed(Kind::OpenAi, reply, "llm_stream_aborted", 1);
        assert!(err.contains(said), "{said}: {err}");
        assert!(!err.contains("malformed"), "{said}: {err}");
    }
}

#[test]
fn a_context_overrun_reported_after_some_text_keeps_the_text_and_gets_a_hint_for_the_prompt_and_answer_together() {
    let llama = r#"{"code":500,"message":"the request exceeds the available context size, try increasing it"}"#;
    let ollama = r#"{"error":"the input length exceeds the context length"}"#;
    let cases = [
        (Kind::OpenAi, format!("data: {{\"error\":{llama}}}\n\n")),
        // llama.cpp's own form of an error event.
        (Kind::OpenAi, format!("error: {llama}\n\n")),
        (Kind::Ollama, format!("{ollama}\n")),
    ];
    let hint_line = |err: &str| err.lines().find(|l| l.starts_with("hint: ")).map(String::from);
    // Before any text only the prompt can have overrun the context; after some, the prompt and the answer so far
    // did, so the answer's share of it (llm.max_answer_tokens) is named too. It was the first hint for both.
    let prompt = "hint: the prompt was longer than the model's context on the server: set llm.context_tokens to that \
                  context or lower (kebab fits its evidence to it), or lower rag.max_context_tokens to send less evidence";
    let mid_answer = "hint: the prompt and the answer so far ran past the model's context on the server: set \
                      llm.context_tokens to that context or lower (kebab keeps room in it for the answer), or lower \
                      rag.max_context_tokens to send less evidence, or llm.max_answer_tokens to ask for a shorter answer";
    for (kind, error) in cases {
        let before = failed(kind, opened_with(kind, &error), "model_error", 5);
        assert_eq!(hint_line(&before).as_deref(), Some(prompt), "{kind:?}: {before}");
        let reply = vec![stream_head(kind.content_type()), kind.piece("Run `cargo new`"), chunk(&error), end()];
        let after = failed(kind, reply, "llm_stream_aborted", 5);
        assert!(after.contains("error: the answer was cut short; the partial text is saved: "), "{kind:?}: {after}");
        assert!(after.contains("context"), "{kind:?}: the server's words are kept: {after}");
        assert_eq!(hint_line(&after).as_deref(), Some(mid_answer), "{kind:?}: {after}");
    }
}

#[test]
fn an_openai_answer_sent_whole_past_16_mib_says_it_is_too_large_and_what_to_do_not_that_it_is_malformed() {
    // A server that ignored `stream` (and the answer cap) and wrote 17 MiB of well-formed JSON.
    let text = "x".repeat(17 * 1024 * 1024);
    let whole = format!(r#"{{"choices":[{{"index":0,"message":{{"role":"assistant","content":"{text}"}}}}]}}"#);
    let err = failed(Kind::OpenAi, vec![response("200 OK", "application/json", &whole)], "model_error", 5);
    assert!(err.contains(&format!("{} answered 200: ", Kind::OpenAi.chat_path())), "{err}");
    assert!(err.contains("over 16 MiB"), "{err}");
    assert!(!err.contains("malformed"), "{err}");
    let hint = err.lines().find(|l| l.starts_with("hint: ")).unwrap_or_default();
    assert!(hint.contains("llm.max_answer_tokens") && hint.contains("--no-stream"), "{err}");
}

#[test]
fn an_embedding_answer_past_256_mib_says_it_is_too_large_not_that_it_is_malformed() {
    // An embedding server gone wild: 257 MiB of well-formed JSON. Cut at the cap, the rest read as malformed JSON.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        use std::io::Write;
        let Ok((mut conn, _)) = listener.accept() else { return };
        common::read_request(&conn);
        let (open, zeros, close) = (r#"{"embeddings":[[1"#, ",0".repeat(512 * 1024), "]]}");
        let length = open.len() + 257 * zeros.len() + close.len();
        let head = format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n{open}");
        // Sent a MiB at a time; kebab hanging up once it has read past its cap ends it.
        let _ = conn.write_all(head.as_bytes());
        let _ = (0..257).try_for_each(|_| conn.write_all(zeros.as_bytes()));
        let _ = conn.write_all(close.as_bytes());
    });
    let env = common::Env::new();
    env.write("notes/n.md", "# N\n\nNarwhal tusks.\n");
    env.write("config/kebab/config.toml", format!("[embedding]\nprovider = \"ollama\"\nbase_url = \"{url}\"\nmodel = \"m\"\n"));
    let out = env.run(&["ingest", env.notes().to_str().unwrap()]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains(&format!("the stream from {url}/api/embed broke: an answer over 256 MiB")), "{err}");
    assert!(!err.contains("malformed"), "{err}");
}

#[test]
fn a_turn_the_model_never_answered_says_so_in_sessions_show_and_the_export() {
    // A server that turned the request down left the turn's answer empty:
    // `sessions show` printed a blank line under the question, and the
    // Markdown export nothing, as if the output had been cut off.
    let kind = Kind::OpenAi;
    let server = Server::start(vec![opened_with(kind, "data: {\"error\":{\"message\":\"out of memory\",\"code\":500}}\n\n")]);
    let env = server_home(kind, &server, 5, "");
    let out = env.run(&["ask", "--session", "down", QUESTION]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let unanswered = "(unanswered: the model wrote nothing before it failed or was stopped; ask the question again)";
    let shown = env.ok(&["sessions", "show", "down"]);
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.get(..2), Some(&[format!("[1] {QUESTION}").as_str(), unanswered][..]), "{shown}");
    let exported = env.ok(&["sessions", "export", "down", "-o", "-"]);
    assert!(exported.contains(&format!("## 1. {QUESTION}\n\n{unanswered}\n\n*Not grounded: model_error.*")), "{exported}");
    // What is saved is unchanged: JSON still gives the answer as the model left it.
    let doc = env.json(&["sessions", "show", "down"]);
    assert_eq!(doc["turns"][0]["answer"]["answer"], "", "{doc}");
}
