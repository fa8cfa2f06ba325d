//! `kebab ingest FILE` makes the file's folder a root (its documents need a
//! name), but only the files named there are remembered: a bare `kebab
//! ingest` or `kebab watch` reads those again, not every file beside them
//! (`kebab ingest ~/todo.md` must not later take in the whole home folder),
//! until the folder itself is named. Roots from before (schema level 12)
//! stay whole folders.

mod common;

use common::Env;
use common::watch::Watch;

/// `loose/caps.md` and `loose/other.md` (and `loose/sub/deep.md`), with
/// `caps.md` alone ingested, as the user named it; returns its path.
fn caps_named(env: &Env) -> std::path::PathBuf {
    let caps = env.write("loose/caps.md", "# Caps\n\nred\n");
    env.write("loose/other.md", "# Other\n\nblue\n");
    env.write("loose/sub/deep.md", "# Deep\n\nindigo\n");
    let s = env.json(&["ingest", caps.to_str().unwrap()]);
    assert_eq!((&s["files_seen"], &s["added"]), (&1.into(), &1.into()), "{s}");
    caps
}

/// (files seen, added, updated, missing, removed) of a `kebab --json ingest ARGS` run.
fn counts(env: &Env, args: &[&str]) -> [u64; 5] {
    let mut all = vec!["ingest"];
    all.extend_from_slice(args);
    let s = env.json(&all);
    ["files_seen", "added", "updated", "missing", "removed"].map(|k| s[k].as_u64().unwrap_or_else(|| panic!("no {k}: {s}")))
}

#[test]
fn a_bare_ingest_after_a_file_named_reads_that_file_again_and_not_the_files_beside_it() {
    let env = Env::new();
    let caps = caps_named(&env);
    std::fs::write(&caps, "# Caps\n\nred and green\n").unwrap();
    assert_eq!(counts(&env, &[]), [1, 0, 1, 0, 0], "caps.md read again (updated), other.md not read");
    assert_eq!(env.doc_paths(), ["loose/caps.md"]);
    let stats = env.json(&["stats"]);
    assert_eq!(stats["roots"][0]["whole_folder"], false, "{stats}");

    // Deleted, it is gone as a file deleted from a folder walked is: missing, then removed by --prune.
    std::fs::remove_file(&caps).unwrap();
    assert_eq!(counts(&env, &[]), [0, 0, 0, 1, 0]);
    assert_eq!(counts(&env, &["--prune"]), [0, 0, 0, 0, 1]);
    assert!(env.doc_paths().is_empty(), "{:?}", env.doc_paths());
}

/// The `root` line of `kebab stats`.
fn stats_root_line(env: &Env) -> String {
    let human = env.ok(&["stats"]);
    human.lines().find(|l| l.starts_with("root ")).unwrap_or_else(|| panic!("{human}")).to_string()
}

#[test]
fn stats_marks_a_root_of_named_files_inside_the_brackets_that_count_its_documents() {
    // It said `(1 document) (only the files named in it)`: two remarks side by side.
    let env = Env::new();
    caps_named(&env);
    assert!(stats_root_line(&env).ends_with("/loose (1 document; only the files named in it)"), "{}", stats_root_line(&env));
    env.json(&["ingest", env.path("loose").to_str().unwrap()]);
    assert!(stats_root_line(&env).ends_with("/loose (3 documents)"), "{}", stats_root_line(&env));
}

#[test]
fn naming_a_second_file_adds_it_and_naming_the_folder_makes_the_whole_folder_remembered() {
    let env = Env::new();
    caps_named(&env);
    let other = env.path("loose/other.md");
    env.json(&["ingest", other.to_str().unwrap()]);
    env.write("loose/later.md", "# Later\n\ngreen\n");
    assert_eq!(counts(&env, &[]), [2, 0, 0, 0, 0], "caps.md and other.md, not later.md");
    assert_eq!(env.doc_paths(), ["loose/caps.md", "loose/other.md"]);

    let folder = env.path("loose");
    assert_eq!(counts(&env, &[folder.to_str().unwrap()]), [4, 2, 0, 0, 0], "later.md and sub/deep.md added");
    env.write("loose/newest.md", "# Newest\n\nviolet\n");
    assert_eq!(counts(&env, &[]), [5, 1, 0, 0, 0], "the bare run walks the folder now");
    let paths = ["loose/caps.md", "loose/later.md", "loose/newest.md", "loose/other.md", "loose/sub/deep.md"];
    assert_eq!(env.doc_paths(), paths, "the same root, its documents' paths unchanged");
    assert_eq!(env.json(&["stats"])["roots"][0]["whole_folder"], true);
}

#[test]
fn a_folder_named_below_one_where_only_a_file_was_named_is_a_whole_root_of_its_own() {
    let env = Env::new();
    caps_named(&env);
    let sub = env.path("loose/sub");
    assert_eq!(counts(&env, &[sub.to_str().unwrap()]), [1, 1, 0, 0, 0]);
    assert_eq!(env.doc_paths(), ["loose/caps.md", "sub/deep.md"], "named as the folder named, not under loose/");
    env.write("loose/sub/more.md", "# More\n\nsilver\n");
    assert_eq!(counts(&env, &[]), [3, 1, 0, 0, 0], "sub/ walked whole (more.md added), loose/ for caps.md alone");
}

#[test]
fn a_root_made_from_a_file_by_schema_level_12_stays_a_whole_folder() {
    let env = Env::new();
    caps_named(&env);
    // As kebab left it at level 12: no whole_folder column, every root walked whole by a bare run.
    rusqlite::Connection::open(env.database())
        .unwrap()
        .execute_batch("ALTER TABLE roots DROP COLUMN whole_folder; PRAGMA user_version = 12;")
        .unwrap();
    assert_eq!(counts(&env, &[]), [3, 2, 0, 0, 0], "the folder walked, as before the upgrade");
    let stats = env.json(&["stats"]);
    assert_eq!((&stats["schema_level"], &stats["roots"][0]["whole_folder"]), (&kebab::store::SCHEMA_LEVEL.into(), &true.into()));
}

#[test]
fn a_bare_watch_after_a_file_named_follows_that_file_and_not_the_files_beside_it() {
    let env = Env::new();
    let caps = caps_named(&env);
    let mut w = Watch::start(&env, &[]);
    env.write("loose/other.md", "# Other\n\nblue and grey\n");
    env.write("loose/new.md", "# New\n\norange\n");
    env.write("loose/sub/deep.md", "# Deep\n\nindigo and black\n");
    std::fs::write(&caps, "# Caps\n\nred and green\n").unwrap();
    w.wait_for("caps.md updated", |e| e["event"] == "updated" && e["path"] == "loose/caps.md");
    std::fs::remove_file(&caps).unwrap();
    w.wait_for("caps.md removed", |e| e["event"] == "removed" && e["path"] == "loose/caps.md");
    let besides: Vec<_> = w.seen.iter().filter(|e| e["event"] != "watching" && e["path"] != "loose/caps.md").collect();
    assert!(besides.is_empty(), "only caps.md is followed: {besides:?}");
    w.interrupt();
    assert!(env.doc_paths().is_empty(), "{:?}", env.doc_paths());
}

#[test]
fn a_gone_folder_where_only_files_were_named_is_warned_about_as_such_not_as_an_indexed_folder() {
    // Both were warned about as `indexed folder …`, though only caps.md of loose/ was indexed.
    let env = Env::new();
    caps_named(&env);
    env.write("whole/w.md", "# W\n\nteal\n");
    env.json(&["ingest", env.path("whole").to_str().unwrap()]);
    let (loose, whole) = (std::fs::canonicalize(env.path("loose")).unwrap(), std::fs::canonicalize(env.path("whole")).unwrap());
    std::fs::rename(&loose, env.path("loose.off")).unwrap();
    std::fs::rename(&whole, env.path("whole.off")).unwrap();
    let named =
        format!("warning: folder {}, of which only the files named were indexed, is not there: its 1 document is kept", loose.display());
    let walked = format!("warning: indexed folder {} is not there: its 1 document is kept", whole.display());
    for command in ["ingest", "watch"] {
        let out = env.run(&[command]);
        let err = common::stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{command}: {err}");
        assert!(err.contains(&named) && err.contains(&walked), "{command}: {err}");
    }
}
