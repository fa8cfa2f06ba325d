//! `kebab ingest` end to end: what gets indexed, what is skipped and why,
//! that re-runs touch only what changed, and what a re-run does about a
//! folder it remembers that is gone.

mod common;

use common::{Env, stderr};
use serde_json::Value;

fn three_notes(env: &Env) {
    env.write("notes/a.md", "# Alpha\n\nThe heron stands in the shallows.\n\n## Detail\n\nIt waits for fish.\n");
    env.write("notes/b.txt", "Plain text about lanterns.\n\nSecond paragraph about wicks.\n");
    env.write("notes/sub/c.md", "# Gamma\n\nCopper kettles tarnish.\n");
}

/// Three notes, ingested once; returns the env and the notes folder's path.
fn ingested_notes() -> (Env, String) {
    let env = Env::new();
    three_notes(&env);
    let notes = env.notes().to_str().unwrap().to_string();
    env.ok(&["ingest", &notes]);
    (env, notes)
}

/// chunk ids of every hit for `query`, keyed by path.
fn chunk_ids(env: &Env, query: &str) -> Vec<(String, i64)> {
    let v = env.json(&["search", "-k", "50", query]);
    v["hits"].as_array().unwrap().iter().map(|h| (h["doc_path"].as_str().unwrap().to_string(), h["chunk_id"].as_i64().unwrap())).collect()
}

#[test]
fn first_ingest_adds_every_supported_file_and_ignores_others() {
    let env = Env::new();
    three_notes(&env);
    env.write("notes/picture.png", [0x89u8, b'P', b'N', b'G']);
    let notes = env.notes();
    let s = env.json(&["ingest", notes.to_str().unwrap()]);
    assert_eq!(s["schema_version"], "ingest_summary.v1");
    assert_eq!((s["added"].as_u64(), s["updated"].as_u64(), s["skipped"].as_u64()), (Some(3), Some(0), Some(0)));
    assert_eq!(s["files_seen"], 3, "the .png is not a note and is not counted");
    let docs = env.json(&["docs"]);
    let paths: Vec<&str> = docs["documents"].as_array().unwrap().iter().map(|d| d["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["notes/a.md", "notes/b.txt", "notes/sub/c.md"]);
}

#[test]
fn unchanged_tree_touches_nothing_and_says_so() {
    let (env, notes) = ingested_notes();
    let notes = notes.as_str();
    let before = chunk_ids(&env, "heron lanterns copper");
    let s = env.json(&["ingest", notes]);
    assert_eq!((s["added"].as_u64(), s["updated"].as_u64(), s["unchanged"].as_u64()), (Some(0), Some(0), Some(3)));
    assert_eq!(s["chunks_written"], 0);
    assert_eq!(chunk_ids(&env, "heron lanterns copper"), before);
    let human = env.ok(&["ingest", notes]);
    assert!(human.contains("nothing changed"), "{human}");
}

#[test]
fn editing_one_file_rechunks_only_that_file() {
    let (env, notes) = ingested_notes();
    let notes = notes.as_str();
    let before = chunk_ids(&env, "heron lanterns copper");
    env.write("notes/b.txt", "Plain text about lanterns, now edited.\n");
    let s = env.json(&["ingest", notes]);
    assert_eq!((s["updated"].as_u64(), s["unchanged"].as_u64()), (Some(1), Some(2)));
    let after = chunk_ids(&env, "heron lanterns copper");
    for (path, id) in &before {
        let now: Vec<i64> = after.iter().filter(|(p, _)| p == path).map(|(_, i)| *i).collect();
        if path.ends_with("b.txt") {
            assert!(!now.contains(id), "b.txt was re-chunked, so its old chunk ids are gone");
        } else {
            assert!(now.contains(id), "{path} kept chunk {id}");
        }
    }
}

#[test]
fn deleted_files_are_kept_until_prune_removes_them() {
    let (env, notes) = ingested_notes();
    let notes = notes.as_str();
    std::fs::remove_file(env.path("notes/sub/c.md")).unwrap();
    let s = env.json(&["ingest", notes]);
    assert_eq!((s["removed"].as_u64(), s["missing"].as_u64()), (Some(0), Some(1)));
    let out = env.run(&["ingest", notes]);
    assert!(stderr(&out).contains("--prune"), "{}", stderr(&out));
    let s = env.json(&["ingest", "--prune", notes]);
    assert_eq!(s["removed"], 1);
    assert_eq!(env.json(&["docs"])["documents"].as_array().unwrap().len(), 2);
    assert!(chunk_ids(&env, "copper").is_empty());
}

#[test]
fn a_deleted_note_named_again_says_how_to_forget_it() {
    // `kebab ingest --prune notes/sub/c.md` after deleting it said only
    // "check the path exists and is readable", though the index still held
    // it and a prune of its folder forgets it.
    let (env, notes) = ingested_notes();
    let gone = env.path("notes/sub/c.md");
    std::fs::remove_file(&gone).unwrap();
    for args in [vec!["ingest", "--prune", gone.to_str().unwrap()], vec!["ingest", env.path("notes/sub").to_str().unwrap(), gone.to_str().unwrap()]] {
        let out = env.run(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(&format!("cannot ingest {}", gone.display())), "{err}");
        assert!(err.contains("the index still holds 1 document from it") && err.contains(&format!("kebab ingest --prune {notes}")), "{err}");
    }
    std::fs::remove_dir_all(env.path("notes/sub")).unwrap();
    let err = stderr(&env.run(&["ingest", env.path("notes/sub").to_str().unwrap()]));
    assert!(err.contains("the index still holds 1 document from it"), "{err}");
    // A path the index never held keeps the plain hint.
    let err = stderr(&env.run(&["ingest", env.path("never.md").to_str().unwrap()]));
    assert!(err.contains("check the path exists") && !err.contains("still holds"), "{err}");
}

#[test]
fn the_prune_hint_for_a_deleted_note_quotes_a_folder_with_a_space_for_the_shell() {
    let env = Env::new();
    env.write("my notes/a.md", "# Alpha\n\nThe heron stands in the shallows.\n");
    env.write("my notes/b.md", "# Beta\n\nLanterns need wicks.\n");
    let folder = env.path("my notes");
    env.ok(&["ingest", folder.to_str().unwrap()]);
    let gone = env.path("my notes/a.md");
    std::fs::remove_file(&gone).unwrap();
    let err = stderr(&env.run(&["ingest", gone.to_str().unwrap()]));
    assert!(err.contains(&format!("`kebab ingest --prune '{}'`", folder.display())), "{err}");
}

#[test]
fn a_re_run_says_how_many_notes_are_gone_and_that_prune_removes_it_or_them() {
    let (env, notes) = ingested_notes();
    std::fs::remove_file(env.path("notes/a.md")).unwrap();
    let err = stderr(&env.run(&["ingest", &notes]));
    assert!(err.contains("1 document's file is gone; `kebab ingest --prune` removes it from the index"), "{err}");
    std::fs::remove_file(env.path("notes/b.txt")).unwrap();
    let err = stderr(&env.run(&["ingest", &notes]));
    assert!(err.contains("2 documents' files are gone; `kebab ingest --prune` removes them from the index"), "{err}");
}

#[test]
fn bad_files_are_reported_with_reasons_and_the_rest_indexed() {
    let env = Env::new();
    env.write("config/kebab/config.toml", "[workspace]\nmax_file_bytes = 2000\n");
    env.write("notes/good.md", "# Good\n\nA perfectly ordinary note about otters.\n");
    env.write("notes/latin1.md", b"caf\xe9 au lait\n");
    env.write("notes/binary.md", b"PK\x03\x04\x00\x00binary");
    env.write("notes/huge.md", "x".repeat(5000));
    env.write("notes/node_modules/dep/readme.md", "# excluded by default\n");
    let notes = env.notes();
    let out = env.cmd(&["--json", "ingest", notes.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((s["added"].as_u64(), s["skipped"].as_u64()), (Some(1), Some(3)));
    let reasons: Vec<String> = s["skipped_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| format!("{} {}", x["path"].as_str().unwrap(), x["reason"].as_str().unwrap()))
        .collect();
    let find = |name: &str| reasons.iter().find(|r| r.contains(name)).cloned().unwrap_or_default();
    assert!(find("latin1.md").contains("UTF-8"), "{reasons:?}");
    assert!(find("binary.md").contains("binary"), "{reasons:?}");
    assert!(find("huge.md").contains("max_file_bytes"), "{reasons:?}");
    let err = stderr(&out);
    assert!(err.contains("latin1.md") && err.contains("huge.md"), "skips are also told on stderr: {err}");
}

#[test]
fn progress_off_a_terminal_counts_skipped_files_apart_from_those_read_and_its_last_line_accounts_for_all() {
    let env = Env::new();
    env.write("notes/a.md", "# Good\n\nA note about otters.\n");
    // Walked last, and skipped.
    env.write("notes/z.md", b"caf\xe9 au lait\n");
    let out = env.cmd(&["ingest", env.notes().to_str().unwrap()]).output().unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    // It stopped at 1/2, as if the run had ended early; then it said "2/2 files read" of a file it skipped.
    assert!(err.lines().any(|l| l.starts_with("1/2 files read, 1 skipped · ")), "{err}");
    assert!(!err.contains("2/2 files read"), "{err}");
    // A run whose one file was skipped read none.
    let out = env.cmd(&["ingest", env.path("notes/z.md").to_str().unwrap()]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.lines().any(|l| l.starts_with("0/1 files read, 1 skipped · ")), "{err}");
    assert!(!err.contains("1/1 files read"), "{err}");
}

#[test]
fn jsonl_records_become_documents_and_bad_lines_are_skipped() {
    let env = Env::new();
    env.write(
        "beir/corpus.jsonl",
        "{\"_id\":\"d1\",\"title\":\"Walruses\",\"text\":\"Walruses haul out on ice floes.\"}\n\
         this line is broken\n\
         {\"_id\":\"d2\",\"title\":\"Puffins\",\"text\":\"Puffins nest in burrows.\"}\n",
    );
    let corpus = env.path("beir/corpus.jsonl");
    let s = env.json(&["ingest", corpus.to_str().unwrap()]);
    assert_eq!((s["added"].as_u64(), s["skipped"].as_u64()), (Some(2), Some(1)));
    assert!(s["skipped_files"][0]["path"].as_str().unwrap().ends_with("corpus.jsonl:2"));
    let docs = env.json(&["docs"]);
    let d = &docs["documents"][1];
    assert_eq!(d["path"], "beir/corpus.jsonl#d2");
    assert_eq!(d["external_id"], "d2");
    assert_eq!(d["title"], "Puffins");
    let hit = &env.json(&["search", "burrows"])["hits"][0];
    assert_eq!(hit["citation"]["path"], "beir/corpus.jsonl#d2");
    assert_eq!((hit["citation"]["start"].as_u64(), hit["citation"]["end"].as_u64()), (Some(3), Some(3)));
}

#[test]
fn a_jsonl_record_of_a_title_alone_is_found_by_it_and_one_with_no_text_is_a_bad_line() {
    // Both were counted "added" with 0 chunks: documents no search could find.
    let env = Env::new();
    let corpus = env.write(
        "beir/corpus.jsonl",
        "{\"_id\":\"t\",\"title\":\"Zebrafish fin regrowth\",\"text\":\"\"}\n{\"_id\":\"e\",\"text\":\" \"}\n",
    );
    let s = env.json(&["ingest", corpus.to_str().unwrap()]);
    assert_eq!((s["added"].as_u64(), s["skipped_records"].as_u64()), (Some(1), Some(1)), "{s}");
    assert!(s["skipped_files"][0]["path"].as_str().unwrap().ends_with("corpus.jsonl:2"), "{s}");
    assert!(s["skipped_files"][0]["reason"].as_str().unwrap().contains("no text to index"), "{s}");
    let hit = &env.json(&["search", "zebrafish"])["hits"][0];
    assert_eq!(hit["citation"]["path"], "beir/corpus.jsonl#t", "{hit}");
}

#[test]
fn the_summary_counts_bad_jsonl_lines_apart_from_skipped_files() {
    let env = Env::new();
    env.write("notes/good.md", "# Good\n\nOtters float on their backs.\n");
    env.write("notes/latin1.md", b"caf\xe9 au lait\n");
    env.write("notes/binary.txt", b"x\0y");
    let lines = ["{\"_id\":\"a\",\"text\":\"alpha\"}", "not json", "[1]", "{\"_id\":\"b\"}", "{\"_id\":\"c\",\"text\":\"gamma\"}"];
    env.write("notes/recs.jsonl", lines.join("\n") + "\n");
    let notes = env.notes();
    let s = env.json(&["ingest", notes.to_str().unwrap()]);
    // `skipped` keeps counting every entry of skipped_files; `skipped_records` says how many are lines.
    assert_eq!((s["skipped"].as_u64(), s["skipped_records"].as_u64()), (Some(5), Some(3)), "{s}");
    assert_eq!(s["skipped_files"].as_array().unwrap().len(), 5, "{s}");

    std::fs::remove_dir_all(env.path("data")).unwrap();
    let out = env.ok(&["ingest", notes.to_str().unwrap()]);
    assert!(out.contains("; 2 files skipped, 3 records skipped;"), "{out}");
    // With no bad line the count reads as before.
    std::fs::remove_file(env.path("notes/recs.jsonl")).unwrap();
    std::fs::remove_dir_all(env.path("data")).unwrap();
    let out = env.ok(&["ingest", notes.to_str().unwrap()]);
    assert!(out.contains("; 2 skipped;"), "{out}");
    assert_eq!(env.json(&["ingest", "--force", notes.to_str().unwrap()])["skipped_records"], 0);
}

#[test]
fn cr_only_line_endings_are_lines_so_citations_name_the_right_ones() {
    let env = Env::new();
    // Old Mac files: a lone `\r` ends each line.
    env.write("notes/mac.md", "# Orchard\r\rApples ripen in autumn.\r\r## Zebras\r\rZebras graze on the savanna.\r");
    env.write("notes/mac.txt", "Kettles boil.\r\r\rWalruses haul out on the ice.\r");
    env.write("notes/mac.jsonl", "{\"_id\":\"a\",\"text\":\"Puffins nest.\"}\r\r{\"_id\":\"b\",\"text\":\"Herons wade.\"}\r");
    let s = env.json(&["ingest", env.notes().to_str().unwrap()]);
    assert_eq!((s["added"].as_u64(), s["skipped"].as_u64()), (Some(4), Some(0)), "{s}");
    let hit = |query: &str| env.json(&["search", "--mode", "lexical", query])["hits"][0].clone();
    let citation = |h: &Value| (h["citation"]["path"].clone(), h["citation"]["start"].clone(), h["citation"]["end"].clone());

    let zebras = hit("zebras savanna");
    assert_eq!(citation(&zebras), ("notes/mac.md".into(), 5.into(), 7.into()), "{zebras}");
    assert_eq!(zebras["citation"]["section"], "Orchard > Zebras", "{zebras}");
    assert!(!zebras["snippet"].as_str().unwrap().contains('\r'), "{zebras}");
    let walruses = hit("walruses");
    assert_eq!(citation(&walruses), ("notes/mac.txt".into(), 1.into(), 4.into()), "{walruses}");
    let herons = hit("herons");
    assert_eq!(citation(&herons), ("notes/mac.jsonl#b".into(), 3.into(), 3.into()), "{herons}");
}

#[test]
fn two_folders_with_the_same_name_get_distinct_paths() {
    let env = Env::new();
    env.write("en/src/intro.md", "# Intro\n\nHello.\n");
    env.write("ko/src/intro.md", "# 소개\n\n안녕하세요.\n");
    env.ok(&["ingest", env.path("en/src").to_str().unwrap()]);
    env.ok(&["ingest", env.path("ko/src").to_str().unwrap()]);
    let docs = env.json(&["docs"]);
    let paths: Vec<&str> = docs["documents"].as_array().unwrap().iter().map(|d| d["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["ko/src/intro.md", "src/intro.md"]);
    // Re-ingesting the second folder maps to the same root again.
    let s = env.json(&["ingest", env.path("ko/src").to_str().unwrap()]);
    assert_eq!(s["unchanged"], 1);
}

#[test]
fn ingest_without_paths_walks_the_configured_roots() {
    let env = Env::new();
    env.write("notes/n.md", "# N\n\nNarwhal tusks.\n");
    env.write("config/kebab/config.toml", "[workspace]\nroots = [\"../../notes\"]\n");
    let s = env.json(&["ingest"]);
    assert_eq!(s["added"], 1, "relative roots resolve against the config file's folder");
    let empty = Env::new();
    let out = empty.run(&["ingest"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("workspace.roots"), "{}", stderr(&out));
}

#[test]
fn missing_path_is_bad_input_naming_the_path() {
    let env = Env::new();
    let out = env.run(&["--json", "ingest", "/definitely/not/here"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema_version"], "error.v1");
    assert!(v["message"].as_str().unwrap().contains("/definitely/not/here"));
}

#[test]
fn readonly_refuses_to_ingest() {
    let env = Env::new();
    three_notes(&env);
    let notes = env.notes();
    env.ok(&["ingest", notes.to_str().unwrap()]);
    let out = env.run(&["--readonly", "ingest", notes.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let out = env.cmd(&["ingest", notes.to_str().unwrap()]).env("KEBAB_READONLY", "1").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("readonly"), "{}", stderr(&out));
    // Reads still work read-only.
    assert!(env.ok(&["--readonly", "search", "heron"]).contains("a.md"));
}

#[test]
fn force_rebuilds_every_document() {
    let env = Env::new();
    three_notes(&env);
    let notes = env.notes();
    env.ok(&["ingest", notes.to_str().unwrap()]);
    let s = env.json(&["ingest", "--force", notes.to_str().unwrap()]);
    assert_eq!((s["updated"].as_u64(), s["unchanged"].as_u64()), (Some(3), Some(0)));
}

#[test]
fn a_subfolder_of_an_ingested_folder_keeps_its_paths() {
    let env = Env::new();
    three_notes(&env);
    let notes = env.notes();
    env.ok(&["ingest", notes.to_str().unwrap()]);
    env.write("notes/sub/c.md", "# Gamma\n\nCopper kettles tarnish green.\n");
    let s = env.json(&["ingest", env.path("notes/sub").to_str().unwrap()]);
    assert_eq!((s["updated"].as_u64(), s["added"].as_u64()), (Some(1), Some(0)));
    let s = env.json(&["ingest", env.path("notes/a.md").to_str().unwrap()]);
    assert_eq!(s["unchanged"], 1);
    // Pruning a subfolder looks only inside it.
    let s = env.json(&["ingest", "--prune", env.path("notes/sub").to_str().unwrap()]);
    assert_eq!(s["removed"], 0);
    assert_eq!(env.json(&["docs"])["documents"].as_array().unwrap().len(), 3);
}

#[test]
fn a_folder_ingested_after_a_folder_inside_it_holds_each_note_once() {
    // Both were roots: every note under notes/sub was indexed, found and
    // quoted twice (as sub/c.md and notes/sub/c.md).
    let env = Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n[embedding]\nprovider = \"none\"\n");
    three_notes(&env);
    let (notes, sub) = (env.notes(), env.path("notes/sub"));
    env.ok(&["ingest", sub.to_str().unwrap()]);
    let before = chunk_ids(&env, "copper kettles");
    assert_eq!(before.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(), ["sub/c.md"]);
    let answer = env.json(&["ask", "--session", "s", "Do copper kettles tarnish?"]);
    assert_eq!(answer["citations"][0]["citation"]["path"], "sub/c.md", "{answer}");

    let out = env.run(&["ingest", notes.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("notes/sub/"), "says where its notes went: {}", stderr(&out));
    let docs = env.json(&["docs"]);
    let paths: Vec<&str> = docs["documents"].as_array().unwrap().iter().map(|d| d["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["notes/a.md", "notes/b.txt", "notes/sub/c.md"]);
    assert_eq!(env.json(&["stats"])["roots"].as_array().unwrap().len(), 1);
    // The note moved, its chunk kept: the saved answer still cites it, by its new path.
    assert_eq!(chunk_ids(&env, "copper kettles"), [("notes/sub/c.md".to_string(), before[0].1)]);
    let saved = env.json(&["sessions", "show", "s"]);
    assert_eq!(saved["turns"][0]["answer"]["citations"][0]["chunk_id"], before[0].1, "{saved}");

    // One run naming a folder and what is inside it reads each file once.
    let env = Env::new();
    three_notes(&env);
    let (notes, sub, a) = (env.notes(), env.path("notes/sub"), env.path("notes/a.md"));
    let s = env.json(&["ingest", sub.to_str().unwrap(), notes.to_str().unwrap(), a.to_str().unwrap(), notes.to_str().unwrap()]);
    assert_eq!((s["files_seen"].as_u64(), s["added"].as_u64(), s["unchanged"].as_u64()), (Some(3), Some(3), Some(0)), "{s}");
    assert_eq!(env.json(&["docs"])["documents"].as_array().unwrap().len(), 3);
}

#[test]
fn an_unchanged_file_is_read_again_when_format_names_another_format() {
    // `--format txt` on a note indexed as Markdown said "nothing changed".
    let (env, notes) = ingested_notes();
    let a = env.path("notes/a.md");
    let sections = |env: &Env| chunk_ids(env, "heron fish").len();
    assert_eq!(sections(&env), 2, "as Markdown: one chunk per heading");
    let s = env.json(&["ingest", "--format", "txt", a.to_str().unwrap()]);
    assert_eq!((s["updated"].as_u64(), s["unchanged"].as_u64()), (Some(1), Some(0)), "{s}");
    let s = env.json(&["ingest", "--format", "txt", a.to_str().unwrap()]);
    assert_eq!(s["unchanged"], 1, "{s}");
    // A bare run keeps the format the user chose: no flip-flop on every run.
    let s = env.json(&["ingest", &notes]);
    assert_eq!((s["updated"].as_u64(), s["unchanged"].as_u64()), (Some(0), Some(3)), "{s}");
}

/// Two folders `a` and `b` ingested, then `b` moved away (an unmounted disk)
/// and a note in `a` edited; returns the env and where `b` was.
fn one_root_gone() -> (Env, std::path::PathBuf) {
    let env = Env::new();
    env.write("a/x.md", "# A\n\nHerons wade.\n");
    env.write("b/y.md", "# B\n\nLanterns glow.\n");
    env.ok(&["ingest", env.path("a").to_str().unwrap(), env.path("b").to_str().unwrap()]);
    let b = std::fs::canonicalize(env.path("b")).unwrap();
    std::fs::rename(&b, env.path("b.off")).unwrap();
    env.write("a/x.md", "# A\n\nHerons wade past the walrus.\n");
    (env, b)
}

#[test]
fn a_vanished_root_is_warned_about_kept_searchable_and_does_not_stop_the_others() {
    let (env, b) = one_root_gone();
    let out = env.run(&["ingest"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "a root that is gone is not success: {err}");
    assert!(err.contains("warning:") && err.contains(b.to_str().unwrap()), "names the missing root: {err}");
    assert!(err.contains("kebab ingest --prune"), "says how to forget it: {err}");
    assert!(env.ok(&["search", "walrus"]).contains("x.md"), "the edit in the root that exists was indexed");
    assert!(env.ok(&["search", "lanterns"]).contains("y.md"), "the missing root's notes stay searchable");

    let out = env.run(&["--json", "ingest"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["schema_version"], "ingest_summary.v1", "{s}");
    assert_eq!(s["missing_roots"][0]["path"], b.to_str().unwrap(), "{s}");
    assert_eq!(s["missing_roots"][0]["documents"], 1, "{s}");
    assert_eq!(s["missing"], 1, "its documents count as missing: {s}");

    let doctor = env.run(&["doctor"]);
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(text.contains("kebab ingest --prune"), "{text}");
}

#[test]
fn prune_forgets_a_vanished_root_with_its_documents_and_says_so() {
    let (env, b) = one_root_gone();
    let out = env.run(&["ingest", "--prune"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(said.contains(b.to_str().unwrap()) && said.contains("1 document"), "{said}");
    assert!(env.ok(&["search", "walrus"]).contains("x.md"));
    let docs = env.json(&["docs"]);
    let paths: Vec<&str> = docs["documents"].as_array().unwrap().iter().map(|d| d["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["a/x.md"], "{docs}");
    let roots = env.json(&["stats"])["roots"].clone();
    assert_eq!(roots.as_array().unwrap().len(), 1, "the root itself is gone: {roots}");
    // Forgotten for good: the next bare run is clean.
    let out = env.run(&["ingest"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains(b.to_str().unwrap()), "{}", stderr(&out));
}

#[test]
fn a_configured_root_that_is_missing_does_not_stop_the_others() {
    let env = Env::new();
    env.write("notes/n.md", "# N\n\nNarwhal tusks.\n");
    env.write("config/kebab/config.toml", "[workspace]\nroots = [\"../../notes\", \"../../unmounted\"]\n");
    let out = env.run(&["--json", "ingest"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["added"], 1, "{s}");
    assert!(stderr(&out).contains("unmounted") && stderr(&out).contains("workspace.roots"), "{}", stderr(&out));
}

#[test]
fn a_folder_that_cannot_be_listed_keeps_its_notes_through_prune() {
    let env = Env::new();
    env.write("notes/a.md", "# Alpha\n\nHerons wade.\n");
    env.write("notes/closed/b.md", "# Beta\n\nLanterns glow.\n");
    env.write("notes/closed/deeper/c.md", "# Gamma\n\nKettles tarnish.\n");
    let notes = env.notes().to_str().unwrap().to_string();
    env.ok(&["ingest", &notes]);
    let docs = |env: &Env| env.json(&["docs"])["documents"].as_array().unwrap().len();
    assert_eq!(docs(&env), 3);
    let Some(_) = common::heeding_folder_permissions(env.cmd(&[])) else {
        eprintln!("skipped: root here, and no working setpriv to make a mode-000 folder unlistable");
        return;
    };
    let run = |args: &[&str]| common::heeding_folder_permissions(env.cmd(args)).unwrap().output().unwrap();

    // A folder inside the root: skipped and named, with what to do; its notes stay.
    let closed = common::unlistable(env.path("notes/closed"));
    let out = run(&["--json", "ingest", "--prune", &notes]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((s["removed"].as_u64(), s["missing"].as_u64(), s["unchanged"].as_u64()), (Some(0), Some(0), Some(1)), "{s}");
    let skip = &s["skipped_files"][0];
    assert_eq!(skip["path"], "notes/closed", "{s}");
    let reason = skip["reason"].as_str().unwrap();
    assert!(reason.contains("ermission") && reason.contains("its 2 indexed documents are kept"), "{reason}");
    assert!(err.contains("warning: skipped notes/closed:") && err.contains("chmod"), "{err}");
    assert_eq!(docs(&env), 3, "the notes of a folder that could not be listed were pruned");
    drop(closed);

    // One that lists its files but lets none be looked at (as a folder
    // closed between listing it and reading): they are there, so kept.
    let shut = common::unenterable(env.path("notes/closed"));
    let out = run(&["--json", "ingest", "--prune", &notes]);
    let s: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    assert_eq!(s["removed"], 0, "{s}");
    drop(shut);
    assert_eq!(docs(&env), 3, "the notes of a folder whose files could not be looked at were pruned");

    // The root itself, remembered (no PATH): nothing of it is pruned either.
    let root = common::unlistable(env.notes());
    let out = run(&["--json", "ingest", "--prune"]);
    let s: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    assert_eq!(s["removed"], 0, "{s}");
    assert_eq!(s["skipped_files"][0]["path"], "notes", "{s}");
    assert!(s["skipped_files"][0]["reason"].as_str().unwrap().contains("its 3 indexed documents are kept"), "{s}");
    drop(root);
    assert_eq!(docs(&env), 3, "the notes of a root that could not be listed were pruned");
    assert!(env.ok(&["search", "lanterns"]).contains("closed/b.md"));
}

#[test]
fn a_run_over_one_note_says_one_file_and_one_chunk() {
    // It said "1 files; documents: 1 added … 1 chunks written".
    let env = Env::new();
    env.write("notes/one.md", "# One\n\nA single short note.\n");
    let out = env.ok(&["ingest", env.notes().to_str().unwrap()]);
    assert!(out.contains("1 file; documents: 1 added") && out.contains("; 1 chunk written"), "{out}");
    let out = env.ok(&["ingest", env.notes().to_str().unwrap()]);
    assert!(out.contains("nothing changed: 1 document in 1 file unchanged"), "{out}");
}

#[test]
fn an_empty_jsonl_file_is_reported_as_empty_not_as_unchanged() {
    // The first ingest of an empty .jsonl said "nothing changed: 0 documents
    // in 1 file unchanged", as if it had been indexed before.
    let env = Env::new();
    let empty = env.write("notes/empty.jsonl", "");
    let out = env.run(&["ingest", empty.to_str().unwrap()]);
    let (stdout, err) = (String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(!stdout.contains("unchanged") && !err.contains("unchanged"), "{stdout}{err}");
    let line = err.lines().find(|l| l.contains("notes/empty.jsonl")).unwrap_or_else(|| panic!("{stdout}{err}"));
    assert!(line.contains("empty (0 bytes)"), "{line}");
    // Named alone and not indexable, as an empty PDF: not success.
    assert_eq!(out.status.code(), Some(1), "{stdout}{err}");
    // In a folder, beside a note: skipped with the reason, the note indexed.
    env.write("notes/blank.jsonl", "\n\n");
    env.write("notes/a.md", "# A\n\nHerons wade.\n");
    let s = env.json(&["ingest", env.notes().to_str().unwrap()]);
    assert_eq!((s["added"].as_u64(), s["unchanged"].as_u64(), s["skipped"].as_u64()), (Some(1), Some(0), Some(2)), "{s}");
    let reasons: Vec<&str> = s["skipped_files"].as_array().unwrap().iter().map(|f| f["reason"].as_str().unwrap()).collect();
    assert!(reasons.iter().all(|r| r.contains("no JSONL record")), "{s}");
    // A file whose records were indexed, then emptied, loses them (with --force too).
    let notes = env.notes();
    for force in [false, true] {
        env.write("notes/recs.jsonl", "{\"_id\":\"p\",\"text\":\"Puffins nest in burrows.\"}\n");
        env.ok(&["ingest", notes.to_str().unwrap()]);
        env.write("notes/recs.jsonl", "");
        let mut args = vec!["ingest", notes.to_str().unwrap()];
        if force {
            args.push("--force");
        }
        let s = env.json(&args);
        assert_eq!(s["removed"].as_u64(), Some(1), "force {force}: {s}");
        assert!(env.json(&["search", "puffins"])["hits"].as_array().unwrap().is_empty(), "force {force}");
    }
}

#[test]
fn hidden_files_and_folders_are_not_notes_so_a_note_moved_to_the_trash_is_not_indexed_again() {
    // `kebab watch` ignored them but `kebab ingest` read them: a note deleted in Obsidian (moved to
    // .trash/) was removed by the watch, then indexed again from .trash/ by the next ingest and quoted.
    let env = Env::new();
    env.write("notes/keep.md", "# Keep\n\nThe kettle is copper.\n");
    env.write("notes/old.md", "# Old\n\nThe vault code is 4711.\n");
    env.write("notes/.obsidian/plugins/x/README.md", "# Plugin\n\nThe vault code is in the settings.\n");
    env.write("notes/.draft.md", "# Draft\n\nThe vault code is secret.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    assert_eq!(env.doc_paths(), ["notes/keep.md", "notes/old.md"]);
    std::fs::create_dir(env.path("notes/.trash")).unwrap();
    std::fs::rename(env.path("notes/old.md"), env.path("notes/.trash/old.md")).unwrap();
    let s = env.json(&["ingest", "--prune", env.notes().to_str().unwrap()]);
    assert_eq!((s["added"].as_u64(), s["removed"].as_u64()), (Some(0), Some(1)), "{s}");
    assert_eq!(env.doc_paths(), ["notes/keep.md"]);
    // One named is read all the same.
    env.ok(&["ingest", env.path("notes/.trash/old.md").to_str().unwrap()]);
    assert_eq!(env.doc_paths(), ["notes/.trash/old.md", "notes/keep.md"]);
}
