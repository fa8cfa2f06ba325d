//! The smaller commands end to end: init, config, docs, stats, doctor,
//! eval retrieval, and how errors and exit codes look.

mod common;

use common::{Env, stderr};

#[test]
fn init_writes_a_config_that_parses_and_never_overwrites() {
    let env = Env::new();
    let v = env.json(&["init"]);
    assert_eq!(v["config_written"], true);
    assert!(env.config_file().exists() && env.database().exists());
    let text = std::fs::read_to_string(env.config_file()).unwrap();
    assert!(text.contains("# ") && text.contains("[workspace]") && text.contains("[search]"));
    std::fs::write(env.config_file(), "[search]\ndefault_k = 3\n").unwrap();
    let v = env.json(&["init"]);
    assert_eq!(v["config_written"], false);
    assert_eq!(std::fs::read_to_string(env.config_file()).unwrap(), "[search]\ndefault_k = 3\n");
    assert_eq!(env.json(&["config", "show"])["config"]["search"]["default_k"], 3);
}

#[test]
fn init_that_cannot_write_the_config_says_what_to_do() {
    // "cannot write …: Permission denied", exit 2 (a runtime failure) and no
    // hint, where a data dir that cannot be made is exit 1 with what to do.
    // /proc takes no new file, whoever runs this (root included).
    let env = Env::new();
    for config in ["/proc/kebab-test/config.toml", "/proc/kebab-test.toml"] {
        let out = env.run(&["--config", config, "init"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{config}: {err}");
        assert!(err.contains(&format!("cannot write the config file {config}")), "{err}");
        assert!(err.contains("hint: ") && err.contains("--config"), "{err}");
        let v: serde_json::Value = serde_json::from_slice(&env.run(&["--json", "--config", config, "init"]).stdout).unwrap();
        assert_eq!(v["code"], "config", "{v}");
    }
    assert!(!env.database().exists(), "nothing was made before the config was");
}

#[test]
fn unknown_config_key_names_the_key_and_the_file() {
    let env = Env::new();
    env.write("config/kebab/config.toml", "[search]\ndefault_kk = 3\n");
    let out = env.run(&["search", "x"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("default_kk") && err.contains("config.toml"), "{err}");
}

#[test]
fn flags_and_env_override_the_paths() {
    let env = Env::new();
    let custom = env.path("elsewhere/c.toml");
    let v = env.json(&["--config", custom.to_str().unwrap(), "config", "path"]);
    assert_eq!(v["config_file"], custom.to_str().unwrap());
    let out = env.cmd(&["--json", "config", "path"]).env("KEBAB_DATA_DIR", env.path("dd")).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["database"], env.path("dd/kebab.db").to_str().unwrap());
}

#[test]
fn config_path_json_prints_paths_that_are_not_utf8() {
    // As every other --json document prints such a path (stats' database,
    // models status' dir): readable, the stray byte shown as U+FFFD.
    use std::os::unix::ffi::OsStrExt;
    let env = Env::new();
    let data = env.path("").join(std::ffi::OsStr::from_bytes(b"d\xe9"));
    let out = env.cmd(&["--json", "config", "path"]).env("KEBAB_DATA_DIR", &data).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema_version"], "config_paths.v1", "{v}");
    assert!(v["database"].as_str().unwrap().ends_with("/d\u{FFFD}/kebab.db"), "{v}");
    assert!(v["data_dir"].as_str().unwrap().ends_with("/d\u{FFFD}"), "{v}");
}

#[test]
fn stats_and_docs_report_what_was_indexed() {
    let env = Env::new();
    env.write("notes/a.md", "---\ntitle: Front title\ntags: [x, y]\n---\n# Heading\n\nBody one.\n");
    env.write("notes/b.md", "# B\n\nBody two.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let s = env.json(&["stats"]);
    assert_eq!((s["documents"].as_i64(), s["sources"].as_i64()), (Some(2), Some(2)));
    assert_eq!(s["schema_level"], kebab::store::SCHEMA_LEVEL);
    assert!(s["database_bytes"].as_u64().unwrap() > 0);
    let d = env.json(&["docs", "--path-glob", "**/a.md"]);
    let docs = d["documents"].as_array().unwrap();
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0]["title"], "Front title");
    assert_eq!(docs[0]["tags"], serde_json::json!(["x", "y"]));
}

#[test]
fn one_document_and_one_chunk_are_counted_in_the_singular() {
    // `kebab docs` printed "1 chunks", stats "1 documents from 1 files" and
    // doctor "1 documents, 1 chunks".
    let env = Env::new();
    env.write("config/kebab/config.toml", "[embedding]\nprovider = \"none\"\n");
    env.write("notes/a.md", "# A\n\nOne short note.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let docs = env.ok(&["docs"]);
    assert!(docs.contains("\t1 chunk\t"), "{docs}");
    let stats = env.ok(&["stats"]);
    assert!(stats.contains("1 document from 1 file\n") && stats.contains("(1 document)"), "{stats}");
    let doctor = String::from_utf8_lossy(&env.run(&["doctor"]).stdout).into_owned();
    assert!(doctor.contains("1 document, 1 chunk"), "{doctor}");
    for text in [&docs, &stats, &doctor] {
        assert!(!text.contains("1 chunks") && !text.contains("1 documents") && !text.contains("1 files"), "{text}");
    }
    // Two still read as two.
    env.write("notes/b.md", "# B\n\nAnother note.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    assert!(env.ok(&["stats"]).contains("2 documents from 2 files\n"));
}

#[test]
fn doctor_passes_on_a_healthy_setup_and_explains_a_broken_config() {
    let env = Env::new();
    env.write("notes/a.md", "# A\n\nText.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let v = env.json(&["doctor"]);
    assert_eq!(v["ok"], true, "{v}");
    env.write("config/kebab/config.toml", "[search]\ndefault_k = \"many\"\n");
    let out = env.run(&["--json", "doctor"]);
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let config = v["checks"].as_array().unwrap().iter().find(|c| c["name"] == "config").unwrap();
    assert_eq!(config["status"], "fail");
    assert!(config["fix"].as_str().unwrap().contains("line 2"), "{config}");
}

#[test]
fn doctor_says_a_data_dir_does_not_exist_yet_and_does_not_create_it() {
    let env = Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n[embedding]\nprovider = \"none\"\n");
    let new = env.path("new");
    let v = env.json(&["--data-dir", new.to_str().unwrap(), "doctor"]);
    let data_dir = v["checks"].as_array().unwrap().iter().find(|c| c["name"] == "data dir").cloned().unwrap();
    assert_eq!(data_dir["status"], "warn", "{v}");
    assert!(data_dir["detail"].as_str().unwrap().contains("does not exist yet"), "{data_dir}");
    assert!(data_dir["fix"].as_str().unwrap().contains(&format!("kebab --data-dir {} ingest", new.display())), "{data_dir}");
    assert_eq!(v["ok"], true, "a folder not made yet is no failure: {v}");
    assert!(!new.exists(), "doctor created {}", new.display());
    // A file in the way is: the folder could never be made.
    let file = env.write("plain.txt", "not a folder");
    let out = env.run(&["--data-dir", file.join("kebab").to_str().unwrap(), "doctor"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stdout).contains("is a file, not a folder"), "{}", String::from_utf8_lossy(&out.stdout));
    // The data dir itself a file: a failed check among the others (the
    // model's too), not an error before any check (exit 1, config unchecked).
    let out = env.run(&["--json", "--data-dir", file.to_str().unwrap(), "doctor"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let checks = v["checks"].as_array().unwrap();
    let data_dir = checks.iter().find(|c| c["name"] == "data dir").cloned().unwrap_or_default();
    assert_eq!(data_dir["status"], "fail", "{v}");
    assert!(data_dir["detail"].as_str().unwrap().contains("is a file, not a folder"), "{v}");
    assert!(checks.iter().any(|c| c["name"] == "llm") && checks.iter().any(|c| c["name"] == "config"), "{v}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "not a folder");
}

#[test]
fn postings_left_stale_are_reported_searched_around_and_rebuilt_by_the_next_ingest() {
    let env = Env::new();
    env.write("notes/a.md", "# Tides\n\nThe moon pulls the oceans into tides.\n\n# Glaciers\n\nIce carves valleys slowly.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let hits = |env: &Env| env.json(&["search", "moon tides"])["hits"].clone();
    let before = hits(&env);
    assert!(!before.as_array().unwrap().is_empty());
    let postings = |env: &Env| {
        let v = env.json(&["doctor"]);
        v["checks"].as_array().unwrap().iter().find(|c| c["name"] == "postings").cloned()
    };
    assert_eq!(postings(&env), None);
    // As an ingest stopped between two batches leaves them.
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    conn.execute("INSERT INTO postings_stale(block) VALUES (0)", []).unwrap();
    drop(conn);
    let stale = postings(&env).expect("a postings check");
    assert_eq!(stale["status"], "warn", "{stale}");
    assert!(stale["fix"].as_str().unwrap().contains("kebab ingest"), "{stale}");
    assert_eq!(hits(&env), before, "FTS5 ranks the same meanwhile");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    assert_eq!(postings(&env), None);
    assert_eq!(hits(&env), before);
}

#[test]
fn a_database_from_a_newer_kebab_is_refused_untouched() {
    let env = Env::new();
    env.ok(&["init"]);
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    let out = env.run(&["--json", "stats"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["code"], "schema_too_new");
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    let level: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(level, 99);
}

/// A three-document BEIR set, ingested: q1 (test split) is judged right, q2
/// (dev split) wrong on purpose, q3 not at all. Returns (queries, qrels).
fn tides_set(env: &Env) -> (String, String) {
    env.write(
        "set/corpus.jsonl",
        "{\"_id\":\"d1\",\"title\":\"Tides\",\"text\":\"The moon pulls the oceans into tides.\"}\n\
         {\"_id\":\"d2\",\"title\":\"Volcanoes\",\"text\":\"Magma rises through the crust.\"}\n\
         {\"_id\":\"d3\",\"title\":\"Glaciers\",\"text\":\"Ice carves valleys slowly.\"}\n",
    );
    env.write(
        "set/queries.jsonl",
        "{\"_id\":\"q1\",\"text\":\"why are there tides\"}\n{\"_id\":\"q2\",\"text\":\"magma crust\"}\n{\"_id\":\"q3\",\"text\":\"unjudged\"}\n",
    );
    // q2's judged document is the wrong one on purpose: it must score zero.
    env.write("set/qrels.tsv", "query-id\tcorpus-id\tscore\r\nq1\td1\t1\r\nq2\td3\t1\r\n");
    env.ok(&["ingest", env.path("set/corpus.jsonl").to_str().unwrap()]);
    let path = |rel: &str| env.path(rel).to_str().unwrap().to_string();
    (path("set/queries.jsonl"), path("set/qrels.tsv"))
}

#[test]
fn eval_retrieval_scores_a_small_labelled_set() {
    let env = Env::new();
    let (q, r) = tides_set(&env);
    let v = env.json(&["eval", "retrieval", "--queries", &q, "--qrels", &r]);
    assert_eq!(v["queries"], 2);
    assert_eq!(v["ndcg_at_10"], 0.5);
    assert_eq!(v["mrr_at_10"], 0.5);
    let rows = v["per_query"].as_array().unwrap();
    assert_eq!(rows[0]["query_id"], "q1");
    assert_eq!(rows[0]["retrieved"][0], "d1");
    let human = env.ok(&["eval", "retrieval", "--queries", &q, "--qrels", &r]);
    assert!(human.contains("nDCG@10 0.5000") && human.contains("queries 2"), "{human}");
}

#[test]
fn eval_retrieval_scores_one_split_chosen_by_the_hash_of_the_query_id() {
    let env = Env::new();
    let (q, r) = tides_set(&env);
    // FNV-1a 64 of "q1" is odd (test), of "q2" even (dev).
    let run = |split: &str| env.json(&["eval", "retrieval", "--queries", &q, "--qrels", &r, "--split", split]);
    let test = run("test");
    assert_eq!((test["split"].as_str(), test["queries"].as_u64(), test["missing_queries"].as_u64()), (Some("test"), Some(1), Some(0)));
    assert_eq!(test["ndcg_at_10"], 1.0);
    let dev = run("dev");
    assert_eq!((dev["queries"].as_u64(), dev["per_query"][0]["query_id"].as_str()), (Some(1), Some("q2")));
    assert_eq!(dev["ndcg_at_10"], 0.0);
}

#[test]
fn eval_gate_and_attribution_on_an_empty_set_say_so_instead_of_scoring_nothing() {
    // An empty set (or a split with no question) printed 0.0% everywhere,
    // precision 1.000 over 0 sentences and a "fit on 0 dev examples", exit 0.
    let env = Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n[embedding]\nprovider = \"none\"\n");
    env.write("notes/tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let empty = env.write("empty.jsonl", "\n");
    let set = empty.to_str().unwrap();
    for (args, says) in [
        (vec!["eval", "gate", "--set", set], format!("no questions in {set}")),
        (vec!["eval", "gate", "--set", set, "--fit"], format!("no questions in {set}")),
        (vec!["eval", "gate", "--set", set, "--split", "test"], format!("no questions of that split in {set}")),
    ] {
        let out = env.run(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(&says) && err.contains("hint: "), "{args:?}: {err}");
        assert!(!err.contains("fit on 0"), "{args:?}: {err}");
    }
    env.write("att/evidence.jsonl", "");
    env.write("att/sentences.jsonl", "");
    let out = env.run(&["eval", "attribution", "--set", env.path("att").to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("no sentences in") && err.contains("sentences.jsonl"), "{err}");
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn a_set_line_with_a_blank_question_or_an_answerable_one_without_sources_is_named_not_scored() {
    // Each was asked and scored: a blank question as refused (an off-topic
    // success), an answerable question without sources as never citing one.
    let env = Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n[embedding]\nprovider = \"none\"\n");
    env.write("notes/tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let good = r#"{"id":"g1","question":"How long does green tea steep?","kind":"answerable","sources":["tea.md"]}"#;
    let blank = r#"{"id":"g2","question":"  ","kind":"off_topic"}"#;
    let unsourced = r#"{"id":"g3","question":"How long does green tea steep?","kind":"answerable"}"#;
    let turn = r#"{"id":"d1","turns":[{"question":"tea?","kind":"first"},{"question":"","kind":"followup"}]}"#;
    for (name, text, says) in [
        ("blank.jsonl", format!("{good}\n{blank}\n"), "blank.jsonl:2: question \"g2\" has an empty question"),
        ("unsourced.jsonl", format!("{good}\n\n{unsourced}\n"), "unsourced.jsonl:3: question \"g3\" is answerable but names no"),
        ("turns.jsonl", format!("{turn}\n"), "turns.jsonl:1: turn 2 of dialogue \"d1\" has an empty question"),
    ] {
        let file = env.write(name, text);
        let args = if name == "turns.jsonl" { vec!["eval", "dialogues"] } else { vec!["eval", "gate", "--set"] };
        let out = env.run(&[args, vec![file.to_str().unwrap()]].concat());
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains(says) && err.contains("hint: "), "{name}: {err}");
    }
}

#[test]
fn usage_errors_exit_1_and_help_exits_0() {
    let env = Env::new();
    assert_eq!(env.run(&["frobnicate"]).status.code(), Some(1));
    assert_eq!(env.run(&["search"]).status.code(), Some(1));
    assert_eq!(env.run(&["--help"]).status.code(), Some(0));
}

#[test]
fn a_closed_pipe_ends_quietly_with_exit_0() {
    use std::io::Read;
    let env = Env::new();
    for i in 0..300 {
        env.write(&format!("notes/n{i:03}.md"), format!("# Note {i}\n\nText {i}.\n"));
    }
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let mut child = env.cmd(&["docs"]).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut buf = [0u8; 16];
    stdout.read_exact(&mut buf).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
}

#[test]
fn a_count_of_zero_is_a_clear_error_in_ask_search_and_session_search() {
    // `ask -k 0` ran silently with k = 1 and `sessions search -n 0` said no
    // turn matched, where `search -k 0` was already refused.
    let env = Env::new();
    env.write("notes/tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    for (args, says) in [
        (&["ask", "-k", "0", "how long does green tea steep?"][..], "-k must be at least 1"),
        (&["search", "-k", "0", "tea"][..], "-k must be at least 1"),
        (&["sessions", "search", "tea", "-n", "0"][..], "-n must be at least 1"),
    ] {
        let out = env.run(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn a_negative_count_gets_the_same_hinted_error_as_zero() {
    // `search -k -1` got clap's "unexpected argument '-1' found" with a tip
    // to write `-- -1`, where `-k 0` says what -k takes and how to leave it out.
    let env = Env::new();
    env.write("notes/tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    for (args, says, hint) in [
        (&["search", "-k", "-1", "tea"][..], "-k must be at least 1", "search.default_k"),
        (&["search", "-k-3", "tea"][..], "-k must be at least 1", "search.default_k"),
        (&["ask", "-k", "-1", "how long does green tea steep?"][..], "-k must be at least 1", "search.default_k"),
        (&["sessions", "search", "tea", "-n", "-2"][..], "-n must be at least 1", "-n"),
    ] {
        let out = env.run(args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(says) && err.contains("hint:") && err.contains(hint), "{args:?}: {err}");
        assert!(!err.contains("unexpected argument"), "{args:?}: {err}");
        let mut json = vec!["--json"];
        json.extend_from_slice(args);
        let v: serde_json::Value = serde_json::from_slice(&env.run(&json).stdout).unwrap();
        assert_eq!(v["code"], "bad_input", "{args:?}: {v}");
    }
}

#[test]
fn a_k_beyond_ten_thousand_is_a_clear_error_not_an_abort() {
    // `search -k 99999999999` aborted the process ("memory allocation of
    // 1600000000000 bytes failed", exit 134, no JSON): the ranking reserves room
    // for k hits. -k takes what search.default_k may be set to, 1 to 10000.
    let env = Env::new();
    env.write("notes/tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    // Past a signed 64-bit number clap said 'number too large to fit in target type'.
    let past = "99999999999999999999";
    for args in [
        &["search", "-k", "99999999999", "tea"][..],
        &["ask", "-k", "99999999999", "how long does green tea steep?"][..],
        &["eval", "retrieval", "--queries", "q.jsonl", "--qrels", "r.tsv", "-k", "99999999999"][..],
        &["search", "-k", past, "tea"][..],
        &["ask", "-k", past, "how long does green tea steep?"][..],
        &["eval", "retrieval", "--queries", "q.jsonl", "--qrels", "r.tsv", "-k", past][..],
    ] {
        let out = env.run(args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("-k must be at most 10000") && err.contains("hint:"), "{args:?}: {err}");
        let mut json = vec!["--json"];
        json.extend_from_slice(args);
        let v: serde_json::Value = serde_json::from_slice(&env.run(&json).stdout).unwrap();
        assert_eq!(v["code"], "bad_input", "{args:?}: {v}");
    }
    // The bound itself is taken.
    assert_eq!(env.json(&["search", "-k", "10000", "tea"])["hits"][0]["doc_path"], "notes/tea.md");
}

#[test]
fn a_negative_temperature_turn_limit_or_eval_k_says_what_the_option_takes() {
    // `ask --temperature -1`, `sessions fork --at -1`, `eval answers --limit -1`
    // and `eval retrieval -k -1` got clap's "unexpected argument '-1' found"
    // with a tip to write `-- -1`, which made -1 the question (or failed again).
    let env = Env::new();
    env.write("notes/tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    env.ok(&["ask", "--session", "tea", "how long does green tea steep?"]);
    for (args, says) in [
        (&["ask", "--temperature", "-1", "how long does green tea steep?"][..], "--temperature -1 is out of range 0–2"),
        (&["ask", "--seed", "-1", "how long does green tea steep?"][..], "'-1' for '--seed"),
        (&["sessions", "fork", "tea", "tea2", "--at", "-1"][..], "session \"tea\" has no turn -1"),
        (&["eval", "answers", "--queries", "q.jsonl", "--answers", "a.jsonl", "--limit", "-1"][..], "--limit must be at least 1"),
        (&["eval", "retrieval", "--queries", "q.jsonl", "--qrels", "r.tsv", "-k", "-1"][..], "-k must be at least 1"),
        (&["eval", "retrieval", "--queries", "q.jsonl", "--qrels", "r.tsv", "--rrf-k", "-1"][..], "--rrf-k -1 is out of range"),
    ] {
        let out = env.run(args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("unexpected argument") && !err.contains("-- -1"), "{args:?}: {err}");
    }
}

#[test]
fn a_usage_error_in_json_names_the_argument_and_the_value() {
    let env = Env::new();
    let out = env.run(&["--json", "search", "foo", "-k", "abc"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema_version"], "error.v1");
    assert_eq!(v["code"], "usage");
    let message = v["message"].as_str().unwrap();
    assert!(message.contains("'abc'") && message.contains("-k"), "{v}");
    let out = env.run(&["--json", "search", "foo", "--mode", "bogus"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["message"].as_str().unwrap().contains("'bogus'"), "{v}");
    assert!(v["message"].as_str().unwrap().contains("lexical, vector, hybrid"), "{v}");
    let out = env.run(&["--json", "serch", "foo"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["message"].as_str().unwrap().contains("'serch'"), "{v}");
    assert!(v["hint"].as_str().unwrap().contains("'search'"), "{v}");
    let out = env.run(&["--json", "search"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["message"].as_str().unwrap().contains("<QUERY>"), "{v}");
}

#[test]
fn a_usage_error_in_json_points_at_the_help_of_the_command_refused() {
    // The hint was `run kebab --help` for every command, whose help lists no option of `kebab search`.
    let env = Env::new();
    for (args, help, shows) in [
        (&["ask", "--bogus"][..], "kebab ask --help", "--session"),
        (&["search", "tea", "--mode", "bogus"][..], "kebab search --help", "--mode"),
        (&["sessions", "show"][..], "kebab sessions show --help", "<NAME>"),
        (&["--bogus"][..], "kebab --help", "Commands:"),
    ] {
        let out = env.cmd(&[&["--json"][..], args].concat()).output().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(v["hint"].as_str().unwrap().ends_with(&format!("run `{help}`")), "{args:?}: {v}");
        // The help named shows what the command refused takes.
        let shown = env.ok(&help.split(' ').skip(1).collect::<Vec<_>>());
        assert!(shown.contains(shows), "{help}: {shown}");
    }
}

#[test]
fn kebab_variables_set_but_empty_count_as_unset() {
    let env = Env::new();
    let out = env
        .cmd(&["--json", "config", "path"])
        .env("KEBAB_CONFIG", "")
        .env("KEBAB_DATA_DIR", "")
        .env("KEBAB_READONLY", "")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["config_file"], env.config_file().to_str().unwrap());
    assert_eq!(v["database"], env.database().to_str().unwrap());
    // Not read-only: a write goes through.
    env.write("notes/a.md", "# A\n\nAnything.\n");
    let out = env.cmd(&["ingest", env.notes().to_str().unwrap()]).env("KEBAB_READONLY", "").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn the_repl_with_json_is_refused_as_json_not_answered_as_text() {
    let env = Env::new();
    let (code, out, err) = common::repl(&env, &["--json", "--repl"], "What is anything?\n");
    assert_eq!(code, 1, "{out}\n{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"));
    assert_eq!((v["schema_version"].as_str(), v["code"].as_str()), (Some("error.v1"), Some("usage")), "{v}");
    assert!(v["hint"].as_str().unwrap().contains("kebab --json ask --session"), "{v}");
}

#[test]
fn a_bad_count_temperature_or_empty_question_says_what_to_do() {
    let env = Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n[embedding]\nprovider = \"none\"\n");
    env.write("notes/tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let qrels = env.write("qrels.tsv", "query-id\tcorpus-id\tscore\n");
    let queries = env.write("queries.jsonl", "");
    for (args, hint) in [
        (&["ask", "-k", "0", "how long does green tea steep?"][..], "leave -k out"),
        (&["search", "-k", "0", "tea"][..], "leave -k out"),
        (&["sessions", "search", "tea", "-n", "0"][..], "leave -n out"),
        (&["ask", "--temperature", "5", "how long does green tea steep?"][..], "between 0 and 2"),
        (&["ask", "   "][..], "ask a question"),
        (
            &["eval", "retrieval", "-k", "0", "--queries", queries.to_str().unwrap(), "--qrels", qrels.to_str().unwrap()][..],
            "leave -k out",
        ),
    ] {
        let out = env.run(&[&["--json"][..], args].concat());
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(doc["hint"].as_str().unwrap_or_default().contains(hint), "{args:?}: {doc}");
    }
}

#[test]
fn docs_with_a_glob_that_matches_nothing_says_so_not_that_nothing_is_indexed() {
    let env = Env::new();
    env.write("notes/tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let out = env.run(&["docs", "--path-glob", "tea/*"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("no document path matches \"tea/*\"") && err.contains("notes/tea.md"), "{err}");
    assert!(!err.contains("kebab ingest"), "{err}");
    let out = env.run(&["--json", "docs", "--path-glob", "["]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["hint"].as_str().unwrap_or_default().contains("notes/**/*.md"), "{doc}");
}

#[test]
fn docs_with_a_glob_naming_a_folder_says_to_add_the_files_under_it() {
    // 'notes' and 'notes/' match no path; the notice said a glob starts with
    // the root's name, which this one did.
    let env = Env::new();
    env.write("notes/tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    for glob in ["notes", "notes/"] {
        let out = env.run(&["docs", "--path-glob", glob]);
        let err = stderr(&out);
        assert!(err.contains("notes is a folder: 'notes/**' matches the documents under it"), "{glob}: {err}");
        assert!(!err.contains("so a glob starts with the root's name"), "{glob}: {err}");
    }
    assert!(env.ok(&["docs", "--path-glob", "notes/**"]).contains("notes/tea.md"));
}

#[test]
fn docs_path_glob_on_a_file_name_matches_the_records_of_a_jsonl_file() {
    // Each JSONL record is a document `notes/terms.jsonl#ID`; `--path-glob '**/*.jsonl'`
    // matched none of them and said paths look like notes/…, as if the glob were wrong.
    let env = Env::new();
    env.write("notes/terms.jsonl", "{\"_id\": \"t1\", \"title\": \"Tea\", \"text\": \"Green tea steeps briefly.\"}\n");
    env.write("notes/tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    for glob in ["**/*.jsonl", "notes/terms.jsonl", "**/terms.jsonl#t*"] {
        let d = env.json(&["docs", "--path-glob", glob]);
        let paths: Vec<&str> = d["documents"].as_array().unwrap().iter().map(|d| d["path"].as_str().unwrap()).collect();
        assert_eq!(paths, ["notes/terms.jsonl#t1"], "{glob}");
    }
}

#[test]
fn the_repl_with_json_is_refused_before_it_reads_its_input() {
    // More input than a pipe holds: the refusal exits without reading it, so
    // writing it meets a closed pipe, which the helper failed on (and, with
    // a short input, did now and then when kebab exited first).
    let env = Env::new();
    let (code, out, err) = common::repl(&env, &["--json", "--repl"], &"What is anything?\n".repeat(20_000));
    assert_eq!(code, 1, "{out}\n{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"));
    assert_eq!(v["code"], "usage", "{v}");
}
