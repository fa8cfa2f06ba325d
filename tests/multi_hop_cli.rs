//! Multi-hop through the real binary: `ask --multi-hop --json` and the REPL's
//! `:multihop on` + `:explain`, against a fake OpenAI-compatible server that
//! plays decompose → decide → answer; and the built-in model refused.

mod common;

use std::path::Path;

use common::{Env, fake_openai, repl};

const QUESTION: &str = "From which harbour does the ferry of the Gull Rock lighthouse keeper leave?";

/// `fixtures/multihop/` indexed, lexical only, answered by a fake server
/// that replies with `replies` in turn.
fn env_with_server(replies: &[&str]) -> Env {
    let env = Env::new();
    let url = fake_openai(replies.iter().map(|r| r.to_string()).collect());
    env.write(
        "config/kebab/config.toml",
        format!("[llm]\nprovider = \"openai\"\nbase_url = \"{url}\"\nmodel = \"fake\"\n\n[embedding]\nprovider = \"none\"\n"),
    );
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/multihop");
    env.ok(&["ingest", corpus.to_str().unwrap()]);
    env
}

const REPLIES: [&str; 3] = [
    "```json\n[\"Who keeps the Gull Rock lighthouse?\"]\n```",
    "We still need the ferry: [\"Where does the Heron ferry leave from?\"]",
    "[]",
];

const ANSWER: &str = "She takes the \"Heron ferry\" [#1], which \"leaves from Saltmarsh harbour\" [#2].";

#[test]
fn ask_multi_hop_json_shows_decompose_decide_and_synthesize_hops() {
    let env = env_with_server(&[REPLIES[0], REPLIES[1], REPLIES[2], ANSWER]);
    let v = env.json(&["ask", "--multi-hop", QUESTION]);
    let hops = v["hops"].as_array().unwrap_or_else(|| panic!("no hops: {v}"));
    let kinds: Vec<&str> = hops.iter().map(|h| h["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["decompose", "decide", "decide", "synthesize"], "{v}");
    assert_eq!(hops[0]["sub_queries"][0], "Who keeps the Gull Rock lighthouse?");
    assert_eq!(hops[1]["sub_queries"][0], "Where does the Heron ferry leave from?");
    assert!(hops[1]["context_chunks_added"].as_u64().unwrap() >= 1, "{v}");
    for (i, h) in hops.iter().enumerate() {
        assert_eq!(h["iter"], i + 1);
        assert_eq!(h["forced_stop"], false);
        assert!(h["llm_call_ms"].is_u64());
    }
    assert_eq!(v["grounded"], true, "{v}");
    assert_eq!(v["model"]["provider"], "openai");
    // Four calls at 100 prompt / 10 completion tokens each.
    assert_eq!(v["usage"]["prompt_tokens"], 400);
    assert_eq!(v["usage"]["completion_tokens"], 40);
}

#[test]
fn ask_multi_hop_without_json_prints_the_answer_and_its_sources() {
    let env = env_with_server(&[REPLIES[0], REPLIES[1], REPLIES[2], ANSWER]);
    let out = env.ok(&["ask", "--multi-hop", "--explain", QUESTION]);
    assert!(out.contains("Saltmarsh harbour"), "{out}");
    assert!(out.contains("hop 1 decompose: \"Who keeps the Gull Rock lighthouse?\""), "{out}");
    assert!(out.contains("hop 4 synthesize"), "{out}");
    assert!(out.contains("· grounded"), "{out}");
}

#[test]
fn with_strict_multi_hop_an_unreadable_decomposition_is_a_clean_refusal() {
    let env = env_with_server(&["Let me think step by step.", "Still thinking."]);
    let v = env.json(&["ask", "--multi-hop", "--strict-multi-hop", QUESTION]);
    assert_eq!(v["refusal_reason"], "multi_hop_decompose_failed");
    assert_eq!(v["hops"].as_array().unwrap().len(), 1);
    let out = env.run(&["ask", "--multi-hop", "--strict-multi-hop", "--fail-on-refusal", QUESTION]);
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn an_unreadable_decomposition_falls_back_to_a_single_pass_answer() {
    let env = env_with_server(&["Let me think step by step.", ANSWER]);
    let v = env.json(&["ask", "--multi-hop", QUESTION]);
    assert_eq!(v["refusal_reason"], serde_json::Value::Null, "{v}");
    let hops = v["hops"].as_array().unwrap();
    assert_eq!(hops.len(), 2, "{v}");
    assert!(hops[0]["note"].as_str().unwrap().contains("single-pass"), "{v}");
}

#[test]
fn repl_multihop_on_then_explain_lists_the_hops() {
    let env = env_with_server(&[REPLIES[0], REPLIES[1], REPLIES[2], ANSWER]);
    let input = format!(":multihop\n:multihop on\n{QUESTION}\n:explain\n:multihop off\n");
    let (code, out, err) = repl(&env, &["--repl", "--session", "mh"], &input);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("multihop off\n"), "{out}");
    assert!(out.contains("multihop on:"), "{out}");
    assert!(out.contains("Saltmarsh harbour"), "{out}");
    let hops: Vec<&str> = out.lines().filter(|l| l.starts_with("hop ")).collect();
    assert_eq!(hops.len(), 4, "{out}");
    assert!(hops[0].starts_with("hop 1 decompose: \"Who keeps the Gull Rock lighthouse?\" · +"), "{}", hops[0]);
    assert!(hops[1].starts_with("hop 2 decide: \"Where does the Heron ferry leave from?\""), "{}", hops[1]);
    assert!(hops[2].starts_with("hop 3 decide · +0 chunks"), "{}", hops[2]);
    assert!(hops[3].starts_with("hop 4 synthesize · model"), "{}", hops[3]);
    // Saved with the turn: a new process shows the same hops.
    let (_, again, _) = repl(&env, &["--repl", "--session", "mh"], ":explain\n");
    assert_eq!(again.lines().filter(|l| l.starts_with("hop ")).count(), 4, "{again}");
}

#[test]
fn repl_multihop_takes_on_and_off_in_any_case_as_mode_takes_its_modes() {
    // `:multihop ON` was refused ("\"ON\" is neither on nor off") where `:mode LEXICAL` is taken.
    let env = env_with_server(&[]);
    let (code, out, err) = repl(&env, &["--repl"], ":multihop ON\n:multihop\n:multihop Off\n:multihop\n:mode LEXICAL\n");
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("error:"), "{out}");
    let said: Vec<&str> = out.split("> ").filter_map(|l| l.lines().nth(1)).collect();
    assert!(said[0].starts_with("multihop on: "), "{out}");
    assert_eq!(said[1..], ["multihop on", "multihop off", "multihop off", "mode lexical"], "{out}");
}

#[test]
fn the_built_in_model_cannot_do_multi_hop_and_says_what_to_do() {
    let env = Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n[embedding]\nprovider = \"none\"\n");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/multihop");
    env.ok(&["ingest", corpus.to_str().unwrap()]);
    let out = env.run(&["ask", "--multi-hop", QUESTION]);
    assert_eq!(out.status.code(), Some(1));
    let err = common::stderr(&out);
    assert!(err.contains("extractive") && err.contains("hint:") && err.contains("llm.provider"), "{err}");
    let (code, out, _) = repl(&env, &["--repl"], ":multihop on\n:multihop\n");
    assert_eq!(code, 0);
    assert!(out.contains("error: multi-hop needs a chat model"), "{out}");
    assert!(out.contains("multihop off"), "{out}");
}
