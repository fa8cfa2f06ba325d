//! The API key never leaks. With both the answering model and the embedder
//! on OpenAI-compatible fake servers and a distinctive key in the variable
//! named by `api_key_env`, every command that can touch the key runs —
//! ingest, ask (success, a 401 and a 500 that echo the key back, a refused
//! connection), `--explain`, sessions show/export, `config show`, `doctor`,
//! the REPL — and the key must appear nowhere: not on stdout or stderr, not in
//! any byte of any file under the temp home (database, write-ahead log,
//! export, history). A key written into the config file itself is refused
//! without being echoed.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};

use common::Env;

const KEY: &str = "sk-kebab-7Hq2xSECRETzz91QpL";
const KEY_VAR: &str = "KEBAB_TEST_SECRET_KEY";

#[derive(Clone, Copy)]
enum Mode {
    Ok,
    /// 401 with the key echoed in the error body, as some servers do.
    Unauthorized,
    /// 500 with the key and the whole Authorization header echoed.
    Broken,
}

/// A fake OpenAI-compatible server for `/v1/embeddings` and
/// `/v1/chat/completions`; keeps each request's Authorization header.
fn server(mode: Mode) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let auth = Arc::new(Mutex::new(Vec::new()));
    let kept = auth.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            let mut first = String::new();
            let _ = reader.read_line(&mut first);
            let (mut length, mut header) = (0usize, String::new());
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                    break;
                }
                let lower = h.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                if lower.starts_with("authorization:") {
                    header = h["authorization:".len()..].trim().to_string();
                }
            }
            let mut body = vec![0u8; length];
            let _ = reader.read_exact(&mut body);
            kept.lock().unwrap().push(header.clone());
            let echoed = header.trim_start_matches("Bearer ").to_string();
            let (status, json) = match mode {
                Mode::Unauthorized => (
                    "401 Unauthorized",
                    serde_json::json!({"error": {"message": format!("Incorrect API key provided: {echoed}. You can find your key at https://example.invalid"), "type": "invalid_request_error"}}),
                ),
                Mode::Broken => ("500 Internal Server Error", serde_json::json!({"detail": format!("upstream failed for {header} ({echoed})")})),
                Mode::Ok if first.contains("/embeddings") => {
                    let req: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
                    let n = req["input"].as_array().map_or(1, Vec::len);
                    let data: Vec<_> = (0..n)
                        .map(|i| serde_json::json!({"index": i, "embedding": [1.0, (i % 7) as f32, 0.5, 0.25]}))
                        .collect();
                    ("200 OK", serde_json::json!({"data": data, "model": "emb"}))
                }
                Mode::Ok => (
                    "200 OK",
                    serde_json::json!({
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": "\"The kettle whistles when the water boils.\" [#1]"}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 10}
                    }),
                ),
            };
            let json = json.to_string();
            let _ = write!(conn, "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{json}", json.len());
        }
    });
    (url, auth)
}

/// A URL on which nothing listens.
fn refused_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    url
}

fn config(llm_url: &str, emb_url: &str) -> String {
    format!(
        "[llm]\nprovider = \"openai\"\nmodel = \"m\"\nbase_url = \"{llm_url}\"\napi_key_env = \"{KEY_VAR}\"\n\
         [embedding]\nprovider = \"openai\"\nmodel = \"emb\"\nbase_url = \"{emb_url}\"\napi_key_env = \"{KEY_VAR}\"\n"
    )
}

/// Runs `kebab ARGS` with the key in the environment and `input` on stdin;
/// fails if the key shows on either stream. Returns (exit code, stdout, stderr).
fn run(env: &Env, args: &[&str], input: &str) -> (Option<i32>, String, String) {
    let mut child = common::spawn_piped(env.cmd(args).env(KEY_VAR, KEY).current_dir(env.path("")));
    // kebab may refuse and exit before reading: a closed pipe here is fine.
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    for (name, text) in [("stdout", &stdout), ("stderr", &stderr)] {
        assert!(!text.contains(KEY) && !text.contains(&KEY[3..20]), "{args:?} printed the key on {name}: {text}");
    }
    (out.status.code(), stdout, stderr)
}

/// Every file under `dir`, recursively (symlinks not followed).
fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let ft = entry.file_type().unwrap();
        if ft.is_dir() {
            files(&entry.path(), out);
        } else if ft.is_file() {
            out.push(entry.path());
        }
    }
}

fn assert_no_file_holds_the_key(env: &Env) {
    let mut all = Vec::new();
    files(env.dir.path(), &mut all);
    assert!(all.iter().any(|p| p.ends_with("kebab.db")), "{all:?}");
    for path in &all {
        let bytes = std::fs::read(path).unwrap();
        let hit = bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes());
        assert!(!hit, "{} holds the API key", path.display());
    }
}

#[test]
fn the_api_key_reaches_the_servers_and_nowhere_else() {
    let (ok_url, ok_auth) = server(Mode::Ok);
    let (e401, auth401) = server(Mode::Unauthorized);
    let (e500, auth500) = server(Mode::Broken);
    let env = Env::new();
    env.write("notes/kettle.md", "# Kettle\n\nThe kettle whistles when the water boils.\n");
    env.write("config/kebab/config.toml", config(&ok_url, &ok_url));
    let notes = env.notes().to_string_lossy().into_owned();
    let q = "When does the kettle whistle?";
    let export = env.path("export.md");

    let (code, _, stderr) = run(&env, &["ingest", &notes], "");
    assert_eq!(code, Some(0), "{stderr}");
    for args in [
        vec!["ask", "--session", "s", q],
        vec!["ask", "--no-stream", "--explain", "--session", "s", q],
        vec!["--json", "ask", "--explain", q],
        vec!["sessions", "show", "s"],
        vec!["sessions", "export", "s"],
        vec!["sessions", "export", "s", "--format", "json"],
        vec!["sessions", "export", "s", "--output", export.to_str().unwrap()],
        vec!["config", "show"],
        vec!["--json", "config", "show"],
        vec!["doctor"],
        vec!["--json", "doctor"],
    ] {
        let (code, _, stderr) = run(&env, &args, "");
        assert!(matches!(code, Some(0) | Some(2)), "{args:?}: {stderr}");
    }
    let (code, stdout, stderr) = run(&env, &["--repl", "--session", "r"], &format!("{q}\n:explain\n:cite 1\n:session export\n"));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("notes/kettle.md"), "the REPL answered: {stdout}");

    // Errors that echo the key: the answering model, then the embedder.
    for (url, what) in [(&e401, "401"), (&e500, "500"), (&refused_url(), "refused")] {
        env.write("config/kebab/config.toml", config(url, &ok_url));
        for args in [vec!["ask", q], vec!["--json", "ask", q], vec!["ask", "--session", "s", q]] {
            let (code, stdout, stderr) = run(&env, &args, "");
            assert_eq!(code, Some(2), "{what} {args:?}: {stdout} {stderr}");
        }
        let (code, stdout, _) = run(&env, &["--repl", "--session", "s"], &format!("{q}\n:history\n"));
        assert_eq!(code, Some(0), "{what}: {stdout}");
        env.write("config/kebab/config.toml", config(&ok_url, url));
        env.write("notes/more.md", format!("# More {what}\n\nAnother note.\n"));
        let (code, _, stderr) = run(&env, &["ingest", &notes], "");
        assert_eq!(code, Some(2), "{what}: the embedder failing fails ingest: {stderr}");
        let (code, _, stderr) = run(&env, &["search", "kettle"], "");
        assert!(matches!(code, Some(0) | Some(2)), "{what}: {stderr}");
    }
    // The servers did get the key: the test would prove nothing otherwise.
    let bearer = format!("Bearer {KEY}");
    for (name, auth) in [("ok", &ok_auth), ("401", &auth401), ("500", &auth500)] {
        let seen = auth.lock().unwrap();
        assert!(!seen.is_empty() && seen.iter().all(|h| *h == bearer), "{name}: {seen:?}");
    }
    assert!(std::fs::read_to_string(&export).unwrap().contains("kettle"));
    assert_no_file_holds_the_key(&env);
}

#[test]
fn a_key_written_into_the_config_file_is_refused_without_being_echoed() {
    let env = Env::new();
    for text in [
        format!("[llm]\nprovider = \"openai\"\napi_key = \"{KEY}\"\n"),
        format!("[embedding]\napi_key = \"{KEY}\"\n"),
        format!("[llm]\napi_key_env = \"{KEY}\"\n"),
        format!("[embedding]\napi_key_env = \"{KEY}\"\n"),
        format!("api_key = \"{KEY}\"\n"),
    ] {
        env.write("config/kebab/config.toml", &text);
        for args in [vec!["config", "show"], vec!["search", "kettle"], vec!["ask", "kettle?"], vec!["--json", "config", "show"]] {
            let (code, stdout, stderr) = run(&env, &args, "");
            assert_eq!(code, Some(1), "{text:?} {args:?}: {stdout}{stderr}");
            assert!(stderr.contains("environment variable"), "{text:?}: says to use the variable: {stderr}");
            assert!(stderr.contains("config/kebab/config.toml"), "{stderr}");
        }
        let (code, stdout, _) = run(&env, &["doctor"], "");
        assert_eq!(code, Some(2), "{stdout}");
    }
    assert!(!env.database().exists());
}
