//! The Ollama embedding provider: `POST /api/embed` with the whole batch,
//! answered by one JSON object `{"embeddings": [[...], ...]}` in input order.
//! Errors and hints mirror the Ollama chat provider's (a missing model says
//! `ollama pull`), with the embedding.* settings named instead of llm.*.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::roles::{Profile, Role};
use super::{EmbedError, Embedder};
use crate::config::{EmbeddingConfig, EmbeddingProvider};
use crate::http::{self, ServerError};

#[derive(Debug, Clone)]
pub struct Ollama {
    /// `http://127.0.0.1:11434`, without `/api`.
    pub base_url: String,
    pub model: String,
    /// Idle timeout: the longest wait for the next piece of the answer.
    pub timeout: Duration,
    /// `ollama/MODEL` and the roles: what the vectors are tagged with.
    id: String,
    profile: Profile,
}

/// The answer's shape. Both fields are optional so that a body carrying only
/// an `error` shows the server's message, not serde's "missing field".
#[derive(Deserialize)]
struct Answer {
    embeddings: Option<Vec<Vec<f32>>>,
    error: Option<Value>,
}

impl Ollama {
    pub fn new(base_url: impl Into<String>, model: impl Into<String>, timeout: Duration) -> Ollama {
        let model = model.into();
        // The model name's own roles until `with_profile` says otherwise.
        let profile = Profile::from_config(&EmbeddingConfig { provider: EmbeddingProvider::Ollama, model: model.clone(), ..Default::default() });
        Ollama { base_url: base_url.into(), id: String::new(), model, timeout, profile: profile.clone() }.with_profile(profile)
    }

    pub fn from_config(cfg: &EmbeddingConfig) -> Ollama {
        Ollama::new(cfg.base_url.clone(), cfg.model.clone(), Duration::from_secs(cfg.timeout_secs)).with_profile(Profile::from_config(cfg))
    }

    /// The model served as `profile` says.
    pub fn with_profile(mut self, profile: Profile) -> Ollama {
        self.id = profile.model_id(&format!("ollama/{}", self.model));
        self.profile = profile;
        self
    }

    fn url(&self) -> String {
        format!("{}/api/embed", self.base_url.trim_end_matches('/'))
    }

    /// The server's message, with what to do about the usual causes.
    fn status_error(&self, url: &str, resp: ureq::http::Response<ureq::Body>) -> ServerError {
        match http::status_error(url, resp, None) {
            ServerError::Http { url, status, message, hint: None } => {
                let lower = message.to_lowercase();
                let hint = if status == 404
                    && (lower.contains("model") && lower.contains("not found") || lower == "not found")
                {
                    Some(format!("run `ollama pull {}`", self.model))
                } else if status == 404 {
                    // Ollama before 0.3.4 has no /api/embed and answers "404 page not found".
                    Some("is embedding.base_url an Ollama server, version 0.3.4 or later? (for an OpenAI-style server set embedding.provider = \"openai\")".into())
                } else if lower.contains("does not support embed") {
                    Some(format!(
                        "{} is not an embedding model; set embedding.model to one (e.g. nomic-embed-text)",
                        self.model
                    ))
                } else {
                    None
                };
                ServerError::Http { url, status, message, hint }
            }
            other => other,
        }
    }
}

impl Embedder for Ollama {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn reads(&self, text: &str) -> bool {
        self.profile.reads(text)
    }

    /// `/api/embed` has no `input_type`: only prefixes mark the role.
    fn embed(&self, texts: &[&str], role: Role) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let url = self.url();
        let body = json!({"model": self.model, "input": self.profile.roles.marked(texts, role)});
        let bytes = super::post_batch(&url, self.timeout, &[], &body, |resp| self.status_error(&url, resp))?;
        let answer: Answer = super::parse(&url, &bytes)?;
        drop(bytes);
        super::server_error(&url, answer.error)?;
        let Some(vectors) = answer.embeddings else {
            return Err(http::stream_error(&url, "the answer has no `embeddings`", "").into());
        };
        Ok(super::unit_vectors(&url, vectors, texts.len())?)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::embed::fake::{self, response};

    const SEC: Duration = Duration::from_secs(1);

    fn embed(url: &str, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ollama::new(url, "nomic-embed-text", SEC).embed(texts, Role::Document)
    }

    fn server_err(url: &str) -> ServerError {
        match embed(url, &["a", "b"]) {
            Err(EmbedError::Server(e)) => e,
            other => panic!("expected a server error, got {other:?}"),
        }
    }

    #[test]
    fn a_batch_sends_the_model_and_every_input_in_order_and_comes_back_normalised() {
        let server = fake::json("200 OK", r#"{"model":"nomic-embed-text","embeddings":[[3,4],[0,0.5],[-1,0]]}"#);
        let out = embed(&format!("{}/", server.url), &["first", "second", "third"]).unwrap();
        assert_eq!(out, vec![vec![0.6, 0.8], vec![0.0, 1.0], vec![-1.0, 0.0]]);
        let request = server.request();
        assert!(request.starts_with("POST /api/embed HTTP/1.1\r\n"), "{request}");
        let body: Value = serde_json::from_str(request.split("\r\n\r\n").nth(1).unwrap()).unwrap();
        // nomic-embed-text is asymmetric: chunks go with its document prefix.
        let input = json!(["search_document: first", "search_document: second", "search_document: third"]);
        assert_eq!(body, json!({"model": "nomic-embed-text", "input": input}));
        assert!(Ollama::new("http://h", "nomic-embed-text", SEC).model_id().starts_with("ollama/nomic-embed-text query="));
        assert_eq!(Ollama::new("http://h", "bge-m3", SEC).model_id(), "ollama/bge-m3");
    }

    #[test]
    fn an_empty_batch_sends_nothing() {
        assert!(embed(&fake::dead_url(), &[]).unwrap().is_empty());
    }

    #[test]
    fn a_404_for_a_missing_model_says_how_to_pull_it() {
        let server =
            fake::json("404 Not Found", r#"{"error":"model \"nomic-embed-text\" not found, try pulling it first"}"#);
        let err = EmbedError::from(server_err(&server.url));
        assert!(matches!(err, EmbedError::Server(ServerError::Http { status: 404, .. })), "{err:?}");
        assert!(err.to_string().contains("model \"nomic-embed-text\" not found"), "{err}");
        assert_eq!(err.hint().as_deref(), Some("run `ollama pull nomic-embed-text`"));
    }

    #[test]
    fn a_404_page_from_an_old_or_foreign_server_asks_whether_it_is_ollama() {
        let server = fake::serve(response("404 Not Found", "text/plain", "404 page not found"));
        let err = EmbedError::from(server_err(&server.url));
        assert!(err.hint().is_some_and(|h| h.contains("embedding.base_url an Ollama server")), "{:?}", err.hint());
    }

    #[test]
    fn a_chat_only_model_is_named_as_not_an_embedding_model() {
        let server = fake::json("400 Bad Request", r#"{"error":"\"llama3\" does not support embeddings"}"#);
        let err = EmbedError::from(server_err(&server.url));
        assert!(err.hint().is_some_and(|h| h.contains("set embedding.model")), "{:?}", err.hint());
    }

    #[test]
    fn a_500_surfaces_the_servers_message() {
        let server = fake::json("500 Internal Server Error", r#"{"error":"llama runner process has terminated"}"#);
        let err = server_err(&server.url);
        assert!(matches!(err, ServerError::Http { status: 500, .. }), "{err:?}");
        assert!(err.to_string().ends_with("answered 500: llama runner process has terminated"), "{err}");
    }

    #[test]
    fn an_html_page_with_status_200_is_a_clear_error() {
        let page = "<!doctype html><html><head><title>Router login</title></head><body>Sign in</body></html>";
        let server = fake::serve(response("200 OK", "text/html; charset=utf-8", page));
        let err = EmbedError::from(server_err(&server.url));
        let text = err.to_string();
        assert!(
            text.contains("web page") && text.contains("embedding.base_url") && text.contains("Router login"),
            "{text}"
        );
        assert!(err.hint().is_some());
    }

    #[test]
    fn malformed_json_is_an_error_that_quotes_it() {
        let server = fake::json("200 OK", "this is not json");
        let err = server_err(&server.url);
        assert!(matches!(err, ServerError::Stream { .. }), "{err:?}");
        assert!(err.to_string().contains("malformed JSON answer: \"this is not json\""), "{err}");
    }

    #[test]
    fn json_of_the_wrong_shape_or_an_error_object_is_an_error() {
        let server = fake::json("200 OK", r#"{"embeddings":[[1,"x"],[1,2]]}"#);
        assert!(server_err(&server.url).to_string().contains("wrong shape"));
        let server = fake::json("200 OK", r#"{"embedding":[1,2]}"#);
        assert!(server_err(&server.url).to_string().contains("no `embeddings`"));
        let server = fake::json("200 OK", r#"{"error":"out of memory"}"#);
        assert!(server_err(&server.url).to_string().ends_with("broke: out of memory"));
    }

    #[test]
    fn a_wrong_number_of_vectors_is_an_error() {
        let server = fake::json("200 OK", r#"{"embeddings":[[1,0]]}"#);
        let err = server_err(&server.url);
        assert!(err.to_string().contains("expected 2 vectors (one per text), got 1"), "{err}");
    }

    #[test]
    fn a_number_beyond_f32_is_not_finite_and_an_error() {
        let server = fake::json("200 OK", r#"{"embeddings":[[1,0],[1e39,0]]}"#);
        assert!(server_err(&server.url).to_string().contains("vector 1 holds a number that is not finite"));
    }

    #[test]
    fn a_refused_connection_is_unreachable_with_a_hint() {
        let started = Instant::now();
        let err = EmbedError::from(server_err(&fake::dead_url()));
        assert!(matches!(err, EmbedError::Server(ServerError::Unreachable { .. })), "{err:?}");
        assert!(err.hint().is_some_and(|h| h.contains("ollama serve") && h.contains("embedding.base_url")));
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn a_stall_longer_than_the_timeout_times_out() {
        let quick = Duration::from_millis(300);
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{\"embeddings\":";
        for steps in [
            vec![(Duration::from_secs(3), response("200 OK", "application/json", "{}"))],
            vec![(Duration::ZERO, head.to_string()), (Duration::from_secs(3), "[]".to_string())],
        ] {
            let server = fake::serve_steps(steps);
            let started = Instant::now();
            let err = Ollama::new(&server.url, "m", quick).embed(&["a"], Role::Query).unwrap_err();
            assert!(matches!(err, EmbedError::Server(ServerError::Timeout { .. })), "{err:?}");
            assert!(err.hint().is_some_and(|h| h.contains("embedding.timeout_secs")));
            assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
        }
    }
}
