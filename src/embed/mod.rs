//! Embedders: text to unit-length vectors for semantic search. One small
//! trait; the built-in `local` model (all-MiniLM-L6-v2, our own forward pass) needs no
//! server, `ollama` and `openai` ask one (one file each, sharing the chat
//! providers' HTTP plumbing and the answer checks below). Vectors are stored
//! as little-endian f32 blobs, one model per database.

mod bert;
pub mod kernel;
pub mod install;
pub mod local;
pub mod ollama;
pub mod openai;
pub mod roles;
pub mod wordpiece;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;
use ureq::Body;
use ureq::http::Response;

use crate::config::{EmbeddingProvider, Paths};
use crate::http::{self, ServerError};
pub use roles::{Profile, Role};

/// The largest answer read from an embedding server. A batch of 32 texts of
/// 4096 floats is a few MB of JSON; the cap only stops a runaway server.
const MAX_ANSWER_BYTES: u64 = 256 * 1024 * 1024;
/// How much of a web page is read to quote it in the error.
const MAX_PAGE_BYTES: u64 = 64 * 1024;

/// Why embedding failed.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("the embedding model files are not in {0}")]
    Missing(PathBuf),
    #[error("the embedding model could not run: {0}")]
    Model(String),
    /// An embedding server (`ollama`, `openai`) failed or answered nonsense;
    /// the same errors as the chat providers'.
    #[error(transparent)]
    Server(#[from] ServerError),
}

impl EmbedError {
    pub fn hint(&self) -> Option<String> {
        match self {
            EmbedError::Missing(_) => Some("run `kebab models install` (or set embedding.model_dir)".into()),
            EmbedError::Model(_) => Some("reinstall the model with `kebab models install --force`".into()),
            // `ServerError::hint` names the llm.* settings; these errors come from embedding.*.
            EmbedError::Server(e) => match e {
                ServerError::Http { hint, .. } => hint.clone(),
                ServerError::Unreachable { .. } => Some(
                    "start the server (e.g. `ollama serve`), fix embedding.base_url, or set embedding.provider = \"local\""
                        .into(),
                ),
                ServerError::Tls { url, .. } => Some(crate::http::tls_hint(url, "embedding")),
                ServerError::Timeout { .. } => {
                    Some("the server may be overloaded; raise embedding.timeout_secs or try again".into())
                }
                ServerError::Stream { .. } | ServerError::Other(_) => {
                    Some("check that embedding.base_url is an embedding server of the kind embedding.provider names".into())
                }
            },
        }
    }
}

/// A model that turns texts into vectors. `Send + Sync`: a hybrid search
/// embeds its query on a second thread while the lexical channel runs.
pub trait Embedder: Send + Sync {
    /// What the vectors are tagged with in the database.
    fn model_id(&self) -> &str;
    /// Loads whatever the model loads on first use (the local weights), so
    /// callers can time it apart from embedding; a server model has nothing to load.
    fn load(&self) -> Result<(), EmbedError> {
        Ok(())
    }
    /// Whether the model can represent `text` meaningfully; an English-only
    /// model says no to Korean: such chunks are not embedded and such
    /// questions run lexical.
    fn reads(&self, text: &str) -> bool;
    /// One unit-length vector per text, in order, all of the model's
    /// dimension; each text marked for its `role` as the model expects.
    fn embed(&self, texts: &[&str], role: Role) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// The configured embedder, or why there is none (a one-line notice naming
/// the fix). `provider = "none"` gives neither.
pub fn select(cfg: &crate::config::EmbeddingConfig, paths: &Paths) -> (Option<Box<dyn Embedder>>, Option<String>) {
    match cfg.provider {
        EmbeddingProvider::None => return (None, None),
        EmbeddingProvider::Ollama | EmbeddingProvider::Openai => return server(cfg),
        EmbeddingProvider::Local => {}
    }
    let dir = model_dir(&cfg.model_dir, paths);
    match local::Local::open(&dir) {
        Ok(m) => (Some(Box::new(m.with_profile(Profile::from_config(cfg)))), None),
        Err(EmbedError::Missing(_)) => (
            None,
            Some(format!("no embedding model in {}: lexical search only (`kebab models install` adds semantic search)", dir.display())),
        ),
        Err(e) => (None, Some(format!("{e}: lexical search only"))),
    }
}

/// A server provider. Nothing is sent yet: a server that is down shows up at
/// the first embedding, with the error and hint of that call.
fn server(cfg: &crate::config::EmbeddingConfig) -> (Option<Box<dyn Embedder>>, Option<String>) {
    if cfg.model.trim().is_empty() || cfg.base_url.trim().is_empty() {
        let notice = format!(
            "embedding.provider = \"{}\" needs embedding.model and embedding.base_url: lexical search only",
            cfg.provider.as_str()
        );
        return (None, Some(notice));
    }
    let model: Box<dyn Embedder> = match cfg.provider {
        EmbeddingProvider::Ollama => Box::new(ollama::Ollama::from_config(cfg)),
        _ => Box::new(openai::OpenAi::from_config(cfg)),
    };
    (Some(model), None)
}

/// Sends one batch and reads the whole answer. Transport failures, timeouts
/// and web pages map as for the chat providers; `status_error` turns an error
/// status into the provider's error, with its hints.
fn post_batch(
    url: &str,
    timeout: Duration,
    headers: &[(&str, String)],
    body: &Value,
    status_error: impl FnOnce(Response<Body>) -> ServerError,
) -> Result<Vec<u8>, ServerError> {
    let resp = http::post_json(url, timeout, headers, body)?;
    if !resp.status().is_success() {
        return Err(status_error(resp));
    }
    if http::content_type(&resp) == "text/html" {
        // Not `http::html_error`: its message points at llm.base_url.
        let page = http::server_message(&http::read_body(resp, MAX_PAGE_BYTES).unwrap_or_default());
        let message = format!("the server sent a web page, not embeddings — is embedding.base_url right? ({page})");
        return Err(http::stream_error(url, message, ""));
    }
    // Not `http::read_body`: it keeps a body cut by a timeout, which would then read as malformed JSON.
    let bytes = http::read_whole_bytes(resp, MAX_ANSWER_BYTES)
        .map_err(|e| http::read_error(url, timeout, http::LineError::Io(e), ""))?;
    bytes.ok_or_else(|| http::stream_error(url, format!("an answer over {} MiB", MAX_ANSWER_BYTES >> 20), ""))
}

/// Reads an answer as `T`, telling a body that is not JSON from JSON of the
/// wrong shape (serde's message names what was wrong where).
fn parse<T: DeserializeOwned>(url: &str, bytes: &[u8]) -> Result<T, ServerError> {
    serde_json::from_slice(bytes).map_err(|e| {
        let message = if e.is_data() {
            format!("an answer of the wrong shape ({e})")
        } else {
            let start = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).into_owned();
            format!("malformed JSON answer: {}", http::excerpt(&start))
        };
        http::stream_error(url, message, "")
    })
}

/// A server that says it failed with a success status (some proxies do).
fn server_error(url: &str, error: Option<Value>) -> Result<(), ServerError> {
    match error.filter(|e| !e.is_null()) {
        Some(e) => {
            let message = http::json_message(&serde_json::json!({ "error": e })).unwrap_or_default();
            Err(http::stream_error(url, http::error_message(&message), ""))
        }
        None => Ok(()),
    }
}

/// Checks a server's vectors — one per text, all of one non-zero length,
/// finite — and scales each to unit length, since not every server does.
fn unit_vectors(url: &str, mut vectors: Vec<Vec<f32>>, texts: usize) -> Result<Vec<Vec<f32>>, ServerError> {
    let bad = |message: String| Err(http::stream_error(url, message, ""));
    if vectors.len() != texts {
        return bad(format!("expected {texts} vectors (one per text), got {}", vectors.len()));
    }
    let dim = vectors.first().map_or(0, Vec::len);
    for (i, v) in vectors.iter_mut().enumerate() {
        if v.is_empty() {
            return bad(format!("vector {i} is empty"));
        }
        if v.len() != dim {
            return bad(format!("vectors of differing lengths ({dim} and {} numbers)", v.len()));
        }
        if v.iter().any(|x| !x.is_finite()) {
            return bad(format!("vector {i} holds a number that is not finite"));
        }
        // In f64: squaring large f32s would overflow.
        let norm = v.iter().map(|&x| f64::from(x) * f64::from(x)).sum::<f64>().sqrt();
        if norm == 0.0 {
            return bad(format!("vector {i} is all zeros"));
        }
        v.iter_mut().for_each(|x| *x = (f64::from(*x) / norm) as f32);
    }
    Ok(vectors)
}

/// Where the local model lives: `embedding.model_dir`, or `DATA_DIR/models/all-MiniLM-L6-v2`.
pub fn model_dir(configured: &str, paths: &Paths) -> PathBuf {
    if configured.is_empty() {
        return paths.data_dir.join("models").join(local::MODEL_ID);
    }
    // "~/…" and a relative path as workspace.roots takes them: `model_dir =
    // "models"` was looked for (and installed) in the working directory, so a
    // model installed from one folder was missing when kebab ran from another.
    crate::config::from_config_dir(Path::new(configured), &paths.config_dir())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(vectors: Vec<Vec<f32>>, texts: usize) -> Result<Vec<Vec<f32>>, String> {
        unit_vectors("http://h/x", vectors, texts).map_err(|e| e.to_string())
    }

    #[test]
    fn server_vectors_are_scaled_to_unit_length() {
        let out = checked(vec![vec![3.0, 4.0], vec![0.0, -2.0]], 2).unwrap();
        assert_eq!(out, vec![vec![0.6, 0.8], vec![0.0, -1.0]]);
        // Squares of these overflow f32; the norm is taken in f64.
        let big = checked(vec![vec![3e30, 4e30]], 1).unwrap();
        assert!((big[0][0] - 0.6).abs() < 1e-6 && (big[0][1] - 0.8).abs() < 1e-6, "{big:?}");
    }

    #[test]
    fn server_vectors_that_cannot_be_used_are_errors() {
        let cases = [
            (vec![vec![1.0]], 2, "expected 2 vectors (one per text), got 1"),
            (vec![vec![1.0, 0.0], vec![1.0]], 2, "differing lengths (2 and 1 numbers)"),
            (vec![vec![], vec![]], 2, "vector 0 is empty"),
            (vec![vec![1.0], vec![f32::INFINITY]], 2, "vector 1 holds a number that is not finite"),
            (vec![vec![1.0], vec![f32::NAN]], 2, "not finite"),
            (vec![vec![0.0, 0.0]], 1, "vector 0 is all zeros"),
        ];
        for (vectors, texts, want) in cases {
            let err = checked(vectors, texts).unwrap_err();
            assert!(err.contains(want), "{err}");
        }
    }

    #[test]
    fn select_builds_the_server_providers_without_contacting_them() {
        let nowhere = PathBuf::from("/nonexistent");
        let (config_file, database) = (nowhere.join("config.toml"), nowhere.join("kebab.db"));
        let data = &Paths { config_file, data_dir: nowhere, database };
        let roles = r#" query="search_query: " document="search_document: ""#;
        for (provider, id) in [(EmbeddingProvider::Ollama, "ollama/nomic-embed-text"), (EmbeddingProvider::Openai, "openai/nomic-embed-text")] {
            let cfg = crate::config::EmbeddingConfig { provider, ..Default::default() };
            let id = format!("{id}{roles}");
            let id = id.as_str();
            let (model, notice) = select(&cfg, data);
            assert_eq!(model.map(|m| m.model_id().to_string()).as_deref(), Some(id));
            assert_eq!(notice, None);
        }
        let cfg = crate::config::EmbeddingConfig { provider: EmbeddingProvider::Openai, model: " ".into(), ..Default::default() };
        let (model, notice) = select(&cfg, data);
        assert!(model.is_none());
        assert!(notice.is_some_and(|n| n.contains("needs embedding.model")));
        let none = crate::config::EmbeddingConfig { provider: EmbeddingProvider::None, ..Default::default() };
        assert!(matches!(select(&none, data), (None, None)));
    }

    #[test]
    fn server_errors_hint_at_the_embedding_settings() {
        let down = EmbedError::from(ServerError::Unreachable { url: "u".into(), message: "refused".into() });
        assert!(down.hint().is_some_and(|h| h.contains("embedding.base_url")));
        let slow = EmbedError::from(ServerError::Timeout { url: "u".into(), secs: 1, partial: String::new() });
        assert!(slow.hint().is_some_and(|h| h.contains("embedding.timeout_secs")));
    }
}

/// A one-connection fake HTTP server for the providers' tests: a plain
/// `TcpListener` on 127.0.0.1:0 that reads the request, then plays its steps
/// (wait, send) and closes.
#[cfg(test)]
mod fake {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::sync::mpsc::{self, Receiver};
    use std::thread;
    use std::time::{Duration, Instant};

    pub struct Server {
        pub url: String,
        request: Receiver<String>,
    }

    impl Server {
        /// The request as received (head and body), once it has arrived.
        pub fn request(&self) -> String {
            self.request.recv_timeout(Duration::from_secs(5)).expect("the client sent no request")
        }
    }

    /// Answers with `response` at once.
    pub fn serve(response: String) -> Server {
        serve_steps(vec![(Duration::ZERO, response)])
    }

    /// Sends each `(wait, bytes)` in turn after reading the request.
    pub fn serve_steps(steps: Vec<(Duration, String)>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (tx, request) = mpsc::channel();
        thread::spawn(move || {
            // Never outlive a client that does not come.
            let deadline = Instant::now() + Duration::from_secs(10);
            let mut socket = loop {
                match listener.accept() {
                    Ok((socket, _)) => break socket,
                    Err(_) if Instant::now() < deadline => thread::sleep(Duration::from_millis(5)),
                    Err(_) => return,
                }
            };
            let _ = socket.set_nonblocking(false);
            let _ = socket.set_read_timeout(Some(Duration::from_secs(2)));
            let _ = tx.send(read_request(&mut socket));
            for (wait, bytes) in steps {
                thread::sleep(wait);
                if socket.write_all(bytes.as_bytes()).and_then(|_| socket.flush()).is_err() {
                    return;
                }
            }
        });
        Server { url, request }
    }

    /// Answers with a JSON body and `status` at once.
    pub fn json(status: &str, body: &str) -> Server {
        serve(response(status, "application/json", body))
    }

    /// A whole response that closes the connection.
    pub fn response(status: &str, content_type: &str, body: &str) -> String {
        format!(
            "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    }

    /// Reads the head and a `Content-Length` body.
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
                Ok(0) | Err(_) => return text,
                Ok(n) => data.extend_from_slice(&buf[..n]),
            }
        }
    }

    /// The URL of a port nothing listens on: bound, then let go.
    pub fn dead_url() -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    }
}
