//! Choosing the model that answers: the configured provider, or for `auto`
//! the Ollama server when it answers a short probe and has the model, else the
//! built-in extractive model. The caller shows the note, if any, once: why
//! `auto` fell back, and for a server the address reaches amiss (a plain-HTTP
//! server at an https address, a redirect, one that answers but not as Ollama)
//! what to set.

use std::time::Duration;

use super::extractive::Extractive;
use super::ollama::{self, Ollama};
use super::openai::OpenAi;
use super::{ChatModel, LlmError};
use crate::config::{LlmConfig, LlmProvider};

/// How long `auto` waits for the Ollama server before answering without it.
const PROBE_TIMEOUT: Duration = Duration::from_millis(400);

/// The advice for a server that took the connection but did not list its
/// models in time: it is there, so "no model server" and "start it" are wrong.
const SLOW: &str = "the server at llm.base_url took the connection but did not list its models in time: \
                    check that server and its log; for one that is only slow, provider \"ollama\" waits \
                    llm.timeout_secs for it, where \"auto\" gives up in under a second";

pub struct Selected {
    pub model: Box<dyn ChatModel>,
    /// Why `auto` fell back, for a one-line notice.
    pub note: Option<String>,
}

pub fn select(cfg: &LlmConfig) -> Selected {
    match cfg.provider {
        LlmProvider::Ollama => Selected { model: Box::new(Ollama::from_config(cfg)), note: None },
        LlmProvider::Openai => Selected { model: Box::new(OpenAi::from_config(cfg)), note: None },
        LlmProvider::Extractive => Selected { model: Box::new(Extractive::from_config(cfg)), note: None },
        LlmProvider::Auto => match ollama::probe(&cfg.base_url, &cfg.model, PROBE_TIMEOUT) {
            Ok(true) => Selected { model: Box::new(Ollama::from_config(cfg)), note: None },
            Ok(false) => Selected {
                model: Box::new(Extractive::from_config(cfg)),
                note: Some(format!(
                    "the Ollama server at {} has no model {:?} (`ollama pull {}`); answering with the built-in extractive model",
                    cfg.base_url, cfg.model, cfg.model
                )),
            },
            Err(e) => {
                // A timeout's own words would round the wait up to a whole second.
                let what = match &e {
                    LlmError::Timeout { url, .. } => {
                        format!("the model server at {url} sent nothing within {} ms", PROBE_TIMEOUT.as_millis())
                    }
                    _ => e.to_string(),
                };
                let note = match answered_amiss(&e) {
                    Some(hint) => format!("{what}; {hint}; answering with the built-in extractive model"),
                    None => format!("no model server at {}; answering with the built-in extractive model", cfg.base_url),
                };
                Selected { model: Box::new(Extractive::from_config(cfg)), note: Some(note) }
            }
        },
    }
}

/// For a model server that answered, but not at this address (an https one
/// for plain HTTP, a redirect) or not as Ollama does (an error status, a page
/// that is not its model list, a list that broke off or is too long: `ollama::probe`), the advice the explicit
/// providers give: what `auto` and `kebab doctor` say in place of "no model
/// server" or "start it". So for one that took the connection but did not
/// answer in time (a timeout on connecting is `Unreachable`).
/// `None` when no server answered, or its answer comes with no advice.
pub fn answered_amiss(e: &LlmError) -> Option<String> {
    match e {
        LlmError::Tls { .. } | LlmError::Http { .. } => e.hint(),
        LlmError::Timeout { .. } => Some(SLOW.into()),
        _ => None,
    }
}
