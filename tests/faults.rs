//! The model-server fault matrix through the real binary: every fault a model
//! server can show (rows) × both wire formats (Ollama NDJSON, OpenAI
//! server-sent events) × both front ends (one-shot `kebab ask`, and the REPL
//! fed through a pipe). Each cell pins the exit code, a clear message that
//! names the endpoint (and a hint where the user can act), whether the partial
//! text is shown and saved, and a wall-time bound of the configured timeout
//! plus generous slack, so a hang fails instead of stalling CI. In the REPL the
//! fault must leave it usable: `:history` lists the aborted turn, and — when a
//! server is there — the next question gets the server's healthy answer.
//!
//! "Slow accept" is two real things: a listener that never calls `accept`
//! while its backlog has room (the kernel completes the handshake and takes
//! the request, then nothing comes back: the idle timeout `llm.timeout_secs`
//! applies), and one whose backlog is full (the kernel drops the SYN, so the
//! connect itself hangs: the fixed 5 s connect budget applies). Servers that
//! keep every read on time yet never answer — keep-alive lines only, a head or
//! a line trickled a byte at a time — must hit the idle timeout as well.
//!
//! All cells run at once, each kebab on its own copy of one indexed database.
//! A last test pins `--json`: a failure prints one `error.v1` document.

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Child;
use std::thread;
use std::time::{Duration, Instant};

use common::Env;
use common::fake_server::{BOTH, Kind, Server, Step, chunk, end, full_backlog, response, stream_head, wait};
/// kebab's fixed budget for opening a connection: the bound of the backlog-full row.
use kebab::http::CONNECT_TIMEOUT;

/// `llm.timeout_secs` in every cell.
const TIMEOUT: Duration = Duration::from_secs(1);
/// Slack over the timeout that applies: process start-up and sixty processes
/// sharing a small machine. Only a hang comes near it.
const SLACK: Duration = Duration::from_secs(15);
/// How long a stalling server stays quiet: far past any bound.
const STALL_MS: u64 = 60_000;

const QUESTION: &str = "How do I create a new project with cargo?";
const PARTIAL: &str = "Half an answer";
const HEALTHY: &str = "Run `cargo new hello` in a terminal [#1].";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    Refused,
    NeverAccepted,
    BacklogFull,
    MissingModel404,
    Error500,
    StallAfterHeaders,
    StallMidStream,
    KeepAlivesOnly,
    TrickledHead,
    TrickledLine,
    CutMidStream,
    MalformedLine,
    HugeLine,
    Html200,
    TextPlain200,
}

const FAULTS: [Fault; 15] = [
    Fault::Refused,
    Fault::NeverAccepted,
    Fault::BacklogFull,
    Fault::MissingModel404,
    Fault::Error500,
    Fault::StallAfterHeaders,
    Fault::StallMidStream,
    Fault::KeepAlivesOnly,
    Fault::TrickledHead,
    Fault::TrickledLine,
    Fault::CutMidStream,
    Fault::MalformedLine,
    Fault::HugeLine,
    Fault::Html200,
    Fault::TextPlain200,
];

/// What a cell must show. `{url}` in a fragment stands for the endpoint.
struct Expect {
    /// Fragments of the error message (one-shot: stderr; REPL: its `error:` line).
    message: Vec<String>,
    /// A fragment of the `hint:` line, when the user can act on the fault.
    hint: Option<&'static str>,
    /// The text that arrived before the fault: shown, and saved as the answer.
    partial: &'static str,
    /// The timeout that bounds the fault; the cell must end within it plus `SLACK`.
    timeout: Duration,
}

impl Fault {
    /// What the server does on the faulty connection (`None`: no server script).
    fn script(self, kind: Kind) -> Option<Vec<Step>> {
        let head = || stream_head(kind.content_type());
        let half = || [kind.piece("Half"), kind.piece(" an answer")];
        Some(match self {
            Fault::Refused | Fault::NeverAccepted | Fault::BacklogFull => return None,
            Fault::MissingModel404 => {
                let body = match kind {
                    Kind::Ollama => r#"{"error":"model \"qwen\" not found, try pulling it first"}"#,
                    Kind::OpenAi => {
                        r#"{"error":{"message":"The model `qwen` does not exist","type":"invalid_request_error","code":"model_not_found"}}"#
                    }
                };
                vec![response("404 Not Found", "application/json", body)]
            }
            Fault::Error500 => {
                let body = match kind {
                    Kind::Ollama => r#"{"error":"llama runner process has terminated"}"#,
                    Kind::OpenAi => r#"{"error":{"message":"llama runner process has terminated","code":500}}"#,
                };
                vec![response("500 Internal Server Error", "application/json", body)]
            }
            Fault::StallAfterHeaders => vec![head(), wait(STALL_MS)],
            Fault::StallMidStream => [vec![head()], half().into(), vec![wait(STALL_MS)]].concat(),
            // Text, then only what a proxy sends to keep the connection open
            // (an SSE comment; for NDJSON a blank line), every 200 ms, for a minute.
            Fault::KeepAlivesOnly => {
                let ping = if kind == Kind::Ollama { "\n" } else { ": keep-alive\n\n" };
                let pings = (0..STALL_MS / 200).flat_map(|_| [chunk(ping), wait(200)]);
                [vec![head()], half().into(), pings.collect()].concat()
            }
            // The response head one byte every 200 ms: each read succeeds in time.
            Fault::TrickledHead => {
                let head = format!("HTTP/1.1 200 OK\r\nContent-Type: {}\r\nTransfer-Encoding: chunked\r\n\r\n", kind.content_type());
                head.bytes().flat_map(|b| [Step::Send(vec![b]), wait(200)]).collect()
            }
            // Text, then a line that never ends, one byte every 200 ms.
            Fault::TrickledLine => {
                let trickle = (0..STALL_MS / 200).flat_map(|_| [chunk("x"), wait(200)]);
                [vec![head()], half().into(), trickle.collect()].concat()
            }
            // The socket closes inside the chunked body: no terminating chunk.
            Fault::CutMidStream => [vec![head()], half().into()].concat(),
            Fault::MalformedLine => {
                let bad = match kind {
                    Kind::Ollama => "this is not json\n",
                    Kind::OpenAi => "data: this is not json\n\n",
                };
                [vec![head()], half().into(), vec![chunk(bad), end()]].concat()
            }
            Fault::HugeLine => {
                // 2.5 MiB without a newline, over the 1 MiB line limit.
                let block = "x".repeat(64 * 1024);
                [vec![head()], half().into(), (0..40).map(|_| chunk(&block)).collect(), vec![end()]].concat()
            }
            Fault::Html200 => {
                let page = "<!doctype html><html><head><title>Router login</title></head><body>Sign in</body></html>";
                vec![response("200 OK", "text/html; charset=utf-8", page)]
            }
            // What `GET /` on an Ollama server says, as a server on the wrong path might.
            Fault::TextPlain200 => vec![response("200 OK", "text/plain; charset=utf-8", "Ollama is running")],
        })
    }

    /// The refusal reason the ask is saved with: `model_error` when the
    /// server answered with an error status or a web page, else `llm_stream_aborted`.
    fn reason(self) -> &'static str {
        match self {
            Fault::MissingModel404 | Fault::Error500 | Fault::Html200 => "model_error",
            _ => "llm_stream_aborted",
        }
    }

    fn expect(self, kind: Kind) -> Expect {
        let ollama = kind == Kind::Ollama;
        let (message, hint, partial, timeout): (Vec<&str>, Option<&'static str>, &'static str, Duration) = match self {
            // The hint names the kind of server configured and how to start it.
            Fault::Refused if ollama => {
                (vec!["cannot reach the model server at {url}"], Some("start Ollama with `ollama serve`"), "", TIMEOUT)
            }
            Fault::Refused => (
                vec!["cannot reach the model server at {url}"],
                Some("start the OpenAI-compatible server llm.base_url names"),
                "",
                TIMEOUT,
            ),
            Fault::NeverAccepted => {
                (vec!["the model server at {url} sent nothing for 1 s"], Some("raise llm.timeout_secs"), "", TIMEOUT)
            }
            Fault::BacklogFull => (
                vec!["cannot reach the model server at {url}: no connection within 5 s"],
                Some("fix llm.base_url"),
                "",
                CONNECT_TIMEOUT,
            ),
            Fault::MissingModel404 if ollama => (
                vec!["the model server at {url} answered 404: model \"qwen\" not found"],
                Some("run `ollama pull qwen`"),
                "",
                TIMEOUT,
            ),
            Fault::MissingModel404 => (
                vec!["the model server at {url} answered 404: The model `qwen` does not exist"],
                Some("check llm.model (qwen) and llm.base_url"),
                "",
                TIMEOUT,
            ),
            Fault::Error500 => {
                (vec!["the model server at {url} answered 500: llama runner process has terminated"], None, "", TIMEOUT)
            }
            Fault::StallAfterHeaders => {
                (vec!["the model server at {url} sent nothing for 1 s"], Some("raise llm.timeout_secs"), "", TIMEOUT)
            }
            Fault::StallMidStream | Fault::KeepAlivesOnly => {
                (vec!["the model server at {url} sent nothing for 1 s"], Some("raise llm.timeout_secs"), PARTIAL, TIMEOUT)
            }
            Fault::TrickledHead => {
                (vec!["the model server at {url} sent nothing for 1 s"], Some("raise llm.timeout_secs"), "", TIMEOUT)
            }
            Fault::TrickledLine => {
                (vec!["the stream from {url} broke: a line took over 1 s to arrive"], None, PARTIAL, TIMEOUT)
            }
            Fault::CutMidStream => {
                (vec!["the stream from {url} broke: the server closed the connection mid-answer"], None, PARTIAL, TIMEOUT)
            }
            Fault::MalformedLine if ollama => (
                vec!["the stream from {url} broke: malformed line from the server: \"this is not json\""],
                None,
                PARTIAL,
                TIMEOUT,
            ),
            Fault::MalformedLine => (
                vec!["the stream from {url} broke: malformed event from the server: \"this is not json\""],
                None,
                PARTIAL,
                TIMEOUT,
            ),
            Fault::HugeLine => {
                (vec!["the stream from {url} broke: a line longer than 1048576 bytes"], None, PARTIAL, TIMEOUT)
            }
            Fault::Html200 => (
                vec!["the model server at {url} answered 200: a web page, not a model stream (Router login Sign in)"],
                Some("llm.base_url reaches a web page"),
                "",
                TIMEOUT,
            ),
            Fault::TextPlain200 if ollama => (
                vec!["the stream from {url} broke: malformed line from the server: \"Ollama is running\""],
                None,
                "",
                TIMEOUT,
            ),
            Fault::TextPlain200 => (
                vec!["the stream from {url} broke: expected server-sent events, got \"Ollama is running\""],
                None,
                "",
                TIMEOUT,
            ),
        };
        Expect { message: message.into_iter().map(String::from).collect(), hint, partial, timeout }
    }
}

/// Where a cell's kebab is pointed: a scripted server, or a socket that
/// misbehaves below HTTP. Kept alive until the cell is checked.
enum Target {
    Server(Server),
    /// Nothing listens on the port.
    Dead(String),
    /// A listener that never accepts, and the connections filling its backlog (if any).
    Listener { listener: TcpListener, _held: Vec<TcpStream> },
}

impl Target {
    /// The faulty endpoint; `healthy_after` adds a good answer on the next connection.
    fn new(fault: Fault, kind: Kind, healthy_after: bool) -> Target {
        match fault {
            Fault::Refused => {
                // A port on 127.0.0.2, where no cell's server listens (they bind
                // 127.0.0.1): a port freed on 127.0.0.1 could be taken by another
                // cell's server in the meantime, and the ask would reach it.
                let port = TcpListener::bind("127.0.0.2:0").unwrap().local_addr().unwrap().port();
                Target::Dead(format!("http://127.0.0.2:{port}"))
            }
            Fault::NeverAccepted => Target::Listener { listener: TcpListener::bind("127.0.0.1:0").unwrap(), _held: Vec::new() },
            Fault::BacklogFull => {
                let (listener, held) = full_backlog();
                Target::Listener { listener, _held: held }
            }
            _ => {
                let mut scripts = vec![fault.script(kind).unwrap()];
                if healthy_after {
                    scripts.push(kind.stream(&["Run `cargo new hello`", " in a terminal [#1]."], 0));
                }
                Target::Server(Server::start(scripts))
            }
        }
    }

    fn base_url(&self) -> String {
        match self {
            Target::Server(s) => s.url.clone(),
            Target::Dead(url) => url.clone(),
            Target::Listener { listener, .. } => format!("http://{}", listener.local_addr().unwrap()),
        }
    }

    fn healthy_after(&self) -> bool {
        matches!(self, Target::Server(_))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Front {
    Ask,
    Repl,
}

/// One cell's run: what kebab printed and how long it took.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

/// Runs kebab, killing it if it outlives `deadline` (then `code` is None).
fn run(env: &Env, args: &[&str], input: &str, deadline: Duration) -> Ran {
    let started = Instant::now();
    let mut child: Child = common::spawn_piped(env.cmd(args).current_dir(env.path("")));
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_string();
    let writer = thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let reader = |mut pipe: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let out = reader(Box::new(child.stdout.take().unwrap()));
    let err = reader(Box::new(child.stderr.take().unwrap()));
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        thread::sleep(Duration::from_millis(20));
    };
    let elapsed = started.elapsed();
    let _ = writer.join();
    Ran { code, stdout: out.join().unwrap(), stderr: err.join().unwrap(), elapsed }
}

/// The notes every cell asks about, indexed once (lexical only).
fn indexed() -> Env {
    let env = Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n\n[embedding]\nprovider = \"none\"\n");
    common::cargo_and_tea_notes(&env);
    env
}

/// A home with a copy of `base`'s database and kebab pointed at `base_url`.
fn cell_env(base: &Env, kind: Kind, base_url: &str) -> Env {
    let env = Env::new();
    let config = format!(
        "[llm]\nprovider = \"{}\"\nmodel = \"qwen\"\nbase_url = \"{base_url}\"\ntimeout_secs = {}\n\n[embedding]\nprovider = \"none\"\n\n[search]\ndefault_mode = \"lexical\"\n",
        kind.provider(),
        TIMEOUT.as_secs()
    );
    env.write("config/kebab/config.toml", config);
    let from = base.database();
    let to = env.database();
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    for suffix in ["", "-wal", "-shm"] {
        let src = Path::new(&format!("{}{suffix}", from.display())).to_path_buf();
        if src.exists() {
            std::fs::copy(&src, format!("{}{suffix}", to.display())).unwrap();
        }
    }
    env
}

/// The saved answers of the cell, oldest first: (answer text, refusal reason, turn index).
fn saved(env: &Env) -> Vec<(String, Option<String>, Option<i64>)> {
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    let mut stmt = conn.prepare("SELECT answer, refusal_reason, turn_index FROM answers ORDER BY id").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
}

/// The assistant messages (earlier answers) in a chat request as the server got it.
fn assistant_messages(request: &str) -> Vec<String> {
    let body: serde_json::Value = serde_json::from_str(request.split("\r\n\r\n").nth(1).unwrap_or("")).unwrap_or_default();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    messages.iter().filter(|m| m["role"] == "assistant").map(|m| m["content"].as_str().unwrap_or("").to_string()).collect()
}

/// Runs one cell; returns how long kebab took and what is wrong (empty: it passes).
fn check_cell(base: &Env, fault: Fault, kind: Kind, front: Front) -> (Duration, Vec<String>) {
    let target = Target::new(fault, kind, front == Front::Repl);
    let url = format!("{}{}", target.base_url(), kind.chat_path());
    let env = cell_env(base, kind, &target.base_url());
    let expect = fault.expect(kind);
    let bound = expect.timeout + SLACK;
    let mut problems = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            problems.push(what);
        }
    };

    let (ran, shown) = match front {
        Front::Ask => {
            let ran = run(&env, &["ask", QUESTION], "", bound * 2);
            let shown = ran.stderr.clone();
            (ran, shown)
        }
        Front::Repl => {
            let mut input = format!("{QUESTION}\n:history\n");
            if target.healthy_after() {
                input.push_str(&format!("{QUESTION}\n"));
            }
            let ran = run(&env, &["--repl", "--session", "s"], &input, bound * 2);
            let shown = ran.stdout.clone();
            (ran, shown)
        }
    };
    let all = format!("exit {:?} after {:?}\n--- stdout\n{}\n--- stderr\n{}", ran.code, ran.elapsed, ran.stdout, ran.stderr);
    check(ran.elapsed <= bound, format!("took {:?}, over the bound {bound:?}", ran.elapsed));
    check(ran.code == Some(if front == Front::Ask { 2 } else { 0 }), format!("exit code {:?}", ran.code));
    check(!ran.stderr.contains("panicked"), "a panic".into());

    // The message: the failure, the endpoint, and what to do.
    let lead = if expect.partial.is_empty() {
        "error: the model did not answer; the question is saved: "
    } else {
        "error: the answer was cut short; the partial text is saved: "
    };
    check(shown.contains(lead), format!("no {lead:?}"));
    for fragment in &expect.message {
        let fragment = fragment.replace("{url}", &url);
        check(shown.contains(&fragment), format!("no {fragment:?}"));
    }
    match expect.hint {
        Some(h) => check(shown.lines().any(|l| l.starts_with("hint: ") && l.contains(h)), format!("no hint {h:?}")),
        None => check(!shown.contains("hint: "), "a hint where none applies".into()),
    }

    // The partial text: shown as it arrived, and saved as the aborted answer.
    // Without any, no blank answer is printed: the error comes right after the question.
    if !expect.partial.is_empty() {
        check(ran.stdout.contains(expect.partial), format!("partial {:?} not shown", expect.partial));
    } else if front == Front::Ask {
        check(ran.stdout.starts_with(&format!("{}/qwen · ", kind.provider())), "stdout is not just the footer".into());
    } else {
        let after = format!("kebab[s]> {QUESTION}\nerror: ");
        check(ran.stdout.contains(&after), "the error does not follow the question".into());
    }
    let rows = saved(&env);
    let aborted = (expect.partial.to_string(), Some(fault.reason().to_string()));
    match front {
        Front::Ask => {
            let got: Vec<_> = rows.iter().map(|(a, r, t)| (a.clone(), r.clone(), *t)).collect();
            check(got == vec![(aborted.0, aborted.1, None)], format!("saved answers {got:?}"));
            let footer = format!("refused: {}", fault.reason());
            check(ran.stdout.contains(&footer), format!("the footer does not say {footer:?}"));
        }
        Front::Repl => {
            // The faulty turn is turn 0, aborted, with its partial text; the REPL
            // then still lists it and, with a server there, answers the next question.
            check(
                rows.first().is_some_and(|(a, r, t)| (a, r, *t) == (&aborted.0, &aborted.1, Some(0))),
                format!("first saved turn {:?}", rows.first()),
            );
            check(
                shown.contains(&format!("  1. {QUESTION} (refused: {})", fault.reason())),
                "`:history` does not list the aborted turn".into(),
            );
            if target.healthy_after() {
                check(
                    rows.get(1).is_some_and(|(a, r, t)| (a.as_str(), r, *t) == (HEALTHY, &None, Some(1))),
                    format!("second turn {:?}", rows.get(1)),
                );
                check(shown.contains(HEALTHY), "the healthy answer after the fault is not shown".into());
                // The next prompt carries the partial text as the earlier answer; a turn
                // the model never answered is left out rather than sent as an empty reply.
                let replies = match &target {
                    Target::Server(server) => server.requests().get(1).map(|r| assistant_messages(r)),
                    _ => None,
                };
                let expected: Vec<String> = [expect.partial].iter().filter(|p| !p.is_empty()).map(|p| p.to_string()).collect();
                check(replies.as_ref() == Some(&expected), format!("earlier replies in the next prompt: {replies:?}"));
                check(shown.matches("error:").count() == 1, "more than one error".into());
            } else {
                check(rows.len() == 1, format!("saved answers {rows:?}"));
            }
        }
    }
    drop(target);
    let problems = if problems.is_empty() { Vec::new() } else { vec![format!("{}\n{all}", problems.join("; "))] };
    (ran.elapsed, problems)
}

#[test]
fn every_model_server_fault_gives_a_clear_message_keeps_partial_text_and_never_hangs() {
    let base = indexed();
    let started = Instant::now();
    let failures: Vec<String> = thread::scope(|s| {
        let mut cells = Vec::new();
        for fault in FAULTS {
            for kind in BOTH {
                for front in [Front::Ask, Front::Repl] {
                    let base = &base;
                    let handle = s.spawn(move || check_cell(base, fault, kind, front));
                    cells.push((format!("{fault:?} × {kind:?} × {front:?}"), handle));
                }
            }
        }
        cells
            .into_iter()
            .flat_map(|(name, h)| {
                let (elapsed, problems) = h.join().unwrap_or_else(|_| (Duration::ZERO, vec!["the cell's check panicked".into()]));
                // The table, for `--nocapture`: one line per cell.
                eprintln!("{:<4} {name:<40} {:>6} ms", if problems.is_empty() { "ok" } else { "FAIL" }, elapsed.as_millis());
                problems.into_iter().map(move |p| format!("[{name}] {p}"))
            })
            .collect()
    });
    eprintln!("{} cells in {:?}", FAULTS.len() * 4, started.elapsed());
    assert!(failures.is_empty(), "{} failing cells:\n\n{}", failures.len(), failures.join("\n\n"));
}

#[test]
fn with_json_a_model_failure_prints_one_error_document() {
    // `--json` promises one document on stdout: for a failure, `error.v1`
    // (the partial answer is still saved, as without `--json`).
    let base = indexed();
    let target = Target::new(Fault::CutMidStream, Kind::Ollama, false);
    let env = cell_env(&base, Kind::Ollama, &target.base_url());
    let ran = run(&env, &["--json", "ask", QUESTION], "", TIMEOUT + SLACK);
    assert_eq!(ran.code, Some(2), "{}", ran.stderr);
    let doc: serde_json::Value = serde_json::from_str(&ran.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{}", ran.stdout));
    assert_eq!(doc["schema_version"], "error.v1");
    assert_eq!(doc["code"], "llm");
    let message = doc["message"].as_str().unwrap();
    assert!(message.contains("the answer was cut short; the partial text is saved"), "{message}");
    assert!(message.contains("closed the connection mid-answer"), "{message}");
    assert_eq!(saved(&env), vec![(PARTIAL.to_string(), Some("llm_stream_aborted".to_string()), None)]);
}
