//! A scripted fake model server for tests: a plain `TcpListener` on
//! 127.0.0.1:0 where connection n (in accept order) plays script n — bytes to
//! send and pauses — then is closed. Each connection is served on its own
//! thread, so a stalled exchange does not hold up the next one (a REPL asks
//! again after a timeout). `Kind` writes the two wire formats (Ollama NDJSON,
//! OpenAI server-sent events) so one script serves both providers.
//! Used by `llm_providers.rs` (the providers as a library) and `faults.rs`
//! (the same faults through the real binary).
//!
//! `POST /api/show` (Ollama's model metadata, asked once per model before the
//! first answer) is answered apart from the scripts: 404 by default, or a
//! `model_info` with the context length given to `with_show` — so a script's
//! place in the order is that of the chat calls alone.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::json;

/// One thing the fake server does on a connection.
#[derive(Clone)]
pub enum Step {
    Send(Vec<u8>),
    Wait(Duration),
}

/// The server. Stops (and is joined) when dropped; never lives past 60 s, so
/// a test that loses it cannot leave it running.
pub struct Server {
    pub url: String,
    stop: Arc<AtomicBool>,
    requests: Arc<Mutex<Vec<String>>>,
    shows: Arc<Mutex<Vec<String>>>,
    handle: Option<JoinHandle<()>>,
}

/// What a connection's thread needs besides its socket.
#[derive(Clone)]
struct Shared {
    stop: Arc<AtomicBool>,
    requests: Arc<Mutex<Vec<String>>>,
    shows: Arc<Mutex<Vec<String>>>,
    scripts: Arc<Mutex<std::vec::IntoIter<Vec<Step>>>>,
    show_context: Option<u64>,
}

impl Server {
    pub fn start(scripts: Vec<Vec<Step>>) -> Server {
        Server::with_show(scripts, None)
    }

    /// A server whose `/api/show` reports a model context of `context_length`
    /// tokens (`None`: 404, as a server without the endpoint).
    pub fn with_show(scripts: Vec<Vec<Step>>, context_length: Option<u64>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let shared = Shared {
            stop: Arc::new(AtomicBool::new(false)),
            requests: Arc::new(Mutex::new(Vec::new())),
            shows: Arc::new(Mutex::new(Vec::new())),
            scripts: Arc::new(Mutex::new(scripts.into_iter())),
            show_context: context_length,
        };
        let (stop, requests, shows) = (shared.stop.clone(), shared.requests.clone(), shared.shows.clone());
        let handle = thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(60);
            let mut connections = Vec::new();
            while !shared.stop.load(Ordering::SeqCst) && Instant::now() < deadline {
                match listener.accept() {
                    Ok((socket, _)) => {
                        let shared = shared.clone();
                        connections.push(thread::spawn(move || serve(socket, &shared)));
                    }
                    Err(_) => thread::sleep(Duration::from_millis(5)),
                }
            }
            shared.stop.store(true, Ordering::SeqCst);
            for c in connections {
                let _ = c.join();
            }
        });
        Server { url, stop, requests, shows, handle: Some(handle) }
    }

    /// The `/api/show` requests received so far.
    pub fn show_requests(&self) -> Vec<String> {
        self.shows.lock().unwrap().clone()
    }

    /// The JSON bodies of the chat requests received so far.
    pub fn bodies(&self) -> Vec<serde_json::Value> {
        self.requests()
            .iter()
            .filter_map(|r| r.split_once("\r\n\r\n").and_then(|(_, body)| serde_json::from_str(body).ok()))
            .collect()
    }

    /// The requests received so far (head and body), in the order they were read.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

fn serve(mut socket: TcpStream, shared: &Shared) {
    let _ = socket.set_nonblocking(false);
    let _ = socket.set_read_timeout(Some(Duration::from_secs(2)));
    let _ = socket.set_write_timeout(Some(Duration::from_secs(2)));
    let _ = socket.set_nodelay(true);
    let request = read_request(&mut socket);
    if request.starts_with("POST /api/show ") {
        shared.shows.lock().unwrap().push(request);
        let Step::Send(bytes) = show_response(shared.show_context) else { return };
        let _ = socket.write_all(&bytes).and_then(|_| socket.flush());
        return;
    }
    shared.requests.lock().unwrap().push(request);
    // A connection past the last script is closed unanswered.
    let Some(script) = shared.scripts.lock().unwrap().next() else { return };
    for step in script {
        match step {
            Step::Send(bytes) => {
                if socket.write_all(&bytes).and_then(|_| socket.flush()).is_err() {
                    return;
                }
            }
            Step::Wait(d) => {
                let until = Instant::now() + d;
                while Instant::now() < until && !shared.stop.load(Ordering::SeqCst) {
                    thread::sleep(Duration::from_millis(10));
                }
            }
        }
    }
}

/// `/api/show` as Ollama answers it (only the part kebab reads), or a 404.
fn show_response(context_length: Option<u64>) -> Step {
    match context_length {
        Some(n) => response(
            "200 OK",
            "application/json",
            &json!({"model_info": {"general.architecture": "qwen2", "qwen2.context_length": n}}).to_string(),
        ),
        None => response("404 Not Found", "application/json", r#"{"error":"not found"}"#),
    }
}

/// Reads the head and a `Content-Length` body; returns them as text.
fn read_request(socket: &mut TcpStream) -> String {
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let text = String::from_utf8_lossy(&data).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_string()))
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(0);
            if data.len() >= end + 4 + length {
                return text;
            }
        }
        match socket.read(&mut buf) {
            Ok(0) | Err(_) => return String::from_utf8_lossy(&data).to_string(),
            Ok(n) => data.extend_from_slice(&buf[..n]),
        }
    }
}

/// A listener on 127.0.0.1 that never accepts, with its backlog full: the
/// kernel drops the SYN of any further connect, which hangs until the
/// connector's own timeout. The held connections keep it full while they live.
pub fn full_backlog() -> (TcpListener, Vec<TcpStream>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    // Connect until one connect hangs: the backlog is full from then on.
    let mut held = Vec::new();
    loop {
        match TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
            Ok(s) => held.push(s),
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => break,
            Err(e) => panic!("filling the backlog of {addr}: {e} (does the kernel reset instead of dropping?)"),
        }
        assert!(held.len() < 10_000, "the backlog of {addr} never filled");
    }
    (listener, held)
}

/// A 200 head for a chunked stream of `content_type`.
pub fn stream_head(content_type: &str) -> Step {
    Step::Send(
        format!("HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n\r\n").into_bytes(),
    )
}

/// One chunk of a chunked body.
pub fn chunk(data: &str) -> Step {
    Step::Send(format!("{:x}\r\n{data}\r\n", data.len()).into_bytes())
}

/// The terminating chunk.
pub fn end() -> Step {
    Step::Send(b"0\r\n\r\n".to_vec())
}

pub fn wait(ms: u64) -> Step {
    Step::Wait(Duration::from_millis(ms))
}

/// A whole response with a `Content-Length` body.
pub fn response(status: &str, content_type: &str, body: &str) -> Step {
    Step::Send(
        format!(
            "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

/// The two wire formats, so each behaviour is pinned for both providers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Ollama,
    OpenAi,
}

pub const BOTH: [Kind; 2] = [Kind::Ollama, Kind::OpenAi];

impl Kind {
    /// The `llm.provider` value that speaks this format.
    pub fn provider(self) -> &'static str {
        match self {
            Kind::Ollama => "ollama",
            Kind::OpenAi => "openai",
        }
    }

    /// The path the provider posts a chat to.
    pub fn chat_path(self) -> &'static str {
        match self {
            Kind::Ollama => "/api/chat",
            Kind::OpenAi => "/v1/chat/completions",
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Kind::Ollama => "application/x-ndjson",
            Kind::OpenAi => "text/event-stream",
        }
    }

    /// One piece of answer text, as model "qwen" streams it.
    pub fn piece(self, text: &str) -> Step {
        chunk(&match self {
            Kind::Ollama => format!(
                "{}\n",
                json!({"model": "qwen", "message": {"role": "assistant", "content": text}, "done": false})
            ),
            Kind::OpenAi => format!(
                "data: {}\n\n",
                json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]})
            ),
        })
    }

    /// One piece of a thinking model's reasoning, sent apart from the answer
    /// text as each server does (Ollama's `thinking`, an OpenAI-style `reasoning_content`).
    pub fn reasoning(self, text: &str) -> Step {
        chunk(&match self {
            Kind::Ollama => format!(
                "{}\n",
                json!({"model": "qwen", "message": {"role": "assistant", "content": "", "thinking": text}, "done": false})
            ),
            Kind::OpenAi => format!(
                "data: {}\n\n",
                json!({"choices": [{"index": 0, "delta": {"content": null, "reasoning_content": text}, "finish_reason": null}]})
            ),
        })
    }

    /// The end of a stream, reporting 11 prompt and 3 completion tokens.
    pub fn finish(self) -> Step {
        chunk(&match self {
            Kind::Ollama => format!(
                "{}\n",
                json!({"model": "qwen", "message": {"role": "assistant", "content": ""}, "done": true, "prompt_eval_count": 11, "eval_count": 3})
            ),
            Kind::OpenAi => format!(
                "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
                json!({"choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}})
            ),
        })
    }

    /// A complete stream: head, the pieces with `gap` ms between them, the end.
    pub fn stream(self, pieces: &[&str], gap: u64) -> Vec<Step> {
        let mut steps = vec![stream_head(self.content_type())];
        for p in pieces {
            steps.push(self.piece(p));
            steps.push(wait(gap));
        }
        steps.extend([self.finish(), end()]);
        steps
    }
}

/// A home whose kebab talks to `server` in `kind`'s format, giving up on a
/// silent server after `timeout_secs`, with `extra` lines added to `[llm]`,
/// over the Cargo and tea notes (lexical only).
pub fn server_home(kind: Kind, server: &Server, timeout_secs: u64, extra: &str) -> super::Env {
    let env = super::Env::new();
    let config = format!(
        "[llm]\nprovider = \"{}\"\nmodel = \"qwen\"\nbase_url = \"{}\"\ntimeout_secs = {timeout_secs}\n{extra}\n\n\
         [embedding]\nprovider = \"none\"\n\n[search]\ndefault_mode = \"lexical\"\n",
        kind.provider(),
        server.url
    );
    env.write("config/kebab/config.toml", config);
    super::cargo_and_tea_notes(&env);
    env
}
