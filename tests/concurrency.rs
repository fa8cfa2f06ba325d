//! Several kebab processes on one database at once: a REPL session asking
//! question after question, an ingest of a few hundred new notes, and
//! `kebab ask --session` workers looping (two of them sharing one session, so
//! they race for the next turn number). Every process must succeed without a
//! lock error, every session must hold exactly the turns asked, numbered
//! 0..n-1, each with its answer row, and SQLite's integrity check must pass.
//! The `--ignored` test runs the same with larger counts
//! (`scripts/concurrency.sh` runs it and prints the figures). And a new
//! folder is walked before its ingest waits on another writer's lock, and a
//! re-ingest that finds nothing changed does not wait on it at all.

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::process::Output;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use common::Env;
use rusqlite::Connection;

/// How much of each thing runs at once.
#[derive(Clone, Copy, Debug)]
struct Load {
    /// Notes the concurrent ingest adds.
    bulk_notes: usize,
    /// Questions the REPL asks in its one session.
    repl_questions: usize,
    /// Workers with a session of their own.
    own_workers: usize,
    /// Workers sharing the session `shared`.
    shared_workers: usize,
    /// `kebab ask` runs per worker, one after another.
    asks_per_worker: usize,
}

/// Topics of the notes indexed before the load starts, each with a question
/// that finds it. Written for this test.
const TOPICS: [(&str, &str, &str); 6] = [
    ("kettle", "The kettle is descaled with vinegar once a month; rinse it twice after.", "How is the kettle descaled?"),
    ("bicycle", "The bicycle chain is oiled every two hundred kilometres with a drop per link.", "How often is the bicycle chain oiled?"),
    ("glacier", "The glacier retreated four metres last summer, measured from the painted rock.", "How far did the glacier retreat?"),
    ("violin", "The violin strings are changed every six months; the E string wears first.", "When are the violin strings changed?"),
    ("beehive", "The beehive is inspected on warm mornings, never in rain, with slow movements.", "When is the beehive inspected?"),
    ("lantern", "The lantern wick is trimmed flat so the flame burns without smoke.", "Why is the lantern wick trimmed?"),
];

fn question(i: usize) -> &'static str {
    TOPICS[i % TOPICS.len()].2
}

/// Sections per bulk note: enough that the ingest outlasts several asks.
const SECTIONS: usize = 24;

/// A home with the topic notes indexed, the built-in model, lexical search.
fn home(load: Load) -> Env {
    let env = Env::new();
    env.write(
        "config/kebab/config.toml",
        "[llm]\nprovider = \"extractive\"\n\n[embedding]\nprovider = \"none\"\n\n[search]\ndefault_mode = \"lexical\"\n",
    );
    for (name, text, _) in TOPICS {
        env.write(&format!("notes/{name}.md"), format!("# {name}\n\n{text}\n"));
    }
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    // The bulk notes: a few paragraphs each, under headings, so the ingest
    // writes many chunks while the asks run.
    let words = ["harbour", "compass", "teapot", "meadow", "quarry", "orchard", "ferry", "attic", "furnace", "loom"];
    for i in 0..load.bulk_notes {
        let w = |k: usize| words[(i * 7 + k * 3) % words.len()];
        let mut body = format!("# Log {i}\n");
        for part in 0..SECTIONS {
            body.push_str(&format!(
                "\n## Part {part}\n\nThe {} by the {} was checked at {} o'clock and noted in entry {i}.{part}. \
                 Later the {} and the {} were swept, and the {} was left for the next round.\n",
                w(part), w(part + 1), (i + part) % 12 + 1, w(part + 2), w(part + 3), w(part + 4)
            ));
        }
        env.write(&format!("bulk/shelf{:02}/log{i:04}.md", i % 16), body);
    }
    env
}

/// Every problem in a finished process: a failed exit or a lock or panic in its output.
fn problems(what: &str, out: &Output) -> Vec<String> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut found = Vec::new();
    if !out.status.success() {
        found.push(format!("{what}: exit {:?}", out.status.code()));
    }
    for text in [&stdout, &stderr] {
        let lower = text.to_lowercase();
        for bad in ["locked", "busy", "panicked"] {
            if lower.contains(bad) {
                found.push(format!("{what}: {bad:?} in its output"));
            }
        }
    }
    // The REPL reports a failed question on stdout and carries on.
    if stdout.lines().any(|l| l.starts_with("error:")) {
        found.push(format!("{what}: an error line"));
    }
    let cut = |text: &str| text.chars().take(1500).collect::<String>();
    if found.is_empty() {
        found
    } else {
        vec![format!("{}\nstdout: {}\nstderr: {}", found.join("; "), cut(&stdout), cut(&stderr))]
    }
}

/// What a load run did.
struct Ran {
    /// Session → the questions asked in it (per worker in order; shared sessions interleave).
    asked: BTreeMap<String, Vec<String>>,
    problems: Vec<String>,
    elapsed: Duration,
    ingest: Duration,
    /// Asks (REPL questions included) that were sent while the ingest ran.
    during_ingest: usize,
}

/// Most asks a worker makes, should the ingest never end.
const MAX_ASKS: usize = 500;

/// Runs the load: the ingest, the REPL and the workers start together; the
/// REPL and the workers ask at least their share and keep asking until the
/// ingest is done, so their writes overlap it however fast the machine is.
fn run_load(env: &Env, load: Load) -> Ran {
    let started = Instant::now();
    let ingest_done = AtomicBool::new(false);
    let during = AtomicUsize::new(0);
    let keep_asking = |i: usize, min: usize| (i < min || !ingest_done.load(Ordering::SeqCst)) && i < MAX_ASKS;
    let mut asked: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut all_problems = Vec::new();
    let mut ingest_time = Duration::ZERO;
    thread::scope(|s| {
        let ingest = s.spawn(|| {
            let t = Instant::now();
            let out = env.run(&["ingest", env.path("bulk").to_str().unwrap()]);
            ingest_done.store(true, Ordering::SeqCst);
            (t.elapsed(), problems("ingest", &out))
        });
        let repl = s.spawn(|| {
            let mut child = common::spawn_piped(env.cmd(&["--repl", "--session", "S0"]).current_dir(env.path("")));
            let mut stdin = child.stdin.take().unwrap();
            // One question at a time, a little apart, as someone typing would.
            let writer = s.spawn(|| {
                let mut questions = Vec::new();
                while keep_asking(questions.len(), load.repl_questions) {
                    let q = question(questions.len());
                    if !ingest_done.load(Ordering::SeqCst) {
                        during.fetch_add(1, Ordering::SeqCst);
                    }
                    stdin.write_all(format!("{q}\n").as_bytes()).unwrap();
                    questions.push(q.to_string());
                    thread::sleep(Duration::from_millis(20));
                }
                drop(stdin);
                questions
            });
            let out = child.wait_with_output().unwrap();
            (writer.join().unwrap(), problems("repl S0", &out))
        });
        let workers: Vec<_> = (0..load.own_workers + load.shared_workers)
            .map(|w| {
                let session = if w < load.own_workers { format!("S{}", w + 1) } else { "shared".to_string() };
                let handle = s.spawn({
                    let (session, keep_asking, ingest_done, during) = (session.clone(), &keep_asking, &ingest_done, &during);
                    move || {
                        let mut found = Vec::new();
                        let mut questions = Vec::new();
                        while keep_asking(questions.len(), load.asks_per_worker) {
                            let q = question(w + questions.len());
                            if !ingest_done.load(Ordering::SeqCst) {
                                during.fetch_add(1, Ordering::SeqCst);
                            }
                            let out = env.run(&["ask", "--session", &session, q]);
                            found.extend(problems(&format!("ask --session {session} #{}", questions.len()), &out));
                            questions.push(q.to_string());
                        }
                        (questions, found)
                    }
                });
                (session, handle)
            })
            .collect();
        let (t, found) = ingest.join().unwrap();
        ingest_time = t;
        all_problems.extend(found);
        let (questions, found) = repl.join().unwrap();
        asked.insert("S0".into(), questions);
        all_problems.extend(found);
        for (session, handle) in workers {
            let (questions, found) = handle.join().unwrap();
            asked.entry(session).or_default().extend(questions);
            all_problems.extend(found);
        }
    });
    Ran {
        asked,
        problems: all_problems,
        elapsed: started.elapsed(),
        ingest: ingest_time,
        during_ingest: during.load(Ordering::SeqCst),
    }
}

/// Checks the database after the load; returns what is wrong.
fn check_database(env: &Env, load: Load, asked: &BTreeMap<String, Vec<String>>) -> Vec<String> {
    let conn = Connection::open(env.database()).unwrap();
    let mut wrong = Vec::new();
    let integrity: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    if integrity != "ok" {
        wrong.push(format!("integrity_check: {integrity}"));
    }
    let documents: i64 = conn.query_row("SELECT count(*) FROM documents", [], |r| r.get(0)).unwrap();
    if documents as usize != TOPICS.len() + load.bulk_notes {
        wrong.push(format!("{documents} documents, expected {}", TOPICS.len() + load.bulk_notes));
    }
    for (session, questions) in asked {
        // Every turn joined to its answer, which must name the same conversation and index.
        let mut stmt = conn
            .prepare(
                "SELECT t.turn_index, t.question, a.conversation_id = c.id AND a.turn_index = t.turn_index
                 FROM conversations c JOIN turns t ON t.conversation_id = c.id
                 LEFT JOIN answers a ON a.id = t.answer_id
                 WHERE c.name = ?1 ORDER BY t.turn_index",
            )
            .unwrap();
        let turns: Vec<(i64, String, Option<bool>)> =
            stmt.query_map([session], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect();
        let indices: Vec<i64> = turns.iter().map(|t| t.0).collect();
        let expected: Vec<i64> = (0..questions.len() as i64).collect();
        if indices != expected {
            wrong.push(format!("session {session}: turn indices {indices:?}, expected {expected:?}"));
        }
        if let Some(t) = turns.iter().find(|t| t.2 != Some(true)) {
            wrong.push(format!("session {session}: turn {} has no matching answer row", t.0));
        }
        // Workers sharing a session interleave, so compare the questions as multisets.
        let mut got: Vec<&str> = turns.iter().map(|t| t.1.as_str()).collect();
        let mut want: Vec<&str> = questions.iter().map(String::as_str).collect();
        if !session.starts_with("shared") && got != want {
            wrong.push(format!("session {session}: questions {got:?}, expected {want:?}"));
        }
        got.sort_unstable();
        want.sort_unstable();
        if got != want {
            wrong.push(format!("session {session}: questions {got:?}, expected {want:?}"));
        }
    }
    let answers: i64 = conn.query_row("SELECT count(*) FROM answers", [], |r| r.get(0)).unwrap();
    let turns: usize = asked.values().map(Vec::len).sum();
    if answers as usize != turns {
        wrong.push(format!("{answers} answers for {turns} turns"));
    }
    wrong
}

fn run_and_check(load: Load) {
    let env = home(load);
    let mut ran = run_load(&env, load);
    ran.problems.extend(check_database(&env, load, &ran.asked));
    let turns: usize = ran.asked.values().map(Vec::len).sum();
    let asks = turns - ran.asked["S0"].len();
    eprintln!(
        "{load:?}\n  {turns} turns ({} REPL questions, {asks} `ask --session` processes), {} sent while the \
         {}-note ingest ran ({:.1} s); all done in {:.1} s",
        ran.asked["S0"].len(),
        ran.during_ingest,
        load.bulk_notes,
        ran.ingest.as_secs_f64(),
        ran.elapsed.as_secs_f64()
    );
    let shown: Vec<String> = ran.problems.iter().take(8).map(|p| p.chars().take(3000).collect()).collect();
    assert!(ran.problems.is_empty(), "{} problems, the first {}:\n{}", ran.problems.len(), shown.len(), shown.join("\n\n"));
}

#[test]
fn a_repl_an_ingest_and_session_asks_at_once_lose_no_turn_and_hit_no_lock() {
    run_and_check(Load { bulk_notes: 300, repl_questions: 6, own_workers: 2, shared_workers: 4, asks_per_worker: 6 });
}

#[test]
fn a_new_folder_is_walked_and_counted_while_another_process_holds_the_write_lock_not_once_it_lets_go() {
    // A new folder's root is written in the transaction of its first note: opened before the walk, it kept
    // every other writer waiting (and failing past its busy timeout) while a large folder was listed.
    // Here the other writer holds the lock first: the walk and its count ("planned") must not wait on it.
    let env = Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n\n[embedding]\nprovider = \"none\"\n");
    let (name, text, _) = TOPICS[0];
    env.write(&format!("notes/{name}.md"), format!("# {name}\n\n{text}\n"));
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let (name, text, _) = TOPICS[1];
    env.write(&format!("more/{name}.md"), format!("# {name}\n\n{text}\n"));
    env.write("more/photo.jpg", "not a note");

    let writer = Connection::open(env.database()).unwrap();
    writer.execute_batch("BEGIN IMMEDIATE").unwrap();
    let mut cmd = env.cmd(&["ingest", env.path("more").to_str().unwrap()]);
    let mut child = common::spawn_piped(cmd.env("KEBAB_PROGRESS", "plain"));
    let (send, lines) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    let reader = thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stderr)).map_while(Result::ok) {
            let _ = send.send(line);
        }
    });
    // The note's size: the photo is no note, so not counted.
    let planned = format!("planned 1 file, {} B", format!("# {name}\n\n{text}\n").len());
    // kebab waits for the lock up to its busy timeout (10 s); a walk of two files takes far less than 8 s.
    let deadline = Instant::now() + Duration::from_secs(8);
    let mut said = Vec::new();
    while !said.contains(&planned) {
        let Ok(line) = lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) else { break };
        said.push(line);
    }
    let counted = said.contains(&planned);
    writer.execute_batch("ROLLBACK").unwrap();
    let out = child.wait_with_output().unwrap();
    reader.join().unwrap();
    said.push("(the other process let go)".into());
    said.extend(lines.try_iter());
    let said = said.join("\n");
    assert!(counted, "no '{planned}' while another process held the write lock:\n{said}");
    assert!(out.status.success(), "{said}");
    assert!(env.doc_paths().contains(&format!("more/{name}.md")), "{said}");
}

#[test]
fn a_re_ingest_of_an_unchanged_folder_finishes_while_another_process_holds_the_write_lock() {
    // The batch's write transaction was opened before the first file was read: a re-ingest that found
    // every file unchanged held SQLite's write lock throughout, and here, with the lock held by another
    // writer, waited out its busy timeout (10 s) to fail with "database is locked". Reading needs no lock.
    let env = Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n\n[embedding]\nprovider = \"none\"\n");
    for (name, text, _) in TOPICS {
        env.write(&format!("notes/{name}.md"), format!("# {name}\n\n{text}\n"));
    }
    env.ok(&["ingest", env.notes().to_str().unwrap()]);

    let writer = Connection::open(env.database()).unwrap();
    writer.execute_batch("BEGIN IMMEDIATE").unwrap();
    let mut child = common::spawn_piped(&mut env.cmd(&["ingest", env.notes().to_str().unwrap()]));
    // Six unchanged notes take well under a second; kebab waiting on the lock would take 10 s.
    let deadline = Instant::now() + Duration::from_secs(8);
    while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(50));
    }
    let finished = child.try_wait().unwrap().is_some();
    writer.execute_batch("ROLLBACK").unwrap();
    let out = child.wait_with_output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), common::stderr(&out));
    assert!(finished, "the re-ingest was still running 8 s into another process's write lock; it then said:\n{said}");
    assert!(out.status.success(), "{said}");
    let unchanged = format!("nothing changed: {n} documents in {n} files unchanged", n = TOPICS.len());
    assert!(said.starts_with(&unchanged), "expected '{unchanged}', got:\n{said}");
}

#[test]
fn a_fork_or_rename_onto_a_name_another_process_takes_meanwhile_says_the_name_is_taken() {
    // The name was looked up before the write: another process making it in
    // between turned the fork into exit 2, "creating session \"b\": UNIQUE
    // constraint failed: conversations.name", and the rename into the same
    // words with no session named. Here the other process holds the write
    // lock with the name made, uncommitted, so kebab's look finds it free and
    // its write waits; one that looks after the commit is refused the same way.
    let env = Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n\n[embedding]\nprovider = \"none\"\n");
    let (name, text, q) = TOPICS[0];
    env.write(&format!("notes/{name}.md"), format!("# {name}\n\n{text}\n"));
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    env.ok(&["ask", "--session", "a", q]);
    for args in [["sessions", "fork", "a", "b"], ["sessions", "rename", "a", "b"]] {
        let writer = Connection::open(env.database()).unwrap();
        writer.execute_batch("BEGIN IMMEDIATE; INSERT INTO conversations(name, created_at, updated_at) VALUES ('b', 't', 't')").unwrap();
        let child = common::spawn_piped(&mut env.cmd(&args));
        // Time for kebab to look the name up and wait on the lock (its busy timeout is 10 s).
        thread::sleep(Duration::from_millis(1500));
        writer.execute_batch("COMMIT").unwrap();
        let out = child.wait_with_output().unwrap();
        let said = common::stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {said}");
        assert!(said.contains("error: a session named \"b\" already exists\nhint: pick another name"), "{args:?}: {said}");
        writer.execute("DELETE FROM conversations WHERE name = 'b'", []).unwrap();
    }
    assert_eq!(env.json(&["sessions", "show", "a"])["turns"].as_array().map(Vec::len), Some(1));
}

/// The heavier run: `scripts/concurrency.sh`, or
/// `cargo test --test concurrency -- --ignored --nocapture` with
/// `KEBAB_CONCURRENCY_NOTES`, `_WORKERS`, `_SHARED` and `_ASKS` to scale it.
#[test]
#[ignore]
fn heavy_concurrent_load_loses_no_turn_and_hits_no_lock() {
    let var = |name: &str, default: usize| {
        std::env::var(format!("KEBAB_CONCURRENCY_{name}")).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
    };
    run_and_check(Load {
        bulk_notes: var("NOTES", 2000),
        repl_questions: var("ASKS", 25),
        own_workers: var("WORKERS", 6),
        shared_workers: var("SHARED", 4),
        asks_per_worker: var("ASKS", 25),
    });
}
