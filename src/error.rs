//! Errors callers branch on, and how any error maps to an exit code and to
//! the `error.v1` wire shape.

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

/// How a failed command ends.
pub struct Failure {
    pub exit_code: i32,
    pub doc: ErrorDoc,
}

/// True when the error is a write to a closed pipe (`kebab search x | head`),
/// which ends the program quietly with exit 0.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Classifies an error: user errors exit 1 with their own code, the rest exit 2.
pub fn classify(err: &anyhow::Error) -> Failure {
    if let Some(user) = err.chain().find_map(|c| c.downcast_ref::<UserError>()) {
        return Failure {
            exit_code: 1,
            doc: ErrorDoc {
                schema_version: "error.v1",
                code: user.code.to_string(),
                message: format!("{err:#}"),
                hint: user.hint.clone(),
            },
        };
    }
    if let Some(llm) = err.chain().find_map(|c| c.downcast_ref::<crate::llm::LlmError>()) {
        return Failure {
            exit_code: 2,
            doc: ErrorDoc { schema_version: "error.v1", code: "llm".into(), message: format!("{err:#}"), hint: llm.hint() },
        };
    }
    if let Some(e) = err.chain().find_map(|c| c.downcast_ref::<crate::embed::EmbedError>()) {
        return Failure {
            exit_code: 2,
            doc: ErrorDoc { schema_version: "error.v1", code: "embed".into(), message: format!("{err:#}"), hint: e.hint() },
        };
    }
    let sqlite = err.chain().find_map(|c| c.downcast_ref::<rusqlite::Error>());
    let code = if sqlite.is_some() { "database" } else { "runtime" };
    Failure {
        exit_code: 2,
        doc: ErrorDoc {
            schema_version: "error.v1",
            code: code.into(),
            message: format!("{err:#}"),
            hint: sqlite.and_then(database_hint),
        },
    }
}

/// What to do about a database file SQLite cannot use: it is the index, so
/// it can always be rebuilt from the notes.
fn database_hint(e: &rusqlite::Error) -> Option<String> {
    use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
    match e.sqlite_error_code() {
        Some(DatabaseCorrupt | NotADatabase) => Some(
            "the database file is damaged or is not kebab's: move it aside (`kebab config path --json` shows where it is) \
             and run `kebab ingest` to build a new index from your notes"
                .into(),
        ),
        _ => None,
    }
}
