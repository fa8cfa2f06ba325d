//! Errors callers branch on (`UserError`: the user can fix it) and the
//! `error.v1` wire shape. How any error maps to an exit code and a hint is
//! `render::failure`'s job: it knows the providers' errors, this floor does not.

use serde::Serialize;

/// Bad input or usage: the user can fix it (exit 1). Everything else that goes
/// wrong is a runtime failure (exit 2).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct UserError {
    /// Short machine-readable code for `error.v1` (`config`, `bad_input`, `readonly`, …).
    pub code: &'static str,
    pub message: String,
    pub hint: Option<String>,
}

impl UserError {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        UserError { code, message: message.into(), hint: None }
    }

    /// `--readonly` refusing a write; `what` names it ("`kebab ingest`").
    pub fn readonly(what: &str) -> Self {
        UserError::new("readonly", format!("{what} writes to the database, and --readonly is set"))
            .with_hint("drop --readonly (or unset KEBAB_READONLY)")
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

/// `error.v1`: what `--json` prints on stdout when a command fails.
#[derive(Debug, Serialize)]
pub struct ErrorDoc {
    pub schema_version: &'static str,
    pub code: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// True when the error is a write to a closed pipe (`kebab search x | head`),
/// which ends the program quietly with exit 0.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
