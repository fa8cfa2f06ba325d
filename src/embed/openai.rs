//! The OpenAI-compatible embedding provider: `POST /v1/embeddings` with the
//! whole batch, answered by `{"data": [{"index": i, "embedding": [...]}, ...]}`
//! — put back in input order by `index`, as the API does not promise order.
//! Spoken by OpenAI, the llama.cpp server, vLLM, LM Studio and others.
//!
//! The API key comes from the environment, goes only into the
//! `Authorization` header, and is cut out of everything shown: `Debug`
//! redacts it and any error text a server echoed it into has it replaced.

use std::fmt;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::roles::{Profile, Role};
use super::{EmbedError, Embedder};
use crate::config::{EmbeddingConfig, EmbeddingProvider};
use crate::http::{self, ServerError};

#[derive(Clone)]
pub struct OpenAi {
    /// `https://api.openai.com` or `http://127.0.0.1:8080/v1`; `/v1` is added when missing.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// The variable the key is read from (`embedding.api_key_env`), named in
    /// the hint for a refused key; empty when none is named.
    pub api_key_env: String,
    /// Idle timeout: the longest wait for the next piece of the answer.
    pub timeout: Duration,
    /// `openai/MODEL` and the roles: what the vectors are tagged with.
    id: String,
    profile: Profile,
}

impl fmt::Debug for OpenAi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAi")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// The answer's shape; `data` is optional so that a body carrying only an
/// `error` shows the server's message, not serde's "missing field".
#[derive(Deserialize)]
struct Answer {
    data: Option<Vec<Item>>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Item {
    index: Option<usize>,
    embedding: Vec<f32>,
}

impl OpenAi {
    pub fn new(
        base_url: impl Into<String>,
        model: impl Into<String>,
        api_key: Option<String>,
        timeout: Duration,
    ) -> OpenAi {
        let model = model.into();
        // The model name's own roles until `with_profile` says otherwise.
        let profile = Profile::from_config(&EmbeddingConfig { provider: EmbeddingProvider::Openai, model: model.clone(), ..Default::default() });
        let api_key_env = String::new();
        OpenAi { base_url: base_url.into(), id: String::new(), model, api_key, api_key_env, timeout, profile: profile.clone() }
            .with_profile(profile)
    }

    /// The model served as `profile` says.
    pub fn with_profile(mut self, profile: Profile) -> OpenAi {
        self.id = profile.model_id(&format!("openai/{}", self.model));
        self.profile = profile;
        self
    }

    /// Reads the key from the environment variable named by
    /// `embedding.api_key_env`; an unset or empty variable means no key
    /// (local servers need none).
    pub fn from_config(cfg: &EmbeddingConfig) -> OpenAi {
        let api_key = http::api_key(&cfg.api_key_env);
        let model = OpenAi::new(cfg.base_url.clone(), cfg.model.clone(), api_key, Duration::from_secs(cfg.timeout_secs));
        OpenAi { api_key_env: cfg.api_key_env.clone(), ..model.with_profile(Profile::from_config(cfg)) }
    }

    fn url(&self) -> String {
        http::openai_url(&self.base_url, "embeddings")
    }

    fn secret(&self) -> Option<&str> {
        self.api_key.as_deref()
    }

    fn status_error(&self, url: &str, resp: ureq::http::Response<ureq::Body>) -> ServerError {
        http::openai_status_error(url, resp, self.secret(), &self.api_key_env, "embedding", &self.model)
    }

    fn request(&self, url: &str, texts: &[&str], role: Role) -> Result<Vec<Vec<f32>>, ServerError> {
        let mut headers = Vec::new();
        if let Some(key) = &self.api_key {
            headers.push(("Authorization", format!("Bearer {key}")));
        }
        let roles = &self.profile.roles;
        let mut body = json!({"model": self.model, "input": roles.marked(texts, role)});
        if roles.input_type {
            body["input_type"] = json!(role.input_type());
        }
        let bytes = super::post_batch(url, self.timeout, &headers, &body, |resp| self.status_error(url, resp))?;
        let answer: Answer = super::parse(url, &bytes)?;
        drop(bytes);
        super::server_error(url, answer.error)?;
        let Some(mut items) = answer.data else {
            return Err(http::stream_error(url, "the answer has no `data`", ""));
        };
        // A server that leaves out `index` is taken to answer in order.
        let index = |pos: usize, item: &Item| item.index.unwrap_or(pos);
        let mut keyed: Vec<(usize, Vec<f32>)> =
            items.drain(..).enumerate().map(|(pos, item)| (index(pos, &item), item.embedding)).collect();
        keyed.sort_by_key(|(i, _)| *i);
        if keyed.iter().enumerate().any(|(pos, (i, _))| pos != *i) {
            return Err(http::stream_error(url, "the answer's `index` values are not 0, 1, 2, … (one per text)", ""));
        }
        super::unit_vectors(url, keyed.into_iter().map(|(_, v)| v).collect(), texts.len())
    }
}

impl Embedder for OpenAi {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn reads(&self, text: &str) -> bool {
        self.profile.reads(text)
    }

    fn embed(&self, texts: &[&str], role: Role) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let url = self.url();
        // Every message, not only the server's, is redacted: a quoted body may echo the key.
        self.request(&url, texts, role).map_err(|e| redacted(e, self.secret()).into())
    }
}

/// `err` with `secret` cut out of all its text.
fn redacted(err: ServerError, secret: Option<&str>) -> ServerError {
    let r = |text: String| http::redact(&text, secret);
    match err {
        ServerError::Unreachable { url, message } => ServerError::Unreachable { url: r(url), message: r(message) },
        ServerError::Tls { url, message } => ServerError::Tls { url: r(url), message: r(message) },
        ServerError::Http { url, status, message, hint } => {
            ServerError::Http { url: r(url), status, message: r(message), hint: hint.map(r) }
        }
        ServerError::Timeout { url, secs, partial } => ServerError::Timeout { url: r(url), secs, partial: r(partial) },
        ServerError::Stream { url, message, partial, hint } => {
            ServerError::Stream { url: r(url), message: r(message), partial: r(partial), hint: hint.map(r) }
        }
        ServerError::Other(message) => ServerError::Other(r(message)),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::embed::fake::{self, response};

    const SEC: Duration = Duration::from_secs(1);
    const KEY: &str = "sk-test-DO-NOT-LEAK-1234567890";

    fn model(url: &str) -> OpenAi {
        OpenAi::new(url, "text-embedding-3-small", None, SEC)
    }

    fn server_err(model: &OpenAi) -> ServerError {
        match model.embed(&["a", "b"], Role::Document) {
            Err(EmbedError::Server(e)) => e,
            other => panic!("expected a server error, got {other:?}"),
        }
    }

    #[test]
    fn v1_is_added_once() {
        assert_eq!(model("http://h:1").url(), "http://h:1/v1/embeddings");
        assert_eq!(model("http://h:1/v1/").url(), "http://h:1/v1/embeddings");
        assert_eq!(model("http://h:1").model_id(), "openai/text-embedding-3-small");
    }

    #[test]
    fn a_shuffled_batch_comes_back_in_input_order_normalised() {
        let body = json!({"object": "list", "data": [
            {"object": "embedding", "index": 2, "embedding": [0, 0, 7]},
            {"object": "embedding", "index": 0, "embedding": [3, 4, 0]},
            {"object": "embedding", "index": 1, "embedding": [0, -2, 0]},
        ], "model": "text-embedding-3-small", "usage": {"prompt_tokens": 3, "total_tokens": 3}});
        let server = fake::json("200 OK", &body.to_string());
        let out = model(&format!("{}/v1", server.url)).embed(&["zero", "one", "two"], Role::Document).unwrap();
        assert_eq!(out, vec![vec![0.6, 0.8, 0.0], vec![0.0, -1.0, 0.0], vec![0.0, 0.0, 1.0]]);
        let request = server.request();
        assert!(request.starts_with("POST /v1/embeddings HTTP/1.1\r\n"), "{request}");
        assert!(!request.to_ascii_lowercase().contains("authorization:"), "{request}");
        let sent: Value = serde_json::from_str(request.split("\r\n\r\n").nth(1).unwrap()).unwrap();
        assert_eq!(sent, json!({"model": "text-embedding-3-small", "input": ["zero", "one", "two"]}));
    }

    #[test]
    fn input_type_marks_the_role_when_configured() {
        let server = fake::json("200 OK", r#"{"data":[{"index":0,"embedding":[1,0]}]}"#);
        let cfg = EmbeddingConfig {
            provider: EmbeddingProvider::Openai,
            model: "multilingual-e5-small".into(),
            base_url: server.url.clone(),
            input_type: Some(true),
            ..Default::default()
        };
        OpenAi::from_config(&cfg).embed(&["소유권"], Role::Query).unwrap();
        let sent: Value = serde_json::from_str(server.request().split("\r\n\r\n").nth(1).unwrap()).unwrap();
        assert_eq!(sent, json!({"model": "multilingual-e5-small", "input": ["소유권"], "input_type": "query"}));
    }

    #[test]
    fn duplicate_indices_are_an_error() {
        let server = fake::json("200 OK", r#"{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}"#);
        assert!(server_err(&model(&server.url)).to_string().contains("`index` values are not 0, 1, 2"));
    }

    #[test]
    fn a_wrong_number_of_vectors_is_an_error() {
        let server = fake::json("200 OK", r#"{"data":[{"index":0,"embedding":[1,0]}]}"#);
        let err = server_err(&model(&server.url));
        assert!(err.to_string().contains("expected 2 vectors (one per text), got 1"), "{err}");
    }

    #[test]
    fn vectors_of_differing_lengths_are_an_error() {
        let server = fake::json("200 OK", r#"{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[1]}]}"#);
        assert!(server_err(&model(&server.url)).to_string().contains("differing lengths"));
    }

    #[test]
    fn a_404_surfaces_the_servers_message_and_names_the_settings() {
        let body = r#"{"error":{"message":"The model `text-embedding-3-small` does not exist","type":"invalid_request_error","code":"model_not_found"}}"#;
        let server = fake::json("404 Not Found", body);
        let err = EmbedError::from(server_err(&model(&server.url)));
        assert!(matches!(err, EmbedError::Server(ServerError::Http { status: 404, .. })), "{err:?}");
        assert!(err.to_string().contains("does not exist"), "{err}");
        assert!(err.hint().is_some_and(|h| h.contains("embedding.model") && h.contains("embedding.base_url")));
    }

    #[test]
    fn a_500_surfaces_the_servers_message() {
        let server =
            fake::json("500 Internal Server Error", r#"{"error":{"message":"CUDA out of memory","code":500}}"#);
        let err = server_err(&model(&server.url));
        assert!(err.to_string().ends_with("answered 500: CUDA out of memory"), "{err}");
    }

    #[test]
    fn an_html_page_with_status_200_is_a_clear_error() {
        let page = "<html><title>Sign in to the proxy</title></html>";
        let server = fake::serve(response("200 OK", "text/html", page));
        let text = server_err(&model(&server.url)).to_string();
        assert!(text.contains("web page") && text.contains("Sign in to the proxy"), "{text}");
    }

    #[test]
    fn malformed_json_is_an_error_that_quotes_it() {
        let server = fake::json("200 OK", r#"{"data": [{"index": 0, "embedding": [0.1, 0.2"#);
        let err = server_err(&model(&server.url));
        assert!(matches!(err, ServerError::Stream { .. }), "{err:?}");
        assert!(err.to_string().contains("malformed JSON answer: \"{\\\"data\\\""), "{err}");
    }

    #[test]
    fn a_refused_connection_is_unreachable_with_a_hint() {
        let err = EmbedError::from(server_err(&model(&fake::dead_url())));
        assert!(matches!(err, EmbedError::Server(ServerError::Unreachable { .. })), "{err:?}");
        assert!(err.hint().is_some_and(|h| h.contains("embedding.base_url")));
    }

    #[test]
    fn a_stall_longer_than_the_timeout_times_out() {
        let server = fake::serve_steps(vec![(Duration::from_secs(3), response("200 OK", "application/json", "{}"))]);
        let started = Instant::now();
        let slow = OpenAi::new(&server.url, "m", None, Duration::from_millis(300));
        assert!(matches!(server_err(&slow), ServerError::Timeout { .. }));
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    }

    #[test]
    fn the_key_is_sent_as_bearer_and_never_shown() {
        // Servers that echo the credentials they got, as some proxies do, in an error status and in a bad answer.
        let echo = format!(r#"{{"error":{{"message":"Incorrect API key provided: Bearer {KEY}"}}}}"#);
        for (status, body) in [("401 Unauthorized", echo), ("200 OK", format!("not json {KEY}"))] {
            let server = fake::json(status, &body);
            let model = OpenAi::new(&server.url, "m", Some(KEY.to_string()), SEC);
            let err = EmbedError::from(server_err(&model));
            let request = server.request();
            assert!(request.contains(&format!("authorization: Bearer {KEY}\r\n")), "{request}");
            for shown in [err.to_string(), format!("{err:?}"), format!("{model:?}"), err.hint().unwrap_or_default()] {
                assert!(!shown.contains(KEY), "key leaked in: {shown}");
            }
        }
        let server = fake::json("401 Unauthorized", r#"{"error":{"message":"Incorrect API key provided"}}"#);
        let err = EmbedError::from(server_err(&OpenAi::new(&server.url, "m", Some(KEY.into()), SEC)));
        assert!(err.to_string().contains("Incorrect API key provided"), "{err}");
        assert!(err.hint().is_some_and(|h| h.contains("embedding.api_key_env")));
    }
}
