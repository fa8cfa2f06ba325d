//! HTTP plumbing shared by everything that talks to a model server (the chat
//! providers and the embedding servers): one ureq agent per call with the
//! right timeouts, mapping of transport failures and error statuses to
//! `ServerError`, and a bounded line reader for streamed bodies. The hints
//! those errors carry are in `advice`.
//!
//! Timeouts: connecting is bounded by a short budget; after that, every single
//! socket read is bounded by the idle timeout (ureq's `timeout_per_read`,
//! which restarts for each read). No total budget is set, so a long answer
//! that keeps streaming is never cut, while a server that goes quiet for the
//! idle timeout — before the headers or mid-body — is. Lines that carry
//! nothing (keep-alive comments, blank lines) do not count as streaming
//! (`Quiet`), so a server sending only those is cut as well.

use std::io::{self, BufRead, BufReader, Read};
use std::time::{Duration, Instant};

use ureq::http::Response;
use ureq::{Agent, Body};

mod advice;

use advice::{redirect_error, unreachable_hint};
pub use advice::{openai_status_error, other_api_hint, tls_hint};


/// Why a chat call failed. Variants that happen mid-stream carry the text
/// received so far, which the caller keeps.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("cannot reach the model server at {url}: {message}")]
    Unreachable { url: String, message: String },
    /// An `https://` address whose server made no TLS connection: most often
    /// one that speaks plain HTTP, as local model servers do.
    #[error("no https connection with the model server at {url}: {message}")]
    Tls { url: String, message: String },
    #[error("the model server at {url} answered {status}: {message}")]
    Http { url: String, status: u16, message: String, hint: Option<String> },
    #[error("the model server at {url} sent nothing for {secs} s")]
    Timeout { url: String, secs: u64, partial: String },
    /// `hint`: where the server's own message says what to set (a context overrun).
    #[error("the stream from {url} broke: {message}")]
    Stream { url: String, message: String, partial: String, hint: Option<String> },
    #[error("{0}")]
    Other(String),
}

impl ServerError {
    /// Text that arrived before the failure.
    pub fn partial(&self) -> &str {
        match self {
            ServerError::Timeout { partial, .. } | ServerError::Stream { partial, .. } => partial,
            _ => "",
        }
    }

    /// What the user can do about it.
    pub fn hint(&self) -> Option<String> {
        match self {
            ServerError::Unreachable { url, .. } => Some(unreachable_hint(url)),
            ServerError::Tls { url, .. } => Some(tls_hint(url, "llm")),
            ServerError::Http { hint, .. } | ServerError::Stream { hint, .. } => hint.clone(),
            ServerError::Timeout { .. } => Some("the server may be overloaded; raise llm.timeout_secs or try again".into()),
            _ => None,
        }
    }
}

/// Budget for resolving the host and opening the connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest line a streamed body may contain; anything longer is a broken stream.
pub const MAX_LINE_BYTES: usize = 1024 * 1024;
/// How much of an error body is read to find the server's message.
const MAX_ERROR_BODY: u64 = 64 * 1024;
/// How much of the server's message is kept in an error.
const MAX_MESSAGE_CHARS: usize = 300;

/// The API key from the environment variable named `env_name`; unset, empty
/// or no name means no key (local servers need none).
pub fn api_key(env_name: &str) -> Option<String> {
    if env_name.is_empty() {
        return None;
    }
    std::env::var(env_name).ok().filter(|k| !k.trim().is_empty())
}

/// An OpenAI-style endpoint under `base`, which may or may not end in `/v1`.
pub fn openai_url(base: &str, path: &str) -> String {
    let base = base.trim_end_matches('/');
    if base.ends_with("/v1") { format!("{base}/{path}") } else { format!("{base}/v1/{path}") }
}

/// An agent for one call. Error statuses come back as responses (not errors)
/// so the caller can read the server's message from the body.
pub fn agent(url: &str, connect: Duration, idle: Duration) -> Agent {
    // A zero per-read timeout would fail every read at once.
    let idle = idle.max(Duration::from_millis(100));
    let builder = Agent::config_builder()
        .http_status_as_error(false)
        .timeout_resolve(Some(connect))
        .timeout_connect(Some(connect))
        .timeout_per_read(Some(idle))
        // The whole head too: a server trickling it a byte at a time passes every per-read timeout.
        .timeout_recv_response(Some(idle))
        .timeout_per_write(Some(idle))
        // The agent lives for one call: pooling would only keep sockets open.
        .max_idle_connections(0)
        // A redirect comes back as a response, which `status_error` explains: followed, a 301/302
        // turns the POST into a bodiless GET and a 307/308 cannot be resent from a stream.
        .max_redirects(0);
    // A proxy from the environment must not capture a model server on this machine.
    let builder = if is_loopback(url) { builder.proxy(None) } else { builder };
    builder.build().new_agent()
}

/// POSTs a JSON body. Any status comes back as a response; only transport
/// failures are errors.
pub fn post_json(
    url: &str,
    idle: Duration,
    headers: &[(&str, String)],
    body: &serde_json::Value,
) -> Result<Response<Body>, ServerError> {
    let mut req = agent(url, CONNECT_TIMEOUT, idle).post(url).content_type("application/json");
    for (name, value) in headers {
        req = req.header(*name, value.as_str());
    }
    req.send(body.to_string()).map_err(|e| send_error(url, CONNECT_TIMEOUT, idle, e))
}

/// GETs `url` with one short budget for connecting and for each read.
pub fn get(url: &str, timeout: Duration) -> Result<Response<Body>, ServerError> {
    get_with(url, timeout, None)
}

/// `get`, sending `api_key` as a bearer token when there is one (an OpenAI
/// server answers 401 to a keyless `/v1/models`).
pub fn get_with(url: &str, timeout: Duration, api_key: Option<&str>) -> Result<Response<Body>, ServerError> {
    let mut req = agent(url, timeout, timeout).get(url);
    if let Some(key) = api_key {
        req = req.header("Authorization", format!("Bearer {key}"));
    }
    req.call().map_err(|e| send_error(url, timeout, timeout, e))
}

/// Maps a failure before any response arrived, for a call that had `connect`
/// to open the connection (a probe's is shorter than `CONNECT_TIMEOUT`) and `idle` for each read.
pub fn send_error(url: &str, connect: Duration, idle: Duration, err: ureq::Error) -> ServerError {
    let unreachable = |message: String| ServerError::Unreachable { url: url.to_string(), message };
    match err {
        ureq::Error::Timeout(ureq::Timeout::Connect | ureq::Timeout::Resolve) => {
            unreachable(format!("no connection within {} s", secs(connect)))
        }
        ureq::Error::Timeout(_) => ServerError::Timeout { url: url.to_string(), secs: secs(idle), partial: String::new() },
        // Before any answer: the TLS handshake failed (rustls reports a plain HTTP reply as corrupt data).
        ureq::Error::Io(e) if url.starts_with("https://") && (dropped(&e) || e.kind() == io::ErrorKind::InvalidData) => {
            ServerError::Tls { url: url.to_string(), message: e.to_string() }
        }
        ureq::Error::Rustls(e) => ServerError::Tls { url: url.to_string(), message: e.to_string() },
        ureq::Error::Io(e) if dropped(&e) => stream_error(url, format!("the server closed the connection ({e})"), ""),
        ureq::Error::Protocol(e) => stream_error(url, format!("not a valid HTTP response ({e})"), ""),
        ureq::Error::BadUri(e) => ServerError::Other(format!("bad model server URL {url}: {e}")),
        ureq::Error::HostNotFound => unreachable("host not found".into()),
        ureq::Error::Io(e) => unreachable(e.to_string()),
        other => unreachable(other.to_string()),
    }
}

/// Maps a failure while reading a streamed body; `partial` is the text so far.
pub fn read_error(url: &str, idle: Duration, err: LineError, partial: &str) -> ServerError {
    match err {
        LineError::TooLong => stream_error(url, format!("a line longer than {MAX_LINE_BYTES} bytes"), partial),
        LineError::TooSlow(limit) => stream_error(url, format!("a line took over {} s to arrive", secs(limit)), partial),
        LineError::Io(e) => match ureq::Error::from(e) {
            ureq::Error::Timeout(_) => {
                ServerError::Timeout { url: url.to_string(), secs: secs(idle), partial: partial.to_string() }
            }
            ureq::Error::Io(e) if dropped(&e) => {
                stream_error(url, format!("the server closed the connection mid-answer ({e})"), partial)
            }
            other => stream_error(url, other.to_string(), partial),
        },
    }
}

pub fn stream_error(url: &str, message: impl Into<String>, partial: &str) -> ServerError {
    ServerError::Stream { url: url.to_string(), message: message.into(), partial: partial.to_string(), hint: None }
}

/// Turns a non-success response into `ServerError::Http` carrying the server's
/// own message. `secret` (an API key) is cut out of anything the server echoed.
pub fn status_error(url: &str, resp: Response<Body>, secret: Option<&str>) -> ServerError {
    let status = resp.status().as_u16();
    if let Some(location) = resp.headers().get("location").and_then(|v| v.to_str().ok())
        && resp.status().is_redirection()
    {
        return redirect_error(url, status, &redact(location, secret));
    }
    let reason = resp.status().canonical_reason().unwrap_or("no message").to_lowercase();
    // Redacted before the message is cut short, so no prefix of the key survives.
    let body = redact(&read_body(resp, MAX_ERROR_BODY).unwrap_or_default(), secret);
    let mut message = server_message(&body);
    if message.is_empty() {
        message = reason;
    }
    ServerError::Http { url: url.to_string(), status, message, hint: None }
}

/// Reads up to `limit` bytes of a body as text. Used for error bodies and
/// small JSON answers; a failure mid-read keeps what arrived.
pub fn read_body(resp: Response<Body>, limit: u64) -> Result<String, io::Error> {
    let (bytes, result) = read_bytes(resp, limit);
    match result {
        Err(e) if bytes.is_empty() => Err(e),
        _ => Ok(String::from_utf8_lossy(&bytes).into_owned()),
    }
}

/// `read_body` for an answer that is of no use cut short (a model list,
/// whose first half would read as another server's answer): see `read_whole_bytes`.
pub fn read_whole_body(resp: Response<Body>, limit: u64) -> Result<Option<String>, io::Error> {
    Ok(read_whole_bytes(resp, limit)?.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
}

/// A whole body (an embedding server's JSON answer, `read_whole_body`'s text):
/// a failure mid-read is an error, and one longer than `limit` is `None` — a byte
/// past it is read to tell it from one that fits, so it is not cut and called malformed.
pub fn read_whole_bytes(resp: Response<Body>, limit: u64) -> Result<Option<Vec<u8>>, io::Error> {
    let (bytes, result) = read_bytes(resp, limit + 1);
    result?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

/// Up to `limit` bytes of a body, and how the read ended.
fn read_bytes(resp: Response<Body>, limit: u64) -> (Vec<u8>, io::Result<usize>) {
    let mut bytes = Vec::new();
    let result = resp.into_body().into_reader().take(limit).read_to_end(&mut bytes);
    (bytes, result)
}

/// The message inside an error body: `{"error": "..."}`,
/// `{"error": {"message": "..."}}`, `{"message": "..."}`, `{"detail": "..."}`,
/// or the text itself (tags stripped if it is HTML); whitespace collapsed and
/// cut to a readable length.
pub fn server_message(body: &str) -> String {
    let text = match serde_json::from_str::<serde_json::Value>(body) {
        Ok(json) => json_message(&json).unwrap_or_else(|| body.to_string()),
        Err(_) if body.trim_start().starts_with('<') => strip_tags(body),
        Err(_) => body.to_string(),
    };
    // A server's text never drives the terminal it is printed on.
    let text = crate::script::printable(&text);
    truncate(&text.split_whitespace().collect::<Vec<_>>().join(" "), MAX_MESSAGE_CHARS)
}

/// `server_message` for an error the server reported mid-answer (an `error`
/// event or field). An empty report still gets words, so the error never
/// ends in a bare "broke: ".
pub fn error_message(raw: &str) -> String {
    let message = server_message(raw);
    if message.is_empty() { "the server reported an error without a message".into() } else { message }
}

/// The error message in a JSON object, if it has one.
pub fn json_message(json: &serde_json::Value) -> Option<String> {
    let error = json.get("error");
    let found = error
        .and_then(|e| e.as_str())
        .or_else(|| error.and_then(|e| e.get("message")).and_then(|m| m.as_str()))
        .or_else(|| json.get("message").and_then(|m| m.as_str()))
        .or_else(|| json.get("detail").and_then(|m| m.as_str()));
    match found {
        Some(text) => Some(text.to_string()),
        // An `error` that is neither a string nor has a message: show it as is.
        None => error.filter(|e| !e.is_null()).map(|e| e.to_string()),
    }
}

/// Replaces every occurrence of `secret` in `text`.
pub fn redact(text: &str, secret: Option<&str>) -> String {
    match secret {
        Some(s) if !s.is_empty() => text.replace(s, "[redacted]"),
        _ => text.to_string(),
    }
}

/// The response's content type, lower-cased, without parameters.
pub fn content_type(resp: &Response<Body>) -> String {
    let raw = resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("");
    raw.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

/// The error for a success status whose body is a web page, not a model stream
/// (a proxy's login page, a web UI on the configured port). An answer, not a
/// broken stream: asking again gets the same page, so the hint says what to set.
pub fn html_error(url: &str, resp: Response<Body>) -> ServerError {
    let status = resp.status().as_u16();
    let page = server_message(&read_body(resp, MAX_ERROR_BODY).unwrap_or_default());
    let hint = "llm.base_url reaches a web page (a web UI, a proxy's sign-in), not the model server's API: \
                set it to the model server's own address";
    let message = format!("a web page, not a model stream ({page})");
    ServerError::Http { url: url.to_string(), status, message, hint: Some(hint.into()) }
}

/// The start of what the server sent, quoted, for an error message.
pub fn excerpt(text: &str) -> String {
    let mut cut: String = text.chars().take(80).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    format!("{cut:?}")
}

/// The temperature as JSON should carry it: `0.2`, not `0.20000000298023224`.
pub fn temperature(t: f32) -> f64 {
    (f64::from(t) * 1000.0).round() / 1000.0
}

/// Whole seconds for messages, rounded up so a sub-second timeout is not "0 s".
pub fn secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// The idle timeout for a server that keeps the connection busy with lines
/// carrying nothing (keep-alive comments, blank lines): each read succeeds, so
/// the per-read timeout never fires, yet no answer comes. Such lines count as
/// silence; any event counts as progress.
pub struct Quiet {
    since: Instant,
    limit: Duration,
}

impl Quiet {
    pub fn new(limit: Duration) -> Quiet {
        Quiet { since: Instant::now(), limit }
    }

    /// An event arrived.
    pub fn progress(&mut self) {
        self.since = Instant::now();
    }

    /// After a line with nothing in it: a timeout once that has gone on too long.
    pub fn check(&self, url: &str, partial: &str) -> Result<(), ServerError> {
        if self.since.elapsed() > self.limit {
            return Err(ServerError::Timeout { url: url.to_string(), secs: secs(self.limit), partial: partial.to_string() });
        }
        Ok(())
    }
}

/// Reads a body line by line, never holding more than `max` bytes of one line
/// and, with `within`, never waiting longer than that for one line to complete.
pub struct Lines<R> {
    inner: BufReader<R>,
    max: usize,
    within: Option<Duration>,
}

#[derive(Debug)]
pub enum LineError {
    Io(io::Error),
    TooLong,
    /// The line kept arriving a few bytes at a time for longer than this.
    TooSlow(Duration),
}

impl<R: Read> Lines<R> {
    pub fn new(reader: R, max: usize) -> Lines<R> {
        Lines { inner: BufReader::with_capacity(16 * 1024, reader), max, within: None }
    }

    /// A line must arrive whole within `limit` of its first bytes. A server
    /// writes each line of a stream at once, so a line that trickles in (each
    /// read on time, the newline never coming) is a broken stream.
    pub fn within(mut self, limit: Duration) -> Lines<R> {
        self.within = Some(limit);
        self
    }

    /// The next line without its `\n` / `\r\n`; `None` at the end of the body.
    /// Bytes that are not UTF-8 are replaced, so a bad byte shows up as a
    /// malformed line rather than a read error.
    pub fn next_line(&mut self) -> Result<Option<String>, LineError> {
        let mut line = Vec::new();
        let mut started: Option<Instant> = None;
        loop {
            if let (Some(limit), Some(at)) = (self.within, started)
                && at.elapsed() > limit
            {
                return Err(LineError::TooSlow(limit));
            }
            let available = match self.inner.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(LineError::Io(e)),
            };
            if available.is_empty() {
                if line.is_empty() {
                    return Ok(None);
                }
                break;
            }
            let (take, ends_line) = match available.iter().position(|&b| b == b'\n') {
                Some(pos) => (pos, true),
                None => (available.len(), false),
            };
            if line.len() + take > self.max {
                return Err(LineError::TooLong);
            }
            line.extend_from_slice(&available[..take]);
            self.inner.consume(if ends_line { take + 1 } else { take });
            started.get_or_insert_with(Instant::now);
            if ends_line {
                break;
            }
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Ok(Some(match String::from_utf8(line) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        }))
    }
}

/// Errors that mean the peer hung up, as opposed to never being there.
fn dropped(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::UnexpectedEof
            | io::ErrorKind::BrokenPipe
    )
}

fn is_loopback(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host.starts_with('[') {
        host.split(']').next().unwrap_or("").trim_start_matches('[')
    } else {
        host.split(':').next().unwrap_or("")
    };
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len().min(4096));
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

fn truncate(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<Result<String, String>> {
        let mut reader = Lines::new(input, max);
        let mut out = Vec::new();
        loop {
            match reader.next_line() {
                Ok(Some(line)) => out.push(Ok(line)),
                Ok(None) => return out,
                Err(e) => {
                    out.push(Err(format!("{e:?}")));
                    return out;
                }
            }
        }
    }

    #[test]
    fn lines_split_on_lf_and_crlf_and_keep_a_last_line_without_newline() {
        let got = lines(b"a\r\n\nb\nc", 100);
        assert_eq!(got, vec![Ok("a".into()), Ok("".into()), Ok("b".into()), Ok("c".into())]);
    }

    #[test]
    fn a_line_over_the_cap_is_an_error_not_a_huge_buffer() {
        let long = vec![b'x'; 5000];
        let got = lines(&long, 1000);
        assert_eq!(got.len(), 1);
        assert!(got[0].as_ref().is_err_and(|e| e.contains("TooLong")));
    }

    #[test]
    fn a_line_that_trickles_in_past_its_time_is_an_error() {
        /// A byte per read, 20 ms apart, never a newline.
        struct Trickle;
        impl Read for Trickle {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                std::thread::sleep(Duration::from_millis(20));
                buf[0] = b'x';
                Ok(1)
            }
        }
        let started = Instant::now();
        let err = Lines::new(Trickle, 1000).within(Duration::from_millis(100)).next_line().unwrap_err();
        assert!(matches!(err, LineError::TooSlow(_)), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(1));
        // Whole lines are not timed at all.
        let mut lines = Lines::new(&b"a\nb\n"[..], 100).within(Duration::ZERO);
        assert_eq!(lines.next_line().unwrap().as_deref(), Some("a"));
    }

    #[test]
    fn server_message_reads_the_common_error_shapes() {
        assert_eq!(server_message(r#"{"error":"model \"x\" not found"}"#), "model \"x\" not found");
        assert_eq!(server_message(r#"{"error":{"message":"bad key","type":"auth"}}"#), "bad key");
        assert_eq!(server_message(r#"{"object":"error","message":"too long"}"#), "too long");
        assert_eq!(server_message("  upstream\n down  "), "upstream down");
        assert_eq!(server_message("<html><h1>502 Bad Gateway</h1></html>"), "502 Bad Gateway");
        let long = "é".repeat(1000);
        assert_eq!(server_message(&long).chars().count(), MAX_MESSAGE_CHARS + 1);
    }

    #[test]
    fn an_empty_error_report_still_says_what_happened() {
        assert_eq!(error_message(""), "the server reported an error without a message");
        assert_eq!(error_message("  \n "), "the server reported an error without a message");
        assert_eq!(error_message(r#"{"error":{"message":"boom"}}"#), "boom");
    }

    #[test]
    fn loopback_hosts_are_recognised() {
        assert!(is_loopback("http://127.0.0.1:11434"));
        assert!(is_loopback("http://localhost/v1"));
        assert!(is_loopback("http://[::1]:8080/v1"));
        assert!(!is_loopback("https://api.example.com/v1"));
    }

    #[test]
    fn redact_removes_the_secret_everywhere() {
        assert_eq!(redact("key sk-1 and sk-1", Some("sk-1")), "key [redacted] and [redacted]");
        assert_eq!(redact("nothing", None), "nothing");
    }
}
