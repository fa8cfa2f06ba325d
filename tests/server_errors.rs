//! A model server that answers with an error through the real binary: an
//! error the server reports before any text — as an error status, as the
//! first line of an Ollama stream, as the first event of an OpenAI-compatible
//! stream — is the server turning the request down (`model_error`, with a
//! hint where the user can act), not a stream that broke; and an answer that
//! broke off mid-body says so rather than calling what came malformed.

mod common;

use common::fake_server::{Kind, Server, Step, chunk, end, response, server_home, stream_head};
use common::stderr;

const QUESTION: &str = "How do I create a new project with cargo?";

/// `kebab ask` against one scripted reply: its stderr, after checking that the
/// ask failed and was saved as `reason`.
fn failed(kind: Kind, reply: Vec<Step>, reason: &str) -> String {
    let server = Server::start(vec![reply]);
    let env = server_home(kind, &server, 5, "");
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
        let err = failed(kind, reply, "model_error");
        assert!(err.contains("error: the model did not answer; the question is saved: "), "{kind:?}: {err}");
        assert!(err.contains(&format!("{} answered 200: out of memory", kind.chat_path())), "{kind:?}: {err}");
    }
}
