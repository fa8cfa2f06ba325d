//! What to tell the user about a model server that failed before answering:
//! how to start the kind of server an endpoint belongs to, an https address
//! for a plain HTTP server, where a redirect points, and a refused key or
//! unknown model on an OpenAI-compatible server. Each hint names the setting
//! to change, so the error says what to do, not only what went wrong.

use ureq::Body;
use ureq::http::Response;

use super::{ServerError, status_error};

/// For a failed https connection to `url`, an endpoint under `section`.base_url.
pub fn tls_hint(url: &str, section: &str) -> String {
    let plain = base_of(url).replacen("https://", "http://", 1);
    format!("if the server speaks plain HTTP, as a local Ollama or llama-server does, set {section}.base_url to {plain}")
}

/// The base URL `url` is an endpoint of: without the path kebab adds
/// (`/api/chat`, `/v1/chat/completions`, …).
fn base_of(url: &str) -> &str {
    ["/api/", "/v1/"].iter().filter_map(|p| url.rfind(p)).max().map_or(url, |at| &url[..at])
}

/// For an endpoint under a base URL with the other API's path, what to set
/// in `section`: Ollama's `/api/…` (asked by provider `ollama`, or `auto`
/// looking for Ollama: the hint names both) under a base ending in `/v1`, the
/// OpenAI-compatible API's path (Ollama answers every path there 404,
/// whatever the model), or an OpenAI-style `/v1/…` under one ending in
/// `/api`, Ollama's own API's path (a hosted server may keep its OpenAI API
/// there too, so that hint says "if"). `None` for any other.
pub fn other_api_hint(url: &str, section: &str) -> Option<String> {
    let base = base_of(url);
    let endpoint = &url[base.len()..];
    if let Some(root) = base.strip_suffix("/v1").filter(|_| endpoint.starts_with("/api/")) {
        return Some(format!(
            "{section}.base_url ends in /v1, the OpenAI-compatible API's path, but providers \"ollama\" and \"auto\" speak \
             Ollama's own API, whose /api/ path kebab adds: set {section}.base_url to {root}, or {section}.provider = \"openai\" \
             to keep /v1"
        ));
    }
    let root = base.strip_suffix("/api").filter(|_| endpoint.starts_with("/v1/"))?;
    Some(format!(
        "{section}.base_url {base} looks like Ollama's own API, which provider \"openai\" does not speak: \
         if the server is Ollama, set {section}.base_url to {root}/v1 (its OpenAI-compatible API), \
         or {section}.provider = \"ollama\" with {section}.base_url = {root}"
    ))
}

/// How to start the kind of server `url` is an endpoint of: Ollama's
/// endpoints are under `/api/`, OpenAI-compatible ones under `/v1/`. A base
/// URL with the other API's path is named first: starting the server would
/// not be enough.
pub(super) fn unreachable_hint(url: &str) -> String {
    let fallback = "fix llm.base_url, or set llm.provider = \"extractive\"";
    if let Some(wrong) = other_api_hint(url, "llm") {
        format!("{wrong}; start the server if it is not running")
    } else if let Some((base, _)) = url.split_once("/api/") {
        format!("start Ollama with `ollama serve` so it listens at {base} (llm.base_url), {fallback}")
    } else if let Some((base, _)) = url.split_once("/v1/") {
        format!(
            "start the OpenAI-compatible server llm.base_url names ({base}; e.g. `llama-server --port PORT` or `vllm serve MODEL`), {fallback}"
        )
    } else {
        format!("start the model server at {url}, {fallback}")
    }
}

/// A redirect from the server at `url` to `location`: where it points, and
/// the base URL to set so kebab asks there (the target without the endpoint
/// path kebab adds, when it ends with the same one).
pub(super) fn redirect_error(url: &str, status: u16, location: &str) -> ServerError {
    let location = crate::script::printable(location);
    let target = if location.contains("://") {
        location.to_string()
    } else {
        let (scheme, rest) = url.split_once("://").unwrap_or(("http", url));
        let host = rest.split('/').next().unwrap_or(rest);
        match location.strip_prefix("//") {
            Some(elsewhere) => format!("{scheme}://{elsewhere}"),
            None if location.starts_with('/') => format!("{scheme}://{host}{location}"),
            None => format!("{}/{location}", url.rsplit_once('/').map_or(url, |(dir, _)| dir)),
        }
    };
    let endpoint = &url[base_of(url).len()..];
    let base = target.strip_suffix(endpoint).filter(|_| !endpoint.is_empty()).unwrap_or(&target);
    let key = if url.contains("/embed") { "embedding.base_url" } else { "llm.base_url" };
    let hint = Some(format!("set {key} to {base} (kebab does not follow redirects)"));
    ServerError::Http { url: url.to_string(), status, message: format!("it redirects to {target}"), hint }
}

/// `status_error` for an OpenAI-compatible server, with a hint for a bad key
/// or model that names the settings of `section` (`llm` or `embedding`) and
/// the variable the key was read from (`key_env`, empty when none is named).
pub fn openai_status_error(
    url: &str,
    resp: Response<Body>,
    api_key: Option<&str>,
    key_env: &str,
    section: &str,
    model: &str,
) -> ServerError {
    match status_error(url, resp, api_key) {
        ServerError::Http { url, status, message, hint: None } => {
            let hint = match status {
                401 | 403 => Some(match api_key {
                    _ if key_env.is_empty() => format!(
                        "set {section}.api_key_env to the name of the environment variable that holds the API key"
                    ),
                    Some(_) => format!("check the API key in {key_env} ({section}.api_key_env names it)"),
                    None => {
                        format!("{key_env} is unset or empty: set it to the server's API key ({section}.api_key_env names it)")
                    }
                }),
                404 => Some(match other_api_hint(&url, section) {
                    Some(wrong) => format!("{wrong}; else check {section}.model ({model})"),
                    None => format!("check {section}.model ({model}) and {section}.base_url"),
                }),
                _ => None,
            };
            ServerError::Http { url, status, message, hint }
        }
        other => other,
    }
}
