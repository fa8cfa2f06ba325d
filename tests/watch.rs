//! `kebab watch` through the real binary: notes created, changed, renamed and
//! deleted under a watched folder show up in `kebab search` (polled with a
//! deadline, never a blind sleep), editors' temp files are ignored, a REPL and
//! `ask --session` work beside it without lock errors, a folder removed and
//! made again is still watched, and Ctrl-C leaves a sound database.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Stdio};
use std::sync::mpsc::channel;
use std::time::Duration;

use common::watch::{DEADLINE, Watch, paths, poll, search};
use common::{Env, research_env};
use serde_json::Value;

#[test]
fn created_changed_renamed_and_deleted_notes_show_in_search_beside_a_repl_and_session_asks() {
    let env = research_env();
    env.write("notes/keep.md", "# Keep\n\nThe ledger lists every hive inspection.\n");
    let mut watch = Watch::start(&env, &[env.notes().to_str().unwrap()]);
    // The first pass indexed what was already there.
    poll(&env, "ledger", "notes/keep.md", |h| paths(h) == ["notes/keep.md"]);

    // A REPL and asks in a session run against the same database meanwhile.
    let mut repl = common::spawn_piped(&mut env.cmd(&["--repl", "--session", "desk"]));
    let mut repl_in = repl.stdin.take().unwrap();
    let asks: Vec<Child> = ["How did you count varroa mites?", "How long does that take?"]
        .iter()
        .map(|q| env.cmd(&["ask", "--session", "side", q]).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap())
        .collect();

    env.write("notes/quokka.md", "# Quokkas\n\nA quokka visited the apiary at dawn.\n");
    writeln!(repl_in, "How did you count varroa mites?").unwrap();
    poll(&env, "quokka", "the new note", |h| paths(h) == ["notes/quokka.md"]);
    let added = watch.wait_for("the added event", |e| e["event"] == "added" && e["path"] == "notes/quokka.md");
    assert_eq!(added["chunks"], 1, "{added}");

    env.write("notes/quokka.md", "# Wombats\n\nA wombat dug under the apiary fence.\n");
    writeln!(repl_in, "What about in winter?").unwrap();
    poll(&env, "wombat", "the changed note", |h| paths(h) == ["notes/quokka.md"]);
    assert!(search(&env, "quokka").is_empty(), "the old text is still found");
    watch.wait_for("the updated event", |e| e["event"] == "updated" && e["path"] == "notes/quokka.md");

    // A rename keeps the document: same chunk, new path, nothing re-chunked.
    let before = search(&env, "wombat");
    std::fs::rename(env.path("notes/quokka.md"), env.path("notes/wombat.md")).unwrap();
    let after = poll(&env, "wombat", "the renamed note", |h| paths(h) == ["notes/wombat.md"]);
    assert_eq!(after[0].1, before[0].1, "the renamed note was re-chunked");
    watch.wait_for("the renamed event", |e| e["event"] == "renamed" && e["from"] == "notes/quokka.md" && e["path"] == "notes/wombat.md");

    std::fs::remove_file(env.path("notes/wombat.md")).unwrap();
    poll(&env, "wombat", "the note gone", |h| h.is_empty());
    watch.wait_for("the removed event", |e| e["event"] == "removed" && e["path"] == "notes/wombat.md");

    // Editors' swap, backup and temp files never reach the index; a real
    // note written after them is handled in the same batch or a later one.
    for junk in [".#draft.md", "draft.md.swp", ".draft.md.swp", "draft.md~", "4913", "draft.tmp", ".git/notes.md"] {
        env.write(&format!("notes/{junk}"), "# Junk\n\nflamingo\n");
    }
    env.write("notes/sentinel.md", "# Sentinel\n\nflamingo sentinel\n");
    watch.wait_for("the sentinel", |e| e["path"] == "notes/sentinel.md");
    assert_eq!(paths(&search(&env, "flamingo")), ["notes/sentinel.md"]);
    assert!(watch.seen.iter().all(|e| e["path"].as_str().is_none_or(|p| !p.contains("draft") && !p.contains(".git"))), "{:?}", watch.seen);

    drop(repl_in);
    let mut errors = String::new();
    for child in asks {
        let out = child.wait_with_output().unwrap();
        errors.push_str(&String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "an ask failed: {errors}");
    }
    let repl_out = repl.wait_with_output().unwrap();
    assert!(repl_out.status.success(), "{}", String::from_utf8_lossy(&repl_out.stderr));
    assert_eq!(String::from_utf8_lossy(&repl_out.stdout).matches("· grounded").count(), 2);
    let watch_err = watch.interrupt();
    let all = format!("{errors}{}{watch_err}", String::from_utf8_lossy(&repl_out.stderr));
    assert!(!all.contains("locked"), "{all}");

    let doctor = env.ok(&["doctor"]);
    assert!(doctor.contains("ok   integrity quick_check ok"), "{doctor}");
    assert!(doctor.contains("ok   index     chunks_fts matches the chunks"), "{doctor}");
}

#[test]
fn a_watched_folder_removed_and_made_again_is_still_watched() {
    let env = research_env();
    env.write("notes/first.md", "# First\n\nA heron stood in the pond.\n");
    let mut watch = Watch::start(&env, &[env.notes().to_str().unwrap()]);
    poll(&env, "heron", "the first note", |h| paths(h) == ["notes/first.md"]);

    std::fs::remove_dir_all(env.notes()).unwrap();
    poll(&env, "heron", "the note of the removed folder gone", |h| h.is_empty());

    env.write("notes/second.md", "# Second\n\nAn egret waded in the shallows.\n");
    poll(&env, "egret", "a note in the folder made again", |h| paths(h) == ["notes/second.md"]);
    // And it is watched, not just scanned once: a later change shows too.
    env.write("notes/third.md", "# Third\n\nA bittern boomed at night.\n");
    poll(&env, "bittern", "a later note in the folder made again", |h| paths(h) == ["notes/third.md"]);
    watch.wait_for("the rewatching event", |e| e["event"] == "rewatching");
    watch.interrupt();
}

#[test]
fn a_watched_folder_whose_own_mode_or_time_changes_is_not_said_to_be_watched_again() {
    // chmod or touch of the folder itself was taken for the folder removed and back: `rewatching` each time.
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n[embedding]\nprovider = \"none\"\n");
    env.write("notes/first.md", "# First\n\nA heron stood in the pond.\n");
    let mut watch = Watch::start(&env, &[env.notes().to_str().unwrap()]);
    watch.wait_for("the catch-up's added event", |e| e["event"] == "added" && e["path"] == "notes/first.md");
    std::fs::set_permissions(env.notes(), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(std::process::Command::new("touch").arg(env.notes()).status().unwrap().success());
    // Still watched: a note written after both shows; the folder's events came before it.
    env.write("notes/second.md", "# Second\n\nAn egret waded in the shallows.\n");
    watch.wait_for("the added event", |e| e["event"] == "added" && e["path"] == "notes/second.md");
    assert!(watch.seen.iter().all(|e| e["event"] != "rewatching" && e["event"] != "removed"), "{:?}", watch.seen);
    watch.interrupt();
}

#[test]
fn an_index_deleted_under_watch_stops_it_with_an_error_instead_of_writing_on_into_nothing() {
    // Writing on into the unlinked file lost every change without a word.
    let env = research_env();
    env.write("notes/first.md", "# First\n\nA heron stood in the pond.\n");
    let watch = Watch::start(&env, &[env.notes().to_str().unwrap()]);
    poll(&env, "heron", "the first note", |h| paths(h) == ["notes/first.md"]);
    std::fs::remove_dir_all(env.path("data/kebab")).unwrap();
    env.write("notes/second.md", "# Second\n\nAn egret waded in the shallows.\n");
    let (status, err) = watch.exit("with its index deleted");
    assert_eq!(status.code(), Some(1), "{err}");
    let db = env.database();
    assert!(err.contains(&format!("{} was deleted or replaced", db.display())) && err.contains("kebab watch"), "{err}");
}

#[test]
fn the_watching_event_comes_first_and_the_catch_up_changes_after_it() {
    // A note written while nothing watched came out as `added` before
    // `watching`: a reader waiting for the start saw changes first.
    let env = research_env();
    env.write("notes/early.md", "# Early\n\nA curlew called over the marsh.\n");
    let mut watch = Watch::start(&env, &[env.notes().to_str().unwrap()]);
    let early = |e: &Value| e["event"] == "added" && e["path"] == "notes/early.md";
    if !watch.seen.iter().any(early) {
        watch.wait_for("the catch-up's added event", early);
    }
    assert_eq!(watch.seen[0]["event"], "watching", "{:?}", watch.seen);
    watch.interrupt();
}

#[test]
fn a_folder_name_that_is_not_utf8_is_spelled_in_watching_as_the_index_spells_it() {
    // `watching` gave the folder's stray byte 0xE9 as U+FFFD, where its
    // notes' paths, `ingest --json` and `stats` spell it `\xE9`.
    use std::os::unix::ffi::OsStrExt;
    let env = research_env();
    let folder = env.path("").join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("curlew.md"), "# Curlew\n\nA curlew called over the marsh.\n").unwrap();
    let mut cmd = env.cmd(&["--json", "watch"]);
    cmd.arg(&folder);
    let watch = Watch::spawn(cmd);
    let paths = watch.seen[0]["paths"].clone();
    watch.interrupt();
    let roots = env.json(&["stats"])["roots"].clone();
    let spelled = roots.as_array().unwrap().iter().find_map(|r| r["path"].as_str().filter(|p| p.ends_with("/caf\\xE9")));
    let spelled = spelled.unwrap_or_else(|| panic!("no root spelled caf\\xE9: {roots}"));
    assert_eq!(paths, serde_json::json!([spelled]), "{paths}");
}

#[test]
fn watch_is_refused_under_readonly() {
    let env = research_env();
    std::fs::create_dir_all(env.notes()).unwrap();
    let out = env.run(&["--readonly", "watch", env.notes().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(common::stderr(&out).contains("`kebab watch` writes to the database, and --readonly is set"), "{}", common::stderr(&out));
}

#[test]
fn human_output_is_one_line_per_change() {
    let env = research_env();
    std::fs::create_dir_all(env.notes()).unwrap();
    let mut child = env.cmd(&["watch", env.notes().to_str().unwrap()]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    // The first pass over an empty folder prints nothing; the note's line
    // comes once the watch is armed, whenever the note is written.
    env.write("notes/x.md", "# Otters\n\nOtters slid down the bank.\n\n## More\n\nThey ate a trout.\n");
    let line = lines.recv_timeout(DEADLINE).expect("a line for the new note");
    let re = regex::Regex::new(r"^added notes/x\.md \(\d+ chunks?\) in \d+ ms$").unwrap();
    assert!(re.is_match(&line), "{line}");
    let w = Watch { child, events: channel().1, seen: Vec::new() };
    w.interrupt();
}

#[test]
fn a_saved_note_is_embedded_alone_and_a_rename_keeps_its_vector() {
    let env = Env::new();
    let config = format!("[llm]\nprovider = \"extractive\"\n\n[embedding]\nmodel_dir = {:?}\n", common::model_dir().display().to_string());
    env.write("config/kebab/config.toml", config);
    env.write("notes/bread.md", "# Bread\n\nKnead the dough for ten minutes, then let it rise.\n");
    let mut watch = Watch::start(&env, &[env.notes().to_str().unwrap()]);
    env.write("notes/bikes.md", "# Bicycles\n\nPump the tyres before every ride and oil the chain weekly.\n");
    watch.wait_for("the added event", |e| e["event"] == "added" && e["path"] == "notes/bikes.md");

    // Every chunk has its vector, and a query sharing no word with the note
    // finds it through the vector channel alone.
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    let missing = "SELECT count(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.chunk_id = c.id)";
    assert_eq!(conn.query_row(missing, [], |r| r.get::<_, i64>(0)).unwrap(), 0);
    let top = |q: &str| env.json(&["search", "--mode", "vector", "-k", "1", q])["hits"][0]["doc_path"].as_str().map(String::from);
    assert_eq!(top("cycling maintenance").as_deref(), Some("notes/bikes.md"));

    // A rename moves the document; its chunk keeps the same vector row.
    let vector = |path: &str| -> Vec<u8> {
        conn.query_row(
            "SELECT e.vector FROM embeddings e JOIN chunks c ON c.id = e.chunk_id JOIN documents d ON d.id = c.doc_id WHERE d.path = ?1",
            [path],
            |r| r.get(0),
        )
        .unwrap()
    };
    let before = vector("notes/bikes.md");
    std::fs::rename(env.path("notes/bikes.md"), env.path("notes/cycling.md")).unwrap();
    watch.wait_for("the renamed event", |e| e["event"] == "renamed" && e["path"] == "notes/cycling.md");
    assert_eq!(vector("notes/cycling.md"), before);
    assert_eq!(top("cycling maintenance").as_deref(), Some("notes/cycling.md"));
    watch.interrupt();
}

#[test]
fn a_remembered_folder_gone_at_start_is_warned_about_and_the_others_are_watched() {
    let env = research_env();
    env.write("a/x.md", "# A\n\nHerons wade.\n");
    env.write("b/y.md", "# B\n\nLanterns glow.\n");
    env.ok(&["ingest", env.path("a").to_str().unwrap(), env.path("b").to_str().unwrap()]);
    let b = std::fs::canonicalize(env.path("b")).unwrap();
    std::fs::rename(&b, env.path("b.off")).unwrap();

    // No PATH: the folders already indexed, one of them gone (an unmounted disk).
    let mut watch = Watch::start(&env, &[]);
    env.write("a/x.md", "# A\n\nHerons wade past the walrus.\n");
    watch.wait_for("the updated event", |e| e["event"] == "updated" && e["path"] == "a/x.md");
    poll(&env, "walrus", "the edit in the folder that is there", |h| paths(h) == ["a/x.md"]);
    assert_eq!(paths(&search(&env, "lanterns")), ["b/y.md"], "the gone folder's notes are kept");
    let watching = watch.seen.iter().find(|e| e["event"] == "watching").unwrap().clone();
    let err = watch.interrupt();
    assert!(err.contains("warning:") && err.contains(b.to_str().unwrap()), "names the gone folder: {err}");
    assert!(err.contains("1 document is kept") && err.contains("kebab ingest --prune"), "{err}");
    assert!(!watching["paths"].to_string().contains(b.to_str().unwrap()), "{watching}");

    // A folder named that is not there is still an error.
    let out = env.run(&["watch", b.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", common::stderr(&out));
    assert!(common::stderr(&out).contains("cannot ingest"), "{}", common::stderr(&out));
}

#[test]
fn a_folder_that_cannot_be_listed_keeps_its_notes_under_watch() {
    let env = research_env();
    env.write("notes/a.md", "# A\n\nHerons wade.\n");
    env.write("notes/closed/b.md", "# B\n\nLanterns glow.\n");
    let notes = env.notes().to_str().unwrap().to_string();
    env.ok(&["ingest", &notes]);
    let closed = common::unlistable(env.path("notes/closed"));
    let Some(mut watch) = Watch::heeding_permissions(&env, &notes) else { return };
    // The first pass reconciles the folder: the one it cannot list is skipped, not emptied.
    let skipped = watch.wait_for("the skipped event for notes/closed", |e| e["event"] == "skipped" && e["path"] == "notes/closed");
    assert!(skipped["reason"].as_str().unwrap().contains("its 1 indexed document is kept"), "{skipped}");
    assert!(watch.seen.iter().all(|e| e["event"] != "removed"), "{:?}", watch.seen);
    assert_eq!(paths(&search(&env, "lanterns")), ["notes/closed/b.md"], "the unlisted folder's note was removed");

    // Listable again, it is watched (a note made there is seen); closed once more, a change
    // inside it (a note this process can no longer look at) is skipped, not removed.
    drop(closed);
    env.write("notes/closed/c.md", "# C\n\nOtters swim.\n");
    watch.wait_for("the note made in the folder opened", |e| e["event"] == "added" && e["path"] == "notes/closed/c.md");
    let closed = common::unlistable(env.path("notes/closed"));
    env.write("notes/closed/b.md", "# B\n\nLanterns glow by the walrus.\n");
    let change = watch.wait_for("an event for the note", |e| e["path"] == "notes/closed/b.md");
    assert_eq!(change["event"], "skipped", "{change}");
    assert!(change["reason"].as_str().unwrap().contains("its 1 indexed document is kept"), "{change}");
    assert_eq!(paths(&search(&env, "lanterns")), ["notes/closed/b.md"], "the note was removed");
    drop(closed);
    watch.interrupt();
}

#[test]
fn a_folder_that_cannot_be_read_at_the_start_leaves_the_rest_watched_and_is_watched_once_it_opens() {
    // notify's walk stopped at it: "cannot watch notes yet; waiting for it to appear", the folders
    // after it in the walk not watched, and the whole folder walked again for every event.
    let env = Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n[embedding]\nprovider = \"none\"\n");
    env.write("notes/closed/b.md", "# B\n\nLanterns glow.\n");
    // Folders on both sides of it in the walk, whatever order the disk lists them in.
    let folders: Vec<String> = (0..12).map(|i| format!("notes/f{i}")).collect();
    for folder in &folders {
        std::fs::create_dir_all(env.path(folder)).unwrap();
    }
    let notes = env.notes().to_str().unwrap().to_string();
    env.ok(&["ingest", &notes]);
    let closed = common::unlistable(env.path("notes/closed"));
    let Some(mut watch) = Watch::heeding_permissions(&env, &notes) else { return };
    let is_closed = |e: &Value| e["event"] == "skipped" && e["path"] == "notes/closed";
    let added = |e: &Value, path: &str| e["event"] == "added" && e["path"] == path;
    watch.wait_for("the catch-up's skip of notes/closed", is_closed);
    let made: Vec<String> = folders.iter().map(|f| format!("{f}/n.md")).collect();
    for path in &made {
        env.write(path, "# N\n\nKites fly.\n");
    }
    while !made.iter().all(|path| watch.seen.iter().any(|e| added(e, path))) {
        watch.wait_for("a note made in each other folder", |e| e["event"] == "added");
    }
    // Readable again: the chmod brings it into the watch, and a note saved there after is seen.
    drop(closed);
    env.write("notes/closed/c.md", "# C\n\nOtters swim.\n");
    watch.wait_for("the note made in the folder opened", |e| added(e, "notes/closed/c.md"));
    env.write("notes/closed/b.md", "# B\n\nLanterns glow by the weir.\n");
    watch.wait_for("the note saved in it", |e| e["event"] == "updated" && e["path"] == "notes/closed/b.md");
    assert_eq!(watch.seen.iter().filter(|e| is_closed(e)).count(), 1, "{:?}", watch.seen);
    let err = watch.interrupt();
    assert!(!err.contains("cannot watch"), "{err}");
}

#[test]
fn a_note_of_any_format_emptied_under_watch_is_no_longer_found() {
    // An emptied PDF was "skipped … empty (0 bytes)" and its old text still found.
    let env = Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n[embedding]\nprovider = \"none\"\n");
    let each = common::a_note_of_each_format();
    for (path, _, bytes) in &each {
        env.write(path, bytes);
    }
    let mut watch = Watch::start(&env, &[env.notes().to_str().unwrap()]);
    for (path, word, _) in &each {
        poll(&env, word, "the note's text", |h| paths(h) == [path.replace(".jsonl", ".jsonl#n")]);
        env.write(path, "");
    }
    let emptied = |e: &Value, path: &str| e["path"] == path && e["event"] != "added";
    for (path, word, _) in &each {
        while !watch.seen.iter().any(|e| emptied(e, path)) {
            watch.wait_for("an event for each note emptied", |e| e["event"] != "added");
        }
        let e = watch.seen.iter().find(|e| emptied(e, path)).unwrap();
        assert_eq!((&e["event"], &e["chunks"]), (&Value::from("updated"), &Value::from(0)), "{e}");
        assert!(search(&env, word).is_empty(), "{path}: its old text is still found");
    }
    watch.interrupt();
}

#[test]
fn folder_symlinks_under_a_watched_folder_are_not_followed() {
    // As `kebab ingest` walks no folder symlink, neither does the watcher:
    // not one there at the start, nor one made while it runs.
    let env = research_env();
    env.write("notes/own.md", "# Own\n\nA kestrel hovered over the field.\n");
    env.write("outside/old.md", "# Old\n\nA cormorant dried its wings.\n");
    std::os::unix::fs::symlink(env.path("outside"), env.notes().join("early")).unwrap();
    let mut watch = Watch::start(&env, &[env.notes().to_str().unwrap()]);
    std::os::unix::fs::symlink(env.path("outside"), env.notes().join("late")).unwrap();
    env.write("outside/new.md", "# New\n\nA cormorant dived for fish.\n");
    std::fs::write(env.path("outside/old.md"), "# Old\n\nA cormorant dried its wings twice.\n").unwrap();
    // A later note in the folder itself: once it is in, the changes before it were seen.
    std::thread::sleep(Duration::from_millis(300));
    env.write("notes/zz-last.md", "# Last\n\nA wren sang in the hedge.\n");
    watch.wait_for("the last note", |e| e["path"] == "notes/zz-last.md");
    poll(&env, "wren", "the last note", |h| paths(h) == ["notes/zz-last.md"]);
    assert_eq!(paths(&search(&env, "cormorant")), Vec::<&str>::new(), "events: {:?}", watch.seen);
    assert!(!watch.seen.iter().any(|e| e.to_string().contains("outside") || e.to_string().contains("notes/early/")
        || e.to_string().contains("notes/late/")), "{:?}", watch.seen);
    watch.interrupt();
}

#[test]
fn a_note_link_to_nothing_or_to_itself_is_told_under_watch_as_ingest_tells_it() {
    // The catch-up said nothing of either; a loop made while watching was called a folder that
    // could not be listed (`nothing is indexed under it; what it holds is indexed once it can be
    // read`), and a link to nothing made then was not told of at all.
    let env = Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n[embedding]\nprovider = \"none\"\n");
    env.write("notes/a.md", "# A\n\nHerons wade.\n");
    let link = |name: &str, to: &str| std::os::unix::fs::symlink(to, env.notes().join(name)).unwrap();
    link("early-loop.md", "early-loop.md");
    link("early-gone.md", "nowhere.md");
    let mut watch = Watch::start(&env, &[env.notes().to_str().unwrap()]);
    link("late-loop.md", "late-loop.md");
    link("late-gone.md", "nowhere.md");
    let names = ["early-loop", "early-gone", "late-loop", "late-gone"];
    let mut skips = std::collections::BTreeMap::new();
    while skips.len() < names.len() {
        let e = watch.wait_for("the skips of the four links", |e| e["event"] == "skipped");
        skips.insert(e["path"].as_str().unwrap().to_string(), e["reason"].as_str().unwrap().to_string());
    }
    for name in names {
        let reason = &skips[&format!("notes/{name}.md")];
        let what = if name.ends_with("loop") { "a link loop" } else { "a symbolic link whose target is gone" };
        assert!(reason.contains(what) && reason.contains("fix or remove the link"), "{name}: {reason}");
    }
    let told = |name: &str| watch.seen.iter().filter(|e| e["path"] == format!("notes/{name}.md")).count();
    assert_eq!((told("early-loop"), told("early-gone")), (1, 1), "{:?}", watch.seen);
    watch.interrupt();
}

#[test]
fn a_bad_jsonl_line_saved_under_watch_is_reported_as_ingest_reports_it() {
    // `kebab ingest` says `skipped notes/g.jsonl:2: not valid JSON …`; watch
    // indexed the good records and said nothing of the line it dropped, even
    // when that line was the only change.
    let env = Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n[embedding]\nprovider = \"none\"\n");
    std::fs::create_dir_all(env.notes()).unwrap();
    let mut watch = Watch::start(&env, &[env.notes().to_str().unwrap()]);
    let good = "{\"_id\": \"kiln\", \"text\": \"The kiln fires at dawn.\"}\n";
    env.write("notes/g.jsonl", format!("{good}{{\"_id\": \"oops\", \"text\": \n"));
    watch.wait_for("the added event", |e| e["event"] == "added" && e["path"] == "notes/g.jsonl");
    let e = watch.wait_for("the bad line's event", |e| e["event"] == "skipped");
    assert_eq!(e["path"], "notes/g.jsonl:2", "{e}");
    assert!(e["reason"].as_str().unwrap().contains("not valid JSON"), "{e}");
    // The good record is unchanged; the new bad line is still said.
    env.write("notes/g.jsonl", format!("{good}{{\"_id\": \"oops\", \"text\": \n[1]\n"));
    let e = watch.wait_for("the new bad line's event", |e| e["event"] == "skipped" && e["path"] == "notes/g.jsonl:3");
    assert!(e["reason"].as_str().unwrap().contains("not a JSON object"), "{e}");
    watch.interrupt();
}

#[test]
fn a_file_watch_cannot_read_is_told_once_until_it_changes_or_is_read() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &std::path::Path, bits| std::fs::set_permissions(path, std::fs::Permissions::from_mode(bits)).unwrap();
    let env = Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n[embedding]\nprovider = \"none\"\n");
    env.write("notes/a.md", "# A\n\nHerons wade.\n");
    let locked = env.write("notes/sub/locked.md", "# Locked\n\nLanterns glow.\n");
    mode(&locked, 0o000);
    let notes = env.notes().to_str().unwrap().to_string();
    let Some(mut watch) = Watch::heeding_permissions(&env, &notes) else { return };
    let is_locked = |e: &Value| e["event"] == "skipped" && e["path"] == "notes/sub/locked.md";
    let skipped = watch.wait_for("the catch-up's skip of notes/sub/locked.md", is_locked);
    assert!(skipped["reason"].as_str().unwrap().contains("let this user read it"), "{skipped}");
    // A folder's mode set names the folder: it is read again, each note in it, then a new note
    // there sorting after locked.md; it said `skipped notes/sub/locked.md` again each time.
    for round in 0..2 {
        mode(&env.path("notes/sub"), 0o755);
        env.write(&format!("notes/sub/z{round}.md"), format!("# Z{round}\n\nKites fly.\n"));
        watch.wait_for("the new note", |e| e["event"] == "added" && e["path"] == format!("notes/sub/z{round}.md"));
    }
    assert_eq!(watch.seen.iter().filter(|e| is_locked(e)).count(), 1, "{:?}", watch.seen);
    // A new mtime is a change: told again. So is the file locked again after it was read.
    let touched = std::process::Command::new("touch").args(["-d", "2001-02-03 04:05"]).arg(&locked).status().unwrap();
    assert!(touched.success());
    watch.wait_for("the skip of the touched file", is_locked);
    mode(&locked, 0o644);
    watch.wait_for("the file read", |e| e["event"] == "added" && e["path"] == "notes/sub/locked.md");
    mode(&locked, 0o000);
    watch.wait_for("the skip of the file locked again", is_locked);
    assert_eq!(watch.seen.iter().filter(|e| is_locked(e)).count(), 3, "{:?}", watch.seen);
    mode(&locked, 0o644);
    watch.interrupt();
}

#[test]
fn a_folder_watch_cannot_list_is_told_once_until_it_changes_or_is_listed() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n[embedding]\nprovider = \"none\"\n");
    env.write("notes/sub/closed/b.md", "# B\n\nLanterns glow.\n");
    let notes = env.notes().to_str().unwrap().to_string();
    let Some(mut watch) = Watch::heeding_permissions(&env, &notes) else { return };
    let is_closed = |e: &Value| e["event"] == "skipped" && e["path"] == "notes/sub/closed";
    fn added(path: &str) -> impl Fn(&Value) -> bool + '_ {
        move |e| e["event"] == "added" && e["path"] == path
    }
    // Closed once watched (one closed at the start is told by the catch-up).
    watch.wait_for("the catch-up's added event", added("notes/sub/closed/b.md"));
    let closed = common::unlistable(env.path("notes/sub/closed"));
    let skipped = watch.wait_for("the skip of notes/sub/closed", is_closed);
    assert!(skipped["reason"].as_str().unwrap().contains("its 1 indexed document is kept"), "{skipped}");
    // The folder above it read again (its mode set), then a new note there: it said
    // `skipped notes/sub/closed` again each time.
    for round in 0..2 {
        std::fs::set_permissions(env.path("notes/sub"), std::fs::Permissions::from_mode(0o755)).unwrap();
        env.write(&format!("notes/sub/z{round}.md"), format!("# Z{round}\n\nKites fly.\n"));
        watch.wait_for("the new note", added(&format!("notes/sub/z{round}.md")));
    }
    assert_eq!(watch.seen.iter().filter(|e| is_closed(e)).count(), 1, "{:?}", watch.seen);
    // A new mtime is a change: told again. So is the folder closed again after it was listed.
    let touched = std::process::Command::new("touch").args(["-d", "2001-02-03 04:05"]).arg(env.path("notes/sub/closed")).status();
    assert!(touched.unwrap().success());
    watch.wait_for("the skip of the touched folder", is_closed);
    // Its note changed once it is listed again, not the folder's mtime (a new file would be).
    drop(closed);
    env.write("notes/sub/closed/b.md", "# B\n\nLanterns glow by the kiln.\n");
    watch.wait_for("the note in the folder listed again", |e| e["event"] == "updated" && e["path"] == "notes/sub/closed/b.md");
    let closed = common::unlistable(env.path("notes/sub/closed"));
    watch.wait_for("the skip of the folder closed again", is_closed);
    assert_eq!(watch.seen.iter().filter(|e| is_closed(e)).count(), 3, "{:?}", watch.seen);
    drop(closed);
    watch.interrupt();
}

#[test]
fn a_remembered_folder_that_is_a_link_loop_is_called_one_with_the_link_to_fix_by_ingest_and_watch() {
    // It was "cannot be read (Too many levels of symbolic links …): … check that this user may enter it".
    let env = Env::new();
    env.write("notes/n.md", "# N\n\nNarwhal tusks.\n");
    let looping = env.path("loop");
    std::os::unix::fs::symlink(&looping, &looping).unwrap();
    let roots = format!("roots = [{:?}, {:?}]", env.notes().display().to_string(), looping.display().to_string());
    let models = "[llm]\nprovider = \"extractive\"\n[embedding]\nprovider = \"none\"\n";
    env.write("config/kebab/config.toml", format!("{models}[workspace]\n{roots}\n"));
    // Named as the index names folders: the folder it is in resolved.
    let named = format!("workspace.roots folder {} ", std::fs::canonicalize(env.path("")).unwrap().join("loop").display());
    let said = |err: &str| {
        let warning = err.lines().find(|l| l.contains(&named)).unwrap_or_else(|| panic!("not named: {err}"));
        assert!(warning.contains("is a symbolic link that leads back to itself, a link loop ("), "{warning}");
        assert!(warning.contains(": nothing was indexed from it; fix or remove the link"), "{warning}");
        assert!(!warning.contains("may enter"), "{warning}");
        warning.to_string()
    };
    let out = env.run(&["ingest"]);
    assert_eq!(out.status.code(), Some(1), "{}", common::stderr(&out));
    assert!(!said(&common::stderr(&out)).contains("not watched"));
    assert_eq!(paths(&search(&env, "narwhal")), ["notes/n.md"], "the other folder was not ingested");
    let watch = Watch::start(&env, &[]);
    // It was "(not watched: start `kebab watch` again once it is back)": a loop is not away, its link is wrong.
    let warning = said(&watch.interrupt());
    let told = "fix or remove the link (not watched: start `kebab watch` again once the link is fixed)";
    assert!(warning.ends_with(told), "{warning}");
}
