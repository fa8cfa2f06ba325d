//! `kebab ask` end to end: the built-in model over real notes, refusals,
//! the JSON shape, the saved rows, a model server (fake, on 127.0.0.1:0)
//! streaming through the CLI, and Ctrl-C.

mod common;

use std::time::Duration;

use common::{Env, TEA, answers_open_with, builtin_notes_env, cargo_and_tea_notes, fake_ollama, stderr};

fn extractive(env: &Env) {
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n");
}

/// A home with the cargo and tea notes indexed, answered by the built-in model.
fn notes_with_builtin_model() -> Env {
    let env = Env::new();
    extractive(&env);
    cargo_and_tea_notes(&env);
    env
}

fn answers(env: &Env) -> Vec<(String, Option<String>, bool)> {
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    let mut stmt = conn.prepare("SELECT question, refusal_reason, grounded FROM answers ORDER BY id").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
}

/// A second note, so a question's words are not in every chunk.
/// Each question is refused by the gate: the notes do not hold its answer.
fn refused_by_gate(env: &Env, questions: &[&str]) {
    for q in questions {
        let out = env.ok(&["ask", q]);
        assert!(out.contains("refused: score_gate"), "{q}: {out}");
    }
}

#[test]
fn the_builtin_model_answers_with_a_quote_and_a_source() {
    let env = notes_with_builtin_model();
    let out = env.ok(&["ask", "How do I create a new project with cargo?"]);
    let first = out.lines().next().unwrap();
    assert!(first.starts_with("\"To create a new project, run `cargo new hello` in a terminal.\" [#1]"), "{out}");
    assert!(out.contains("[1] notes/cargo.md:1-5 · Cargo > New projects"), "{out}");
    assert!(out.lines().last().unwrap().contains("grounded"), "{out}");
    assert_eq!(answers(&env), vec![("How do I create a new project with cargo?".to_string(), None, true)]);
}

#[test]
fn an_off_topic_question_is_refused_by_the_gate() {
    let env = notes_with_builtin_model();
    let out = env.run(&["ask", "--fail-on-refusal", "Which tea won the football world cup in 1998?"]);
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("refused: score_gate"), "{text}");
    assert_eq!(answers(&env)[0].1.as_deref(), Some("score_gate"));
}

#[test]
fn fail_on_refusal_exits_3_with_json_too_and_still_prints_the_refusal() {
    let env = notes_with_builtin_model();
    let question = "Who won the 1998 World Cup?";
    // `--json` before the command and after it: the same flag.
    for args in [["--json", "ask", "--fail-on-refusal", question], ["ask", "--json", "--fail-on-refusal", question]] {
        let out = env.run(&args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
        assert_eq!(v["schema_version"], "answer.v1", "{v}");
        assert_eq!(v["grounded"], false, "{v}");
    }
}

#[test]
fn json_prints_answer_v1_once() {
    let env = notes_with_builtin_model();
    let v = env.json(&["ask", "--explain", "How many minutes does green tea steep?"]);
    assert_eq!(v["schema_version"], "answer.v1");
    assert_eq!(v["grounded"], true, "{v}");
    assert_eq!(v["citations"][0]["marker"], "[1]");
    assert_eq!(v["citations"][0]["citation"]["path"], "notes/tea.md");
    assert_eq!(v["model"]["provider"], "extractive");
    assert_eq!(v["prompt_template_version"], "rag-v2");
    assert_eq!(v["retrieval"]["mode"], "lexical");
    assert!(v["retrieval"]["trace_id"].as_str().unwrap().starts_with("ans-"));
    assert!(v.get("conversation_id").is_none(), "single-shot asks carry no conversation");
    assert!(v["explain"]["timings_ms"]["total"].as_f64().unwrap() >= 0.0);
    assert_eq!(v["verification"]["unsupported"], serde_json::json!([]));
}

#[test]
fn a_quoted_code_block_is_cited_by_its_marker_line_by_line_too() {
    // The built-in model quotes a command block whole, with one marker after
    // it. Each of its lines used to be judged as an uncited sentence, and
    // lines another note also holds ("Cargo.toml") were attributed there:
    // the terminal showed a starred source for a fully cited answer.
    let layout = "# New project layout\n\nA new project has a manifest and a source folder, as listed:\n\n```\n$ ls app\nCargo.toml\nsrc\n```\n";
    let env = builtin_notes_env(&[("new.md", "# New projects\n\nTo start a project, run these commands:\n\n```\n$ cargo new app\n$ ls app\nCargo.toml\nsrc\n```\n"), ("layout.md", layout), ("tea.md", TEA)]);
    let v = env.json(&["ask", "How do I start a new project?"]);
    assert_eq!(v["grounded"], true, "{v}");
    assert!(v["answer"].as_str().unwrap().contains("Cargo.toml\nsrc\u{201D} [#1]"), "{v}");
    let citations = v["citations"].as_array().unwrap();
    assert!(!citations.is_empty() && citations.iter().all(|c| c["origin"] == "model"), "{v}");
    assert!(v.get("attribution").is_none(), "nothing was left uncited: {v}");
}

#[test]
fn readonly_asks_run_but_are_not_saved() {
    let env = notes_with_builtin_model();
    let out = env.run(&["--readonly", "ask", "How do I build the project with cargo?"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("not saved"));
    assert!(answers(&env).is_empty());
}

#[test]
fn a_model_server_streams_through_the_cli_and_usage_is_recorded() {
    let env = Env::new();
    let url = fake_ollama("tiny", vec!["Run ", "\"cargo new hello\" ", "[#1]."], Duration::from_millis(10));
    env.write("config/kebab/config.toml", format!("[llm]\nprovider = \"auto\"\nmodel = \"tiny\"\nbase_url = \"{url}\"\n"));
    cargo_and_tea_notes(&env);
    let v = env.json(&["ask", "How do I create a new project with cargo?"]);
    assert_eq!(v["model"]["provider"], "ollama", "auto picks the server that has the model");
    assert_eq!(v["answer"], "Run \"cargo new hello\" [#1].");
    assert_eq!(v["grounded"], true);
    assert_eq!(v["usage"]["prompt_tokens"], 321);
    assert_eq!(v["usage"]["completion_tokens"], 3);
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    let (model, prompt): (String, i64) =
        conn.query_row("SELECT model, prompt_tokens FROM answers", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    assert_eq!((model.as_str(), prompt), ("ollama/tiny", 321));
}

#[test]
fn auto_without_a_server_uses_the_builtin_model_and_says_so() {
    let env = Env::new();
    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    env.write("config/kebab/config.toml", format!("[llm]\nbase_url = \"http://127.0.0.1:{port}\"\n"));
    cargo_and_tea_notes(&env);
    let out = env.run(&["ask", "How do I create a new project with cargo?"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("built-in extractive model"), "{}", stderr(&out));
}

#[test]
fn ctrl_c_while_streaming_keeps_the_partial_answer_and_exits_130() {
    let env = Env::new();
    let pieces: Vec<&'static str> = vec!["Run ", "\"cargo ", "new ", "hello\" ", "[#1] ", "then ", "wait ", "a ", "long ", "time."];
    let url = fake_ollama("tiny", pieces, Duration::from_millis(400));
    env.write("config/kebab/config.toml", format!("[llm]\nprovider = \"ollama\"\nmodel = \"tiny\"\nbase_url = \"{url}\"\n"));
    cargo_and_tea_notes(&env);
    let mut child = env
        .cmd(&["ask", "How do I create a new project with cargo?"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the first streamed piece: by then the Ctrl-C handler is installed.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 4];
    std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
    let killed = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let mut rest = Vec::new();
    std::io::Read::read_to_end(&mut stdout, &mut rest).unwrap();
    let mut out = child.wait_with_output().unwrap();
    out.stdout = [first.to_vec(), rest].concat();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    let (reason, text): (String, String) =
        conn.query_row("SELECT refusal_reason, answer FROM answers", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    assert_eq!(reason, "llm_stream_aborted");
    assert!(text.starts_with("Run ") && !text.contains("time."), "{text}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("refused: llm_stream_aborted"));
}

#[test]
fn a_session_removed_while_its_question_is_answered_is_said_so_not_a_foreign_key_error() {
    // The turn's save failed with "saving the turn: FOREIGN KEY constraint
    // failed" (exit 2), run onto the streamed answer's last line.
    let env = Env::new();
    let url = fake_ollama("tiny", vec!["Run ", "\"cargo new hello\" ", "[#1]."], Duration::from_millis(400));
    env.write("config/kebab/config.toml", format!("[llm]\nprovider = \"ollama\"\nmodel = \"tiny\"\nbase_url = \"{url}\"\n"));
    cargo_and_tea_notes(&env);
    let mut child = common::spawn_piped(&mut env.cmd(&["ask", "--session", "desk", "How do I create a new project with cargo?"]));
    // The first piece has streamed: the session is made, the answer not saved.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 4];
    std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
    env.ok(&["sessions", "rm", "desk"]);
    let mut rest = Vec::new();
    std::io::Read::read_to_end(&mut stdout, &mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    let (stdout, err) = (String::from_utf8_lossy(&[first.to_vec(), rest].concat()).into_owned(), stderr(&out));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{err}");
    assert!(!err.contains("FOREIGN KEY"), "{err}");
    assert!(err.contains("error: the session was removed by another process while this question was answered"), "{err}");
    assert!(err.contains("hint: ask again: the question starts the session anew"), "{err}");
    assert!(stdout.ends_with("[#1].\n"), "{stdout:?}");
}

#[test]
fn a_server_that_dies_is_a_clear_error_with_exit_2() {
    let env = Env::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    env.write("config/kebab/config.toml", format!("[llm]\nprovider = \"ollama\"\nbase_url = \"http://127.0.0.1:{port}\"\n"));
    cargo_and_tea_notes(&env);
    let out = env.run(&["ask", "How do I create a new project with cargo?"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains(&format!("127.0.0.1:{port}")) && err.contains("ollama serve"), "{err}");
    assert_eq!(answers(&env)[0].1.as_deref(), Some("llm_stream_aborted"));
}

#[test]
fn escape_sequences_in_notes_never_reach_the_terminal_through_an_answer() {
    let env = Env::new();
    extractive(&env);
    env.write("notes/evil.md", "# Evil\n\nThe kettle whistles \u{1b}[2J\u{1b}]0;pwned\u{7} when the water boils hard.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let out = env.ok(&["ask", "When does the kettle whistle?"]);
    assert!(out.contains("[1] notes/evil.md"), "{out}");
    assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out:?}");
}

#[test]
fn questions_with_no_content_words_are_refused_before_searching_and_saved() {
    let env = notes_with_builtin_model();
    for q in ["what is it?", "???", "🦀"] {
        let out = env.run(&["ask", q]);
        assert_eq!(out.status.code(), Some(0), "{q}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("refused: no_content_words"), "{q}: {text}");
        assert!(text.contains("names nothing to look up"), "{q}: {text}");
        assert!(text.contains("0/0 chunks"), "nothing was searched: {text}");
    }
    let rows = answers(&env);
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r.1.as_deref() == Some("no_content_words") && !r.2), "{rows:?}");
}

#[test]
fn a_question_that_only_half_matches_the_notes_is_refused() {
    // "How do I bake bread?" was answered from an unrelated passage.
    let env = notes_with_builtin_model();
    refused_by_gate(&env, &["How do I bake bread in a new oven?"]);
}

#[test]
fn contractions_and_how_a_user_frames_a_question_do_not_count_against_it() {
    // "I'm confused about lifetimes, what are they for?" was refused: `m`
    // and `confused` read as topics the notes lack.
    let env = notes_with_builtin_model();
    for (q, quote) in [
        ("I'm confused, how many minutes does green tea steep?", "\"Green tea steeps best at eighty degrees for two minutes.\" [#1]"),
        ("I'm wondering why my cargo build doesn't make a binary", "\"Run `cargo build` to compile the project;"),
        ("whats cargo new for", "\"To create a new project, run `cargo new hello` in a terminal.\" [#1]"),
    ] {
        let out = env.ok(&["ask", "--explain", q]);
        assert!(out.contains("→ pass") && out.lines().any(|l| l.starts_with(quote)), "{q}: {out}");
        // "terms: +minutes (idf 6.5), -m (idf 7.6)": the words weighed.
        let line = out.lines().find_map(|l| l.trim_start().strip_prefix("terms: ")).unwrap();
        let terms: Vec<&str> = line.split(", ").map(|t| t[1..].split(" (").next().unwrap()).collect();
        assert!(terms.iter().all(|t| !["m", "t", "doesn", "confused", "wondering", "whats"].contains(t)), "{q}: {terms:?}");
    }
}

#[test]
fn korean_use_make_and_not_in_a_question_do_not_count_against_it() {
    // "응애 처리에는 뭘 쓰면 돼?" ("what do I use against mites?") was
    // refused: `쓰면` ("if I use") read as a topic the notes lack, where
    // English "use" never counts. The notes say what was done, not "used".
    let env = common::research_env();
    answers_open_with(
        &env,
        &[
            ("응애 처리에는 뭘 쓰면 돼?", "\"2024년 12월 16일에 모든 벌통에 옥살산을 떨어뜨려 처리했다.\" [#1]"),
            ("벌통 단열에는 뭘 썼어?", "\"2024년 10월 28일에 모든 벌통 속뚜껑 위에 25 mm 스티로폼 단열판을 올렸다.\" [#1]"),
            ("바람막이는 뭘로 만들었어?", "\"콜더 옥상 서쪽에는 높이 1.2 m의 합판 바람막이를 세웠다.\" [#1]"),
        ],
    );
    // What the notes lack is still refused: the verb was never the evidence.
    refused_by_gate(&env, &["벌통 페인트는 뭘 썼어?"]);
}

#[test]
fn a_misspelt_word_is_read_as_the_notes_spell_it_and_the_question_saved_as_typed() {
    // "projcet" is in no note: the search lost it and the gate counted it
    // as a rare topic the notes lack.
    let env = notes_with_builtin_model();
    let q = "How do I create a new projcet with cargo?";
    let out = env.ok(&["ask", q]);
    assert!(out.starts_with("\"To create a new project, run `cargo new hello` in a terminal.\" [#1]"), "{out}");
    assert!(out.lines().any(|l| l == "read \"projcet\" as \"project\""), "{out}");
    let json = env.json(&["ask", q]);
    assert_eq!(json["retrieval"]["respelled"], serde_json::json!([{ "typed": "projcet", "read": "project" }]));
    assert_eq!(json["retrieval"]["retrieval_query"], "How do I create a new project with cargo?");
    assert_eq!(answers(&env)[0], (q.to_string(), None, true));
    // A word the notes lack that is no typo of theirs stays as typed, and
    // counts against the question.
    let out = env.ok(&["ask", "Which tea won the football world cup in 1998?"]);
    assert!(!out.contains("read \"") && out.contains("refused: score_gate"), "{out}");
}

#[test]
fn why_in_a_session_quotes_what_the_notes_say_next_not_the_same_sentence() {
    // "why?" was read with the previous answer's own words, so the sentence
    // that answered before matched them best and was quoted again.
    let env = Env::new();
    extractive(&env);
    env.write(
        "notes/bees.md",
        "# Hot days\n\nBees fan their wings at the hive entrance on hot days, standing in rows on the landing board \
         and facing the same way, so that a steady stream of air is drawn in at the front of the boxes and pushed out \
         again through the gaps under the lid. The hum carries across the garden. \
         They do this because the brood must stay near 35 degrees.\n\n# Winter\n\nIn winter the colony forms a cluster.\n",
    );
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let first = env.ok(&["ask", "--session", "bees", "What do bees do at the hive entrance on hot days?"]);
    assert!(first.starts_with("\"Bees fan their wings at the hive entrance on hot days,"), "{first}");
    // The second quote lies past the part of the answer the next search
    // carries: it must still count as said.
    assert!(first.contains("\"The hum carries across the garden.\" [#1]"), "{first}");
    let why = env.ok(&["ask", "--session", "bees", "why?"]);
    assert!(why.starts_with("\"They do this because the brood must stay near 35 degrees.\""), "{why}");
    assert!(!why.contains("Bees fan their wings") && !why.contains("The hum carries"), "{why}");
}

#[test]
fn can_you_show_an_example_in_a_session_gets_the_example_of_what_was_asked() {
    // "show" and "example" were read as its topic: it quoted sentences that
    // say "example" from any note, or was refused when none did.
    let env = Env::new();
    extractive(&env);
    env.write(
        "notes/hives.md",
        "# Opening a hive\n\nOpen a hive from the side away from the entrance. The guards stay calm that way. \
         Smoke goes in first. The lid comes off slowly. This is how I log each visit:\n\n```console\n$ apiary log --entry rear\n```\n",
    );
    env.write("notes/habits.md", "# Habits\n\nAn example of a bad habit is skipping the log. Examples in this notebook show what I did.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let first = env.ok(&["ask", "--session", "hives", "Which side should I open a hive from?"]);
    assert!(first.starts_with("\"Open a hive from the side away from the entrance.\" [#1]"), "{first}");
    let example = env.ok(&["ask", "--session", "hives", "Can you show an example?"]);
    assert!(!first.contains("$ apiary log"), "{first}");
    assert!(example.contains("$ apiary log --entry rear"), "{example}");
    assert!(!example.contains("bad habit"), "{example}");
    // Alone it names nothing to look up.
    let alone = env.json(&["ask", "Can you show an example?"]);
    assert_eq!(alone["refusal_reason"], "no_content_words");
}

#[test]
fn explain_prints_every_gate_signal_and_the_decision() {
    let env = notes_with_builtin_model();
    let out = env.ok(&["ask", "--explain", "How many minutes does green tea steep?"]);
    assert!(out.contains("gate: lexical-en p(answerable)"), "{out}");
    assert!(out.contains("→ pass"), "{out}");
    for signal in ["coverage", "missing", "bm25", "cosine", "margin", "agreement", "content words"] {
        assert!(out.contains(signal), "{signal} missing: {out}");
    }
}

#[test]
fn piped_output_has_colours_with_color_always_but_never_osc8_links() {
    let env = notes_with_builtin_model();
    let runs: [&[&str]; 2] = [
        &["--color", "always", "ask", "How do I create a new project with cargo?"],
        &["--color", "always", "search", "cargo new project"],
    ];
    for args in runs {
        let out = env.ok(args);
        assert!(out.contains("\x1b["), "--color always paints: {out:?}");
        assert!(out.contains("notes/cargo.md:"), "{out:?}");
        assert!(!out.contains("\x1b]8"), "a pipe gets no hyperlinks: {out:?}");
    }
}

#[test]
fn a_glossary_records_title_is_what_its_text_defines() {
    // JSONL in BEIR form: the text goes on from the title without naming it.
    let env = Env::new();
    extractive(&env);
    env.write(
        "notes/glossary.jsonl",
        concat!(
            "{\"_id\": \"wal\", \"title\": \"WAL\", \"text\": \"A journal mode in which writers append to a separate file, so readers never wait for them.\"}\n",
            "{\"_id\": \"fts\", \"title\": \"FTS5\", \"text\": \"The SQLite extension for full-text search. Unlike WAL, it is an index, not a journal.\"}\n",
        ),
    );
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let out = env.ok(&["ask", "What is WAL?"]);
    assert!(out.starts_with("\"A journal mode in which writers append to a separate file, so readers never wait for them.\" [#1]"), "{out}");
    assert!(out.contains("[1] notes/glossary.jsonl#wal:1-1 · WAL"), "{out}");
}

#[test]
fn a_definition_under_a_heading_that_names_it_answers_what_is() {
    let env = Env::new();
    extractive(&env);
    env.write("notes/bread.md", "# Bread words\n\n## Autolyse\n\nMixing only the flour and water, then resting it before the salt goes in.\n\n## Crumb\n\nThe inside of the loaf: open and glossy when the dough was wet enough.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let out = env.ok(&["ask", "What is autolyse?"]);
    assert!(out.starts_with("\"Mixing only the flour and water, then resting it before the salt goes in.\" [#1]"), "{out}");
    assert!(out.contains("· Bread words > Autolyse"), "{out}");
}

#[test]
fn what_i_wrote_about_a_notes_title_quotes_its_sections() {
    let env = Env::new();
    extractive(&env);
    env.write(
        "notes/pickles.md",
        "# Cucumber pickles\n\n## Brine\n\nSix percent salt by weight of the water, dissolved cold.\n\n## Jars\n\nPacked upright, topped with a grape leaf for crunch.\n",
    );
    env.write("notes/writing.md", "# Writing\n\nA writer keeps a notebook on the desk.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    // No sentence says "pickles": the note's title says what its sections
    // are about. And "write about" frames the question: a sentence about a
    // writer is not what was asked.
    let out = env.ok(&["ask", "What did I write about pickles?"]);
    assert!(out.contains("\"Six percent salt by weight of the water, dissolved cold.\" [#"), "{out}");
    assert!(out.contains("\"Packed upright, topped with a grape leaf for crunch.\" [#"), "{out}");
    assert!(!out.contains("writer"), "{out}");
}

#[test]
fn korean_verb_forms_and_how_many_days_are_read_as_the_notes_write_them() {
    // The notes write `헹구고`, `절인다`; a question asks `헹군`, `절여`. Both
    // were refused by the gate (a two-syllable form is looked up as written),
    // as was "며칠" ("how many days"), read as a topic the notes lack.
    let env = builtin_notes_env(&[
        (
            "kimchi.md",
            "# 김치 메모\n\n## 배추 절이기\n\n배추는 소금물에 여섯 시간 절인다. 절인 뒤에는 찬물에 세 번 헹구고 물기를 두 시간 동안 뺀다.\n\n\
             ## 숙성\n\n김치는 실온에서 이틀 숙성한 뒤 냉장고에 보관한다. 양념에는 고춧가루와 마늘을 넣는다.\n",
        ),
        ("tea.md", TEA),
    ]);
    answers_open_with(
        &env,
        &[
            ("헹군 배추의 물기는 얼마 동안 빼요?", "\"절인 뒤에는 찬물에 세 번 헹구고 물기를 두 시간 동안 뺀다.\" [#1]"),
            ("배추를 몇 시간 절여?", "\"배추는 소금물에 여섯 시간 절인다.\" [#1]"),
            ("김치는 실온에서 며칠 숙성해?", "\"김치는 실온에서 이틀 숙성한 뒤 냉장고에 보관한다.\" [#1]"),
        ],
    );
    // A verb the notes never use is still missing: rinsing is not frying.
    refused_by_gate(&env, &["배추는 몇 분 볶아?"]);
}

#[test]
fn korean_words_inside_compounds_and_contracted_verbs_are_found() {
    // The notes write `망원시장에서`, `된장찌개에는`, `300그램`, `빌려서`,
    // `VPN을`, `열린다`; a question asks `시장`, `찌개`, `그램`, `빌렸어`,
    // `VPN`, `열려`. The word index keeps the notes' words whole, so no word
    // started with the question's, and each counted as a topic the notes
    // lack: all refused.
    let env = builtin_notes_env(&[
        (
            "diary.md",
            "# 4월 일기\n\n## 토요일\n\n오전에 망원시장에서 동생과 호떡을 사 먹었다. 오후에는 도서관에서 소설 두 권을 빌려서 읽었다.\n\n\
             ## 요리\n\n된장찌개에는 두부 300그램을 넣고 20분 끓였다.\n\n## 회사\n\n재택 날에는 VPN을 켜야 사내 위키가 열린다.\n",
        ),
        ("tea.md", TEA),
    ]);
    answers_open_with(
        &env,
        &[
            ("시장에서 뭐 사 먹었어?", "\"오전에 망원시장에서 동생과 호떡을 사 먹었다.\" [#1]"),
            ("찌개에 두부는 몇 그램 넣어?", "\"된장찌개에는 두부 300그램을 넣고 20분 끓였다.\" [#1]"),
            ("도서관에서 소설 몇 권 빌렸어?", "\"오후에는 도서관에서 소설 두 권을 빌려서 읽었다.\" [#1]"),
            ("재택할 때 VPN 켜야 해?", "\"재택 날에는 VPN을 켜야 사내 위키가 열린다.\" [#1]"),
            ("사내 위키가 언제 열려?", "\"재택 날에는 VPN을 켜야 사내 위키가 열린다.\" [#1]"),
        ],
    );
    // What the notes do not hold is still missing: salt, fruit.
    refused_by_gate(&env, &["찌개에 소금은 몇 그램 넣어?", "시장에서 산 과일은 뭐야?"]);
}

#[test]
fn what_a_name_stands_for_is_asked_with_meaning_or_stand_for() {
    // "meaning" was read as a topic the notes lack (refused), and "stands
    // for" was not read as saying what a name is.
    let env = builtin_notes_env(&[
        (
            "channels.md",
            "# Channels\n\nIn short, a channel can have many sending ends that produce values but only one receiving end that consumes them. \
             We open one with `mpsc::channel`; `mpsc` stands for multiple producer, single consumer.\n",
        ),
        ("tea.md", TEA),
    ]);
    let stands_for = "\"We open one with `mpsc::channel`; `mpsc` stands for multiple producer, single consumer.\" [#1]";
    answers_open_with(&env, &[("mpsc meaning?", stands_for), ("what does mpsc stand for", stands_for), ("what is mpsc short for", stands_for)]);
}

#[test]
fn a_word_made_with_re_is_read_as_the_word_it_is_made_from() {
    // "redeclaring" is in no note, "declaring" is: the question was refused
    // as asking about something the notes lack.
    let env = builtin_notes_env(&[
        ("vars.md", "# Variables\n\nDeclaring a variable again with let makes a new variable that shadows the first one.\n"),
        ("bees.md", "# Bees\n\nThe hive is inspected every ten days in summer.\n"),
        ("tea.md", TEA),
    ]);
    let shadows = "\"Declaring a variable again with let makes a new variable that shadows the first one.\" [#1]";
    answers_open_with(&env, &[("what does redeclaring a variable with let do?", shadows)]);
}

#[test]
fn a_month_asked_in_full_is_found_where_the_notes_shorten_it() {
    // "august" is in no note, "Aug 21" is: refused as a topic the notes
    // lack, and with only the month to go on the search found nothing.
    let env = builtin_notes_env(&[
        ("garden.md", "# Garden log\n\n- Aug 21: planted garlic along the fence.\n- Sep 3: put the frost cover on the beds.\n"),
        ("bees.md", "# Bees\n\nThe hive is inspected every ten days in summer.\n"),
        ("tea.md", TEA),
    ]);
    answers_open_with(
        &env,
        &[
            ("what did I plant in august?", "\"Aug 21: planted garlic along the fence.\" [#1]"),
            ("what did I do in september?", "\"Sep 3: put the frost cover on the beds.\" [#1]"),
        ],
    );
    assert!(env.ok(&["ask", "what did I do in september?"]).contains("read \"september\" as \"sep\""));
    refused_by_gate(&env, &["what did I plant in october?"]);
}

#[test]
fn an_empty_standard_input_says_it_was_empty_not_to_pipe_the_question_in() {
    // `printf '' | kebab ask -` said "the question is empty", hinting "or
    // pipe it in with `kebab ask -`": what the user had just done.
    let env = Env::new();
    extractive(&env);
    // `kebab ask - </dev/null` and `kebab ask </dev/null` (env.run gives no stdin).
    for args in [vec!["ask", "-"], vec!["ask"]] {
        let out = env.run(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("error: no question on the standard input: it was empty"), "{args:?}: {err}");
        assert!(err.contains("hint: pipe the question in, e.g. `echo \"What is ownership?\" | kebab ask -`"), "{args:?}: {err}");
    }
    // `printf '' | kebab ask -`: an empty pipe.
    let (code, _, err) = common::repl(&env, &["ask", "-"], "");
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("error: no question on the standard input: it was empty"), "{err}");
    // A pipe holding only blank lines says so; a question given as words that is blank keeps its own words.
    let (code, _, err) = common::repl(&env, &["ask", "-"], "\n  \n");
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("error: no question on the standard input: it held only blank space"), "{err}");
    let err = stderr(&env.run(&["ask", " "]));
    assert!(err.contains("error: the question is empty") && err.contains("`kebab ask -`"), "{err}");
}
