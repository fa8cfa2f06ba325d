//! `kebab eval answers` on `fixtures/qa/` (a tiny set written for these
//! tests): the scores, `--limit`, bad input, nothing saved, and multi-hop
//! against a fake OpenAI-compatible server.

mod common;

use std::path::{Path, PathBuf};

use common::{Env, fake_openai};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/qa").join(name)
}

/// The set's corpus indexed, lexical only, with `llm` as the `[llm]` section.
fn env_with(llm: &str) -> Env {
    let env = Env::new();
    env.write("config/kebab/config.toml", format!("[llm]\n{llm}\n[embedding]\nprovider = \"none\"\n"));
    env.ok(&["ingest", fixture("corpus.jsonl").to_str().unwrap()]);
    env
}

fn set_args<'a>(queries: &'a str, answers: &'a str) -> Vec<&'a str> {
    vec!["eval", "answers", "--queries", queries, "--answers", answers]
}

fn answers_rows(env: &Env) -> i64 {
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    conn.query_row("SELECT count(*) FROM answers", [], |r| r.get(0)).unwrap()
}

#[test]
fn the_built_in_model_is_scored_on_every_question_with_a_gold_answer() {
    let env = env_with("provider = \"extractive\"");
    let (q, a) = (fixture("queries.jsonl"), fixture("answers.jsonl"));
    let v = env.json(&set_args(q.to_str().unwrap(), a.to_str().unwrap()));
    assert_eq!(v["schema_version"], "eval_answers.v1");
    assert_eq!(v["questions"], 5);
    assert_eq!(v["without_gold"], 1, "q6 has no gold answer");
    assert_eq!(v["multi_hop"], false);
    // q1–q4 quote their gold (q4 in Korean); q5 is not in the notes.
    assert_eq!(v["contains_gold"], 0.8, "{v}");
    assert_eq!(v["grounded"], 0.8);
    assert_eq!(v["refused"], 0.2);
    assert_eq!(v["refusals"]["no_chunks"], 0.2);
    assert_eq!(v["citation_validity"], 1.0);
    assert_eq!(v["quote_verification"], 1.0);
    assert!(v["prompt_tokens"].as_u64().unwrap() > 0 && v["latency_ms_p95"].is_u64());
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 5);
    let q4 = rows.iter().find(|r| r["id"] == "q4").unwrap();
    assert_eq!(q4["contains_gold"], true, "{q4}");
    assert_eq!(q4["gold"][0], "여섯 시간");
    let q5 = rows.iter().find(|r| r["id"] == "q5").unwrap();
    assert_eq!((q5["contains_gold"].as_bool(), q5["refusal_reason"].as_str()), (Some(false), Some("no_chunks")));
    assert_eq!(answers_rows(&env), 0, "evaluation saves nothing");
}

#[test]
fn limit_takes_the_first_questions_and_the_report_reads_as_text() {
    let env = env_with("provider = \"extractive\"");
    let (q, a) = (fixture("queries.jsonl"), fixture("answers.jsonl"));
    let mut args = set_args(q.to_str().unwrap(), a.to_str().unwrap());
    args.extend(["--limit", "2"]);
    let out = env.ok(&args);
    assert!(out.contains("single-pass · 2 questions"), "{out}");
    let line = |label: &str| out.lines().find(|l| l.starts_with(label)).map(|l| l[label.len()..].trim().to_string());
    assert_eq!(line("answer has gold").unwrap(), "100.0% (of grounded answers: 100.0%)", "{out}");
    assert_eq!(line("refused").unwrap(), "0.0%", "{out}");
    assert!(line("latency ms").unwrap().starts_with("p50 "), "{out}");
    args.extend(["--limit", "0"]);
    assert_eq!(env.run(&args).status.code(), Some(1));
}

#[test]
fn a_bad_answers_line_is_named_and_exits_1() {
    let env = env_with("provider = \"extractive\"");
    let bad = env.write("bad.jsonl", "{\"_id\": \"q1\", \"answers\": [\"1872\"]}\n{\"_id\": \"q2\", \"answers\": \"x\"}\n");
    let q = fixture("queries.jsonl");
    let out = env.run(&set_args(q.to_str().unwrap(), bad.to_str().unwrap()));
    assert_eq!(out.status.code(), Some(1));
    assert!(common::stderr(&out).contains("bad.jsonl:2"), "{}", common::stderr(&out));
    let none = env.write("none.jsonl", "{\"_id\": \"nope\", \"answers\": [\"x\"]}\n");
    let out = env.run(&set_args(q.to_str().unwrap(), none.to_str().unwrap()));
    assert_eq!(out.status.code(), Some(1));
    assert!(common::stderr(&out).contains("has a gold answer"), "{}", common::stderr(&out));
}

#[test]
fn multi_hop_with_the_built_in_model_is_refused_up_front() {
    let env = env_with("provider = \"extractive\"");
    let (q, a) = (fixture("queries.jsonl"), fixture("answers.jsonl"));
    let mut args = set_args(q.to_str().unwrap(), a.to_str().unwrap());
    args.push("--multi-hop");
    let out = env.run(&args);
    assert_eq!(out.status.code(), Some(1));
    assert!(common::stderr(&out).contains("hint:"), "{}", common::stderr(&out));
}

#[test]
fn multi_hop_answers_from_a_server_are_scored_with_their_hops() {
    let url = fake_openai(
        ["[\"When was the Gull Rock lighthouse built?\"]", "[]", "It was built in \"1872\" [#1]."].map(String::from).to_vec(),
    );
    let env = env_with(&format!("provider = \"openai\"\nbase_url = \"{url}\"\nmodel = \"fake\""));
    let (q, a) = (fixture("queries.jsonl"), fixture("answers.jsonl"));
    let mut args = set_args(q.to_str().unwrap(), a.to_str().unwrap());
    args.extend(["--multi-hop", "--limit", "1"]);
    let v = env.json(&args);
    assert_eq!(v["multi_hop"], true);
    assert_eq!(v["model"], "openai/fake");
    let row = &v["rows"][0];
    assert_eq!(row["hops"], 3, "{row}");
    assert_eq!((row["contains_gold"].as_bool(), row["grounded"].as_bool()), (Some(true), Some(true)), "{row}");
    // Three calls at 100 prompt tokens each.
    assert_eq!(v["prompt_tokens"], 300);
}

#[test]
fn a_model_server_that_fails_is_counted_not_fatal() {
    // The fake server has no reply: every call gets a 500.
    let url = fake_openai(Vec::new());
    let env = env_with(&format!("provider = \"openai\"\nbase_url = \"{url}\"\nmodel = \"fake\""));
    let (q, a) = (fixture("queries.jsonl"), fixture("answers.jsonl"));
    let mut args = set_args(q.to_str().unwrap(), a.to_str().unwrap());
    args.extend(["--limit", "2"]);
    let v = env.json(&args);
    assert_eq!(v["model_errors"], 2, "{v}");
    // A server that answers with an error status is a model error, not a broken stream.
    assert_eq!(v["refusals"]["model_error"], 1.0);
    assert!(v["rows"][0]["error"].as_str().unwrap().contains("500"), "{v}");
}

#[test]
fn eval_files_saved_with_a_utf8_byte_order_mark_are_read_as_ingest_reads_them() {
    // Notepad and spreadsheet exports write "UTF-8 with BOM"; ingest reads such
    // a JSONL file, and every eval command said `FILE:1: expected value at
    // line 1 column 1` for it.
    let env = env_with("provider = \"extractive\"");
    let bom = |name: &str| {
        let mut bytes = b"\xef\xbb\xbf".to_vec();
        bytes.extend(std::fs::read(fixture(name)).unwrap());
        env.write(&format!("bom/{name}"), bytes)
    };
    let (q, a) = (bom("queries.jsonl"), bom("answers.jsonl"));
    let v = env.json(&set_args(q.to_str().unwrap(), a.to_str().unwrap()));
    assert_eq!((v["questions"].as_u64(), v["contains_gold"].as_f64()), (Some(5), Some(0.8)), "{v}");
    let qrels = env.write("bom/qrels.tsv", "\u{feff}q1\tlighthouse\t1\n");
    let v = env.json(&["eval", "retrieval", "--queries", q.to_str().unwrap(), "--qrels", qrels.to_str().unwrap()]);
    assert_eq!((v["queries"].as_u64(), v["mrr_at_10"].as_f64()), (Some(1), Some(1.0)), "{v}");
    let line = r#"{"id":"g1","question":"When was the lighthouse built?","kind":"answerable","sources":["corpus.jsonl"]}"#;
    let set = env.write("bom/gate.jsonl", format!("\u{feff}{line}\n"));
    let v = env.json(&["eval", "gate", "--set", set.to_str().unwrap()]);
    assert_eq!(v["schema_version"], "eval_gate.v2", "{v}");
}

#[test]
fn a_repeated_id_in_any_eval_input_is_bad_input_naming_the_file_the_line_and_the_id() {
    // `eval answers` kept the last gold answers of a repeated `_id`, silently;
    // a repeated query, gate question or dialogue was asked and scored twice,
    // and a repeated qrels pair or evidence id kept its last line.
    let env = env_with("provider = \"extractive\"");
    let (q, a) = (fixture("queries.jsonl"), fixture("answers.jsonl"));
    let (q, a) = (q.to_str().unwrap(), a.to_str().unwrap());
    let gold = "{\"_id\": \"q1\", \"answers\": [\"1872\"]}\n{\"_id\": \"q2\", \"answers\": [\"Saltmarsh\"]}\n";
    let query = "{\"_id\": \"q1\", \"text\": \"When was the Gull Rock lighthouse built?\"}\n";
    let item = r#"{"id":"g1","question":"When was the lighthouse built?","kind":"answerable","sources":["corpus.jsonl"]}"#;
    let dialogue = r#"{"id":"d1","turns":[{"question":"When was the lighthouse built?","kind":"first"}]}"#;
    let evidence = "{\"id\": \"e1\", \"entries\": [\"The lighthouse was built in 1872.\"]}\n";
    let sentence = r#"{"id":"s1","evidence":"e1","kind":"copied","label":"support","sentence":"Built in 1872."}"#;
    env.write("att/sentences.jsonl", format!("{sentence}\n"));
    let cases: [(&str, String, Vec<&str>, &str); 6] = [
        ("answers.jsonl", format!("{gold}\n{{\"_id\": \"q1\", \"answers\": [\"1873\"]}}\n"), set_args(q, "answers.jsonl"),
            "answers.jsonl:4: id \"q1\" is repeated (first on line 1)"),
        ("queries.jsonl", format!("{query}{query}"), set_args("queries.jsonl", a),
            "queries.jsonl:2: id \"q1\" is repeated (first on line 1)"),
        ("qrels.tsv", "query-id\tcorpus-id\tscore\nq1\tlighthouse\t1\nq1\tlighthouse\t2\n".into(),
            vec!["eval", "retrieval", "--queries", q, "--qrels", "qrels.tsv"],
            "qrels.tsv:3: the judgement of \"lighthouse\" for query \"q1\" is repeated (first on line 2)"),
        ("gate.jsonl", format!("{item}\n{item}\n"), vec!["eval", "gate", "--set", "gate.jsonl"],
            "gate.jsonl:2: id \"g1\" is repeated (first on line 1)"),
        ("dialogues.jsonl", format!("{dialogue}\n\n{dialogue}\n"), vec!["eval", "dialogues", "dialogues.jsonl"],
            "dialogues.jsonl:3: id \"d1\" is repeated (first on line 1)"),
        ("att/evidence.jsonl", format!("{evidence}{evidence}"), vec!["eval", "attribution", "--set", "att"],
            "att/evidence.jsonl:2: id \"e1\" is repeated (first on line 1)"),
    ];
    for (file, text, args, says) in cases {
        env.write(file, text);
        let out = env.cmd(&args).current_dir(env.path("")).output().unwrap();
        let err = common::stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{file}: {err}");
        assert!(err.contains(says) && err.contains("hint: "), "{file}: wanted {says:?} in {err}");
    }
}
