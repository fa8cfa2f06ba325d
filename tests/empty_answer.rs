//! A model that writes no answer text — a thinking model that sends only its
//! reasoning, a server that sends an empty reply — is refused `llm_self_judge`
//! as any ungrounded answer, with kebab's words in place of the answer: that
//! the model wrote nothing, whether it sent only reasoning, and what to change.
//! Without them the refusal was a footer and nothing else. Reasoning some
//! servers stream in the answer text itself, as a leading `<think>…</think>`
//! block, is reasoning too: not shown, not checked, not the answer. So is the
//! text before a `</think>` whose opening tag was in the prompt: never saved
//! or checked, and once shown, marked as reasoning when the tag comes.

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

/// The answers saved so far, oldest first.
fn saved_answers(env: &common::Env) -> Vec<String> {
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    let mut stmt = conn.prepare("SELECT answer FROM answers ORDER BY id").unwrap();
    stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

const REASONING_SHOWN: &str = "[the text above is the model's reasoning, not saved or checked; its answer follows]";

#[test]
fn a_think_block_opened_in_the_prompt_is_reasoning_neither_saved_nor_checked() {
    // The template opened `<think>`: the server streams the reasoning and `</think>`, no opening tag.
    let whole = ["The user asks about cargo [#9]; the notes say cargo new\n</think>\n\n"];
    let split = ["The user asks about cargo [#9];", " the notes say cargo new\n</th", "ink>\n\n"];
    let answer = ["Run `cargo new hello`", " in a terminal [#1]."];
    for kind in BOTH {
        for thought in [&whole[..], &split[..]] {
            let reply = || kind.stream(&[thought, &answer[..]].concat(), 0);
            let server = Server::start(vec![reply(), reply()]);
            let env = server_home(kind, &server, 5, "");
            let shown = env.ok(&["ask", QUESTION]);
            let what = format!("{kind:?}, {} pieces of reasoning: {shown}", thought.len());
            assert!(shown.contains(ANSWER) && !shown.contains("refused"), "{what}");
            if thought.len() == 1 {
                // It came whole before anything was shown: none of it is.
                let reasoning = ["The user asks", "think", REASONING_SHOWN];
                assert!(reasoning.iter().all(|r| !shown.contains(r)), "{what}");
            } else {
                // It streamed before `</think>` said what it was: kebab says where it ended.
                let thought = split.concat();
                let marked = format!("{}\n\n{REASONING_SHOWN}\n\n{ANSWER}", thought.trim_end());
                assert!(shown.starts_with(&marked), "{what}");
            }
            let doc: serde_json::Value = serde_json::from_str(&env.ok(&["--json", "ask", QUESTION])).unwrap();
            assert_eq!((&doc["answer"], &doc["grounded"]), (&json!(ANSWER), &json!(true)), "{what}\n{doc}");
            assert_eq!(saved_answers(&env), [ANSWER, ANSWER], "{what}");
        }
    }
}

#[test]
fn an_ordinary_answer_shows_its_first_text_while_the_model_is_still_writing() {
    use std::io::Read;
    use std::time::{Duration, Instant};
    // Text with no `<think>` may yet prove reasoning, but it is shown as it comes: the model pauses 4 s.
    let first = [ANSWER, " It makes the folder, the manifest and a hello world program."];
    for kind in BOTH {
        let mut reply = kind.stream(&first, 0);
        let tail = reply.split_off(reply.len() - 2);
        reply.extend([common::fake_server::wait(4000), kind.piece(" Then `cargo run` [#1].")]);
        reply.extend(tail);
        let server = Server::start(vec![reply]);
        let env = server_home(kind, &server, 10, "");
        let mut child = common::spawn_piped(&mut env.cmd(&["ask", QUESTION]));
        let mut stdout = child.stdout.take().unwrap();
        let (mut shown, mut buf, mut seen) = (Vec::new(), [0u8; 256], None);
        while let Ok(n @ 1..) = stdout.read(&mut buf) {
            shown.extend_from_slice(&buf[..n]);
            if seen.is_none() && String::from_utf8_lossy(&shown).contains("Run `cargo new hello`") {
                seen = Some(Instant::now());
            }
        }
        let ended = Instant::now();
        assert!(child.wait().unwrap().success(), "{kind:?}: {}", String::from_utf8_lossy(&shown));
        let early = seen.map(|at| ended - at);
        assert!(early.is_some_and(|d| d > Duration::from_secs(3)), "{kind:?}: shown {early:?} before the end");
    }
}

#[test]
fn a_model_that_reasons_forever_stops_at_the_answer_cap_with_reasoning_and_answer_counted_together() {
    let cap = "It stopped at llm.max_answer_tokens while reasoning: a larger cap leaves it room to answer";
    for kind in BOTH {
        // A server that ignores the cap, and never finishes: reasoning apart or in a `<think>` block, then a pause.
        let apart = |n| (0..n).map(|_| kind.reasoning(" hmm")).collect::<Vec<_>>();
        let in_text = (0..5000).map(|_| kind.piece(" hmm"));
        let forever = [apart(5000), [kind.piece("<think>")].into_iter().chain(in_text).collect()];
        for thinking in forever {
            let reply = [vec![stream_head(kind.content_type())], thinking, vec![common::fake_server::wait(20_000)]].concat();
            let server = Server::start(vec![reply]);
            let out = server_home(kind, &server, 30, "max_answer_tokens = 32").run(&["--json", "ask", QUESTION]);
            let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
            assert_eq!(doc["finish"], "length", "{kind:?}: {}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
            assert!(doc["answer"].as_str().unwrap().contains(cap), "{kind:?}: {doc}");
        }
        // 20 tokens of reasoning leave the answer 12 of the 32: 7 for its sentence, then 2 for each " again",
        // the one that passes the cap kept (answer alone, it would have run to 13).
        let again = (0..5000).map(|_| kind.piece(" again"));
        let reply = [vec![stream_head(kind.content_type())], apart(20), vec![kind.piece("Run `cargo new hello` [#1].")]].concat();
        let server = Server::start(vec![reply.into_iter().chain(again).collect()]);
        let doc = server_home(kind, &server, 5, "max_answer_tokens = 32").json(&["ask", QUESTION]);
        let answer = doc["answer"].as_str().unwrap();
        assert_eq!((&doc["finish"], &doc["grounded"]), (&json!("length"), &json!(true)), "{kind:?}: {doc}");
        assert!(answer.starts_with("Run `cargo new hello` [#1].") && answer.matches(" again").count() == 3, "{kind:?}: {answer}");
    }
}
