//! A model that writes no answer text — a thinking model that sends only its
//! reasoning, a server that sends an empty reply — is refused `llm_self_judge`
//! as any ungrounded answer, with kebab's words in place of the answer: that
//! the model wrote nothing, whether it sent only reasoning, and what to change.
//! Without them the refusal was a footer and nothing else. Reasoning some
//! servers stream in the answer text itself, as a leading `<think>…</think>`
//! block, is reasoning too: not shown, not checked, not the answer.

mod common;

use common::fake_server::{BOTH, Kind, Server, Step, chunk, end, response, server_home, stream_head};
use common::stderr;
use serde_json::json;

const QUESTION: &str = "How do I create a new project with cargo?";
const THOUGHT: &str = "The user asks about cargo; the evidence mentions cargo new";
const ONLY_REASONING: &str = "The model sent only its reasoning and wrote no answer, \
                              so there is nothing to check against your notes. \
                              Set llm.model to a model that answers without a separate reasoning part";
const EMPTY_REPLY: &str = "The model wrote no answer text: its server sent an empty reply";

/// `kebab ask` (with `flags`) against one scripted reply: stdout, after
/// checking that it was a refusal, not a failure.
fn refused(kind: Kind, reply: Vec<Step>, flags: &[&str]) -> String {
    let server = Server::start(vec![reply]);
    let env = server_home(kind, &server, 5, "");
    let mut args = vec!["ask"];
    args.extend_from_slice(flags);
    args.push(QUESTION);
    let out = env.run(&args);
    let shown = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(0), "{kind:?} {flags:?}: {shown}{}", stderr(&out));
    assert!(shown.contains("refused: llm_self_judge"), "{kind:?} {flags:?}: {shown}");
    shown
}

#[test]
fn a_model_answer_with_no_text_says_the_model_wrote_nothing_and_what_to_change() {
    for kind in BOTH {
        let thinking = vec![stream_head(kind.content_type()), kind.reasoning(THOUGHT), kind.finish(), end()];
        let shown = refused(kind, thinking, &[]);
        assert!(shown.contains(ONLY_REASONING), "{kind:?}: {shown}");
        assert!(!shown.contains(THOUGHT) && !shown.contains("max_answer_tokens"), "{kind:?}: {shown}");

        let shown = refused(kind, kind.stream(&[], 0), &[]);
        assert!(shown.contains(EMPTY_REPLY), "{kind:?}: {shown}");
        assert!(!shown.contains("only its reasoning"), "{kind:?}: {shown}");
    }
    // A server that ignores `stream` and sends one answer whose text is all in `reasoning`.
    let whole = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "", "reasoning": THOUGHT},
        "finish_reason": "stop"}]});
    let shown = refused(Kind::OpenAi, vec![response("200 OK", "application/json", &whole.to_string())], &["--no-stream"]);
    assert!(shown.contains(ONLY_REASONING), "{shown}");
    // With --json the answer text says it too; the reason stays the one every ungrounded answer has.
    let server = Server::start(vec![Kind::OpenAi.stream(&[], 0)]);
    let doc: serde_json::Value = serde_json::from_str(&server_home(Kind::OpenAi, &server, 5, "").ok(&["--json", "ask", QUESTION])).unwrap();
    assert_eq!(doc["refusal_reason"], "llm_self_judge", "{doc}");
    assert!(doc["answer"].as_str().unwrap().starts_with(EMPTY_REPLY), "{doc}");
}

#[test]
fn a_thinking_model_cut_at_the_answer_cap_is_told_a_larger_cap_leaves_room_to_answer() {
    let cut = chunk(&format!(
        "{}\n",
        json!({"model": "qwen", "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "length"})
    ));
    let reply = vec![stream_head(Kind::Ollama.content_type()), Kind::Ollama.reasoning(THOUGHT), cut, end()];
    let shown = refused(Kind::Ollama, reply, &[]);
    assert!(shown.contains(ONLY_REASONING), "{shown}");
    let cap = "It stopped at llm.max_answer_tokens while reasoning: a larger cap leaves it room to answer";
    assert!(shown.contains(cap), "{shown}");
    assert!(shown.contains("cut at llm.max_answer_tokens"), "{shown}");
}

#[test]
fn a_turn_the_model_wrote_nothing_for_is_left_out_of_the_next_prompt() {
    for kind in BOTH {
        let server = Server::start(vec![kind.stream(&[], 0), kind.stream(&["Run `cargo build` [#1]."], 0)]);
        let env = server_home(kind, &server, 5, "");
        let first = env.ok(&["ask", "--session", "s", QUESTION]);
        assert!(first.contains(EMPTY_REPLY), "{kind:?}: {first}");
        env.ok(&["ask", "--session", "s", "And how do I build it?"]);
        let bodies = server.bodies();
        assert_eq!(bodies.len(), 2, "{kind:?}: {bodies:?}");
        // kebab's words for the first turn are not shown to the model as its own reply.
        let messages = bodies[1]["messages"].as_array().unwrap();
        assert!(messages.iter().all(|m| m["role"] != "assistant"), "{kind:?}: {messages:?}");
        assert!(!bodies[1].to_string().contains("no answer text"), "{kind:?}: {}", bodies[1]);
    }
}

/// A thinking model's reply as some servers stream it, the reasoning in the answer text: the tags cut
/// between pieces, and a marker in the reasoning that names no evidence entry (checked, it refuses the answer).
const IN_TEXT_THOUGHT: [&str; 3] = ["<thi", "nk>\nThe user asks about cargo [#9]; the notes say cargo new</th", "ink>\n\n"];
const ANSWER: &str = "Run `cargo new hello` in a terminal [#1].";

#[test]
fn a_leading_think_block_in_the_answer_text_is_reasoning_neither_shown_nor_checked() {
    for kind in BOTH {
        let reply = || kind.stream(&[&IN_TEXT_THOUGHT[..], &["Run `cargo new hello`", " in a terminal [#1]."]].concat(), 0);
        let server = Server::start(vec![reply(), reply()]);
        let env = server_home(kind, &server, 5, "");
        // Streamed to the terminal: the answer, and nothing of the reasoning.
        let shown = env.ok(&["ask", QUESTION]);
        assert!(shown.contains(ANSWER) && !shown.contains("refused"), "{kind:?}: {shown}");
        assert!(!shown.contains("The user asks") && !shown.contains("think") && !shown.contains("<th"), "{kind:?}: {shown}");
        let doc: serde_json::Value = serde_json::from_str(&env.ok(&["--json", "ask", QUESTION])).unwrap();
        assert_eq!((&doc["answer"], &doc["grounded"]), (&json!(ANSWER), &json!(true)), "{kind:?}: {doc}");

        // Nothing after the block: the model wrote only its reasoning.
        let shown = refused(kind, kind.stream(&IN_TEXT_THOUGHT, 0), &[]);
        assert!(shown.contains(ONLY_REASONING), "{kind:?}: {shown}");
        assert!(!shown.contains("The user asks") && !shown.contains("think>"), "{kind:?}: {shown}");
        // An empty block (a thinking model told not to think) is no reasoning.
        let shown = refused(kind, kind.stream(&["<think>\n\n</think>\n\n"], 0), &[]);
        assert!(shown.contains(EMPTY_REPLY), "{kind:?}: {shown}");
    }
}
