//! Hostile input to `kebab ingest`: files that are not text, files that are
//! too big, many tiny files, deep folders, symlink loops, unreadable files and
//! file names carrying newlines and escape sequences. Each case runs the real
//! binary and checks what a careful user expects: the run finishes (a bad file
//! is reported by name with what to do, then skipped), the good file beside it
//! is indexed, the database passes `PRAGMA integrity_check`, nothing panics
//! and nothing hangs. The 50 MB and 100k-file runs live in `scripts/hostile.sh`.

mod common;

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use common::Env;
use common::pdf::{Extras, pdf, pdf_with};

/// A home that indexes with no embedder (these cases are about reading files)
/// and answers with the built-in extractive model.
fn env() -> Env {
    let env = Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n[embedding]\nprovider = \"none\"\n");
    env
}

/// Runs `kebab ARGS`, killing it (and failing) if it is still running after
/// `secs` seconds: a hang must not stall the test suite.
fn run_within(env: &Env, args: &[&str], secs: u64) -> Output {
    let mut child = env.cmd(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn kebab");
    let deadline = Instant::now() + Duration::from_secs(secs);
    // Drain the pipes on threads so a chatty child never blocks on a full pipe.
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t1 = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut so, &mut v).ok();
        v
    });
    let t2 = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut se, &mut v).ok();
        v
    });
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            child.kill().ok();
            child.wait().ok();
            panic!("kebab {args:?} still running after {secs} s: a hang");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output { status, stdout: t1.join().unwrap(), stderr: t2.join().unwrap() }
}

/// Ingests `dir` with `--json`; insists on exit 0, no panic, no raw escape
/// byte on either stream; returns the summary and stderr.
fn ingest(env: &Env, dir: &Path) -> (serde_json::Value, String) {
    let out = run_within(env, &["--json", "ingest", dir.to_str().unwrap()], 120);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr).into_owned());
    assert!(out.status.success(), "ingest failed ({:?})\nstdout: {stdout}\nstderr: {stderr}", out.status.code());
    assert_clean(&out);
    (serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}")), stderr)
}

/// No panic, and no byte that could drive a terminal (ESC, BEL, C1 CSI).
fn assert_clean(out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    for (name, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        assert!(!text.contains(['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}']), "raw control character on {name}: {text:?}");
    }
}

fn integrity_ok(env: &Env) {
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    let verdict: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(verdict, "ok");
}

/// The reason recorded for a skipped file whose path ends with `name`.
fn skip_reason(summary: &serde_json::Value, name: &str) -> Option<String> {
    summary["skipped_files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["path"].as_str().unwrap().ends_with(name))
        .map(|s| s["reason"].as_str().unwrap().to_string())
}

const GOOD: &str = "# Kettle\n\nThe kettle whistles when the water boils.\n";

#[test]
fn invalid_utf8_is_skipped_with_a_warning_that_says_how_to_fix_it() {
    let env = env();
    env.write("notes/good.md", GOOD);
    env.write("notes/latin1.md", b"# Caf\xe9\n\nCr\xe8me br\xfbl\xe9e.\n");
    env.write("notes/latin1.txt", b"na\xefve text\n");
    let (summary, stderr) = ingest(&env, &env.notes());
    for name in ["latin1.md", "latin1.txt"] {
        let reason = skip_reason(&summary, name).unwrap_or_else(|| panic!("{name} not reported: {summary}"));
        assert!(reason.contains("not valid UTF-8") && reason.contains("convert"), "{reason}");
        assert!(stderr.contains(&format!("notes/{name}")), "the warning names the file: {stderr}");
    }
    assert_eq!(env.doc_paths(), ["notes/good.md"]);
    integrity_ok(&env);
}

#[test]
fn a_utf16_note_is_named_as_utf16_with_how_to_convert_it_not_as_binary() {
    // Notepad's "Unicode" (UTF-16 with a byte-order mark) was skipped as
    // "binary file (contains NUL bytes)", which it is not.
    let env = env();
    env.write("notes/good.md", GOOD);
    let utf16 = |be: bool| -> Vec<u8> {
        let units = std::iter::once(0xFEFF).chain("# Tea\n\nGreen tea steeps.\n".encode_utf16());
        units.flat_map(|u| if be { u.to_be_bytes() } else { u.to_le_bytes() }).collect()
    };
    env.write("notes/notepad.md", utf16(false));
    env.write("notes/mac.txt", utf16(true));
    env.write("notes/wide.md", b"\xFF\xFE\0\0#\0\0\0");
    let (summary, stderr) = ingest(&env, &env.notes());
    for (name, form) in [("notepad.md", "UTF-16"), ("mac.txt", "UTF-16"), ("wide.md", "UTF-32")] {
        let reason = skip_reason(&summary, name).unwrap_or_else(|| panic!("{name} not reported: {summary}"));
        assert!(reason.starts_with(&format!("{form} text, not UTF-8")), "{name}: {reason}");
        assert!(reason.contains(&format!("iconv -f {} -t utf-8", form.to_lowercase())), "{name}: {reason}");
        assert!(!reason.contains("binary"), "{name}: {reason}");
        assert!(stderr.contains(&format!("notes/{name}")), "the warning names the file: {stderr}");
    }
    assert_eq!(env.doc_paths(), ["notes/good.md"]);
}

#[test]
fn nul_bytes_and_binary_files_named_md_are_skipped_as_binary() {
    let env = env();
    env.write("notes/good.md", GOOD);
    env.write("notes/nul.md", b"# Title\n\nsome text\0more text\n");
    let png: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";
    env.write("notes/image.md", png);
    // Bytes from a fixed LCG: deterministic "random" data with no NUL byte,
    // so the UTF-8 check (not the NUL check) must catch it.
    let mut x: u32 = 12345;
    let noise: Vec<u8> = (0..4096)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            ((x >> 16) as u8).max(1)
        })
        .collect();
    env.write("notes/noise.md", &noise);
    let (summary, _) = ingest(&env, &env.notes());
    assert!(skip_reason(&summary, "nul.md").unwrap().contains("binary"), "{summary}");
    assert!(skip_reason(&summary, "image.md").unwrap().contains("binary"), "{summary}");
    assert!(skip_reason(&summary, "noise.md").unwrap().contains("not valid UTF-8"), "{summary}");
    assert_eq!(summary["added"], 1);
    assert_eq!(env.doc_paths(), ["notes/good.md"]);
    integrity_ok(&env);
}

#[test]
fn a_file_over_max_file_bytes_is_skipped_naming_the_setting() {
    let env = env();
    env.write("notes/good.md", GOOD);
    // 50 MB, over the 10 MB default: skipped from its size, never read.
    let line = "word ".repeat(19) + "\n";
    let big = line.repeat(50_000_000 / line.len() + 1);
    env.write("notes/huge.md", &big);
    let (summary, stderr) = ingest(&env, &env.notes());
    let reason = skip_reason(&summary, "huge.md").unwrap();
    assert!(reason.contains("workspace.max_file_bytes") && reason.contains("raise"), "{reason}");
    assert!(stderr.contains("notes/huge.md") && stderr.contains("workspace.max_file_bytes"), "{stderr}");
    assert_eq!(env.doc_paths(), ["notes/good.md"]);
    integrity_ok(&env);
}

#[test]
fn a_multi_megabyte_note_with_no_headings_or_line_breaks_is_indexed_in_pieces() {
    let env = env();
    // 3 MB on one line: the chunker must cut it without paragraph boundaries.
    let mut text = String::from("# One line\n\n");
    let mut i = 0;
    while text.len() < 3_000_000 {
        text.push_str(&format!("token{i} "));
        i += 1;
    }
    text.push_str("needleword\n");
    env.write("notes/oneline.md", &text);
    let (summary, _) = ingest(&env, &env.notes());
    assert_eq!(summary["added"], 1, "{summary}");
    assert!(summary["chunks_written"].as_u64().unwrap() > 100, "{summary}");
    let hits = env.json(&["search", "needleword", "--mode", "lexical"]);
    assert_eq!(hits["hits"][0]["doc_path"], "notes/oneline.md", "{hits}");
    integrity_ok(&env);
}

#[test]
fn two_thousand_tiny_files_are_all_indexed() {
    let env = env();
    for i in 0..2000 {
        env.write(&format!("notes/d{}/n{i}.md", i % 20), format!("# Note {i}\n\nword{i}\n"));
    }
    let (summary, _) = ingest(&env, &env.notes());
    assert_eq!(summary["added"], 2000, "{summary}");
    assert_eq!(summary["skipped"], 0, "{summary}");
    let hits = env.json(&["search", "word1234", "--mode", "lexical"]);
    assert_eq!(hits["hits"][0]["doc_path"], "notes/d14/n1234.md", "{hits}");
    // A second run reads nothing new.
    let (again, _) = ingest(&env, &env.notes());
    assert_eq!(again["unchanged"], 2000, "{again}");
    integrity_ok(&env);
}

#[test]
fn a_note_two_hundred_folders_deep_is_indexed() {
    let env = env();
    let deep: String = (0..200).map(|i| format!("d{i}/")).collect();
    env.write(&format!("notes/{deep}deep.md"), "# Deep\n\nabyssal\n");
    env.write("notes/good.md", GOOD);
    let (summary, _) = ingest(&env, &env.notes());
    assert_eq!(summary["added"], 2, "{summary}");
    let hits = env.json(&["search", "abyssal", "--mode", "lexical"]);
    assert_eq!(hits["hits"][0]["doc_path"], format!("notes/{deep}deep.md"), "{hits}");
    integrity_ok(&env);
}

#[test]
fn symlink_loops_are_not_followed_and_a_dangling_link_is_reported() {
    let env = env();
    env.write("notes/good.md", GOOD);
    env.write("notes/sub/inner.md", "# Inner\n\ninner text\n");
    std::os::unix::fs::symlink("..", env.path("notes/sub/loop")).unwrap();
    std::os::unix::fs::symlink(env.path("notes"), env.path("notes/self")).unwrap();
    std::os::unix::fs::symlink(env.path("notes/missing.md"), env.path("notes/dangling.md")).unwrap();
    let (summary, stderr) = ingest(&env, &env.notes());
    assert_eq!(env.doc_paths(), ["notes/good.md", "notes/sub/inner.md"], "each file once: {summary}");
    let reason = skip_reason(&summary, "dangling.md").unwrap_or_else(|| panic!("{summary}"));
    assert!(reason.contains("cannot read"), "{reason}");
    assert!(stderr.contains("notes/dangling.md"), "{stderr}");
    integrity_ok(&env);
}

#[test]
fn a_link_loop_is_skipped_as_a_link_loop_to_fix_or_remove() {
    let env = env();
    env.write("notes/good.md", GOOD);
    // Two links naming each other: neither leads to a file.
    std::os::unix::fs::symlink(env.path("notes/pong.md"), env.path("notes/ping.md")).unwrap();
    std::os::unix::fs::symlink(env.path("notes/ping.md"), env.path("notes/pong.md")).unwrap();
    let (summary, stderr) = ingest(&env, &env.notes());
    assert_eq!(env.doc_paths(), ["notes/good.md"], "{summary}");
    for name in ["ping.md", "pong.md"] {
        let reason = skip_reason(&summary, name).unwrap_or_else(|| panic!("{summary}"));
        assert!(reason.contains("link loop") && reason.contains("fix or remove the link"), "{reason}");
        assert!(!reason.contains("if it is not a note"), "a loop is not a question of what the file is: {reason}");
    }
    assert!(stderr.contains("notes/ping.md: cannot read: a symbolic link that leads back to itself"), "{stderr}");
}

#[test]
fn a_link_loop_named_is_refused_as_a_link_loop_to_fix_or_remove() {
    // Named, it said "Too many levels of symbolic links" with "check the path exists and is readable",
    // where the same link met in a folder is called a link loop to fix or remove.
    let env = env();
    env.write("notes/good.md", GOOD);
    std::os::unix::fs::symlink("loop.md", env.path("notes/loop.md")).unwrap();
    let named = env.path("notes/loop.md");
    let named = named.to_str().unwrap();
    // Before any database (the check made up front) and with one (the run's own).
    for state in ["no index yet", "an index"] {
        let out = env.run(&["ingest", named]);
        let stderr = common::stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{state}: {stderr}");
        let error = format!("error: cannot ingest {named}: a symbolic link that leads back to itself, a link loop (");
        assert!(stderr.contains(&error), "{state}: {stderr}");
        assert!(stderr.contains("hint: fix or remove the link") && !stderr.contains("check the path"), "{state}: {stderr}");
        env.ok(&["ingest", env.path("notes/good.md").to_str().unwrap()]);
    }
}

#[test]
fn files_deleted_while_ingest_runs_are_told_in_one_warning_and_each_listed_in_the_summary() {
    use std::io::BufRead;
    let env = env();
    env.write("notes/good.md", GOOD);
    for i in 0..40 {
        env.write(&format!("notes/doomed/f{i:02}.md"), "# Doomed\n\nsoon gone\n");
    }
    // The walk's warnings for these dangling links (≈350 KB, a pipe holds 64 KB) come after the walk
    // and before any file is read: kebab waits on a full stderr until the test, having deleted doomed/
    // once the first warning shows the walk done, reads on. No timing decides what it finds.
    let long = "x".repeat(200);
    for i in 0..1000 {
        std::os::unix::fs::symlink(env.path("nowhere.md"), env.path(&format!("notes/{long}{i:04}.md"))).unwrap();
    }
    let mut cmd = env.cmd(&["--json", "ingest", env.notes().to_str().unwrap()]);
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    // The summary (1,040 skips) is more than a pipe holds too: read apart, or each side waits on the other.
    let mut stdout = child.stdout.take().unwrap();
    let summary = std::thread::spawn(move || {
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut text).map(|_| text)
    });
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("whose target is gone") {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "kebab said nothing of the dangling links");
    }
    std::fs::remove_dir_all(env.path("notes/doomed")).unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let status = child.wait().unwrap();
    let tail: String = rest.lines().rev().take(5).collect::<Vec<_>>().join("\n");
    assert!(status.success(), "{status:?}: {tail}");
    let warnings: Vec<&str> = rest.lines().filter(|l| l.contains("doomed")).collect();
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    let told = "warning: 40 files vanished during the run and were skipped: \
                notes/doomed/f00.md, notes/doomed/f01.md, notes/doomed/f02.md, …; the next `kebab ingest` catches up";
    assert_eq!(warnings[0], told);
    let summary: serde_json::Value = serde_json::from_slice(&summary.join().unwrap().unwrap()).unwrap();
    assert_eq!(summary["skipped"], 1040, "{}", summary["skipped"]);
    for i in 0..40 {
        let reason = skip_reason(&summary, &format!("doomed/f{i:02}.md")).unwrap_or_else(|| panic!("f{i:02}: {summary}"));
        assert!(reason.contains("went away while kebab ran"), "{reason}");
    }
    assert_eq!(env.doc_paths(), ["notes/good.md"]);
}

#[test]
fn an_unreadable_file_and_a_dangling_link_are_skipped_saying_what_to_do() {
    use std::os::unix::fs::PermissionsExt;
    let env = env();
    env.write("notes/good.md", GOOD);
    let locked = env.write("notes/locked.md", "# Locked\n\nsealed\n");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    std::os::unix::fs::symlink(env.path("notes/gone.md"), env.path("notes/dangling.md")).unwrap();
    let cmd = env.cmd(&["--json", "ingest", env.notes().to_str().unwrap()]);
    let Some(mut cmd) = common::heeding_folder_permissions(cmd) else { return };
    let out = cmd.output().unwrap();
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let reason = skip_reason(&summary, "locked.md").unwrap_or_else(|| panic!("{summary}"));
    assert!(reason.contains("Permission denied") && reason.contains("chmod u+r"), "{reason}");
    let reason = skip_reason(&summary, "dangling.md").unwrap_or_else(|| panic!("{summary}"));
    assert!(reason.contains("symbolic link") && reason.contains("workspace.exclude"), "{reason}");
}

#[test]
fn a_symlinked_file_from_outside_is_read_but_a_symlinked_folder_is_not_walked() {
    let env = env();
    env.write("notes/good.md", GOOD);
    env.write("outside/secret.md", "# Outside\n\nfaraway\n");
    env.write("outside/more/other.md", "# Other\n\nelsewhere\n");
    std::os::unix::fs::symlink(env.path("outside/secret.md"), env.path("notes/linked.md")).unwrap();
    std::os::unix::fs::symlink(env.path("outside/more"), env.path("notes/more")).unwrap();
    ingest(&env, &env.notes());
    // A file link is the user's own choice of content, under the link's name;
    // folder links are never followed (that is what rules out loops).
    assert_eq!(env.doc_paths(), ["notes/good.md", "notes/linked.md"]);
    integrity_ok(&env);
}

#[test]
fn an_unreadable_file_is_reported_or_read_as_the_os_allows() {
    use std::os::unix::fs::PermissionsExt;
    let env = env();
    env.write("notes/good.md", GOOD);
    let locked = env.write("notes/locked.md", "# Locked\n\nsealed\n");
    env.write("notes/closed/inside.md", "# Inside\n\nhidden\n");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    std::fs::set_permissions(env.path("notes/closed"), std::fs::Permissions::from_mode(0o000)).unwrap();
    // Root reads through mode 000; the test asserts whatever is true here.
    let readable = std::fs::read(&locked).is_ok();
    let (summary, stderr) = ingest(&env, &env.notes());
    std::fs::set_permissions(env.path("notes/closed"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let docs = env.doc_paths();
    assert!(docs.contains(&"notes/good.md".to_string()));
    if readable {
        assert_eq!(docs, ["notes/closed/inside.md", "notes/good.md", "notes/locked.md"]);
    } else {
        for name in ["locked.md", "closed"] {
            let reason = skip_reason(&summary, name).unwrap_or_else(|| panic!("{name}: {summary}"));
            assert!(reason.contains("cannot read") && reason.contains("ermission"), "{reason}");
            assert!(stderr.contains(&format!("notes/{name}")), "{stderr}");
        }
        assert_eq!(docs, ["notes/good.md"]);
    }
    integrity_ok(&env);
}

#[test]
fn file_names_with_newlines_and_escapes_are_indexed_and_printed_escaped() {
    let env = env();
    env.write("notes/good.md", GOOD);
    env.write("notes/two\nlines.md", "# Two\n\nnewlinename\n");
    env.write("notes/\u{1b}[31mred\u{1b}]0;pwned\u{7}.md", "# Red\n\nescapename\n");
    env.write("notes/bad\nname.md", b"\xff\xfe not utf-8\n");
    // A right-to-left override: `gnp.md` would read as `dm.png`.
    env.write("notes/rlo\u{202e}gnp.md", "# Flip\n\nflipname\n");
    let out = run_within(&env, &["ingest", env.notes().to_str().unwrap()], 60);
    assert!(out.status.success());
    assert_clean(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("notes/bad\\nname.md"), "the skipped file is named, escaped: {stderr}");
    for args in [vec!["docs"], vec!["search", "newlinename escapename", "--mode", "lexical"], vec!["stats"]] {
        let out = run_within(&env, &args, 60);
        assert!(out.status.success(), "{args:?}");
        assert_clean(&out);
    }
    let docs = env.doc_paths();
    assert_eq!(docs.len(), 4, "{docs:?}");
    assert!(docs.contains(&"notes/two\nlines.md".to_string()), "JSON keeps the real name: {docs:?}");
    let search = String::from_utf8(run_within(&env, &["search", "newlinename", "--mode", "lexical"], 60).stdout).unwrap();
    assert!(search.contains("notes/two\\nlines.md"), "{search}");
    let docs = String::from_utf8(run_within(&env, &["docs"], 60).stdout).unwrap();
    assert!(docs.contains("notes/rlo\\u{202e}gnp.md"), "{docs}");
    integrity_ok(&env);
}

#[test]
fn a_file_name_with_a_newline_in_an_ingest_error_is_printed_escaped_on_one_line() {
    // The warning named it escaped, but the error after it split the name
    // over two lines ("skipped notes/bad" … "name.md: not valid UTF-8 …").
    let env = env();
    let bad = env.write("notes/bad\nname.md", b"\xff\xfe not utf-8\n");
    let gone = env.path("notes/gone\nname.md");
    for (path, says) in [(&bad, "skipped notes/bad\\nname.md: UTF-16 text"), (&gone, "gone\\nname.md: No such file")] {
        let out = run_within(&env, &["ingest", path.to_str().unwrap()], 60);
        assert_eq!(out.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&out.stderr);
        let error = stderr.lines().find(|l| l.starts_with("error: ")).unwrap_or_else(|| panic!("{stderr}"));
        assert!(error.contains(says), "the name is escaped on the error's one line: {stderr}");
    }
}

/// A PDF of 50 MB: one page of text and a 50 MB binary stream beside it.
fn fifty_megabyte_pdf() -> Vec<u8> {
    let extras = Extras { padding: 50_000_000, ..Extras::default() };
    pdf_with(&[&["The furnace log mentions cobaltblue frit."]], &extras)
}

#[test]
fn a_50_mb_pdf_is_skipped_by_size_and_read_within_its_bound_when_allowed() {
    let env = env();
    env.write("notes/good.md", GOOD);
    env.write("notes/big.pdf", fifty_megabyte_pdf());
    let (summary, _) = ingest(&env, &env.notes());
    let reason = skip_reason(&summary, "big.pdf").unwrap();
    assert!(reason.contains("workspace.max_file_bytes"), "{reason}");
    assert_eq!(env.doc_paths(), ["notes/good.md"]);

    // Allowed in, it is parsed by the helper process and its page indexed.
    env.write(
        "config/kebab/config.toml",
        "[workspace]\nmax_file_bytes = 100000000\n[llm]\nprovider = \"extractive\"\n[embedding]\nprovider = \"none\"\n",
    );
    let (summary, stderr) = ingest(&env, &env.notes());
    assert_eq!((summary["added"].as_u64(), summary["skipped"].as_u64()), (Some(1), Some(0)), "{summary} {stderr}");
    let hits = env.json(&["search", "cobaltblue"]);
    assert_eq!(hits["hits"][0]["citation"]["page"], 1, "{hits}");
    integrity_ok(&env);
}

#[test]
fn malformed_pdfs_are_reported_and_skipped_and_the_run_goes_on() {
    let env = env();
    env.write("notes/good.md", GOOD);
    let whole = pdf(&[&["A page about kilns."], &["Another page."]]);
    env.write("notes/truncated.pdf", &whole[..whole.len() / 3]);
    let text = String::from_utf8_lossy(&whole).into_owned();
    let at = text.find("xref").unwrap();
    let mut garbage = whole[..at].to_vec();
    garbage.extend_from_slice(b"xref\n0 zz\nnot an xref table at all\ntrailer\n<< /Root 99 0 R >>\nstartxref\n12\n%%EOF\n");
    env.write("notes/garbage_xref.pdf", garbage);
    env.write("notes/encrypted.pdf", pdf_with(&[&["Locked away."]], &Extras { encrypted: true, ..Extras::default() }));
    env.write("notes/not_a_pdf.pdf", "just some text pretending\n");
    env.write("notes/empty.pdf", "");

    let (summary, stderr) = ingest(&env, &env.notes());
    assert_eq!(env.doc_paths(), ["notes/good.md"], "{summary}");
    for name in ["truncated.pdf", "garbage_xref.pdf", "encrypted.pdf", "not_a_pdf.pdf", "empty.pdf"] {
        let reason = skip_reason(&summary, name).unwrap_or_else(|| panic!("{name} not reported: {summary}"));
        assert!(reason.contains("PDF"), "{name}: {reason}");
        assert!(stderr.contains(&format!("notes/{name}")), "{name} not named on stderr: {stderr}");
    }
    assert!(skip_reason(&summary, "encrypted.pdf").unwrap().starts_with("encrypted PDF"), "{summary}");
    integrity_ok(&env);
}

#[test]
fn a_named_pipe_named_on_the_command_line_is_reported_not_passed_over_and_never_read() {
    let env = env();
    env.write("notes/good.md", GOOD);
    let fifo = env.path("notes/pipe.md");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    // In a folder it is left alone (reading it would wait for a writer forever).
    let (summary, _) = ingest(&env, &env.notes());
    assert_eq!(env.doc_paths(), ["notes/good.md"], "{summary}");
    for args in [vec!["ingest", fifo.to_str().unwrap()], vec!["ingest", "--format", "md", fifo.to_str().unwrap()]] {
        let out = run_within(&env, &args, 30);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Named, it was skipped in silence: "nothing changed", exit 0.
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains("skipped notes/pipe.md: not a regular file"), "{args:?}: {stderr}");
    }
}

#[test]
fn nothing_ingested_gives_the_one_files_reason_and_suggests_format_only_for_a_files_type() {
    // A named pipe (or a binary .md) alone ended in "nothing named could be
    // ingested: 1 skipped" with the hint "`--format md|txt` reads a file
    // whatever its extension", which no format does for them; `--json` got
    // only that error, the reason being a warning on stderr.
    let env = env();
    let fifo = env.path("notes/pipe.md");
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let nul = env.write("notes/nul.md", b"# Title\0\n");
    for (path, reason) in [(&fifo, "skipped notes/pipe.md: not a regular file"), (&nul, "skipped notes/nul.md: binary file")] {
        let out = run_within(&env, &["--json", "ingest", path.to_str().unwrap()], 30);
        assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(v["message"].as_str().unwrap().contains(reason), "{v}");
        assert!(!v["hint"].as_str().unwrap().contains("--format"), "{v}");
    }
    // A file whose type is the trouble still gets the advice.
    let rst = env.write("notes/x.rst", "Quilting\n");
    let out = run_within(&env, &["--json", "ingest", rst.to_str().unwrap()], 30);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["message"].as_str().unwrap().contains("unsupported extension .rst"), "{v}");
    assert!(v["hint"].as_str().unwrap().contains("--format md|txt"), "{v}");
}

#[test]
fn a_symlink_to_a_device_named_on_the_command_line_is_reported_under_the_links_own_path() {
    let env = env();
    env.write("notes/good.md", GOOD);
    std::os::unix::fs::symlink("/dev/zero", env.path("notes/zero.md")).unwrap();
    std::os::unix::fs::symlink("/dev/null", env.path("notes/null")).unwrap();
    for (link, args) in [("zero.md", vec![]), ("zero.md", vec!["--format", "txt"]), ("null", vec![])] {
        let path = env.path(&format!("notes/{link}"));
        let mut all = vec!["ingest"];
        all.extend(&args);
        all.push(path.to_str().unwrap());
        let out = run_within(&env, &all, 30);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{all:?}: {stderr}");
        // The link as the user named it, and why: not the device's own name, nor advice to pick a format.
        assert!(stderr.contains(&format!("skipped notes/{link}: not a regular file")), "{all:?}: {stderr}");
        assert!(!stderr.contains("dev/"), "{all:?}: {stderr}");
    }
    // Nothing was indexed under /dev either.
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let roots = env.json(&["stats"])["roots"].clone();
    assert_eq!(roots.as_array().unwrap().len(), 1, "{roots}");
    assert_eq!(roots[0]["name"], "notes", "{roots}");
}

#[test]
fn an_empty_front_matter_block_is_front_matter_not_a_chunk_of_dashes() {
    // Jekyll's `---` `---` with nothing between (how a page without settings
    // asks to be processed) was not taken for front matter: it was indexed as
    // a chunk holding only the two fences.
    let env = env();
    env.write("notes/page.md", "---\n---\n# Kiln log\n\nThe kiln cooled overnight.\n");
    env.write("notes/blank.md", "---\r\n\r\n---\r\nThe glaze crazed.\r\n");
    env.write("notes/bom.md", "\u{feff}---\n---\nThe slip thickened.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    let mut chunks = conn
        .prepare("SELECT d.path, c.text, c.line_start FROM chunks c JOIN documents d ON d.id = c.doc_id ORDER BY d.path")
        .unwrap();
    let rows: Vec<(String, String, i64)> =
        chunks.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect();
    let expected = [
        ("notes/blank.md", "The glaze crazed.", 4),
        ("notes/bom.md", "The slip thickened.", 3),
        ("notes/page.md", "# Kiln log\n\nThe kiln cooled overnight.", 3),
    ];
    let expected: Vec<(String, String, i64)> = expected.iter().map(|(p, t, l)| (p.to_string(), t.to_string(), *l)).collect();
    assert_eq!(rows, expected);
}

#[test]
fn front_matter_in_a_file_with_old_mac_line_endings_gives_its_title_and_tags() {
    // Lines may end at a lone `\r`; front matter so written was not taken for
    // front matter: the title came from the heading, the tags were lost and
    // `title: …` was indexed as text.
    let env = env();
    env.write("notes/mac.md", "---\rtitle: Kiln schedule\rtags: [pottery, kiln]\r---\r# Firing\r\rRamp to cone six.\r");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let doc = &env.json(&["docs"])["documents"][0];
    assert_eq!(doc["title"], "Kiln schedule", "{doc}");
    assert_eq!(doc["tags"].to_string(), r#"["pottery","kiln"]"#, "{doc}");
    let hits = env.json(&["search", "cone"])["hits"].clone();
    assert_eq!(hits.as_array().unwrap().len(), 1, "{hits}");
    assert_eq!(hits[0]["citation"]["start"], 5, "{hits}");
    assert!(!hits[0]["snippet"].as_str().unwrap().contains("title:"), "{hits}");
}
