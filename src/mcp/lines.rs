//! The lines between the client and rmcp. rmcp drops a line it cannot read
//! without a reply (the client then waits forever for it) and stops the
//! server on a message it does not expect before the handshake, so every line
//! the client sends is looked at here first: what rmcp would mishandle is
//! answered here with a JSON-RPC error naming what is wrong (or, for a
//! notification, set aside with a word on stderr), and the rest is handed on.
//! A request reusing the id of one not answered yet is answered here too.
//!
//! Stdin and stdout as rmcp sees them are pipes this module fills and drains.
//! Every line rmcp reads is UTF-8 (a byte that is not becomes U+FFFD, and the
//! request is answered). One task prints rmcp's replies and these, a whole
//! line at a time, so they never interleave; its "Method not found" is
//! reworded there to name the method and the ones served.
//!
//! At the end of the client's input rmcp waits 5 s for the calls still
//! running, then exits without their replies, so `printf '…' | kebab mcp`
//! lost an answer a model took longer over. Its input is therefore held open
//! until every `tools/call` handed to it has been answered (or cancelled).

use rmcp::model::InitializeRequestParams;
use serde_json::{Value, json};

use crate::render::human_bytes;

/// Stdin and stdout as rmcp sees them, and the tasks that fill and drain them.
pub struct Pipes {
    pub to_rmcp: tokio::io::DuplexStream,
    pub from_rmcp: tokio::io::DuplexStream,
    pub reader: tokio::task::JoinHandle<()>,
    pub printer: tokio::task::JoinHandle<()>,
}

impl Pipes {
    /// `tools`: the names of the tools, for checking and naming them in `tools/call`.
    pub fn open(tools: Vec<String>) -> Pipes {
        use std::io::BufRead;
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
        let (to_rmcp, mut stdin_pipe) = tokio::io::duplex(64 * 1024);
        let (from_rmcp, rmcp_out) = tokio::io::duplex(64 * 1024);
        let (lines, mut received) = tokio::sync::mpsc::unbounded_channel::<String>();
        let (print, mut to_print) = tokio::sync::mpsc::unbounded_channel::<String>();
        // The requests rmcp has and has not answered yet.
        let (running, mut idle) = tokio::sync::watch::channel(Vec::<Request>::new());
        let running = std::sync::Arc::new(running);
        let answered = running.clone();
        // Stdin blocks: a thread reads it.
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut line = Vec::new();
            while stdin.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
                // The last line of the input may lack its newline (`printf '…' |
                // kebab mcp`); rmcp drops such a line, so it is ended here.
                if !line.ends_with(b"\n") {
                    line.push(b'\n');
                }
                if lines.send(String::from_utf8_lossy(&line).into_owned()).is_err() {
                    break;
                }
                line.clear();
            }
        });
        let errors = print.clone();
        let reader = tokio::spawn(async move {
            let mut lifecycle = Lifecycle { initialized: false, tools };
            while let Some(line) = received.recv().await {
                match check(&line, &mut lifecycle) {
                    Verdict::Forward => {
                        // Counted before rmcp can answer it.
                        match awaited(&line) {
                            // JSON-RPC ids are unique among requests in flight: rmcp
                            // answers one of two requests sharing an id, never the
                            // other (two pings sent together), and the server then
                            // waited forever for a call left so at the end.
                            Some(Awaited::Request(request)) => {
                                let in_use = running.borrow().iter().find(|r| r.id == request.id).map(id_in_use);
                                if let Some(reply) = in_use {
                                    let _ = errors.send(reply);
                                    continue;
                                }
                                running.send_modify(|requests| requests.push(request));
                            }
                            Some(Awaited::Cancelled(id)) => running.send_modify(|requests| forget(requests, &id)),
                            None => {}
                        }
                        if stdin_pipe.write_all(line.as_bytes()).await.is_err() {
                            break;
                        }
                    }
                    Verdict::Answer(reply) => {
                        let _ = errors.send(reply);
                    }
                    Verdict::Drop(why) => eprintln!("kebab mcp: {why}"),
                }
            }
            // The client has said all it will; rmcp reads the end of its input
            // (dropping `stdin_pipe`) once the calls it was given are answered.
            // Not other requests: each is answered at once, and one rmcp left
            // unanswered must not keep the server from ending.
            let _ = idle.wait_for(|requests| !requests.iter().any(Request::is_call)).await;
        });
        tokio::spawn(async move {
            let mut rmcp_out = tokio::io::BufReader::new(rmcp_out);
            let mut line = String::new();
            while rmcp_out.read_line(&mut line).await.is_ok_and(|n| n > 0) {
                if let Some(id) = reply_id(&line) {
                    answered.send_modify(|requests| forget(requests, &id));
                }
                // Read on when stdout is gone, so the calls still end.
                let _ = print.send(not_found_named(std::mem::take(&mut line)));
            }
            // rmcp has stopped: nothing more will be answered.
            answered.send_modify(Vec::clear);
        });
        let printer = tokio::spawn(async move {
            let mut stdout = tokio::io::stdout();
            while let Some(line) = to_print.recv().await {
                if stdout.write_all(line.as_bytes()).await.is_err() || stdout.flush().await.is_err() {
                    break;
                }
            }
        });
        Pipes { to_rmcp, from_rmcp, reader, printer }
    }
}

/// A request handed to rmcp, not answered yet.
#[derive(Debug, PartialEq)]
struct Request {
    /// As JSON text.
    id: String,
    method: String,
}

impl Request {
    /// A `tools/call`, which may run for a long while (a model answering).
    fn is_call(&self) -> bool {
        self.method == "tools/call"
    }
}

/// A line handed to rmcp that starts or ends a wait for a reply.
#[derive(Debug, PartialEq)]
enum Awaited {
    /// A request: rmcp answers it.
    Request(Request),
    /// `notifications/cancelled` for this id: rmcp will not answer it.
    Cancelled(String),
}

fn awaited(line: &str) -> Option<Awaited> {
    #[derive(serde::Deserialize)]
    struct Message {
        method: Option<String>,
        id: Option<Value>,
        params: Option<Value>,
    }
    let message = serde_json::from_str::<Message>(line).ok()?;
    match (message.method, message.id) {
        (Some(method), None) if method == "notifications/cancelled" => {
            Some(Awaited::Cancelled(message.params?.get("requestId")?.to_string()))
        }
        (Some(method), Some(id)) => Some(Awaited::Request(Request { id: id.to_string(), method })),
        _ => None,
    }
}

/// The id of a reply rmcp wrote (a line with an id and no method), as JSON text.
fn reply_id(line: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Message {
        method: Option<String>,
        id: Option<Value>,
    }
    let message = serde_json::from_str::<Message>(line).ok()?;
    message.id.filter(|_| message.method.is_none()).map(|id| id.to_string())
}

/// JSON-RPC's "Method not found", which rmcp sends with the method's name
/// alone as its message, said as such and with the methods served.
fn not_found_named(line: String) -> String {
    const METHOD_NOT_FOUND: i64 = -32601;
    if !line.contains("-32601") {
        return line;
    }
    let Ok(mut reply) = serde_json::from_str::<Value>(&line) else { return line };
    let Some(error) = reply.get_mut("error").filter(|e| e["code"] == METHOD_NOT_FOUND) else { return line };
    let method = error["message"].as_str().unwrap_or_default().to_string();
    error["message"] = Value::String(format!(
        "Method not found: {method}; kebab mcp serves tools alone (its capabilities say so): \
         initialize, ping, tools/list and tools/call"
    ));
    format!("{reply}\n")
}

/// The reply to a request whose id is that of `running`, not answered yet:
/// answered here, as rmcp would answer only one of the two.
fn id_in_use(running: &Request) -> String {
    let (id, method) = (&running.id, &running.method);
    let message = format!(
        "Invalid Request: id {id} is the id of a {method} still running; JSON-RPC ids must be unique among \
         requests in flight: send this request again with an id of its own"
    );
    // The id came from JSON, so it reads back; null only if it did not.
    error_line(&serde_json::from_str(id).unwrap_or(Value::Null), INVALID_REQUEST, message)
}

/// Drops the request with `id`.
fn forget(requests: &mut Vec<Request>, id: &str) {
    if let Some(at) = requests.iter().position(|r| r.id == id) {
        requests.swap_remove(at);
    }
}

/// What is done with one line from the client.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// rmcp reads it.
    Forward,
    /// Answered here with this JSON-RPC error (a whole line); rmcp never sees it.
    Answer(String),
    /// Neither: a notification rmcp would stop on; the reason goes to stderr.
    Drop(String),
}

/// Where the conversation is, and what it may call: rmcp accepts only `initialize` and `ping`
/// until a well-formed `initialize` has passed.
#[derive(Debug)]
struct Lifecycle {
    initialized: bool,
    /// The tools' names, sorted.
    tools: Vec<String>,
}

/// JSON-RPC's error codes used here.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;

/// A JSON-RPC error reply, as one line.
fn error_line(id: &Value, code: i64, message: impl Into<String>) -> String {
    let reply = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message.into() } });
    format!("{reply}\n")
}

/// A JSON-RPC error reply, answered here.
fn error(id: &Value, code: i64, message: impl Into<String>) -> Verdict {
    Verdict::Answer(error_line(id, code, message))
}

/// The longest line rmcp reads, newline included; it drops a longer one unanswered.
const MAX_LINE: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

fn check(line: &str, lifecycle: &mut Lifecycle) -> Verdict {
    if line.len() > MAX_LINE {
        return too_long(line);
    }
    let text = line.trim();
    if text.is_empty() {
        return Verdict::Forward;
    }
    // Read from the line's first byte, so the column the parser names is the one the client
    // sent (leading blanks counted); the end's newline would make it "line 2 column 0".
    let message = match serde_json::from_str::<Value>(line.trim_end()) {
        Ok(message) => message,
        // What the parser said and where (`EOF while parsing an object at line 1 column 39`): a
        // client author can fix the line from it, where "not JSON" alone said nothing of where.
        Err(e) => return error(&Value::Null, PARSE_ERROR, format!("Parse error: the line is not JSON: {e}")),
    };
    if let Some(answer) = not_a_message(&message) {
        return answer;
    }
    if !lifecycle.initialized {
        return before_handshake(&message, lifecycle);
    }
    match (message.get("method").and_then(Value::as_str), message.get("id")) {
        (Some("tools/call"), Some(id)) => tool_call(id, message.get("params"), &lifecycle.tools),
        _ => Verdict::Forward,
    }
}

/// `tools/call` whose params rmcp cannot read: it called that "Method not
/// found" (the message only "tools/call"), and an unknown tool "tool not
/// found" without saying which. Both are invalid params, naming the tools.
fn tool_call(id: &Value, params: Option<&Value>, tools: &[String]) -> Verdict {
    let tools_are = format!("the tools are {} (tools/list gives their input schemas)", tools.join(", "));
    let Some(params) = params else {
        return error(id, INVALID_PARAMS, format!("tools/call needs params: {{\"name\": TOOL, \"arguments\": {{…}}}}; {tools_are}"));
    };
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return error(id, INVALID_PARAMS, format!("tools/call needs params.name, the tool's name as a string; {tools_are}"));
    };
    if !tools.iter().any(|t| t == name) {
        return error(id, INVALID_PARAMS, format!("tool {name:?} not found: {tools_are}"));
    }
    match params.get("arguments") {
        Some(args) if !args.is_object() && !args.is_null() => {
            error(id, INVALID_PARAMS, format!("the arguments of {name} must be an object naming each argument, as its input schema in tools/list does"))
        }
        _ => Verdict::Forward,
    }
}

/// A line longer than rmcp reads, answered with its id when it has one.
fn too_long(line: &str) -> Verdict {
    #[derive(serde::Deserialize)]
    struct Id {
        id: Option<Value>,
    }
    let id = serde_json::from_str::<Id>(line).ok().and_then(|m| m.id).filter(|id| id.is_string() || id.is_i64());
    let (size, most) = (human_bytes(line.len() as u64), human_bytes(MAX_LINE as u64));
    let message = format!(
        "Invalid Request: the message is {size}, and kebab mcp reads messages of at most {most}; \
         send a shorter one (to index a long text, save it as a note and call ingest)"
    );
    error(&id.unwrap_or(Value::Null), INVALID_REQUEST, message)
}

/// JSON that is not one JSON-RPC message. rmcp answers it with an error that
/// has no `id` at all, which JSON-RPC does not allow and a client cannot match
/// to its request; here the reply carries the message's id when it has a
/// usable one (null otherwise) and says what is wrong.
fn not_a_message(message: &Value) -> Option<Verdict> {
    let Some(object) = message.as_object() else {
        let what = if message.is_array() {
            "a batch (an array) of messages; this server takes one JSON-RPC message per line"
        } else {
            "a JSON-RPC message is a JSON object"
        };
        return Some(error(&Value::Null, INVALID_REQUEST, format!("Invalid Request: {what}")));
    };
    let id = match object.get("id") {
        None => None,
        // MCP allows no null id, and rmcp reads integers only.
        Some(id) if id.is_string() || id.is_i64() => Some(id),
        Some(_) => return Some(error(&Value::Null, INVALID_REQUEST, "Invalid Request: the id must be a string or an integer")),
    };
    let reply_id = id.cloned().unwrap_or(Value::Null);
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some(error(&reply_id, INVALID_REQUEST, "Invalid Request: a message needs \"jsonrpc\": \"2.0\""));
    }
    match object.get("method") {
        Some(Value::String(_)) => {}
        Some(_) => return Some(error(&reply_id, INVALID_REQUEST, "Invalid Request: the method must be a string")),
        // A response to the server (it sends no requests, but rmcp reads them).
        None if id.is_some() && (object.contains_key("result") || object.contains_key("error")) => return None,
        None => return Some(error(&reply_id, INVALID_REQUEST, "Invalid Request: a request needs a method")),
    }
    match object.get("params") {
        Some(params) if !params.is_object() => Some(match id {
            Some(id) => error(id, INVALID_PARAMS, "Invalid params: params must be an object (MCP names every parameter)"),
            None => Verdict::Drop("ignored a notification whose params are not an object".into()),
        }),
        _ => None,
    }
}

/// Before `initialize`: a bad `initialize` is answered (rmcp left it without
/// a reply and stopped at the next message), a notification is set aside (rmcp
/// stopped the server on it), and any other request is told to send
/// `initialize` first, unless it carries the per-request protocol metadata
/// of the newer stateless lifecycle, which rmcp serves without a handshake.
fn before_handshake(message: &Value, lifecycle: &mut Lifecycle) -> Verdict {
    let method = message.get("method").and_then(Value::as_str);
    let Some(id) = message.get("id") else {
        return match method {
            Some(m) => Verdict::Drop(format!("ignored {m}, a notification sent before initialize")),
            None => Verdict::Forward,
        };
    };
    let params = message.get("params");
    match method {
        Some("initialize") => {
            let Some(params) = params else {
                return error(
                    id,
                    INVALID_PARAMS,
                    "initialize needs params: {\"protocolVersion\": \"2025-06-18\", \"capabilities\": {}, \"clientInfo\": {\"name\": …, \"version\": …}}",
                );
            };
            match serde_json::from_value::<InitializeRequestParams>(params.clone()) {
                Ok(_) => {
                    lifecycle.initialized = true;
                    Verdict::Forward
                }
                Err(e) => error(id, INVALID_PARAMS, format!("initialize's params do not fit: {e} (protocolVersion, capabilities and clientInfo are required)")),
            }
        }
        Some("ping") | None => Verdict::Forward,
        Some(m) => {
            let inline = params.and_then(|p| p.pointer("/_meta/io.modelcontextprotocol~1protocolVersion")).is_some_and(Value::is_string);
            if inline {
                Verdict::Forward
            } else {
                error(id, INVALID_PARAMS, format!("{m} came before the handshake: send initialize first, then notifications/initialized"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_well_formed_initialize_opens_the_conversation() {
        let mut life = Lifecycle { initialized: false, tools: vec!["search".into()] };
        assert!(matches!(check(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, &mut life), Verdict::Drop(_)));
        assert!(matches!(check(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#, &mut life), Verdict::Answer(_)));
        assert!(!life.initialized);
        assert_eq!(check(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, &mut life), Verdict::Forward);
        let good = r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
        assert_eq!(check(good, &mut life), Verdict::Forward);
        assert!(life.initialized);
        assert_eq!(check(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, &mut life), Verdict::Forward);
    }

    #[test]
    fn a_call_is_awaited_until_a_reply_or_cancellation_carries_its_id() {
        let call = r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"ask"}}"#;
        assert_eq!(awaited(call), Some(Awaited::Request(Request { id: "\"a\"".into(), method: "tools/call".into() })));
        let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}"#;
        assert_eq!(awaited(cancel), Some(Awaited::Cancelled("\"a\"".into())));
        let ping = Some(Awaited::Request(Request { id: "1".into(), method: "ping".into() }));
        assert_eq!(awaited(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), ping);
        assert_eq!(reply_id(r#"{"jsonrpc":"2.0","id":"a","result":{}}"#).as_deref(), Some("\"a\""));
        assert_eq!(reply_id(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), None);
    }
}
