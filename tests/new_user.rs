//! What a new user trips over (issue 16), each driven through the real
//! binary: arguments and file names that are not UTF-8, read-only data, a
//! missing config or data dir, prune and unsupported files, `-k`, questions
//! on stdin, progress lines, init's next steps, re-walking known roots,
//! `:cite`, and small wording fixes.

mod common;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::{Env, stderr};

/// A home whose answers come from the built-in extractive model and whose
/// search is lexical (no embedding model, no server), with two notes indexed.
fn notes_env() -> Env {
    let env = Env::new();
    env.write(
        "config/kebab/config.toml",
        "[llm]\nprovider = \"extractive\"\n\n[embedding]\nprovider = \"none\"\n\n[search]\ndefault_mode = \"lexical\"\n",
    );
    common::cargo_and_tea_notes(&env);
    env
}

/// `own\xFFership`: an argument no UTF-8 decoder accepts.
fn not_utf8() -> OsString {
    OsStr::from_bytes(b"own\xffership").to_os_string()
}

fn run_os(env: &Env, args: &[OsString]) -> std::process::Output {
    let mut cmd = env.cmd(&[]);
    cmd.args(args);
    cmd.output().expect("run kebab")
}

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

// ---- 1 and the hostile-input row -------------------------------------------

#[test]
fn a_query_that_is_not_utf8_is_bad_input_naming_the_query() {
    let env = notes_env();
    let mut args = os(&["--json", "search"]);
    args.push(not_utf8());
    let out = run_os(&env, &args);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["code"], "bad_input");
    assert!(doc["message"].as_str().unwrap().contains("query"), "{doc}");
    assert!(stderr(&out).contains("not valid UTF-8"), "{}", stderr(&out));

    let mut args = os(&["ask", "what", "is"]);
    args.push(not_utf8());
    let out = run_os(&env, &args);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("the question"), "{}", stderr(&out));
}

#[test]
fn every_subcommand_given_a_non_utf8_argument_exits_1_with_a_message() {
    let env = notes_env();
    let bad = not_utf8();
    // Each row puts the bad bytes where that command takes text or a path.
    let rows: Vec<Vec<OsString>> = vec![
        vec!["search".into(), bad.clone()],
        vec!["ask".into(), bad.clone()],
        vec!["ingest".into(), bad.clone()],
        vec!["repl".into(), "--session".into(), bad.clone()],
        vec!["--repl".into(), "--session".into(), bad.clone()],
        vec!["sessions".into(), "show".into(), bad.clone()],
        vec!["sessions".into(), "export".into(), bad.clone()],
        vec!["sessions".into(), "rm".into(), bad.clone()],
        vec!["sessions".into(), "rename".into(), bad.clone(), "fine".into()],
        vec!["docs".into(), "--path-glob".into(), bad.clone()],
        vec!["stats".into(), bad.clone()],
        vec!["doctor".into(), bad.clone()],
        vec!["init".into(), bad.clone()],
        vec!["eval".into(), "retrieval".into(), "--queries".into(), bad.clone(), "--qrels".into(), bad.clone()],
        vec!["eval".into(), "gate".into(), "--set".into(), bad.clone()],
        vec!["models".into(), "status".into(), bad.clone()],
        vec!["config".into(), "show".into(), bad.clone()],
        vec!["--config".into(), bad.clone(), "search".into(), "tea".into()],
        vec!["--data-dir".into(), bad.clone(), "stats".into()],
        vec![bad.clone()],
    ];
    for row in rows {
        let out = run_os(&env, &row);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "kebab {row:?} exited {:?}: {err}", out.status.code());
        assert!(!err.contains("panicked"), "kebab {row:?}: {err}");
        assert!(err.contains("error"), "kebab {row:?} gave no message: {err}");
    }
}

// ---- 2 ----------------------------------------------------------------------

#[test]
fn a_file_whose_name_is_not_utf8_is_ingested_found_and_unchanged_next_time() {
    let env = notes_env();
    let dir = env.path("latin");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(OsStr::from_bytes(b"caf\xe9.md"));
    std::fs::write(&file, "# Cafe\n\nThe espresso machine descales every fortnight.\n").unwrap();

    // Named on the command line by its raw bytes.
    let mut args = os(&["--json", "ingest"]);
    args.push(file.clone().into_os_string());
    let out = run_os(&env, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["added"], 1, "{doc}");

    let hits = env.json(&["search", "espresso"]);
    let path = hits["hits"][0]["doc_path"].as_str().unwrap().to_string();
    assert!(path.ends_with("caf\\xE9.md"), "{path}");

    // The stored name maps back to the same file: unchanged, and not pruned.
    let again = env.json(&["ingest", "--prune", dir.to_str().unwrap()]);
    assert_eq!((again["added"].as_u64(), again["unchanged"].as_u64(), again["removed"].as_u64()), (Some(0), Some(1), Some(0)), "{again}");
}

#[test]
fn a_folder_whose_name_is_not_utf8_is_walked_again_by_a_bare_ingest_and_named_in_its_own_spelling() {
    let env = notes_env();
    let dir = env.path("").join(OsStr::from_bytes(b"caf\xe9"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("menu.md"), "# Menu\n\nThe espresso machine descales every fortnight.\n").unwrap();
    let mut args = os(&["--json", "ingest"]);
    args.push(dir.clone().into_os_string());
    let out = run_os(&env, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // The folder's name as document paths spell a name: its stray byte as \xE9, not lost.
    let hits = env.json(&["search", "espresso"]);
    assert_eq!(hits["hits"][0]["doc_path"], "caf\\xE9/menu.md", "{hits}");
    let stats = env.json(&["stats"]);
    let root = stats["roots"].as_array().unwrap().iter().find(|r| r["name"] == "caf\\xE9").unwrap_or_else(|| panic!("{stats}"));
    assert!(root["path"].as_str().unwrap().ends_with("/caf\\xE9"), "{stats}");

    // With no PATH the remembered folder is found where it is: walked, not "not there".
    std::fs::write(dir.join("more.md"), "# More\n\nThe grinder is cleaned on Sundays.\n").unwrap();
    let out = env.run(&["--json", "ingest"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((doc["added"].as_u64(), doc["missing"].as_u64()), (Some(1), Some(0)), "{doc}");
    let doctor = env.run(&["doctor"]);
    assert!(!String::from_utf8_lossy(&doctor.stdout).contains("no longer exists"), "{}", String::from_utf8_lossy(&doctor.stdout));
}

// ---- 3 and 4: read-only data ------------------------------------------------

/// Whether permission bits stop this process writing (false for root).
fn permissions_bind(dir: &Path) -> bool {
    let probe = dir.join("probe");
    std::fs::write(&probe, "x").unwrap();
    std::fs::set_permissions(&probe, std::fs::Permissions::from_mode(0o444)).unwrap();
    let bound = std::fs::OpenOptions::new().write(true).open(&probe).is_err();
    std::fs::remove_file(&probe).unwrap();
    bound
}

fn turns(env: &Env, name: &str) -> usize {
    env.json(&["sessions", "show", name])["turns"].as_array().unwrap().len()
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
    names.sort();
    names
}

#[test]
fn read_only_data_is_searched_asked_and_shown_and_never_written() {
    let env = notes_env();
    env.ok(&["ask", "--session", "tea", "How do I build the project with cargo?"]);
    assert_eq!(turns(&env, "tea"), 1);
    let db = env.database();
    let dir = db.parent().unwrap().to_path_buf();
    let bound = permissions_bind(&dir);
    let before = std::fs::read(&db).unwrap();
    let files_before = listing(&dir);
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    if !bound {
        eprintln!("running as a user the kernel lets write anyway (root): kebab must still go read-only by the permission bits");
    }

    // No --readonly: the permissions alone make it a read-only open.
    let out = env.run(&["search", "steeps"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("tea.md"));
    assert!(stderr(&out).contains("read-only"), "{}", stderr(&out));
    let out = env.run(&["ask", "--session", "tea", "How do I create a new project with cargo?"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("cargo new"), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(stderr(&out).contains("this turn was not saved to session tea"), "{}", stderr(&out));
    assert_eq!(turns(&env, "tea"), 1, "a read-only ask must not add a turn");

    let doctor = env.run(&["doctor"]);
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(!text.contains("aside") && !text.contains("rebuild"), "{text}");
    assert!(text.contains("read-only"), "{text}");

    // Writes are refused with a clear error, not a SQLite message.
    let out = env.run(&["ingest", env.notes().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));

    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert!(std::fs::read(&db).unwrap() == before, "the database file changed");
    assert_eq!(listing(&dir), files_before, "files appeared or vanished beside the database");
}

/// Puts the data dir's permission bits back when dropped, so the temp dir can go.
struct Writable(std::path::PathBuf);

impl Drop for Writable {
    fn drop(&mut self) {
        let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(0o755));
        let _ = std::fs::set_permissions(self.0.join("kebab.db"), std::fs::Permissions::from_mode(0o644));
    }
}

/// The database and its folder made read-only by their permission bits (no
/// `--readonly`), which kebab goes by even for root.
fn read_only_by_permissions(env: &Env) -> Writable {
    let db = env.database();
    let dir = db.parent().unwrap().to_path_buf();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    Writable(dir)
}

#[test]
fn writes_refused_on_data_read_only_by_permissions_name_the_file_not_the_flag() {
    let env = notes_env();
    let _undo = read_only_by_permissions(&env);
    let db = env.database();
    let notes = env.notes();
    for args in [vec!["ingest", notes.to_str().unwrap()], vec!["watch", notes.to_str().unwrap()], vec!["sessions", "rm", "tea"]] {
        let out = env.run(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(!err.contains("--readonly is set") && !err.contains("drop --readonly"), "{args:?}: no flag was given: {err}");
        assert!(err.contains(db.to_str().unwrap()) && err.contains("not writable"), "{args:?}: names the file: {err}");
        assert!(err.contains("hint:") && err.contains("permissions") && err.contains("--readonly"), "{args:?}: {err}");
    }
    // The flag itself is still named as the reason when it is the reason.
    let out = env.run(&["--readonly", "ingest", notes.to_str().unwrap()]);
    assert!(stderr(&out).contains("--readonly is set"), "{}", stderr(&out));
}

#[test]
fn init_on_data_read_only_by_permissions_reports_it_ready_and_read_only() {
    let env = notes_env();
    let before = std::fs::read(env.database()).unwrap();
    let _undo = read_only_by_permissions(&env);
    let out = env.run(&["init"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ready") && text.contains("read-only"), "{text}");
    assert!(std::fs::read(env.database()).unwrap() == before, "init wrote to read-only data");
}

#[test]
fn readonly_flag_and_env_open_without_switching_journal_or_migrating() {
    let env = notes_env();
    let db = env.database();
    // A database in rollback-journal mode: a write open would switch it to WAL.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.pragma_update(None, "journal_mode", "DELETE").unwrap();
    drop(conn);
    let before = std::fs::read(&db).unwrap();
    let out = env.run(&["--readonly", "search", "steeps"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = env.cmd(&["ask", "What does cargo build do?"]).env("KEBAB_READONLY", "1").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(std::fs::read(&db).unwrap() == before, "a read-only run rewrote the database");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let mode: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0)).unwrap();
    assert_eq!(mode, "delete");

    // A schema that needs migrating is said, not done.
    conn.pragma_update(None, "user_version", 1).unwrap();
    drop(conn);
    let out = env.run(&["--readonly", "search", "steeps"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("needs an upgrade"), "{}", stderr(&out));
}

// ---- 5 and 6 ----------------------------------------------------------------

#[test]
fn prune_keeps_a_file_still_on_disk_that_auto_format_does_not_read() {
    let env = notes_env();
    let rst = env.write("bad/x.rst", "Quilting\n\nThe quilt frame folds flat.\n");
    env.ok(&["ingest", "--format", "md", rst.to_str().unwrap()]);
    let pruned = env.json(&["ingest", "--prune", env.path("bad").to_str().unwrap()]);
    assert_eq!(pruned["removed"], 0, "{pruned}");
    assert!(env.ok(&["search", "quilt"]).contains("x.rst"));
    // Really gone: then it goes.
    std::fs::remove_file(&rst).unwrap();
    let pruned = env.json(&["ingest", "--prune", env.path("bad").to_str().unwrap()]);
    assert_eq!(pruned["removed"], 1, "{pruned}");
}

#[test]
fn a_named_file_of_an_unsupported_type_is_reported_and_exits_1() {
    let env = notes_env();
    let rst = env.write("bad/x.rst", "Quilting\n");
    let out = env.run(&["ingest", rst.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("x.rst") && err.contains("unsupported extension .rst") && err.contains("--format"), "{err}");
}

// ---- 7 ----------------------------------------------------------------------

#[test]
fn k_below_default_k_is_honoured_by_ask_and_the_repl() {
    let env = common::research_env();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n\n[search]\ndefault_k = 8\ndefault_mode = \"lexical\"\n");
    let a = env.json(&["ask", "-k", "3", "How do beekeepers treat varroa mites?"]);
    assert_eq!(a["retrieval"]["k"], 3, "{}", a["retrieval"]);
    assert!(a["retrieval"]["chunks_returned"].as_u64().unwrap() <= 3, "{}", a["retrieval"]);
    let (_, out, _) = common::repl(&env, &["repl"], ":k 3\n");
    assert!(out.contains("k 3") && !out.contains("minimum"), "{out}");
}

// ---- 8 and 9 ----------------------------------------------------------------

#[test]
fn a_config_named_explicitly_that_does_not_exist_is_an_error_naming_it() {
    let env = notes_env();
    let missing = env.path("nowhere/kebab.toml");
    let out = env.run(&["--config", missing.to_str().unwrap(), "search", "tea"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains(missing.to_str().unwrap()), "{}", stderr(&out));
    let out = env.cmd(&["search", "tea"]).env("KEBAB_CONFIG", &missing).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // init writes the config it is pointed at.
    env.ok(&["--config", missing.to_str().unwrap(), "init"]);
    assert!(missing.exists());
}

#[test]
fn a_data_dir_that_is_a_file_is_named_as_one() {
    let env = Env::new();
    let file = env.write("plain.txt", "not a folder");
    let out = env.run(&["--data-dir", file.to_str().unwrap(), "stats"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("is a file, not a folder"), "{}", stderr(&out));
}

#[test]
fn read_commands_on_a_missing_data_dir_create_nothing_and_say_how_to_start() {
    let env = Env::new();
    let data = env.path("fresh");
    for args in [vec!["stats"], vec!["ask", "what is tea?"], vec!["search", "tea"], vec!["docs"], vec!["sessions", "list"]] {
        let mut all = vec!["--data-dir", data.to_str().unwrap()];
        all.extend(&args);
        let out = env.run(&all);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("nothing is indexed yet") && stderr(&out).contains(" ingest PATH"), "{args:?}: {}", stderr(&out));
        assert!(!data.exists(), "{args:?} created {}", data.display());
    }
}

#[test]
fn read_commands_on_an_empty_database_file_change_nothing_and_say_how_to_start() {
    let env = Env::new();
    // A 0-byte kebab.db (`touch`, a create cut short): SQLite would take it for a new database.
    let db = env.write("data/kebab/kebab.db", "");
    let folder = db.parent().unwrap().to_path_buf();
    let listing = || std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().file_name()).collect::<Vec<_>>();
    for args in [vec!["stats"], vec!["--json", "stats"], vec!["--readonly", "stats"], vec!["search", "tea"], vec!["docs"]] {
        let out = env.run(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("nothing is indexed yet") && err.contains("kebab ingest PATH"), "{args:?}: {err}");
        assert_eq!(std::fs::metadata(&db).unwrap().len(), 0, "{args:?} wrote to the empty database");
        assert_eq!(listing(), ["kebab.db"], "{args:?} left files beside it");
    }
    let doctor = env.run(&["doctor"]);
    assert!(String::from_utf8_lossy(&doctor.stdout).contains("is empty"), "{}", String::from_utf8_lossy(&doctor.stdout));
    assert_eq!(std::fs::metadata(&db).unwrap().len(), 0, "doctor wrote to the empty database");
    // Ingest is what fills it.
    env.write("notes/tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    assert_eq!(env.json(&["stats"])["documents"], 1);
}

// ---- 10 ---------------------------------------------------------------------

#[test]
fn a_question_piped_on_stdin_is_asked_as_one_question() {
    let env = notes_env();
    for args in [vec!["--json", "ask", "-"], vec!["--json", "ask"]] {
        let (code, out, err) = common::repl(&env, &args, "How do I create a new project\nwith cargo?\n");
        assert_eq!(code, 0, "{err}");
        let a: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(a["retrieval"]["retrieval_query"], "How do I create a new project with cargo?", "{args:?}");
        assert!(a["answer"].as_str().unwrap().contains("cargo new"), "{a}");
    }
}

// ---- 11 ---------------------------------------------------------------------

/// A fake Ollama that embeds every text as a fixed 4-number vector.
fn fake_embedder() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        use std::io::Write;
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let (_, body) = common::read_request(&conn);
            let req: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            let n = req["input"].as_array().map_or(0, Vec::len);
            let vectors: Vec<_> = (0..n).map(|i| serde_json::json!([1.0, 0.5, 0.25, (i % 5) as f32])).collect();
            let json = serde_json::json!({"model": "emb", "embeddings": vectors}).to_string();
            let _ = write!(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{json}", json.len());
        }
    });
    url
}

#[test]
fn piped_embedding_prints_progress_lines_and_says_it_resumes() {
    let env = notes_env(); // indexed with no embedder: every chunk waits for a vector
    let url = fake_embedder();
    env.write(
        "config/kebab/config.toml",
        format!("[llm]\nprovider = \"extractive\"\n\n[embedding]\nprovider = \"ollama\"\nmodel = \"emb\"\nbase_url = \"{url}\"\n"),
    );
    let chunks = env.json(&["stats"])["chunks"].as_u64().unwrap();
    let out = env.run(&["ingest", env.notes().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(&format!("embedding {chunks} chunks left from an earlier run")), "{err}");
    // Off a terminal: a plain line with done/total, a two-decimal rate and an ETA.
    let line = err.lines().find(|l| l.starts_with(&format!("{chunks}/{chunks} chunks embedded"))).unwrap_or_else(|| panic!("{err}"));
    let rate = line.split(" · ").nth(1).unwrap();
    let (number, unit) = rate.split_once('/').unwrap();
    assert_eq!(unit, "s", "{line}");
    assert_eq!(number.split_once('.').map(|(_, d)| d.len()), Some(2), "{line}");
    assert!(line.contains("ETA"), "{line}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("nothing changed") && stdout.contains("resumed embedding"), "{stdout}");
}

// ---- 12 and 13 --------------------------------------------------------------

#[test]
fn init_prints_next_steps_from_model_install_to_the_repl() {
    let env = Env::new();
    let out = env.ok(&["init"]);
    for step in ["kebab models install", "kebab ingest", "kebab --repl"] {
        assert!(out.contains(step), "{out}");
    }
}

#[test]
fn init_next_steps_keep_the_config_and_data_dir_it_ran_with_quoted_for_a_shell() {
    let env = Env::new();
    let config = env.path("my notes/other.toml");
    let data = env.path("kb-data");
    let out = env.ok(&["--config", config.to_str().unwrap(), "--data-dir", data.to_str().unwrap(), "init"]);
    let flags = format!("--config '{}' --data-dir {}", config.display(), data.display());
    for step in ["models install", "ingest ~/notes", "--repl"] {
        assert!(out.contains(&format!("  kebab {flags} {step}")), "{out}");
    }
    assert!(out.contains(&format!("(or `kebab {flags} search QUERY`)")), "{out}");
    // Without either flag the steps stay as short as before.
    let out = Env::new().ok(&["init"]);
    assert!(out.contains("  kebab models install      # "), "{out}");
}

#[test]
fn a_hint_to_run_kebab_names_the_config_and_data_dir_the_command_ran_with() {
    // `kebab --data-dir D search beer` said "run `kebab ingest PATH`": followed, it indexed into the default data dir.
    let env = Env::new();
    let config = env.write("my conf/kebab.toml", "[llm]\nprovider = \"extractive\"\n\n[embedding]\nprovider = \"none\"\n");
    let data = env.path("kb-data");
    let flags = ["--config", config.to_str().unwrap(), "--data-dir", data.to_str().unwrap()];
    let kebab = format!("kebab --config '{}' --data-dir {}", config.display(), data.display());
    for command in [["search", "beer"], ["ask", "beer"]] {
        let out = env.run(&[&flags[..], &command].concat());
        assert_eq!(out.status.code(), Some(1), "{command:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(&format!("hint: run `{kebab} ingest PATH` to index")), "{command:?}: {}", stderr(&out));
    }
    let out = env.run(&[&["--json"], &flags[..], &["ask", "beer"]].concat());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hint = doc["hint"].as_str().unwrap();
    assert!(hint.contains(&format!("(`{kebab} init` first writes a config to edit)")), "{doc}");
    // Followed as printed, by a shell, it indexes into that data dir, and
    // the default one is never made.
    let run = hint.split('`').nth(1).unwrap().replace("PATH", env.notes().to_str().unwrap());
    env.write("notes/beer.md", "# Beer\n\nA stout is brewed with roasted barley.\n");
    let bin = Path::new(env!("CARGO_BIN_EXE_kebab")).parent().unwrap().display().to_string();
    let path = format!("{bin}:{}", std::env::var("PATH").unwrap_or_default());
    let out = env.program("sh").args(["-c", &run]).env("PATH", path).output().unwrap();
    assert!(out.status.success(), "{run}: {}", stderr(&out));
    let found = env.ok(&[&flags[..], &["search", "stout"]].concat());
    assert!(found.contains("notes/beer.md"), "{found}");
    assert!(!env.database().exists() && !env.path("data/kebab").exists(), "{run} indexed into the default data dir");
}

#[test]
fn ingest_without_a_path_rewalks_the_folders_already_indexed() {
    let env = notes_env();
    env.write("notes/coffee.md", "# Coffee\n\nThe grinder sits beside the kettle.\n");
    let out = env.run(&["--json", "ingest"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["added"], 1, "{doc}");
    let notes = std::fs::canonicalize(env.notes()).unwrap();
    assert!(stderr(&out).contains(notes.to_str().unwrap()), "{}", stderr(&out));
}

// ---- 14 ---------------------------------------------------------------------

#[test]
fn cite_lists_cited_sources_first_and_says_when_one_was_not_cited() {
    let env = common::research_env();
    let (code, out, err) = common::repl(&env, &["repl", "--session", "hive"], "How do beekeepers treat varroa mites?\n:cite\n");
    assert_eq!(code, 0, "{err}");
    let (_, rest) = out.split_once("also shown to the model, not cited:").unwrap_or_else(|| panic!("{out}"));
    let n: usize = rest.trim_start().strip_prefix("[#").and_then(|r| r.split(']').next()).unwrap().parse().unwrap();
    let (code, out, err) = common::repl(&env, &["repl", "--session", "hive"], &format!(":cite {n}\n"));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("[#{n}] was shown to the model but not cited")), "{out}");
}

// ---- 15 ---------------------------------------------------------------------

#[test]
fn trace_prints_the_index_expressions_plainly() {
    let env = notes_env();
    let out = env.ok(&["search", "--trace", "green tea"]);
    let line = out.lines().find(|l| l.starts_with("trace: word index")).unwrap_or_else(|| panic!("{out}"));
    assert!(!line.contains("Some(") && line.contains("\"green\""), "{line}");
}

#[test]
fn help_describes_temperature_seed_and_every_evaluation() {
    let env = Env::new();
    let ask = env.ok(&["ask", "--help"]);
    // Long help puts the text on the line after the flag.
    let described = |flag: &str| {
        let mut lines = ask.lines().skip_while(|l| !l.contains(flag));
        lines.next().is_some() && lines.next().is_some_and(|l| l.trim().starts_with("Sampling"))
    };
    assert!(described("--temperature <T>") && described("--seed <S>"), "{ask}");
    let top = env.ok(&["--help"]);
    let eval = top.lines().find(|l| l.trim_start().starts_with("eval ")).unwrap();
    for what in ["retrieval", "answers", "gate", "dialogues"] {
        assert!(eval.contains(what), "{eval}");
    }
}

#[test]
fn one_source_is_singular_and_a_multiline_question_is_one_export_heading() {
    let env = notes_env();
    // One chunk of evidence, so the answer has one source to count.
    env.ok(&["ask", "-k", "1", "--session", "t", "How do I create a new project\nwith cargo?"]);
    let doc = env.json(&["sessions", "show", "t"]);
    assert_eq!(doc["turns"][0]["answer"]["citations"].as_array().unwrap().len(), 1, "{doc}");
    let (_, out, _) = common::repl(&env, &["repl", "--session", "t"], ":history\n");
    assert!(out.contains("(grounded, 1 source)"), "{out}");
    let md = env.ok(&["sessions", "export", "t"]);
    assert!(md.contains("## 1. How do I create a new project with cargo?\n"), "{md}");
}
