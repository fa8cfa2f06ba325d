//! Attribution of answers a model did not cite, end to end through `kebab
//! ask --json` against fake Ollama and OpenAI-compatible servers: sentences
//! copied from the evidence without markers are grounded with attributed
//! citations; invented facts, or an invented number slipped into an evidence
//! sentence, are refused `unsupported_claims`; `rag.attribution = "off"`
//! keeps the strict `llm_self_judge` refusal.

mod common;

use common::Env;
use common::fake_server::{BOTH, Kind, Server};
use serde_json::Value;

const KETTLE: &str = "# Kettle care\n\n\
The kettle should be descaled once a month with white vinegar.\n\
Fill it halfway with equal parts water and vinegar, boil it, then let it stand for twenty minutes.\n\n\
## Storage\n\n\
Keep the kettle empty when it is not in use, so limescale does not build up.\n";

const QUESTION: &str = "How do I descale the kettle?";

/// A home with the kettle note ingested and kebab pointed at `server`.
fn home(kind: Kind, server: &Server, rag: &str) -> Env {
    let env = Env::new();
    env.write(
        "config/kebab/config.toml",
        format!(
            "[llm]\nprovider = \"{}\"\nmodel = \"qwen\"\nbase_url = \"{}\"\n\n[embedding]\nprovider = \"none\"\n\n[search]\ndefault_mode = \"lexical\"\n\n[rag]\n{rag}\n",
            kind.provider(),
            server.url
        ),
    );
    env.write("notes/kettle.md", KETTLE);
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    env
}

/// Asks QUESTION of a server that streams `reply` (no markers) and returns answer.v1.
fn ask(kind: Kind, reply: &[&str], rag: &str) -> Value {
    let server = Server::start(vec![kind.stream(reply, 0)]);
    let env = home(kind, &server, rag);
    env.json(&["ask", "--json", QUESTION])
}

fn reason(a: &Value) -> &str {
    a["refusal_reason"].as_str().unwrap_or("")
}

#[test]
fn sentences_copied_from_the_evidence_without_markers_are_grounded_with_attributed_citations() {
    for kind in BOTH {
        let a = ask(kind, &["The kettle should be descaled once a month ", "with white vinegar. Fill it halfway with equal parts water and vinegar, boil it, then let it stand for twenty minutes."], "");
        assert_eq!(a["grounded"], true, "{kind:?}: {a:#}");
        let citations = a["citations"].as_array().unwrap();
        assert!(!citations.is_empty(), "{kind:?}: {a:#}");
        for c in citations {
            assert_eq!(c["origin"], "attributed", "{kind:?}: {a:#}");
            assert_eq!(c["support"].as_f64(), Some(1.0), "{kind:?}: exact copies: {a:#}");
            assert_eq!(c["citation"]["path"].as_str().unwrap().rsplit('/').next(), Some("kettle.md"));
        }
        let sentences = a["attribution"]["sentences"].as_array().unwrap();
        assert_eq!(sentences.len(), 2, "{kind:?}: {a:#}");
        assert!(sentences.iter().all(|s| s["origin"] == "attributed"), "{kind:?}: {a:#}");
    }
}

#[test]
fn a_server_inventing_facts_is_refused_as_unsupported_claims() {
    for kind in BOTH {
        let a = ask(kind, &["Descaling needs a citric tablet from the Brevix company. ", "Run the kettle empty for 45 minutes afterwards."], "");
        assert_eq!((a["grounded"].as_bool(), reason(&a)), (Some(false), "unsupported_claims"), "{kind:?}: {a:#}");
        assert!(a["citations"].as_array().unwrap().is_empty(), "{kind:?}: {a:#}");
        let sentences = a["attribution"]["sentences"].as_array().unwrap();
        assert!(sentences.iter().all(|s| s["origin"] == "unsupported"), "{kind:?}: {a:#}");
        // The text is still given, with the unsupported sentences flagged.
        assert!(a["answer"].as_str().unwrap().contains("Brevix"));
    }
}

#[test]
fn an_invented_number_in_an_evidence_sentence_is_refused_and_named() {
    for kind in BOTH {
        let a = ask(kind, &["The kettle should be descaled once a month with white vinegar at 80 degrees."], "");
        assert_eq!(reason(&a), "unsupported_claims", "{kind:?}: {a:#}");
        let s = &a["attribution"]["sentences"][0];
        assert_eq!((s["origin"].as_str(), s["invented"].as_str()), (Some("unsupported"), Some("80")), "{kind:?}: {a:#}");
    }
}

#[test]
fn with_attribution_off_an_uncited_answer_is_self_judged_as_before() {
    for kind in BOTH {
        let a = ask(kind, &["The kettle should be descaled once a month with white vinegar."], "attribution = \"off\"");
        assert_eq!((a["grounded"].as_bool(), reason(&a)), (Some(false), "llm_self_judge"), "{kind:?}: {a:#}");
        assert!(a.get("attribution").is_none(), "{kind:?}: {a:#}");
    }
}

#[test]
fn the_terminal_marks_attributed_sources_with_a_star_and_a_legend() {
    let kind = Kind::Ollama;
    let server = Server::start(vec![kind.stream(&["The kettle should be descaled once a month with white vinegar."], 0)]);
    let env = home(kind, &server, "");
    let out = env.ok(&["ask", "--no-stream", "--explain", QUESTION]);
    assert!(out.contains("with white vinegar. [1*]"), "{out}");
    assert!(out.contains("[1*] ") && out.contains("kettle.md:"), "{out}");
    assert!(out.contains("* attributed by kebab: the model did not cite this sentence"), "{out}");
    assert!(out.contains("attributed by kebab (the model did not cite them): [1*] (support 1.00)"), "{out}");
    // The saved row keeps the origin: the session-less answer reads back the same.
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    let citations: String = conn.query_row("SELECT citations_json FROM answers", [], |r| r.get(0)).unwrap();
    assert!(citations.contains("\"origin\":\"attributed\""), "{citations}");
}

#[test]
fn a_model_that_says_the_notes_do_not_answer_is_its_own_refusal() {
    for kind in BOTH {
        let a = ask(kind, &["The notes do not answer how to descale the kettle."], "");
        assert_eq!(reason(&a), "llm_self_judge", "{kind:?}: {a:#}");
    }
}

#[test]
fn a_reply_that_only_restates_the_question_is_not_grounded_even_when_cited() {
    for kind in BOTH {
        let a = ask(kind, &["You descale the kettle [#1]."], "");
        assert_eq!(reason(&a), "llm_self_judge", "{kind:?}: {a:#}");
        // The same marker on a sentence that says how is the model's citation.
        let a = ask(kind, &["Descale it with white vinegar [#1]."], "");
        assert_eq!(a["grounded"], true, "{kind:?}: {a:#}");
    }
}

#[test]
fn with_passages_the_evidence_is_a_window_whose_lines_are_exact() {
    let kind = Kind::OpenAi;
    let server = Server::start(vec![kind.stream(&["Descale the kettle with citric acid when the water is very hard."], 0)]);
    let env = home(kind, &server, "evidence = \"passages\"");
    // One long section: many lines about other things, the answer in the middle.
    let mut note = String::from("# Kitchen\n\n");
    for i in 0..12 {
        note.push_str(&format!("The oven shelf number {i} is cleaned with warm soapy water and a soft sponge.\n"));
    }
    note.push_str("Descale the kettle with citric acid when the water is very hard.\n");
    for i in 0..12 {
        note.push_str(&format!("The fridge drawer number {i} is emptied and wiped every Friday evening.\n"));
    }
    let path = env.write("notes/kitchen.md", &note);
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let a = env.json(&["ask", "--json", "When do I descale the kettle with citric acid?"]);
    assert_eq!(a["grounded"], true, "{a:#}");
    let c = a["citations"].as_array().unwrap().iter().find(|c| c["citation"]["path"].as_str().unwrap().ends_with("kitchen.md")).unwrap();
    let (start, end) = (c["citation"]["start"].as_u64().unwrap(), c["citation"]["end"].as_u64().unwrap());
    let lines = common::file_lines(&path, start, end);
    assert!(lines.contains("Descale the kettle with citric acid"), "{start}-{end}: {lines}");
    assert!(end - start < 20, "a window, not the 27-line chunk: {start}-{end}");
    // What the model was shown is exactly those lines.
    let sent = server.bodies().last().unwrap()["messages"][1]["content"].as_str().unwrap().to_string();
    let first_line = lines.lines().next().unwrap();
    assert!(sent.contains(first_line) && !sent.contains("oven shelf number 0 "), "{sent}");
}
