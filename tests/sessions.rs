//! Sessions from the command line: `ask --session` appending turns,
//! `sessions list | show | export | rm | rename`, read-only behaviour, and
//! several processes writing one database at once.

mod common;

use std::io::Write;
use std::process::Stdio;

use common::{builtin_notes_env, repl, research_env, stderr};

#[test]
fn ask_session_appends_turns_that_show_lists_with_their_citations() {
    let env = research_env();
    let first = env.json(&["ask", "--session", "work", "How did you count varroa mites?"]);
    assert_eq!(first["turn_index"], 0);
    let second = env.json(&["ask", "--session", "work", "How long does that take?"]);
    assert_eq!(second["turn_index"], 1);
    assert_eq!(first["conversation_id"], second["conversation_id"]);
    // The follow-up searched with its question and the start of the first answer.
    let query = second["retrieval"]["retrieval_query"].as_str().unwrap();
    let first_words: String = first["answer"].as_str().unwrap().split('"').nth(1).unwrap().chars().take(25).collect();
    assert!(query.starts_with("How long does that take? ") && query.contains(&first_words), "{query}");

    let doc = env.json(&["sessions", "show", "work"]);
    assert_eq!(doc["schema_version"], "session.v1");
    assert_eq!(doc["name"], "work");
    let turns = doc["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2);
    for (i, (turn, asked)) in turns.iter().zip([&first, &second]).enumerate() {
        assert_eq!(turn["turn_index"], i);
        assert_eq!(turn["answer"]["schema_version"], "answer.v1");
        assert_eq!(turn["answer"]["answer"], asked["answer"]);
        assert_eq!(turn["answer"]["citations"], asked["citations"], "turn {i}");
        assert!(!turn["answer"]["citations"].as_array().unwrap().is_empty(), "turn {i} cites nothing");
    }
}

#[test]
fn renaming_a_session_to_its_own_name_does_not_hint_at_removing_it() {
    // `sessions rename draft draft` said "a session named \"draft\" already
    // exists" with a hint to remove that session first: the one being renamed.
    let env = research_env();
    env.ok(&["ask", "--session", "draft", "How did you count varroa mites?"]);
    let out = env.run(&["sessions", "rename", "draft", "draft"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("session \"draft\" is already called \"draft\""), "{err}");
    assert!(err.contains("hint: give the new name second") && !err.contains("sessions rm"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&env.run(&["--json", "sessions", "rename", "draft", "draft"]).stdout).unwrap();
    assert_eq!(v["code"], "bad_input", "{v}");
    assert_eq!(env.json(&["sessions", "show", "draft"])["turns"].as_array().unwrap().len(), 1);
}

#[test]
fn a_single_shot_answer_has_no_conversation_fields() {
    let env = research_env();
    let a = env.json(&["ask", "How did you count varroa mites?"]);
    assert!(a.get("conversation_id").is_none() && a.get("turn_index").is_none(), "{a}");
    assert_eq!(env.json(&["sessions", "list"])["sessions"].as_array().unwrap().len(), 0);
}

#[test]
fn sessions_can_be_listed_renamed_exported_and_removed() {
    let env = research_env();
    env.ok(&["ask", "--session", "draft", "How did you count varroa mites?"]);
    env.ok(&["ask", "--session", "other", "What did the Wexmoor hives average in 2024?"]);
    let list = env.ok(&["sessions", "list"]);
    assert!(list.lines().any(|l| l.starts_with("draft\t1 turn\t")), "{list}");

    env.ok(&["sessions", "rename", "draft", "mites"]);
    let renamed = env.run(&["sessions", "show", "draft"]);
    assert_eq!(renamed.status.code(), Some(1));
    assert!(stderr(&renamed).contains("no session named \"draft\""), "{}", stderr(&renamed));
    let clash = env.run(&["sessions", "rename", "mites", "other"]);
    assert_eq!(clash.status.code(), Some(1));

    let md = env.ok(&["sessions", "export", "mites"]);
    assert!(md.starts_with("# Session mites\n"), "{md}");
    assert!(md.contains("## 1. How did you count varroa mites?"), "{md}");
    let footnote = regex::Regex::new(r"(?m)^\[\^1-\d+\]: `research/hives/varroa\.md` lines \d+–\d+ · ").unwrap();
    assert!(footnote.is_match(&md), "{md}");
    let json: serde_json::Value = serde_json::from_str(&env.ok(&["sessions", "export", "mites", "--format", "json"])).unwrap();
    assert_eq!(json["turns"][0]["question"], "How did you count varroa mites?");

    env.ok(&["sessions", "rm", "mites"]);
    let names: Vec<String> = env.json(&["sessions", "list"])["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["other"]);
    // Its turns and their answers went with it; the other session's stayed.
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    let answers: i64 = conn.query_row("SELECT count(*) FROM answers WHERE conversation_id IS NOT NULL", [], |r| r.get(0)).unwrap();
    assert_eq!(answers, 1);
}

#[test]
fn sessions_delete_removes_a_session_as_rm_does_and_help_names_it() {
    // `sessions delete NAME` was "unrecognized subcommand 'delete'", the word
    // most people try first for what `rm` does.
    let env = research_env();
    env.ok(&["ask", "--session", "draft", "How did you count varroa mites?"]);
    let removed = env.json(&["sessions", "delete", "draft"]);
    assert_eq!((&removed["action"], &removed["name"], &removed["turns"]), (&"removed".into(), &"draft".into(), &1.into()), "{removed}");
    assert_eq!(env.run(&["sessions", "show", "draft"]).status.code(), Some(1));
    let help = env.ok(&["sessions", "--help"]);
    assert!(help.lines().any(|l| l.trim_start().starts_with("rm ") && l.contains("delete")), "{help}");
}

#[test]
fn an_export_to_a_file_that_cannot_be_written_is_bad_input_naming_it() {
    let env = research_env();
    env.ok(&["ask", "--session", "draft", "How did you count varroa mites?"]);
    let folder = env.path("");
    for target in [folder.join("no/such/dir/out.md"), folder.clone()] {
        let out = env.run(&["--json", "sessions", "export", "draft", "-o", target.to_str().unwrap()]);
        // The user's path is wrong, not kebab: exit 1, as for every bad path.
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["code"], "bad_input", "{doc}");
        assert!(doc["message"].as_str().unwrap().contains(target.to_str().unwrap()), "{doc}");
        assert!(doc["hint"].as_str().unwrap().contains("-o"), "{doc}");
    }
}

#[test]
fn bad_session_names_are_refused_before_anything_is_written() {
    let env = research_env();
    let out = env.run(&["ask", "--session", "two words", "How did you count varroa mites?"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("is not a usable session name"), "{}", stderr(&out));
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    let answers: i64 = conn.query_row("SELECT count(*) FROM answers", [], |r| r.get(0)).unwrap();
    assert_eq!(answers, 0);
}

#[test]
fn a_question_too_long_to_ask_leaves_no_session_behind() {
    // A paste gone wrong: refused before the session is created, from the
    // command line and from the REPL (both used to leave an empty one).
    let env = research_env();
    let long = "varroa ".repeat(6_000);
    let out = env.run(&["ask", "--session", "paste", &long]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("the question is too long"), "{}", stderr(&out));
    let (_, out, err) = repl(&env, &["--repl", "--session", "pasted"], &format!("{long}\n"));
    assert!(out.contains("the question is too long") || err.contains("the question is too long"), "{err}");
    assert_eq!(env.json(&["sessions", "list"])["sessions"].as_array().unwrap().len(), 0);
}

#[test]
fn read_only_asks_in_a_session_create_and_save_nothing() {
    let env = research_env();
    let out = env.run(&["--readonly", "ask", "--session", "ro", "How did you count varroa mites?"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("read-only: this turn was not saved to session ro"), "{}", stderr(&out));
    assert_eq!(env.json(&["sessions", "list"])["sessions"].as_array().unwrap().len(), 0);
}

#[test]
fn a_repl_an_ingest_and_parallel_session_asks_share_one_database() {
    let env = research_env();
    // Enough notes that the ingest holds the write lock in many batches.
    for i in 0..300 {
        env.write(&format!("bulk/n{i:03}.md"), format!("# Note {i}\n\n{}\n", "Bees forage on lime and clover. ".repeat(60)));
    }
    let bulk = env.path("bulk");
    let ingest = env.cmd(&["ingest", bulk.to_str().unwrap()]).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let mut repl = common::spawn_piped(&mut env.cmd(&["--repl", "--session", "desk"]));
    let mut stdin = repl.stdin.take().unwrap();
    let asks: Vec<_> = (0..4)
        .map(|i| {
            let q = ["How did you count varroa mites?", "How long does that take?", "What about in winter?", "Why?"][i];
            env.cmd(&["ask", "--session", "shared", q]).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap()
        })
        .collect();
    for q in ["How did you count varroa mites?", "What did the Wexmoor hives average in 2024?", ":history"] {
        writeln!(stdin, "{q}").unwrap();
    }
    drop(stdin);
    let mut errors = String::new();
    for child in asks {
        let out = child.wait_with_output().unwrap();
        errors.push_str(&String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "a process failed: {errors}");
    }
    let ingest_out = ingest.wait_with_output().unwrap();
    assert!(ingest_out.status.success(), "{}", String::from_utf8_lossy(&ingest_out.stderr));
    let repl_out = repl.wait_with_output().unwrap();
    assert!(repl_out.status.success());
    let all = format!("{errors}{}{}", String::from_utf8_lossy(&ingest_out.stderr), String::from_utf8_lossy(&repl_out.stderr));
    assert!(!all.contains("locked"), "{all}");
    assert!(String::from_utf8_lossy(&repl_out.stdout).contains("  2. What did the Wexmoor hives average in 2024?"));

    // No turn lost, no index taken twice.
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    let mut stmt = conn
        .prepare("SELECT t.turn_index FROM turns t JOIN conversations c ON c.id = t.conversation_id WHERE c.name = 'shared' ORDER BY 1")
        .unwrap();
    let indexes: Vec<i64> = stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
    assert_eq!(indexes, [0, 1, 2, 3]);
    let ok: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(ok, "ok");
}

/// The answer ids of a session's turns, in turn order.
fn answer_ids(conn: &rusqlite::Connection, session: &str) -> Vec<i64> {
    let mut stmt = conn
        .prepare("SELECT t.answer_id FROM turns t JOIN conversations c ON c.id = t.conversation_id WHERE c.name = ?1 ORDER BY t.turn_index")
        .unwrap();
    stmt.query_map([session], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

#[test]
fn a_fork_points_at_the_same_answers_is_marked_and_goes_on_by_itself() {
    let env = research_env();
    for q in ["How did you count varroa mites?", "How long does that take?", "What about in winter?"] {
        env.ok(&["ask", "--session", "work", q]);
    }
    let forked = env.run(&["sessions", "fork", "work", "alt", "--at", "2"]);
    assert!(forked.status.success(), "{}", stderr(&forked));
    assert!(stderr(&forked).contains("forked 2 turns of work into alt"), "{}", stderr(&forked));

    // Same answer rows, nothing asked again or copied.
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    let work = answer_ids(&conn, "work");
    assert_eq!(answer_ids(&conn, "alt"), work[..2]);
    let answers: i64 = conn.query_row("SELECT count(*) FROM answers", [], |r| r.get(0)).unwrap();
    assert_eq!(answers, 3);

    let doc = env.json(&["sessions", "show", "alt"]);
    let turns = doc["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2);
    for (i, t) in turns.iter().enumerate() {
        assert_eq!(t["forked_from"], serde_json::json!({"session": "work", "turn_index": i}), "{t}");
    }
    let original = env.json(&["sessions", "show", "work"]);
    assert!(original["turns"].as_array().unwrap().iter().all(|t| t.get("forked_from").is_none()), "{original}");
    let shown = env.ok(&["sessions", "show", "alt"]);
    assert!(shown.contains("[1] How did you count varroa mites? · forked from work turn 1"), "{shown}");

    // The fork goes on with its own history: its next turn follows turn 2.
    let next = env.json(&["ask", "--session", "alt", "What about in winter?"]);
    assert_eq!(next["turn_index"], 2);
    assert_eq!(answer_ids(&conn, "work").len(), 3, "the original changed");

    // Removing the original keeps the fork's turns whole; removing the fork
    // then leaves no answer behind.
    env.ok(&["sessions", "rm", "work"]);
    let doc = env.json(&["sessions", "show", "alt"]);
    assert_eq!(doc["turns"].as_array().unwrap().len(), 3);
    assert_eq!(doc["turns"][0]["forked_from"], serde_json::json!({"session": null, "turn_index": 0}));
    assert_eq!(doc["turns"][1]["answer"]["answer"], turns[1]["answer"]["answer"]);
    env.ok(&["sessions", "rm", "alt"]);
    let answers: i64 = conn.query_row("SELECT count(*) FROM answers", [], |r| r.get(0)).unwrap();
    assert_eq!(answers, 0);
    let fk: Option<i64> = conn.query_row("PRAGMA foreign_key_check", [], |r| r.get(2)).ok();
    assert_eq!(fk, None);
}

#[test]
fn a_fork_refuses_a_taken_name_a_missing_turn_a_missing_session_and_readonly() {
    let env = research_env();
    env.ok(&["ask", "--session", "work", "How did you count varroa mites?"]);
    env.ok(&["ask", "--session", "other", "What did the Wexmoor hives average in 2024?"]);
    for (args, message) in [
        (vec!["sessions", "fork", "work", "other"], "a session named \"other\" already exists"),
        (vec!["sessions", "fork", "work", "alt", "--at", "2"], "session \"work\" has no turn 2"),
        (vec!["sessions", "fork", "work", "alt", "--at", "0"], "session \"work\" has no turn 0"),
        (vec!["sessions", "fork", "nope", "alt"], "there is no session named \"nope\""),
        (vec!["sessions", "fork", "work", "two words"], "is not a usable session name"),
        (vec!["--readonly", "sessions", "fork", "work", "alt"], "forking a session writes to the database"),
    ] {
        let out = env.run(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
    }
    let names: Vec<String> =
        env.json(&["sessions", "list"])["sessions"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap().into()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn sessions_search_finds_past_questions_and_answers_with_a_snippet() {
    let env = research_env();
    env.ok(&["ask", "--session", "mites", "How did you count varroa mites?"]);
    env.ok(&["ask", "--session", "honey", "What did the Wexmoor hives average in 2024?"]);

    // A word only the first answer holds finds that turn, with the word marked.
    let doc = env.json(&["sessions", "search", "alcohol", "wash"]);
    assert_eq!(doc["schema_version"], "session_search.v1");
    let hits = doc["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 1, "{doc}");
    assert_eq!(hits[0]["session"], "mites");
    assert_eq!(hits[0]["turn_index"], 0);
    assert_eq!(hits[0]["question"], "How did you count varroa mites?");
    assert!(hits[0]["snippet"].as_str().unwrap().contains("«alcohol» «wash»"), "{doc}");

    // A question's words find it; the human form is `session · turn · question`.
    let text = env.ok(&["sessions", "search", "Wexmoor"]);
    assert!(text.starts_with("honey · 1 · What did the Wexmoor hives average in 2024?\n    "), "{text}");

    // FTS5 syntax in the query is searched as words, never an error.
    for hostile in [r#"wash" OR"#, "NEAR(alcohol wash", "alcohol AND NOT -wash*", "col:wash ^x"] {
        let out = env.run(&["--json", "sessions", "search", hostile]);
        assert!(out.status.success(), "{hostile}: {}", stderr(&out));
    }
    let nothing = env.run(&["sessions", "search", "***"]);
    assert_eq!(nothing.status.code(), Some(1));
    assert!(stderr(&nothing).contains("nothing to search for"), "{}", stderr(&nothing));
    let none = env.run(&["sessions", "search", "zebra"]);
    assert!(none.status.success() && none.stdout.is_empty());
    assert!(stderr(&none).contains("no past turn matches \"zebra\""), "{}", stderr(&none));
}

#[test]
fn an_answers_line_break_in_a_found_snippet_prints_as_a_space() {
    let env = builtin_notes_env(&[("s.md", "# Sourdough\n\n## Hydration\nMy starter runs at 100% hydration. Hydration is water over flour.\n")]);
    // The built-in model quotes the two sentences on two lines.
    env.ok(&["ask", "--session", "h1", "What hydration does my starter run at?"]);
    // The two quotes joined by one space, on the snippet's one line.
    let joined = "«hydration».\" [#1] \"«Hydration» is water over flour.";
    let text = env.ok(&["sessions", "search", "hydration"]);
    let line = text.lines().nth(1).unwrap_or_default();
    assert!(line.starts_with("    \"My starter") && line.contains(joined) && !line.contains("\\n"), "{text}");
    let (code, out, err) = repl(&env, &["repl", "--session", "h1"], ":find hydration\n");
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().any(|l| l.contains(joined)) && !out.contains("\\n"), "{out}");
    // JSON keeps the answer's own newline.
    let doc = env.json(&["sessions", "search", "hydration"]);
    assert!(doc["hits"][0]["snippet"].as_str().unwrap().contains(".\" [#1]\n\"«Hydration»"), "{doc}");
}

#[test]
fn a_repl_whose_session_another_process_removed_starts_it_again_with_the_next_question() {
    let env = research_env();
    let (repl, mut stdin) = repl_with_one_turn(&env);
    env.ok(&["sessions", "rm", "desk"]);
    writeln!(stdin, "How long does one alcohol wash take?").unwrap();
    writeln!(stdin, ":history").unwrap();
    drop(stdin);
    let out = repl.wait_with_output().unwrap();
    let (stdout, err) = (String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(out.status.success(), "{stdout}\n{err}");
    assert!(!stdout.contains("error:") && !stdout.contains("FOREIGN KEY"), "{stdout}");
    assert!(err.contains("session desk was removed by another process"), "{err}");
    assert!(stdout.contains("  1. How long does one alcohol wash take?"), "{stdout}");
    let v = env.json(&["sessions", "show", "desk"]);
    let turns = v["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 1, "{v}");
    assert_eq!(turns[0]["question"], "How long does one alcohol wash take?");
}

#[test]
fn renaming_onto_a_taken_name_is_refused_with_what_to_do_and_both_sessions_stay() {
    let env = research_env();
    env.ok(&["ask", "--session", "draft", "How did you count varroa mites?"]);
    env.ok(&["ask", "--session", "other", "What did the Wexmoor hives average in 2024?"]);
    let out = env.run(&["--json", "sessions", "rename", "draft", "other"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["code"], "exists");
    assert!(v["hint"].as_str().unwrap_or_default().contains("kebab sessions rm other"), "{v}");
    for (name, question) in [("draft", "How did you count varroa mites?"), ("other", "What did the Wexmoor hives average in 2024?")] {
        let v = env.json(&["sessions", "show", name]);
        assert_eq!(v["turns"][0]["question"], question, "{v}");
    }
}

#[test]
fn export_to_a_dash_prints_to_stdout_and_writes_no_file_named_dash() {
    // `sessions export draft -o -` wrote a file named `-` in the working
    // folder ("exported 1 turn to -") where stdout was meant.
    let env = research_env();
    env.ok(&["ask", "--session", "draft", "How did you count varroa mites?"]);
    let cwd = env.path("cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    let out = env.cmd(&["sessions", "export", "draft", "-o", "-"]).current_dir(&cwd).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("# Session draft\n"), "{}", String::from_utf8_lossy(&out.stdout));
    let out = env.cmd(&["--json", "sessions", "export", "draft", "-o", "-"]).current_dir(&cwd).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema_version"], "session.v1", "{v}");
    assert!(!cwd.join("-").exists(), "a file named - was written");
}

#[test]
fn showing_a_session_with_no_turns_says_it_has_none_yet() {
    // `:session new empty` makes a session with no turns; `sessions show
    // empty` printed nothing at all, as if the command had not run.
    let env = research_env();
    let (code, _, err) = repl(&env, &["repl"], ":session new empty\n");
    assert_eq!(code, 0, "{err}");
    let out = env.run(&["sessions", "show", "empty"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("session \"empty\" has no turns yet"), "{err}");
    assert!(err.contains("kebab --repl --session empty"), "{err}");
    // --json keeps its one document, turns and all.
    let v = env.json(&["sessions", "show", "empty"]);
    assert_eq!((v["schema_version"].as_str(), v["name"].as_str()), (Some("session.v1"), Some("empty")), "{v}");
    assert_eq!(v["turns"].as_array().map(Vec::len), Some(0), "{v}");
}

#[test]
fn exporting_a_session_with_no_turns_says_so_and_writes_no_file() {
    // `sessions export empty -o FILE` of a session `:session new empty` made
    // wrote a Markdown file of "0 turns" (exit 0), where the REPL's
    // `:session export` says there is nothing to export.
    let env = research_env();
    let (code, _, err) = repl(&env, &["repl"], ":session new empty\n");
    assert_eq!(code, 0, "{err}");
    let file = env.path("empty.md");
    for args in [vec!["sessions", "export", "empty", "-o", file.to_str().unwrap()], vec!["sessions", "export", "empty"]] {
        let out = env.run(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("nothing to export: session \"empty\" has no turns yet"), "{args:?}: {err}");
        assert!(err.contains("kebab --repl --session empty"), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&out.stdout));
    }
    assert!(!file.exists(), "an export of 0 turns was written");
    let v: serde_json::Value = serde_json::from_slice(&env.run(&["--json", "sessions", "export", "empty"]).stdout).unwrap();
    assert_eq!((v["schema_version"].as_str(), v["code"].as_str()), (Some("error.v1"), Some("bad_input")), "{v}");
}

#[test]
fn sessions_rm_rename_and_export_to_a_file_print_one_json_document_with_json() {
    let env = research_env();
    env.ok(&["ask", "--session", "draft", "How did you count varroa mites?"]);
    let v = env.json(&["sessions", "rename", "draft", "mites"]);
    assert_eq!(v["schema_version"], "session_change.v1", "{v}");
    assert_eq!((v["action"].as_str(), v["name"].as_str(), v["from"].as_str()), (Some("renamed"), Some("mites"), Some("draft")));
    assert_eq!(v["turns"], 1);
    let file = env.path("mites.md");
    let v = env.json(&["sessions", "export", "mites", "-o", file.to_str().unwrap()]);
    assert_eq!((v["action"].as_str(), v["path"].as_str()), (Some("exported"), file.to_str()), "{v}");
    assert!(std::fs::read_to_string(&file).unwrap().starts_with("# Session mites\n"));
    let v = env.json(&["sessions", "rm", "mites"]);
    assert_eq!((v["action"].as_str(), v["name"].as_str(), v["turns"].as_i64()), (Some("removed"), Some("mites"), Some(1)), "{v}");
}

#[test]
fn json_sessions_export_without_format_prints_the_session_as_json() {
    let env = research_env();
    env.ok(&["ask", "--session", "draft", "How did you count varroa mites?"]);
    // `--json` promises one JSON document on stdout: the session.v1 export form.
    let v = env.json(&["sessions", "export", "draft"]);
    assert_eq!((v["schema_version"].as_str(), v["name"].as_str()), (Some("session.v1"), Some("draft")), "{v}");
    assert_eq!(v["turns"][0]["question"], "How did you count varroa mites?");
    // An explicit --format still wins.
    let md = env.ok(&["--json", "sessions", "export", "draft", "--format", "md"]);
    assert!(md.starts_with("# Session draft\n"), "{md}");
}

#[test]
fn a_source_whose_note_was_deleted_says_deleted_not_changed() {
    // After the cited note was deleted (and pruned), `sessions show` and the
    // export called its source "(changed since)", as if it had been edited.
    let env = common::Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n[embedding]\nprovider = \"none\"\n");
    env.write("notes/bees.md", "# Bees\n\nI counted varroa mites with an alcohol wash of 300 bees.\n");
    env.write("notes/bread.md", "# Bread\n\nMy sourdough starter runs at 100% hydration.\n");
    let notes = env.notes();
    env.ok(&["ingest", notes.to_str().unwrap()]);
    env.ok(&["ask", "--session", "s", "How did I count varroa mites?"]);
    env.ok(&["ask", "--session", "s", "What hydration does my sourdough starter run at?"]);
    std::fs::remove_file(env.path("notes/bees.md")).unwrap();
    env.write("notes/bread.md", "# Bread\n\nMy sourdough starter now runs at 80% hydration.\n");
    env.ok(&["ingest", "--prune", notes.to_str().unwrap()]);
    let shown = env.ok(&["sessions", "show", "s"]);
    let exported = env.ok(&["sessions", "export", "s"]);
    for (what, text) in [("show", &shown), ("export", &exported)] {
        let bees = text.lines().find(|l| l.contains("notes/bees.md") && l.contains('1')).unwrap_or_else(|| panic!("{what}: {text}"));
        assert!(bees.contains("(deleted since)") && !bees.contains("changed"), "{what}: {bees}");
        // An edited note is still "changed since".
        let bread = text.lines().find(|l| l.contains("notes/bread.md")).unwrap_or_else(|| panic!("{what}: {text}"));
        assert!(bread.contains("(changed since)"), "{what}: {bread}");
    }
}

#[test]
fn an_export_onto_the_database_is_refused_and_the_index_and_sessions_stay() {
    // `sessions export draft -o …/kebab.db` wrote the Markdown over the
    // database (exit 0, "exported 1 turn"): every note and session was gone.
    let env = research_env();
    env.ok(&["ask", "--session", "draft", "How did you count varroa mites?"]);
    let db = env.database();
    let roundabout = db.parent().unwrap().join("../kebab/kebab.db");
    for file in [db.clone(), roundabout, db.with_file_name("kebab.db-wal")] {
        let out = env.run(&["--json", "sessions", "export", "draft", "-o", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["code"], "bad_input", "{v}");
        assert!(v["message"].as_str().unwrap_or_default().contains("is the database"), "{v}");
        assert!(v["hint"].as_str().unwrap_or_default().contains("draft.md"), "{v}");
    }
    // The REPL's export, with a path relative to where it runs, likewise.
    let (code, out, err) = repl(&env, &["--repl", "--session", "draft"], ":session export data/kebab/kebab.db\n");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("error: data/kebab/kebab.db is the database, not a file to export to"), "{out}");
    let v = env.json(&["sessions", "show", "draft"]);
    assert_eq!(v["turns"][0]["question"], "How did you count varroa mites?", "{v}");
    assert!(env.ok(&["search", "varroa"]).contains("varroa"));
}

/// A REPL in session `desk` with one turn saved; stdin stays open.
fn repl_with_one_turn(env: &common::Env) -> (std::process::Child, std::process::ChildStdin) {
    let mut repl = common::spawn_piped(env.cmd(&["--repl", "--session", "desk"]).current_dir(env.path("")));
    let mut stdin = repl.stdin.take().unwrap();
    writeln!(stdin, "How did you count varroa mites?").unwrap();
    // The turn, not the session: the session is made before the question is
    // answered, and removing it then is another race (the turn's save fails).
    let saved = || {
        let out = env.run(&["--json", "sessions", "show", "desk"]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        v["turns"].as_array().is_some_and(|t| !t.is_empty())
    };
    let start = std::time::Instant::now();
    while !saved() {
        assert!(start.elapsed().as_secs() < 60, "the REPL's first turn was never saved");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    (repl, stdin)
}

#[test]
fn repl_commands_after_another_process_removed_or_renamed_the_session_say_so_and_export_nothing() {
    // Only a question noticed: `:session` said "(0 turns)", `:history` "no
    // questions yet", and `:session export` wrote "0 turns" of a session no
    // longer there; a rename was reported as a removal.
    let env = research_env();
    let (repl, mut stdin) = repl_with_one_turn(&env);
    env.ok(&["sessions", "rm", "desk"]);
    writeln!(stdin, ":session export gone.md\n:history").unwrap();
    drop(stdin);
    let out = repl.wait_with_output().unwrap();
    let (stdout, err) = (String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(out.status.success(), "{stdout}\n{err}");
    assert!(err.contains("session desk was removed by another process: a question here starts it again"), "{err}");
    assert_eq!(err.matches("removed by another process").count(), 1, "{err}");
    assert!(stdout.contains("nothing to export: this session has no turns yet"), "{stdout}");
    assert!(!env.path("gone.md").exists(), "{stdout}");
    let (repl, mut stdin) = repl_with_one_turn(&env);
    env.ok(&["sessions", "rename", "desk", "study"]);
    writeln!(stdin, "How long does one alcohol wash take?").unwrap();
    drop(stdin);
    let out = repl.wait_with_output().unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let said = "session desk was renamed study by another process (`:session study` goes on in it): \
                this question starts it again";
    assert!(err.contains(said), "{err}");
    assert_eq!(env.json(&["sessions", "show", "study"])["turns"].as_array().map(Vec::len), Some(1));
}

#[test]
fn the_first_session_new_in_the_repl_says_it_is_already_in_a_new_session() {
    // The REPL starts in session-1, not made until its first question;
    // `:session new` made session-1 itself and said "new session session-1"
    // under the prompt `kebab[session-1]>`, as if it had moved.
    let env = research_env();
    let (code, out, err) = repl(&env, &["repl"], ":session new\n:session new\n");
    assert_eq!(code, 0, "{err}");
    let said: Vec<&str> = out.split("> ").filter_map(|l| l.lines().nth(1)).collect();
    assert_eq!(said, ["already in new session session-1 (0 turns)", "new session session-2"], "{out}");
    // It is made all the same: the next `:session new` moves on, and both are listed.
    let list = env.json(&["sessions", "list"]);
    assert_eq!(list["sessions"].as_array().map(Vec::len), Some(2), "{list}");
}
