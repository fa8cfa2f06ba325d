//! A piped or terminal REPL left running while the test acts on it: Ctrl-C
//! while it waits for a line, a bracketed paste on a pseudo-terminal, and the
//! database deleted or replaced under it.

mod common;

use std::io::BufReader;
use std::process::{Child, ChildStdin, ChildStdout};

use common::research_env;

#[test]
fn ctrl_c_while_a_piped_repl_waits_for_input_stops_it_at_once() {
    // The flag Ctrl-C set was looked at only after the next line had been
    // read and run: the REPL kept waiting, then ran one more line.
    use std::io::Write;
    let env = research_env();
    let (mut child, mut stdin, mut stdout) = running_repl(&env, "int");
    writeln!(stdin, ":session").unwrap();
    upto(&mut stdout, "session int (0 turns)");
    let pid = child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() && started.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // A line sent after Ctrl-C is not run.
    let _ = writeln!(stdin, ":history");
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "still waiting for input after Ctrl-C");
    assert_eq!(status.code(), Some(130));
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    assert!(!rest.contains(":history"), "{rest}");
}

/// kebab run on `script`'s pseudo-terminal (util-linux), what it shows read
/// as it comes. `None`, said, where there is no `script`.
struct Terminal {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    output: std::sync::mpsc::Receiver<String>,
    screen: String,
}

impl Terminal {
    /// `colour`: without `NO_COLOR`, so colours and links are drawn.
    fn start(env: &common::Env, args: &str, colour: bool) -> Option<Terminal> {
        use std::io::Read;
        if std::process::Command::new("script").arg("--version").output().is_err() {
            eprintln!("skipped: no `script` to give the REPL a terminal");
            return None;
        }
        let kebab = env!("CARGO_BIN_EXE_kebab");
        let mut script = env.program("script");
        script.args(["-q", "-e", "-c", &format!("{kebab} {args}"), "/dev/null"]).env("TERM", "xterm").current_dir(env.path(""));
        if colour {
            script.env_remove("NO_COLOR");
        }
        let mut child = common::spawn_piped(&mut script);
        let stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let (seen, output) = std::sync::mpsc::channel::<String>();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 || seen.send(String::from_utf8_lossy(&buf[..n]).into_owned()).is_err() {
                    break;
                }
            }
        });
        Some(Terminal { child, stdin, output, screen: String::new() })
    }

    /// Reads the terminal until `text` is on it (30 s at most), and what was read since the last wait.
    fn wait_for(&mut self, text: &str) -> String {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let from = self.screen.len();
        while !self.screen[from..].contains(text) {
            let left = until.saturating_duration_since(std::time::Instant::now());
            let more = self.output.recv_timeout(left).unwrap_or_else(|_| panic!("no {text:?} on the terminal: {}", self.screen));
            self.screen.push_str(&more);
        }
        self.screen[from..].to_string()
    }

    fn quit(mut self) {
        use std::io::Write;
        self.stdin.write_all(b":quit\r").unwrap();
        drop(self.stdin);
        self.child.wait().unwrap();
    }
}

#[test]
fn a_question_pasted_over_several_lines_is_saved_as_one_line() {
    // A bracketed paste is one question, but its line breaks were kept:
    // `:history` and `sessions list` showed "count\nvarroa". `kebab ask -`
    // joins a pasted question's lines with spaces; the REPL now does too.
    // The terminal is `script`'s pseudo-terminal (util-linux).
    use std::io::Write;
    let env = research_env();
    let Some(mut term) = Terminal::start(&env, "--repl --session paste", false) else { return };
    term.wait_for("kebab[paste]> ");
    term.stdin.write_all(b"\x1b[200~How did you count\nvarroa mites?\x1b[201~\r").unwrap();
    term.wait_for("grounded");
    term.quit();
    let show = env.json(&["sessions", "show", "paste"]);
    assert_eq!(show["turns"][0]["question"], "How did you count varroa mites?", "{show}");
}

/// A piped REPL in session `name`, left running: its process, stdin, and
/// stdout to read with `upto` as the test writes.
fn running_repl(env: &common::Env, name: &str) -> (Child, ChildStdin, BufReader<ChildStdout>) {
    running(env, &["--repl", "--session", name])
}

/// `kebab ARGS` left running, as `running_repl`.
fn running(env: &common::Env, args: &[&str]) -> (Child, ChildStdin, BufReader<ChildStdout>) {
    let mut child = common::spawn_piped(env.cmd(args).current_dir(env.path("")));
    let stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    (child, stdin, stdout)
}

/// Reads a running REPL's stdout up to the line holding `end`. Each wait ends at a line said with or
/// without the fix under test, so a failure is an assertion, not a hang.
fn upto(stdout: &mut impl std::io::BufRead, end: &str) -> String {
    let (mut all, mut line) = (String::new(), String::new());
    while !line.contains(end) {
        line.clear();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the REPL ended before {end:?}:\n{all}");
        all.push_str(&line);
    }
    all
}

#[test]
fn a_database_deleted_or_replaced_under_the_repl_is_opened_again_and_said_so() {
    // The REPL kept the file it opened: after `rm kebab.db` its questions
    // were answered from the deleted file, and its turns saved there, lost.
    use std::io::Write;
    let env = research_env();
    let (child, mut stdin, mut stdout) = running_repl(&env, "r");
    let footer = "extractive/extractive-v1 · ";
    writeln!(stdin, "How did you count varroa mites?").unwrap();
    assert!(upto(&mut stdout, footer).contains("alcohol wash"));

    // Deleted: made anew, as a REPL started now makes it; the session's turn went with the old file.
    env.remove_database();
    writeln!(stdin, ":history\n:session").unwrap();
    // Up to what `:session` says, not its echo: the file must not be removed again before it is looked at.
    let history = upto(&mut stdout, "session r (");
    assert!(history.ends_with("> :history\nno questions yet in this session\nkebab[r]> :session\nsession r (0 turns)\n"), "{history}");

    // Replaced by a new index (the file the REPL made is removed, and an ingest builds another).
    env.remove_database();
    env.write("other/coffee.md", "# Coffee\n\nEspresso is brewed under pressure.\n");
    env.ok(&["ingest", env.path("other").to_str().unwrap()]);
    writeln!(stdin, "What is espresso brewed under?").unwrap();
    let answer = upto(&mut stdout, footer);
    assert!(answer.contains("[1] other/coffee.md:1-3"), "{answer}");
    drop(stdin);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let db = env.database().display().to_string();
    let gone = format!("{db} was deleted or replaced while the REPL ran: it now reads the one there, which indexes nothing yet \
                        (`kebab ingest PATH` indexes notes into it); session r starts anew there\n");
    assert!(err.contains(&gone), "{err}");
    let new = format!("{db} was deleted or replaced while the REPL ran: it now reads the one there, with 1 document; session r starts anew there\n");
    assert!(err.contains(&new), "{err}");
    // The turn is in the index every other kebab reads.
    let list = env.ok(&["sessions", "list"]);
    assert!(list.starts_with("r\t1 turn\t") && list.contains("What is espresso brewed under?"), "{list}");
}

#[test]
fn a_database_opened_again_under_the_repl_says_what_opening_finds_only_when_it_is_new() {
    use std::io::Write;
    // No embedding model installed: said when the REPL starts, and once is enough.
    let env = research_env();
    let (child, mut stdin, mut stdout) = running_repl(&env, "r");
    // The first line is answered from the database the REPL opened; each after it, from one made anew.
    for removed in [false, true, true] {
        if removed {
            env.remove_database();
        }
        writeln!(stdin, ":session").unwrap();
        upto(&mut stdout, "session r (");
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(err.matches("was deleted or replaced while the REPL ran").count(), 2, "opened again twice: {err}");
    assert_eq!(err.matches("no embedding model in ").count(), 1, "{err}");
}

#[test]
fn citations_after_the_database_is_replaced_under_the_repl_link_into_the_new_ones_folders() {
    // The folders citation links resolve against were read once per run: after the REPL opened a
    // database replaced under it, a citation from a folder only the new one indexes was not linked.
    use std::io::Write;
    let env = research_env();
    let Some(mut term) = Terminal::start(&env, "--repl --session r", true) else { return };
    term.wait_for("kebab[r]> ");
    env.remove_database();
    env.write("other/coffee.md", "# Coffee\n\nEspresso is brewed under pressure.\n");
    env.ok(&["ingest", env.path("other").to_str().unwrap()]);
    term.stdin.write_all(b"What is espresso brewed under?\r").unwrap();
    let answer = term.wait_for("grounded");
    let file = std::fs::canonicalize(env.path("other/coffee.md")).unwrap();
    let link = format!("\x1b]8;;file://{}#L1\x1b\\", file.display());
    assert!(answer.contains(&link), "no link to {}: {answer:?}", file.display());
    term.quit();
}

#[test]
fn two_repls_started_without_a_session_hold_one_each() {
    // Both picked `session-1` before either asked: the second one's question
    // was saved in the first one's session, shown by its `:history`, and its
    // follow-up searched with the other terminal's answer.
    use std::io::Write;
    let env = research_env();
    let (a, mut a_in, mut a_out) = running(&env, &["--repl"]);
    let (b, mut b_in, mut b_out) = running(&env, &["--repl"]);
    for (stdin, stdout) in [(&mut a_in, &mut a_out), (&mut b_in, &mut b_out)] {
        writeln!(stdin, ":session").unwrap();
        upto(stdout, "session session-1 (0 turns)");
    }
    let footer = "extractive/extractive-v1 · ";
    writeln!(a_in, "How did you count varroa mites?").unwrap();
    upto(&mut a_out, footer);
    writeln!(b_in, "Which rooftop produced the most honey in 2024?").unwrap();
    upto(&mut b_out, footer);
    writeln!(a_in, ":history\n:session").unwrap();
    let history = upto(&mut a_out, "session session-1 (");
    writeln!(b_in, ":session").unwrap();
    let session = upto(&mut b_out, "session session-");
    drop((a_in, b_in));
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert_eq!((a.status.code(), b.status.code()), (Some(0), Some(0)));
    assert!(history.contains("  1. How did you count varroa mites? (grounded"), "{history}");
    assert!(!history.contains("Which rooftop") && history.ends_with("session session-1 (1 turn)\n"), "{history}");
    assert!(session.ends_with("kebab[session-2]> :session\nsession session-2 (1 turn)\n"), "{session}");
    let said = String::from_utf8_lossy(&b.stderr);
    assert!(said.contains("session-1 was started by another process meanwhile: this conversation is session-2"), "{said}");
    let list = env.json(&["sessions", "list"]);
    let turns: Vec<_> = list["sessions"].as_array().unwrap().iter().map(|s| (s["name"].clone(), s["turns"].clone())).collect();
    assert_eq!(turns.len(), 2, "{list}");
    assert!(turns.iter().all(|(_, t)| t == 1), "{list}");
}
