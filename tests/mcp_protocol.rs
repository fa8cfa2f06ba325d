//! `kebab mcp` at the protocol level: what the server answers to messages a
//! careless or broken client sends (no handshake, a bad handshake, JSON that
//! is not a JSON-RPC message, a malformed `tools/call`, a line too long to
//! read) and how it ends when the client hangs up. Each test writes its lines
//! at once, closes stdin and reads every reply, so a message left without an
//! answer shows as a missing id rather than a test that waits forever.

mod common;

use std::io::Write;
use std::time::Duration;

use common::{Env, cargo_and_tea_notes, spawn_piped};
use serde_json::{Value, json};

/// `mcp_client::home` with the cargo and tea notes ingested.
fn home() -> Env {
    let env = common::mcp_client::home();
    cargo_and_tea_notes(&env);
    env
}

/// What one run of `kebab mcp` gave back.
struct Run {
    replies: Vec<Value>,
    code: Option<i32>,
    stderr: String,
}

impl Run {
    /// The reply whose id is `id` (the test fails naming every reply when none is).
    fn reply(&self, id: Value) -> &Value {
        self.replies.iter().find(|r| r["id"] == id).unwrap_or_else(|| panic!("no reply with id {id}: {:?}\n{}", self.replies, self.stderr))
    }

    /// The JSON-RPC error of the reply to `id`: (code, message).
    fn error(&self, id: Value) -> (i64, String) {
        let r = self.reply(id);
        let code = r["error"]["code"].as_i64().unwrap_or_else(|| panic!("not an error: {r}"));
        (code, r["error"]["message"].as_str().unwrap_or_default().to_string())
    }
}

/// Sends `lines` (each a line as sent, newline added), closes stdin and
/// collects every reply, the exit code and stderr; a server still running a
/// minute later is killed and fails the test.
fn exchange(env: &Env, lines: &[Vec<u8>]) -> Run {
    let mut input = Vec::new();
    for line in lines {
        input.extend_from_slice(line);
        input.push(b'\n');
    }
    exchange_bytes(env, input)
}

/// As `exchange`, with stdin's bytes exactly as given.
fn exchange_bytes(env: &Env, input: Vec<u8>) -> Run {
    let mut child = spawn_piped(env.cmd(&["mcp"]).current_dir(env.path("")));
    let mut stdin = child.stdin.take().expect("stdin");
    // Written from a thread: a reply as large as the request must not stall both pipes.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let pid = child.id();
    let (done, wait) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    let out = match wait.recv_timeout(Duration::from_secs(60)) {
        Ok(out) => out.expect("wait for kebab mcp"),
        Err(_) => {
            let _ = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("kebab mcp did not exit within a minute of its stdin closing");
        }
    };
    writer.join().expect("writer");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let replies = stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))).collect();
    Run { replies, code: out.status.code(), stderr: String::from_utf8_lossy(&out.stderr).into_owned() }
}

fn line(message: Value) -> Vec<u8> {
    message.to_string().into_bytes()
}

fn initialize(id: i64) -> Vec<u8> {
    line(json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "kebab-test", "version": "0" } }
    }))
}

fn initialized() -> Vec<u8> {
    line(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
}

fn call(id: i64, params: Value) -> Vec<u8> {
    line(json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params }))
}

#[test]
fn a_client_that_hangs_up_before_the_handshake_ends_the_server_cleanly() {
    let env = home();
    // Nothing at all (a client that gave up), and a ping alone (a health check).
    let silent = exchange(&env, &[]);
    assert_eq!(silent.code, Some(0), "{}", silent.stderr);
    assert!(silent.stderr.trim().is_empty(), "{}", silent.stderr);
    let ping = exchange(&env, &[line(json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" }))]);
    assert_eq!(ping.reply(json!(1))["result"], json!({}), "{:?}", ping.replies);
    assert_eq!(ping.code, Some(0), "{}", ping.stderr);
}

#[test]
fn a_bad_handshake_is_answered_and_the_server_waits_for_a_good_one() {
    // rmcp stopped the server on the first two (exit 2, a debug dump on
    // stderr) and never answered the bad initialize.
    let env = home();
    let run = exchange(
        &env,
        &[
            initialized(),
            line(json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize" })),
            line(json!({ "jsonrpc": "2.0", "id": 2, "method": "initialize", "params": { "protocolVersion": "2025-06-18" } })),
            line(json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/list" })),
            initialize(4),
            initialized(),
            call(5, json!({ "name": "search", "arguments": { "query": "green tea" } })),
        ],
    );
    let (code, message) = run.error(json!(1));
    assert_eq!(code, -32602, "{message}");
    assert!(message.contains("initialize needs params") && message.contains("clientInfo"), "{message}");
    let (code, message) = run.error(json!(2));
    assert_eq!(code, -32602, "{message}");
    assert!(message.contains("capabilities"), "{message}");
    let (_, message) = run.error(json!(3));
    assert!(message.contains("send initialize first"), "{message}");
    assert_eq!(run.reply(json!(4))["result"]["serverInfo"]["name"], "kebab");
    assert_eq!(run.reply(json!(5))["result"]["structuredContent"]["hits"][0]["citation"]["path"], "notes/tea.md");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stderr.contains("notifications/initialized") && !run.stderr.contains("JsonRpcNotification"), "{}", run.stderr);
}

#[test]
fn json_that_is_not_a_json_rpc_message_is_answered_with_its_id() {
    // rmcp answered each with "Invalid request" and no id at all, which is
    // no JSON-RPC reply: a client could not tell which request failed.
    let env = home();
    let run = exchange(
        &env,
        &[
            initialize(0),
            initialized(),
            line(json!([{ "jsonrpc": "2.0", "id": 1, "method": "ping" }])),
            line(json!({ "jsonrpc": "2.0", "id": 2 })),
            line(json!({ "id": 3, "method": "ping" })),
            line(json!({ "jsonrpc": "1.0", "id": 4, "method": "ping" })),
            line(json!({ "jsonrpc": "2.0", "id": 5, "method": "ping", "params": [] })),
            line(json!({ "jsonrpc": "2.0", "id": 6, "method": 7 })),
            b"42".to_vec(),
            line(json!({ "jsonrpc": "2.0", "id": 1.5, "method": "ping" })),
            line(json!({ "jsonrpc": "2.0", "id": 9, "method": "ping" })),
        ],
    );
    for reply in &run.replies {
        assert!(reply.get("id").is_some(), "a reply without an id: {reply}");
    }
    let nulls: Vec<&Value> = run.replies.iter().filter(|r| r["id"].is_null()).collect();
    assert_eq!(nulls.len(), 3, "the batch, 42 and the fractional id: {nulls:?}");
    assert!(nulls.iter().all(|r| r["error"]["code"] == -32600), "{nulls:?}");
    assert!(nulls.iter().any(|r| r["error"]["message"].as_str().unwrap().contains("batch")), "{nulls:?}");
    assert!(nulls.iter().any(|r| r["error"]["message"].as_str().unwrap().contains("id must be a string or an integer")), "{nulls:?}");
    let (code, message) = run.error(json!(2));
    assert_eq!(code, -32600);
    assert!(message.contains("method"), "{message}");
    for id in [3, 4] {
        let (code, message) = run.error(json!(id));
        assert_eq!(code, -32600);
        assert!(message.contains("\"jsonrpc\": \"2.0\""), "{message}");
    }
    let (code, message) = run.error(json!(5));
    assert_eq!(code, -32602);
    assert!(message.contains("params must be an object"), "{message}");
    assert_eq!(run.error(json!(6)).0, -32600);
    assert_eq!(run.reply(json!(9))["result"], json!({}));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

#[test]
fn a_line_that_is_not_json_is_a_parse_error_saying_what_the_parser_found_and_where() {
    // Each was answered "Parse error: the line is not JSON", which said nothing of what was wrong
    // in it, nor where.
    let env = home();
    let run = exchange(
        &env,
        &[
            initialize(0),
            initialized(),
            br#"{"jsonrpc":"2.0","id":1,"method":"ping""#.to_vec(),
            br#"  {"jsonrpc": "2.0", "id": 2, method: "ping"}"#.to_vec(),
            b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\r".to_vec(),
        ],
    );
    let errors = run.replies.iter().filter(|r| r["id"].is_null()).map(|r| &r["error"]);
    let said: Vec<(i64, &str)> = errors.map(|e| (e["code"].as_i64().unwrap(), e["message"].as_str().unwrap())).collect();
    // Columns counted from the line's first byte, leading blanks too; a `\r` before the newline is no error.
    let expected = [
        (-32700, "Parse error: the line is not JSON: EOF while parsing an object at line 1 column 39"),
        (-32700, "Parse error: the line is not JSON: key must be a string at line 1 column 31"),
    ];
    assert_eq!(said, expected, "{:?}", run.replies);
    assert_eq!(run.reply(json!(3))["result"], json!({}));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

#[test]
fn a_malformed_tools_call_is_invalid_params_naming_what_is_missing_and_the_tools() {
    // rmcp called each of the first four "Method not found" with the message
    // "tools/call", and an unknown tool "tool not found" without its name.
    let env = home();
    let run = exchange(
        &env,
        &[
            initialize(0),
            initialized(),
            line(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call" })),
            call(2, json!({ "arguments": { "query": "tea" } })),
            call(3, json!({ "name": 5 })),
            call(4, json!({ "name": "search", "arguments": ["tea"] })),
            call(5, json!({ "name": "teleport", "arguments": {} })),
            call(6, json!({ "name": "search", "arguments": { "query": "green tea" } })),
        ],
    );
    for id in 1..=5 {
        let (code, message) = run.error(json!(id));
        assert_eq!(code, -32602, "{id}: {message}");
        if id != 4 {
            assert!(message.contains("ask, cite, ingest, search, session_show, sessions_list"), "{id}: {message}");
        }
    }
    assert!(run.error(json!(1)).1.contains("tools/call needs params"), "{:?}", run.error(json!(1)));
    assert!(run.error(json!(2)).1.contains("params.name"), "{:?}", run.error(json!(2)));
    assert!(run.error(json!(4)).1.contains("the arguments of search must be an object"), "{:?}", run.error(json!(4)));
    assert!(run.error(json!(5)).1.contains("tool \"teleport\" not found"), "{:?}", run.error(json!(5)));
    assert_eq!(run.reply(json!(6))["result"]["structuredContent"]["hits"][0]["citation"]["path"], "notes/tea.md");
}

#[test]
fn a_request_too_long_to_read_is_answered_not_dropped() {
    // rmcp reads lines of at most 16 MiB and dropped a longer one without a
    // reply: the client waited forever.
    let env = home();
    let long = "tea ".repeat(4_500_000);
    let run = exchange(
        &env,
        &[
            initialize(0),
            initialized(),
            call(1, json!({ "name": "search", "arguments": { "query": long } })),
            call(2, json!({ "name": "search", "arguments": { "query": "green tea" } })),
        ],
    );
    let (code, message) = run.error(json!(1));
    assert_eq!(code, -32600, "{message}");
    assert!(message.contains("18.0 MB") && message.contains("at most 16.8 MB"), "{message}");
    assert_eq!(run.reply(json!(2))["result"]["structuredContent"]["hits"][0]["citation"]["path"], "notes/tea.md");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

#[test]
fn a_last_request_without_a_newline_is_answered_when_the_client_hangs_up() {
    // `printf '…' | kebab mcp`: rmcp dropped the unterminated last line at
    // the end of input, so the one request that mattered had no reply.
    let env = home();
    let mut input = Vec::new();
    for message in [initialize(0), initialized()] {
        input.extend_from_slice(&message);
        input.push(b'\n');
    }
    input.extend_from_slice(&call(1, json!({ "name": "search", "arguments": { "query": "green tea" } })));
    let run = exchange_bytes(&env, input);
    assert_eq!(run.reply(json!(1))["result"]["structuredContent"]["hits"][0]["citation"]["path"], "notes/tea.md");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

/// Points `env`'s kebab at a fake Ollama `server` (lexical search only).
fn answer_with(env: &Env, server: &common::fake_server::Server) {
    env.write(
        "config/kebab/config.toml",
        format!(
            "[llm]\nprovider = \"ollama\"\nmodel = \"qwen\"\nbase_url = \"{}\"\n\n[embedding]\nprovider = \"none\"\n\n\
             [search]\ndefault_mode = \"lexical\"\n",
            server.url
        ),
    );
}

#[test]
fn a_call_still_running_when_the_client_hangs_up_is_answered_before_the_server_exits() {
    // `printf '…' | kebab mcp` with a model that takes a while: rmcp waited
    // 5 s after the end of input, then exited without the answer.
    use common::fake_server::{Kind, Server, wait};
    let env = home();
    let kind = Kind::Ollama;
    let slow = [kind.piece("To create a new project, run `cargo new hello` [#1]."), kind.finish(), common::fake_server::end()];
    let mut script = vec![common::fake_server::stream_head(kind.content_type()), wait(7000)];
    script.extend(slow);
    let server = Server::start(vec![script]);
    answer_with(&env, &server);
    let question = json!({ "name": "ask", "arguments": { "question": "How do I create a new project?" } });
    let run = exchange(&env, &[initialize(0), initialized(), call(1, question)]);
    let answer = &run.reply(json!(1))["result"]["structuredContent"]["answer"];
    assert!(answer.as_str().is_some_and(|a| a.contains("cargo new hello")), "{:?}\n{}", run.replies, run.stderr);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

#[test]
fn a_method_the_server_does_not_serve_is_method_not_found_naming_the_ones_it_does() {
    // rmcp's message was the method's name alone ("resources/list").
    let env = home();
    let asks = ["resources/list", "prompts/list", "logging/setLevel", "tools/List"];
    let mut lines = vec![initialize(0), initialized()];
    lines.extend(asks.iter().zip(1..).map(|(m, id)| line(json!({ "jsonrpc": "2.0", "id": id, "method": m, "params": {} }))));
    let run = exchange(&env, &lines);
    for (method, id) in asks.iter().zip(1..) {
        let (code, message) = run.error(json!(id));
        assert_eq!(code, -32601, "{message}");
        assert!(message.starts_with(&format!("Method not found: {method};")), "{message}");
        assert!(message.contains("tools/list") && message.contains("tools/call"), "{message}");
    }
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

#[test]
fn a_request_reusing_the_id_of_a_call_still_running_is_invalid_request_naming_the_id() {
    // rmcp answered the running call and never the second request with its
    // id; the server then waited for that answer forever after the client hung up.
    use common::fake_server::{Kind, Server, end, stream_head, wait};
    let env = home();
    let kind = Kind::Ollama;
    let script = vec![stream_head(kind.content_type()), wait(1500), kind.piece("To create a new project, run `cargo new hello` [#1]."), kind.finish(), end()];
    let server = Server::start(vec![script]);
    answer_with(&env, &server);
    let question = json!({ "name": "ask", "arguments": { "question": "How do I create a new project?" } });
    let search = json!({ "name": "search", "arguments": { "query": "green tea" } });
    let ping = line(json!({ "jsonrpc": "2.0", "id": 7, "method": "ping" }));
    let run = exchange(&env, &[initialize(0), initialized(), call(7, question), call(7, search.clone()), ping, call(8, search)]);
    let sevens: Vec<&Value> = run.replies.iter().filter(|r| r["id"] == json!(7)).collect();
    assert_eq!(sevens.len(), 3, "{sevens:?}\n{}", run.stderr);
    let answer = sevens.iter().find_map(|r| r["result"]["structuredContent"]["answer"].as_str());
    assert!(answer.is_some_and(|a| a.contains("cargo new hello")), "{sevens:?}");
    let refused: Vec<&str> = sevens.iter().filter(|r| r["error"]["code"] == -32600).filter_map(|r| r["error"]["message"].as_str()).collect();
    assert_eq!(refused.len(), 2, "{sevens:?}");
    for message in refused {
        assert!(message.starts_with("Invalid Request: id 7 is the id of a tools/call still running;"), "{message}");
        assert!(message.contains("send this request again with an id of its own"), "{message}");
    }
    // A request with an id of its own is served as ever.
    assert_eq!(run.reply(json!(8))["result"]["structuredContent"]["hits"][0]["citation"]["path"], "notes/tea.md");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

#[test]
fn a_request_reusing_the_id_of_one_not_answered_yet_is_invalid_request_and_every_request_is_answered() {
    // Two pings (or tools/list) sent together with one id: rmcp answered the
    // first and never the second, so a client waited for it forever.
    let env = home();
    let request = |id: i64, method: &str| line(json!({ "jsonrpc": "2.0", "id": id, "method": method }));
    let twice = [request(5, "ping"), request(5, "ping"), request(6, "tools/list"), request(6, "tools/list")];
    let run = exchange(&env, &[vec![initialize(0), initialized()], twice.to_vec()].concat());
    for (id, method) in [(5, "ping"), (6, "tools/list")] {
        let replies: Vec<&Value> = run.replies.iter().filter(|r| r["id"] == json!(id)).collect();
        assert_eq!(replies.len(), 2, "{method}: {replies:?}\n{}", run.stderr);
        assert!(replies.iter().any(|r| r.get("result").is_some()), "{replies:?}");
        // The second is refused when read while the first was in flight (served when read after its answer).
        for error in replies.iter().filter_map(|r| r.get("error")) {
            assert_eq!(error["code"], -32600, "{error}");
            let message = error["message"].as_str().unwrap();
            let refusal = format!("Invalid Request: id {id} is the id of a {method} still running;");
            assert!(message.starts_with(&refusal), "{message}");
        }
    }
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // An id whose request was answered is free again (JSON-RPC asks ids unique among requests in flight).
    let (mut client, _) = common::mcp_client::Client::start(&env, &[]);
    for _ in 0..2 {
        client.next_id = 7;
        assert_eq!(client.request("ping", json!({})), json!({ "jsonrpc": "2.0", "id": 7, "result": {} }));
    }
    let (code, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
}
