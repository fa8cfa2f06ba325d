//! An MCP client for tests: it speaks newline-delimited JSON-RPC to a running
//! `kebab mcp` over its pipes, one request at a time, so a test reads as the
//! calls a client makes (`tests/mcp.rs`, `tests/mcp_database.rs`).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command};

use serde_json::{Value, json};

use super::{Env, spawn_piped};

/// A home for an MCP test: the built-in extractive model, lexical search
/// (no embedding model needed).
pub fn home() -> Env {
    let env = Env::new();
    env.write(
        "config/kebab/config.toml",
        "[llm]\nprovider = \"extractive\"\n\n[embedding]\nprovider = \"none\"\n\n[search]\ndefault_mode = \"lexical\"\n",
    );
    env
}

/// An MCP client on a running `kebab mcp`.
pub struct Client {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub stdout: BufReader<ChildStdout>,
    pub next_id: u64,
}

impl Client {
    /// Starts `kebab [flags] mcp` and completes the handshake.
    pub fn start(env: &Env, flags: &[&str]) -> (Client, Value) {
        Client::start_with(env, flags, &[])
    }

    /// As `start`, with environment variables `vars` set for the server.
    pub fn start_with(env: &Env, flags: &[&str], vars: &[(&str, &str)]) -> (Client, Value) {
        let mut args = flags.to_vec();
        args.push("mcp");
        let mut cmd = env.cmd(&args);
        cmd.envs(vars.iter().copied()).current_dir(env.path(""));
        Client::start_command(cmd)
    }

    /// As `start`, running `cmd`: `kebab … mcp` as the test made it (wrapped
    /// in `setpriv`, say).
    pub fn start_command(mut cmd: Command) -> (Client, Value) {
        let mut child = spawn_piped(&mut cmd);
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut client = Client { child, stdin, stdout, next_id: 1 };
        let init = client.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "kebab-test", "version": "0" }
            }),
        );
        client.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        (client, init)
    }

    pub fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write to kebab mcp");
        stdin.flush().expect("flush");
    }

    /// Sends a request and returns its response (notifications in between are skipped).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("read from kebab mcp");
            assert!(n > 0, "kebab mcp closed stdout before answering {method}");
            let message: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {line}"));
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// `tools/call`: the result (a JSON-RPC error fails the test).
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let response = self.request("tools/call", json!({ "name": tool, "arguments": arguments }));
        assert!(response.get("error").is_none(), "{tool}: {response}");
        response["result"].clone()
    }

    /// A successful call's document.
    pub fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments);
        assert_eq!(result["isError"], json!(false), "{tool}: {result}");
        // The text content is the same document, for clients that read text only.
        let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().expect("text content")).unwrap();
        assert_eq!(text, result["structuredContent"]);
        result["structuredContent"].clone()
    }

    /// A failed call's `error.v1` document.
    pub fn tool_error(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments);
        assert_eq!(result["isError"], json!(true), "{tool}: {result}");
        let doc = result["structuredContent"].clone();
        assert_eq!(doc["schema_version"], "error.v1", "{result}");
        doc
    }

    /// Closes stdin (the client hangs up) and returns the exit code and stderr.
    pub fn finish(mut self) -> (Option<i32>, String) {
        drop(self.stdin.take());
        let out = self.child.wait_with_output().expect("wait for kebab mcp");
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    }
}
