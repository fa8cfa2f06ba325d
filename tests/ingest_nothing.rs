//! `kebab ingest` (and `kebab watch`) given nothing it can index: a path
//! that is not there fails naming it, and leaves no database it never used;
//! a database already there is left as it was.

mod common;

use common::{Env, stderr};

/// The data dir's entries with their sizes and modification times.
fn data_dir_state(env: &Env) -> Vec<(String, u64, std::time::SystemTime)> {
    let Ok(entries) = std::fs::read_dir(env.database().parent().unwrap()) else { return Vec::new() };
    let mut state: Vec<_> = entries
        .map(|e| {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            (e.file_name().to_string_lossy().to_string(), m.len(), m.modified().unwrap())
        })
        .collect();
    state.sort();
    state
}

#[test]
fn a_path_that_is_not_there_fails_naming_it_and_creates_no_database() {
    let env = Env::new();
    let gone = env.path("no/such/notes");
    for command in ["ingest", "watch"] {
        let out = env.run(&[command, gone.to_str().unwrap()]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{command}: {err}");
        assert!(err.contains(&format!("cannot ingest {}: No such file or directory", gone.display())), "{command}: {err}");
        assert!(!env.database().exists(), "{command} created {} for a path that is not there", env.database().display());
    }
    // No PATH, no workspace.roots and no database: nothing to ingest, and still no database.
    let out = env.run(&["ingest"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("nothing to ingest"), "{}", stderr(&out));
    assert!(!env.database().exists(), "a bare ingest created {}", env.database().display());
    // A database already there is not touched, and the run says the same.
    env.write("notes/tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let before = (std::fs::read(env.database()).unwrap(), data_dir_state(&env));
    let out = env.run(&["ingest", gone.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!("cannot ingest {}", gone.display())), "{}", stderr(&out));
    assert_eq!((std::fs::read(env.database()).unwrap(), data_dir_state(&env)), before, "the database changed");
}

#[test]
fn an_ingest_that_indexes_nothing_leaves_no_new_database_and_keeps_one_already_there() {
    // A folder of pictures, or one picture, was skipped (exit 1) and an empty
    // kebab.db made all the same; so was a workspace.roots folder of them.
    let env = Env::new();
    env.write("pics/cat.png", [0x89u8, b'P', b'N', b'G']);
    let data_dir = env.database().parent().unwrap().to_path_buf();
    for named in ["pics", "pics/cat.png"] {
        let out = env.run(&["ingest", env.path(named).to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{named}: {}", stderr(&out));
        assert!(stderr(&out).contains("nothing named could be ingested"), "{named}: {}", stderr(&out));
        assert!(!data_dir.exists(), "ingest {named} created {}: {:?}", data_dir.display(), data_dir_state(&env));
    }
    env.write("config/kebab/config.toml", format!("[workspace]\nroots = [{:?}]\n", env.path("pics")));
    let out = env.run(&["ingest"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!data_dir.exists(), "a bare ingest created {}: {:?}", data_dir.display(), data_dir_state(&env));
    // A database already there stays, holding what it held.
    std::fs::remove_file(env.config_file()).unwrap();
    env.write("notes/tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let out = env.run(&["ingest", env.path("pics").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(roots(&env), ["notes"]);
    assert_eq!(env.json(&["stats"])["documents"], 1);
}

#[test]
fn an_ingest_that_indexes_nothing_leaves_a_database_already_there_byte_for_byte_as_it_was() {
    // The folder was made a root and forgotten again, two writes that changed
    // kebab.db's bytes (its change counter, the freed pages) for nothing.
    let env = Env::new();
    env.write("notes/tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n");
    env.write("pics/cat.png", [0x89u8, b'P', b'N', b'G']);
    env.write("binary/a.md", b"\0\0\0");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let before = (std::fs::read(env.database()).unwrap(), data_dir_state(&env));
    for named in ["pics", "pics/cat.png", "binary", "binary/a.md"] {
        let out = env.run(&["ingest", env.path(named).to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{named}: {}", stderr(&out));
        let after = (std::fs::read(env.database()).unwrap(), data_dir_state(&env));
        assert!(after == before, "ingest {named} changed the database: {:?} became {:?}", before.1, after.1);
    }
    assert_eq!(roots(&env), ["notes"]);
}

#[test]
fn a_lone_skip_that_fails_the_run_says_its_reason_in_the_error_and_what_to_do_in_the_hint_each_once() {
    // `warning: skipped pics/cat.png: …` came first, then the error said it again word for word; then the
    // error gave the reason with its fix and the hint "see the reasons given; `--format md|txt` reads a
    // file whatever its extension", the fix once more.
    let env = Env::new();
    let cat = env.write("pics/cat.png", [0x89u8, b'P', b'N', b'G']);
    let nul = env.write("binary/a.md", b"\0\0\0");
    let (cat, nul) = (cat.to_str().unwrap(), nul.to_str().unwrap());
    let png = "skipped pics/cat.png: unsupported extension .png";
    let fix = "use --format md|txt|jsonl|html|pdf to read it as one of those";
    for args in [vec!["ingest", cat], vec!["--json", "ingest", cat]] {
        let out = env.run(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(&format!("error: nothing named could be ingested: {png}\nhint: {fix}\n")), "{args:?}: {err}");
        assert_eq!((err.matches("skipped pics/cat.png").count(), err.matches("--format").count()), (1, 1), "{args:?}: {err}");
        assert!(!err.contains("see the reasons given"), "{args:?}: {err}");
    }
    let out = env.run(&["--json", "ingest", cat]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((&doc["message"], &doc["hint"]), (&format!("nothing named could be ingested: {png}").into(), &fix.into()), "{doc}");
    // A note skipped for what it holds, counted as read: the same.
    let out = env.run(&["ingest", nul]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let binary = "skipped binary/a.md: binary file (contains NUL bytes)\nhint: if it is not a note, list it in workspace.exclude\n";
    assert!(err.contains(&format!("error: nothing named could be ingested: {binary}")), "{err}");
    assert_eq!((err.matches("skipped binary/a.md").count(), err.matches("workspace.exclude").count()), (1, 1), "{err}");
    // Two skips are each warned about, once, and the error counts them.
    let out = env.run(&["ingest", cat, nul]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("warning: {png}; {fix}\n")) && err.contains("warning: skipped binary/a.md: binary file"), "{err}");
    assert_eq!((err.matches("skipped pics/cat.png").count(), err.matches("skipped binary/a.md").count()), (1, 1), "{err}");
    assert!(err.contains("error: nothing named could be ingested: 2 skipped\n"), "{err}");
}

#[test]
fn a_bare_watch_with_nothing_indexed_says_there_is_nothing_to_watch_and_creates_no_database() {
    // It said so, after making an empty kebab.db (and the data dir it lies in).
    let env = Env::new();
    let out = env.run(&["watch"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("nothing to watch: no PATH given, workspace.roots is empty and nothing is indexed yet"), "{err}");
    let data_dir = env.database().parent().unwrap().to_path_buf();
    assert!(!data_dir.exists(), "watch created {}: {:?}", data_dir.display(), data_dir_state(&env));
}

/// The roots `kebab stats` lists, by name.
fn roots(env: &Env) -> Vec<String> {
    let stats = env.json(&["stats"]);
    stats["roots"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_folder_with_no_note_kebab_reads_fails_naming_it_and_the_formats_and_is_not_remembered() {
    // It said "nothing changed: 0 documents in 0 files unchanged", exit 0, and
    // kept the folder as a root that a bare `kebab ingest` walked ever after.
    let env = Env::new();
    env.write("pics/cat.png", [0x89u8, b'P', b'N', b'G']);
    let pics = env.path("pics");
    let out = env.run(&["ingest", pics.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("skipped pics: holds no file kebab reads (.md, .markdown"), "{err}");
    assert!(err.contains(".pdf), only 1 other file (pics/cat.png)"), "{err}");
    // Notes whose every file is skipped make no root either; each file says why.
    env.write("binary/a.md", b"\0\0\0");
    let binary = env.path("binary");
    let out = env.run(&["ingest", binary.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("skipped binary/a.md: binary file"), "{}", stderr(&out));
    // No root, nor even a database, is left of either.
    assert!(!env.database().exists());
    // Beside a folder of notes the run succeeds, says what it skipped, and keeps only the notes' root.
    env.write("notes/tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n");
    let out = env.run(&["ingest", env.notes().to_str().unwrap(), pics.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("skipped pics: holds no file kebab reads"), "{}", stderr(&out));
    assert_eq!(roots(&env), ["notes"]);
    // A folder of notes all deleted is pruned as before, and a bare run walks the notes alone.
    std::fs::remove_file(env.path("notes/tea.md")).unwrap();
    let s = env.json(&["ingest", "--prune", env.notes().to_str().unwrap()]);
    assert_eq!(s["removed"], 1, "{s}");
    env.write("notes/tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n");
    let s = env.json(&["ingest"]);
    assert_eq!((s["added"].as_u64(), s["skipped"].as_u64()), (Some(1), Some(0)), "{s}");
}

#[test]
fn kebab_s_own_data_is_never_read_as_notes_and_naming_its_folder_says_so() {
    // `kebab ingest DATA_DIR` advised "`--format md|txt|jsonl|html|pdf` reads every file in it", and
    // `--format txt DATA_DIR` then indexed kebab.db-wal (and the model's JSON files) as notes.
    let env = Env::new();
    env.write("notes/tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let data = env.database().parent().unwrap().to_str().unwrap().to_string();
    let said = "error: nothing named could be ingested: skipped kebab: kebab's own data (the index, kebab.db, and the model \
                files in its folder), not notes\nhint: name the folder your notes are in\n";
    for args in [vec!["ingest", &data], vec!["ingest", "--format", "txt", &data]] {
        let out = env.run(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(said) && !err.contains("--format"), "{args:?}: {err}");
    }
    // The embedding model's folder in it, too.
    let model = env.write("data/kebab/models/all-MiniLM-L6-v2/config.json", "{\"hidden_size\": 384}\n");
    let out = env.run(&["ingest", "--format", "txt", model.parent().unwrap().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("skipped all-MiniLM-L6-v2: kebab's own data (the index"), "{}", stderr(&out));
    assert_eq!(env.json(&["stats"])["documents"], 1);
    // Kept with the notes, the data folder's index and model are still not notes, even under --format txt.
    let notes = env.notes().to_str().unwrap().to_string();
    let beside = ["--data-dir", &notes];
    env.write("notes/models/all-MiniLM-L6-v2/config.json", "{\"hidden_size\": 384}\n");
    let out = env.run(&[&beside[..], &["ingest", "--format", "txt", &notes]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let docs = env.json(&[&beside[..], &["docs"]].concat());
    let paths: Vec<&str> = docs["documents"].as_array().unwrap().iter().map(|d| d["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["notes/tea.md"]);
}
