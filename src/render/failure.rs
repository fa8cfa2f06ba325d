//! How a failed command ends: any error classified into an exit code and the
//! `error.v1` document (code, message, hint) that `--json`, the terminal and
//! the REPL show. User errors exit 1; the model server, the embedder and the
//! database exit 2 with a hint of their own.

use super::hint::{FrontEnd, hint_for};
use crate::error::{ErrorDoc, UserError};

/// How a failed command ends.
pub struct Failure {
    pub exit_code: i32,
    pub doc: ErrorDoc,
}

/// Classifies an error: user errors exit 1 with their own code, the rest exit 2.
pub fn classify(err: &anyhow::Error) -> Failure {
    if let Some(user) = err.chain().find_map(|c| c.downcast_ref::<UserError>()) {
        return Failure {
            exit_code: 1,
            doc: ErrorDoc {
                schema_version: "error.v1",
                code: user.code.to_string(),
                message: message(err),
                hint: user.hint.clone(),
            },
        };
    }
    if let Some(llm) = err.chain().find_map(|c| c.downcast_ref::<crate::llm::LlmError>()) {
        return Failure {
            exit_code: 2,
            doc: ErrorDoc { schema_version: "error.v1", code: "llm".into(), message: message(err), hint: llm.hint() },
        };
    }
    if let Some(e) = err.chain().find_map(|c| c.downcast_ref::<crate::embed::EmbedError>()) {
        return Failure {
            exit_code: 2,
            doc: ErrorDoc { schema_version: "error.v1", code: "embed".into(), message: message(err), hint: e.hint() },
        };
    }
    let sqlite = err.chain().find_map(|c| c.downcast_ref::<rusqlite::Error>());
    let code = if sqlite.is_some() { "database" } else { "runtime" };
    Failure {
        exit_code: 2,
        doc: ErrorDoc {
            schema_version: "error.v1",
            code: code.into(),
            message: message(err),
            hint: sqlite.and_then(database_hint),
        },
    }
}

/// An error with its causes on one line, `context: cause: …` as `{:#}`
/// prints it, but ending at a SQLite error: its cause is SQLite's code with the
/// same words again ("file is not a database: Error code 26: file is not a
/// database").
pub fn message(err: &anyhow::Error) -> String {
    let mut parts = Vec::new();
    for cause in err.chain() {
        parts.push(cause.to_string());
        if cause.downcast_ref::<rusqlite::Error>().is_some() {
            break;
        }
    }
    parts.join(": ")
}

/// As `classify`, with the hint saying what to do in `front` (a REPL
/// command, an MCP tool) where the command line would run a command.
pub fn classify_for(err: &anyhow::Error, front: FrontEnd) -> Failure {
    let mut failure = classify(err);
    failure.doc.hint = failure.doc.hint.map(|h| hint_for(front, &h));
    failure
}

/// The advice for an error from a database file SQLite reads as damaged or
/// not a database at all (the same whichever command met it), if it is one.
pub fn damaged_database_hint(err: &anyhow::Error) -> Option<String> {
    err.chain().find_map(|c| c.downcast_ref::<rusqlite::Error>()).and_then(database_hint)
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
