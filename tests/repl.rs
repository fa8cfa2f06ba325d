//! The REPL through piped stdin: the golden transcripts in `sessions/`, the
//! command table's errors, and sessions surviving a restart. A REPL kept
//! running while the test acts on it is in tests/repl_live.rs.

mod common;

use std::path::Path;

use common::{repl, research_env};

/// Replaces what differs between runs: latencies, stage timings, timestamps.
fn normalise(text: &str) -> String {
    let ms = regex::Regex::new(r"· \d+ ms ·").unwrap();
    let timings = regex::Regex::new(r"(?m)^timings ms: .*$").unwrap();
    let stamp = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ").unwrap();
    let t = ms.replace_all(text, "· N ms ·");
    let t = timings.replace_all(&t, "timings ms: …");
    stamp.replace_all(&t, "TIMESTAMP").into_owned()
}

#[test]
fn golden_transcripts_replay_exactly() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions");
    let mut scripts: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "in"))
        .collect();
    scripts.sort();
    assert!(scripts.len() >= 3, "expected the golden transcripts in {}", dir.display());
    let bless = std::env::var_os("KEBAB_BLESS").is_some();
    let mut failures = Vec::new();
    for script in &scripts {
        let name = script.file_stem().unwrap().to_str().unwrap();
        let env = research_env();
        let input = std::fs::read_to_string(script).unwrap();
        let (code, stdout, stderr) = repl(&env, &["--repl", "--session", name], &input);
        assert_eq!(code, 0, "{name}: exit {code}\n{stderr}");
        let actual = normalise(&stdout);
        let golden = script.with_extension("out");
        if bless {
            std::fs::write(&golden, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&golden).unwrap_or_default();
        if actual != expected {
            failures.push(format!("--- {} (expected)\n{expected}\n+++ actual\n{actual}", golden.display()));
        }
    }
    assert!(failures.is_empty(), "transcripts differ (KEBAB_BLESS=1 regenerates):\n{}", failures.join("\n"));
}

#[test]
fn a_follow_up_searches_with_the_previous_answer_and_cite_shows_the_source_text() {
    let env = research_env();
    let input = "How did you count varroa mites?\nHow long does that take?\n:cite 1\n:explain\n:session list\n";
    let (code, out, _) = repl(&env, &["--repl", "--session", "t1"], input);
    assert_eq!(code, 0);
    // Two answers, each followed by its sources and a footer.
    assert_eq!(out.matches("· grounded").count(), 2, "{out}");
    // The explain block's retrieval query holds words of the first answer.
    let first_answer = out.lines().nth(1).unwrap();
    let quoted = first_answer.split('"').nth(1).unwrap();
    let query = out.lines().find(|l| l.starts_with("retrieval query: ")).unwrap();
    assert!(query.starts_with("retrieval query: How long does that take? "), "{query}");
    assert!(query.contains(&quoted[..30]), "{query} / {quoted}");
    // :cite 1 prints the path, lines and the cited lines' text as in the file.
    let cite = out.lines().position(|l| l.starts_with("kebab[t1]> :cite 1")).unwrap();
    let head = out.lines().nth(cite + 1).unwrap();
    let re = regex::Regex::new(r"^\[1\] research/(\S+):(\d+)-(\d+)").unwrap();
    let c = re.captures(head).unwrap_or_else(|| panic!("{head}"));
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/research").join(&c[1]);
    let lines = common::file_lines(&file, c[2].parse().unwrap(), c[3].parse().unwrap());
    let body: Vec<&str> = out.lines().skip(cite + 2).take(lines.lines().count()).collect();
    assert_eq!(body.join("\n").trim(), lines.trim());
    assert!(out.lines().any(|l| l.starts_with("* t1\t2 turns\t")), "{out}");
}

#[test]
fn a_follow_ups_refusal_lists_its_closest_passages_by_their_fused_score_best_first() {
    // They showed "bm25 1.71", "bm25 38.01", "bm25 1.64": in fused order,
    // each with the BM25 score of whichever of its two searches found it.
    let env = research_env();
    let (code, out, _) = repl(&env, &["--repl"], "How did you count varroa mites?\nWhat about kimchi?\n");
    assert_eq!(code, 0);
    let scores: Vec<f64> = out
        .lines()
        .filter(|l| l.starts_with("closest: "))
        .map(|l| {
            let (_, score) = l.rsplit_once("(rrf ").unwrap_or_else(|| panic!("not labelled rrf: {l}"));
            score.trim_end_matches(')').parse().unwrap()
        })
        .collect();
    assert!(!scores.is_empty() && scores.windows(2).all(|w| w[0] >= w[1]), "{out}");
}

#[test]
fn explain_and_cite_work_on_the_last_turn_after_a_restart() {
    let env = research_env();
    let (_, first, _) = repl(&env, &["--repl", "--session", "work"], "Which rooftop produced the most honey in 2024?\n");
    let (code, second, _) = repl(&env, &["--repl", "--session", "work"], ":cite\n:explain\n:history\n");
    assert_eq!(code, 0);
    let sources: Vec<&str> = first.lines().filter(|l| l.starts_with('[')).collect();
    assert!(!sources.is_empty(), "{first}");
    for s in &sources {
        assert!(second.contains(s), "{s} missing after restart:\n{second}");
    }
    assert!(second.contains("retrieval query: Which rooftop produced the most honey in 2024?"), "{second}");
    assert!(second.contains("1. Which rooftop produced the most honey in 2024? (grounded"), "{second}");
}

#[test]
fn commands_are_checked_against_the_table() {
    let env = research_env();
    let (code, out, _) = repl(&env, &["--repl"], ":cit 1\n:k 0\n:mode sideways\n:help\n:quit\nnever asked\n");
    assert_eq!(code, 0);
    assert!(out.contains("unknown command :cit; did you mean :cite?"), "{out}");
    assert!(out.contains("\"0\" is not a number from 1 to 10000 (usage: :k [N])"), "{out}");
    assert!(out.contains("unknown mode \"sideways\""), "{out}");
    assert!(out.contains(":session [NAME | use NAME | list | new [NAME] | rm NAME | export [FILE]]"), "{out}");
    // :quit stops reading: the last line is never asked.
    assert!(!out.contains("never asked"), "{out}");
    // Without --session the REPL holds a new session, named session-N.
    assert!(out.starts_with("kebab[session-1]> "), "{out}");
}

#[test]
fn a_command_in_capitals_or_a_colon_alone_or_bad_session_words_get_one_useful_line() {
    // `:QUIT` got no suggestion, `:` alone "unknown command :;", and a bad
    // `:session` line the usage twice ("use :session […] (usage: :session […])").
    let env = research_env();
    let (code, out, _) = repl(&env, &["--repl", "--session", "x"], ":QUIT\n:\n:session rm\n:session list extra\n");
    assert_eq!(code, 0, "{out}");
    let usage = ":session [NAME | use NAME | list | new [NAME] | rm NAME | export [FILE]]";
    let errors: Vec<&str> = out.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(
        errors,
        [
            "error: unknown command :QUIT; did you mean :quit? (:help lists them all)".to_string(),
            "error: no command after the colon; :help lists the commands".to_string(),
            format!("error: name the session to remove (usage: {usage})"),
            format!("error: too many words after :session list: \"extra\" (usage: {usage})"),
        ],
        "{out}"
    );
}

#[test]
fn help_fits_in_80_columns() {
    // Every line was padded to the longest usage (62 characters), running to ~200 columns.
    let env = research_env();
    let (code, out, _) = repl(&env, &["--repl", "--session", "x"], ":help\n");
    assert_eq!(code, 0, "{out}");
    for line in out.lines() {
        assert!(line.chars().count() <= 80, "{} columns: {line}", line.chars().count());
    }
    assert!(out.contains("\n  :session [NAME | use NAME | list | new [NAME] | rm NAME | export [FILE]]\n"), "{out}");
    assert!(out.contains("\n  :k [N]              how many chunks to retrieve and pack; alone, the k in use\n"), "{out}");
}

#[test]
fn session_export_writes_footnoted_markdown() {
    let env = research_env();
    let input = "How did you count varroa mites?\n:session export notes.md\n";
    let (code, out, _) = repl(&env, &["--repl", "--session", "ex"], input);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("exported 1 turn to notes.md"), "{out}");
    let md = std::fs::read_to_string(env.path("notes.md")).unwrap();
    assert!(md.starts_with("# Session ex\n"), "{md}");
    assert!(md.contains("## 1. How did you count varroa mites?"), "{md}");
    let footnote = regex::Regex::new(r"(?m)^\[\^1-\d+\]: `research/hives/\S+\.md` lines \d+–\d+").unwrap();
    assert!(footnote.is_match(&md), "{md}");
    let reference = regex::Regex::new(r"\[\^1-\d+\]").unwrap();
    assert!(reference.find_iter(&md).count() >= 2, "reference and footnote: {md}");
}

#[test]
fn session_export_takes_the_rest_of_the_line_as_the_path_spaces_and_all() {
    // `:session export my notes/ex 1.md` was refused: "too many words after
    // :session export my". A path in quotes, as a shell takes it, works too.
    let env = research_env();
    std::fs::create_dir_all(env.path("my notes")).unwrap();
    let input = "How did you count varroa mites?\n:session export my notes/ex 1.md\n:session export \"my notes/ex 2.md\"\n";
    let (code, out, err) = repl(&env, &["--repl", "--session", "ex"], input);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("exported 1 turn to my notes/ex 1.md"), "{out}");
    assert!(out.contains("exported 1 turn to my notes/ex 2.md"), "{out}");
    for file in ["my notes/ex 1.md", "my notes/ex 2.md"] {
        let md = std::fs::read_to_string(env.path(file)).unwrap_or_else(|e| panic!("{file}: {e}\n{out}"));
        assert!(md.starts_with("# Session ex\n"), "{md}");
    }
}

#[test]
fn session_export_to_quotes_around_nothing_says_it_is_no_file_name() {
    // `:session export ""` wrote a file named `""`, and `"  "` one named ` `,
    // said as "exported 1 turn to  ": a file the user could not see was named.
    let env = research_env();
    let input = "How did you count varroa mites?\n:session export \"\"\n:session export \"  \"\n";
    let (code, out, err) = repl(&env, &["--repl", "--session", "ex"], input);
    assert_eq!(code, 0, "{err}");
    let usage = "(usage: :session [NAME | use NAME | list | new [NAME] | rm NAME | export [FILE]])";
    for quoted in ["\"\"", "\" \""] {
        assert!(out.contains(&format!("error: {quoted} is no file name; give one, or nothing for the default {usage}")), "{out}");
    }
    assert!(!out.contains("exported"), "{out}");
    assert!(!env.path("\"\"").exists() && !env.path(" ").exists(), "{out}");
}

#[test]
fn a_piped_line_that_is_not_utf8_is_an_error_for_that_line_and_the_next_lines_still_run() {
    use std::io::Write;
    let env = research_env();
    let mut child = common::spawn_piped(env.cmd(&["--repl", "--session", "bytes"]).current_dir(env.path("")));
    child.stdin.take().unwrap().write_all(b"caf\xE9 mites?\nHow did you count varroa mites?\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("error: the question \"caf\u{FFFD} mites?\" is not valid UTF-8"), "{stdout}");
    assert!(stdout.contains("hint: give the question as UTF-8 text"), "{stdout}");
    // The line after it is still asked.
    assert!(stdout.contains("kebab[bytes]> How did you count varroa mites?"), "{stdout}");
    assert_eq!(stdout.matches("· grounded").count(), 1, "{stdout}");
}

#[test]
fn a_piped_repl_reads_a_lone_carriage_return_as_a_line_end() {
    // Old-Mac line ends (`\r` alone) ran the whole input as one question,
    // `How did you count varroa mites?\r:history`, and refused it.
    let env = research_env();
    let (code, out, err) = repl(&env, &["--repl", "--session", "cr"], "How did you count varroa mites?\r:history\r\r:session\r\n:history\r");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("kebab[cr]> How did you count varroa mites?\n"), "{out}");
    assert_eq!(out.matches("· grounded").count(), 1, "{out}");
    assert_eq!(out.matches("kebab[cr]> :history\n").count(), 2, "{out}");
    assert!(out.contains("  1. How did you count varroa mites? (grounded"), "{out}");
    // Four lines with something on them, four prompts (blank ones are skipped).
    assert_eq!(out.matches("kebab[cr]> ").count(), 4, "{out}");
    assert!(!out.contains('\r'), "{out:?}");
}

#[test]
fn a_piped_readonly_repl_says_its_turns_are_not_saved() {
    let env = research_env();
    let (code, out, err) = repl(&env, &["--readonly", "--repl", "--session", "ro"], "How did you count varroa mites?\n:history\n");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("· grounded"), "{out}");
    assert!(out.contains("no questions yet in this session"), "{out}");
    // The transcript on stdout stays clean; the notice is on stderr, as at a terminal.
    assert!(err.contains("read-only: turns are not saved"), "{err}");
}

#[test]
fn in_a_readonly_repl_cite_and_explain_show_the_answer_just_given_not_an_older_saved_one() {
    let env = research_env();
    repl(&env, &["--repl", "--session", "ro"], "Which rooftop produced the most honey in 2024?\n");
    let input = "How did you count varroa mites?\n:cite\n:explain\n:cite 1\n";
    let (code, out, err) = repl(&env, &["--readonly", "--repl", "--session", "ro"], input);
    assert_eq!(code, 0, "{err}");
    let answer_sources: Vec<&str> = out.lines().take_while(|l| !l.starts_with("kebab[ro]> :cite")).filter(|l| l.starts_with("[1] ")).collect();
    assert_eq!(answer_sources.len(), 1, "{out}");
    let after: Vec<&str> = out.lines().skip_while(|l| !l.starts_with("kebab[ro]> :cite")).collect();
    // They showed the saved turn about honey.
    assert!(after.contains(&answer_sources[0]), "{out}");
    assert!(out.contains("retrieval query: How did you count varroa mites?"), "{out}");
    assert!(!out.contains("retrieval query: Which rooftop"), "{out}");
    assert!(out.to_lowercase().contains("alcohol wash"), "{out}");
}

#[test]
fn a_bad_session_name_in_a_command_says_what_a_name_may_be() {
    // The reason reached the prompt without its hint: "… is not a usable
    // session name" and the usage, never what a name may hold.
    let env = research_env();
    let (code, out, _) = repl(&env, &["--repl", "--session", "t"], ":session bad/name\n:session new a:b\n:session rm x/y\n:fork two/words\n");
    assert_eq!(code, 0, "{out}");
    for name in ["bad/name", "a:b", "x/y", "two/words"] {
        let error = out.lines().find(|l| l.contains(&format!("\"{name}\" is not a usable session name"))).unwrap_or_else(|| panic!("{out}"));
        assert!(error.contains("use up to 64 letters, digits, '-', '_' or '.'"), "{error}");
    }
}

#[test]
fn a_session_name_typed_with_a_decomposed_accent_is_the_session_typed_precomposed() {
    // `cafe` + U+0301 (a macOS file name pasted) was refused as "not a usable
    // session name" where `café` typed as one character was taken.
    let env = research_env();
    let (composed, decomposed) = ("caf\u{e9}", "cafe\u{301}");
    let input = format!("How did you count varroa mites?\n:session rm {composed}\n:session {composed}\n");
    let (code, out, err) = repl(&env, &["--repl", "--session", decomposed], &input);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("error: cannot remove the session you are in"), "{out}");
    assert!(out.contains(&format!("switched to session {composed} (1 turn)")), "{out}");
    env.ok(&["ask", "--session", decomposed, "How long does that take?"]);
    let list = env.json(&["sessions", "list"]);
    let names: Vec<&str> = list["sessions"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, [composed], "{list}");
    assert_eq!(env.json(&["sessions", "show", decomposed])["turns"].as_array().map(Vec::len), Some(2));
}

#[test]
fn a_hint_names_the_repl_command_not_the_command_line_one() {
    // `:session rm nope` hinted at `kebab sessions list`, a command for
    // another terminal, when `:session list` is right here.
    let env = research_env();
    let (code, out, _) = repl(&env, &["--repl", "--session", "t"], ":session rm nope\n");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("error: there is no session named \"nope\"\nhint: `:session list` shows the sessions there are"), "{out}");
}

#[test]
fn session_export_without_a_file_does_not_overwrite_a_file_it_did_not_write() {
    // `:session export` in session README wrote README.md over the README in
    // the working folder, unasked. An earlier export of the session is still
    // replaced, and a file named outright is written.
    let env = research_env();
    env.write("README.md", "my own notes\n");
    let input = "How did you count varroa mites?\n:session export\n";
    let (code, out, err) = repl(&env, &["--repl", "--session", "README"], input);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("error: README.md already exists and is not an export of session README"), "{out}");
    assert!(out.contains("hint: give another file (`:session export FILE`), or name it to replace it: `:session export README.md`"), "{out}");
    assert_eq!(std::fs::read_to_string(env.path("README.md")).unwrap(), "my own notes\n");
    let (code, out, err) = repl(&env, &["--repl", "--session", "README"], ":session export README.md\n");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("exported 1 turn to README.md"), "{out}");
    let (code, out, err) = repl(&env, &["--repl", "--session", "README"], ":session export\n");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("exported 1 turn to README.md"), "{out}");
}

#[test]
fn a_byte_order_mark_at_the_start_of_piped_input_is_not_part_of_the_first_line() {
    // A script saved by a Windows editor (BOM, CRLF): its first line
    // `\u{feff}:session` was asked as a question and saved as a refused turn.
    let env = research_env();
    let (code, out, err) = repl(&env, &["--repl", "--session", "bom"], "\u{feff}:session\r\nHow did you count varroa mites?\r\n:history\r\n");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("kebab[bom]> :session\nsession bom (0 turns)\n"), "{out:?}");
    assert!(out.contains("  1. How did you count varroa mites? (grounded"), "{out}");
    assert!(!out.contains("  2. "), "{out}");
    assert!(!out.contains('\u{feff}'), "{out:?}");
    // `kebab ask -` saved the mark as the question's first character.
    let (code, out, err) = repl(&env, &["--json", "ask", "--session", "bom2", "-"], "\u{feff}How did you count varroa mites?\r\n");
    assert_eq!(code, 0, "{err}");
    let a: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(a["retrieval"]["retrieval_query"], "How did you count varroa mites?", "{a}");
    let v = env.json(&["sessions", "show", "bom2"]);
    assert_eq!(v["turns"][0]["question"], "How did you count varroa mites?", "{v}");
}

#[test]
fn a_session_named_as_a_session_subcommand_is_refused_and_one_named_so_before_is_reached_with_use() {
    // `kebab ask --session list` made a session that `:session list` could
    // never switch to: the REPL read it as the command (so for new, rm, export).
    let env = research_env();
    let q = "How did you count varroa mites?";
    let reserved =
        |name: &str| format!("error: \"{name}\" cannot name a session: list, new, rm, export and use are :session commands");
    for (args, name) in [(vec!["ask", "--session", "list", q], "list"), (vec!["--repl", "--session", "new"], "new")] {
        let (code, _, err) = repl(&env, &args, "");
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(err.contains(&reserved(name)) && err.contains(&format!("hint: pick another name, e.g. `{name}-1`")), "{err}");
    }
    env.ok(&["ask", "--session", "old", q]);
    for (args, name) in [(["sessions", "rename", "old", "export"], "export"), (["sessions", "fork", "old", "rm"], "rm")] {
        let (code, _, err) = repl(&env, &args, "");
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(err.contains(&reserved(name)), "{err}");
    }
    let (code, out, _) = repl(&env, &["--repl", "--session", "t"], ":session new list\n:session use use\n:session use\n");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&reserved("list")) && out.contains(&reserved("use")), "{out}");
    assert!(out.contains("error: name the session to switch to (usage: :session [NAME | use NAME |"), "{out}");
    // One an older kebab let through is still reached, by `:session use NAME`
    // in the REPL and by name on the command line.
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    conn.execute("UPDATE conversations SET name = 'list' WHERE name = 'old'", []).unwrap();
    let (code, out, _) = repl(&env, &["--repl", "--session", "t"], ":session use list\n:history\n");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("switched to session list (1 turn)\nkebab[list]> :history\n  1. How did you count varroa mites?"), "{out}");
    let (code, _, err) = repl(&env, &["ask", "--session", "list", "How long does that take?"], "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(env.json(&["sessions", "show", "list"])["turns"].as_array().map(Vec::len), Some(2));
}

#[test]
fn mode_alone_says_the_mode_in_use_as_multihop_alone_does() {
    // `:mode` alone was an error ("give one mode"), where `:multihop` alone says which is on.
    let env = common::Env::new();
    let url = common::fake_openai_embeddings(|t, _| serde_json::json!([t.len() as f32, 1.0, 0.5]));
    let embedding = format!("[embedding]\nprovider = \"openai\"\nmodel = \"lengths\"\nbase_url = \"{url}\"\n");
    env.write("config/kebab/config.toml", format!("[llm]\nprovider = \"extractive\"\n\n{embedding}"));
    common::cargo_and_tea_notes(&env);
    let (code, out, err) = repl(&env, &["--repl"], ":mode\n:mode vector\n:mode\n:multihop\n");
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("error:"), "{out}");
    let said: Vec<&str> = out.split("> ").filter_map(|l| l.lines().nth(1)).collect();
    assert_eq!(said, ["mode hybrid", "mode vector", "mode vector", "multihop off"], "{out}");
    // Without a model hybrid cannot run: alone it names the mode questions are asked in.
    let lexical = common::Env::new();
    lexical.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n\n[embedding]\nprovider = \"none\"\n");
    common::cargo_and_tea_notes(&lexical);
    let (_, out, _) = repl(&lexical, &["--repl"], ":mode\n");
    assert!(out.contains(":mode\nmode lexical\n"), "{out}");
}

#[test]
fn session_export_of_a_session_made_by_session_new_with_no_turns_says_there_is_nothing_to_export() {
    // `:session new` makes the session at once, and exporting it wrote a file
    // of "0 turns", where a session not made yet has "nothing to export".
    let env = research_env();
    let input = ":session export\n:session new\n:session export\n:session export empty.md\n";
    let (code, out, err) = repl(&env, &["--repl"], input);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches("nothing to export: this session has no turns yet").count(), 3, "{out}");
    assert!(!out.contains("exported"), "{out}");
    assert!(!env.path("empty.md").exists() && !env.path("session-1.md").exists(), "{out}");
}

#[test]
fn k_alone_says_the_k_in_use_as_mode_alone_does() {
    // `:k` alone was an error ("give one number from 1 to 10000"), where `:mode` alone says the mode.
    let env = research_env();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n\n[search]\ndefault_k = 5\n");
    let (code, out, err) = repl(&env, &["--repl"], ":k\n:k 3\n:k\n");
    assert_eq!(code, 0, "{err}");
    let said: Vec<&str> = out.split("> ").filter_map(|l| l.lines().nth(1)).collect();
    assert_eq!(said, ["k 5", "k 3", "k 3"], "{out}");
}
