//! Ctrl-C while a model server keeps `kebab ask` waiting: before its first
//! word (a real server evaluating a long prompt takes seconds to a minute),
//! while a stream is stalled, and while a `--no-stream` answer is awaited.
//! Each must stop the ask at once — exit 130, the question saved as
//! `llm_stream_aborted` with whatever text came — not when the server times out
//! (`llm.timeout_secs`, 300 s by default). The fake servers here wait far longer
//! than the tests allow, so a Ctrl-C that is not heeded fails instead of passing late.
//! The REPL's note on a stopped turn says what that turn kept.

mod common;

use std::io::Read;
use std::process::Child;
use std::thread;
use std::time::{Duration, Instant};

use common::fake_server::{Kind, Server, Step, BOTH, server_home, stream_head, wait};
use common::{Env, stderr};

/// Long past every bound below: only a heeded Ctrl-C ends the ask in time.
const TIMEOUT_SECS: u64 = 50;

/// Waits until the server has the chat request (the ask is then waiting on
/// the model, its Ctrl-C handler set), sends SIGINT, and returns the exit
/// code and stderr — killing kebab and failing if it runs on for 20 s.
fn interrupt_once_asked(server: &Server, mut child: Child, what: &str) -> (Option<i32>, String) {
    let asked = Instant::now();
    while server.requests().is_empty() {
        assert!(asked.elapsed() < Duration::from_secs(20), "{what}: the server never got the question");
        thread::sleep(Duration::from_millis(20));
    }
    // A moment for the request to be waited on rather than being written.
    thread::sleep(Duration::from_millis(200));
    let sent = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let interrupted = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            return (status.code(), err);
        }
        if interrupted.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("{what}: kebab ask ran on 20 s after Ctrl-C\nstderr: {}", stderr(&out));
        }
        thread::sleep(Duration::from_millis(20));
    }
}

fn saved(env: &Env) -> (String, String) {
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    conn.query_row("SELECT refusal_reason, answer FROM answers", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap()
}

fn ask(env: &Env, extra: &[&str]) -> Child {
    let mut args = vec!["ask"];
    args.extend_from_slice(extra);
    args.push("How do I create a new project with cargo?");
    common::spawn_piped(&mut env.cmd(&args))
}

#[test]
fn ctrl_c_before_the_first_word_stops_the_ask_at_once_and_saves_the_question() {
    for kind in BOTH {
        // The server takes the question and says nothing, as while it reads a long prompt.
        let server = Server::start(vec![vec![wait(60_000)]]);
        let env = server_home(kind, &server, TIMEOUT_SECS, "");
        let (code, err) = interrupt_once_asked(&server, ask(&env, &[]), kind.provider());
        assert_eq!(code, Some(130), "{kind:?}: {err}");
        assert!(!err.contains("sent nothing"), "{kind:?}: {err}");
        assert_eq!(saved(&env), ("llm_stream_aborted".to_string(), String::new()), "{kind:?}");
    }
}

#[test]
fn ctrl_c_while_a_stream_is_stalled_stops_at_once_keeping_the_words_that_came() {
    for kind in BOTH {
        let script = vec![stream_head(kind.content_type()), kind.piece("Run cargo new "), wait(60_000)];
        let server = Server::start(vec![script]);
        let env = server_home(kind, &server, TIMEOUT_SECS, "");
        let (code, err) = interrupt_once_asked(&server, ask(&env, &[]), kind.provider());
        assert_eq!(code, Some(130), "{kind:?}: {err}");
        assert_eq!(saved(&env), ("llm_stream_aborted".to_string(), "Run cargo new ".to_string()), "{kind:?}");
    }
}

#[test]
fn ctrl_c_while_a_whole_answer_is_awaited_stops_at_once() {
    // --no-stream: the OpenAI-style server is asked for one JSON answer, which never comes.
    let server = Server::start(vec![vec![Step::Send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"choices\"".to_vec()), wait(60_000)]]);
    let env = server_home(Kind::OpenAi, &server, TIMEOUT_SECS, "");
    let (code, err) = interrupt_once_asked(&server, ask(&env, &["--no-stream"]), "--no-stream");
    assert_eq!(code, Some(130), "{err}");
    assert_eq!(saved(&env).0, "llm_stream_aborted");
}

#[test]
fn ctrl_c_in_the_repl_says_whether_the_model_had_written_anything_and_what_the_turn_keeps() {
    // The REPL said "the partial answer is kept as this turn" when the model
    // had written nothing: the turn keeps the question alone, unanswered.
    use std::io::{BufRead, BufReader, Write};
    let kind = Kind::Ollama;
    let before_any_word = vec![wait(60_000)];
    let after_some = vec![stream_head(kind.content_type()), kind.piece("Run cargo new "), wait(60_000)];
    let server = Server::start(vec![before_any_word, after_some]);
    let env = server_home(kind, &server, TIMEOUT_SECS, "");
    let mut child = common::spawn_piped(env.cmd(&["--repl", "--session", "stop"]).current_dir(env.path("")));
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let pid = child.id().to_string();
    let mut stopped_turn = |asked: usize| {
        writeln!(stdin, "How do I create a new project with cargo?").unwrap();
        let started = Instant::now();
        while server.requests().len() < asked {
            assert!(started.elapsed() < Duration::from_secs(20), "the server never got question {asked}");
            thread::sleep(Duration::from_millis(20));
        }
        thread::sleep(Duration::from_millis(200));
        assert!(std::process::Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
        // The footer ends the turn's output, stopped or not.
        let (mut turn, mut line) = (String::new(), String::new());
        while !line.contains("qwen · lexical") {
            line.clear();
            assert!(stdout.read_line(&mut line).unwrap() > 0, "the REPL ended early:\n{turn}");
            turn.push_str(&line);
        }
        turn
    };
    let first = stopped_turn(1);
    assert!(first.contains("\n(stopped before the model wrote anything: the question is kept as this turn, unanswered)\n"), "{first}");
    let second = stopped_turn(2);
    assert!(second.contains("Run cargo new \n(stopped: the partial answer is kept as this turn)\n"), "{second}");
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // What the notes said is what the turns hold.
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    let mut rows = conn.prepare("SELECT a.refusal_reason, a.answer FROM turns t JOIN answers a ON a.id = t.answer_id ORDER BY t.turn_index").unwrap();
    let saved: Vec<(String, String)> = rows.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect();
    let aborted = "llm_stream_aborted".to_string();
    assert_eq!(saved, [(aborted.clone(), String::new()), (aborted, "Run cargo new ".to_string())]);
}
