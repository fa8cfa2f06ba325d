//! `kebab sessions list | show | export | rm (delete) | rename | fork | search`: the
//! saved conversations. `--json` prints `session.v1` documents (and
//! `session_search.v1` for a search, `session_change.v1` for what `rm`,
//! `rename` and `export -o` did).

use std::path::PathBuf;

use anyhow::Result;
use serde::Serialize;

use super::Ctx;
use crate::error::UserError;
use crate::render::answer;
use crate::script::one_line;
use crate::session::{self, export};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Every session, most recently used first
    List,
    /// A session's turns with their answers and sources
    Show { name: String },
    /// A session as Markdown (questions, answers, footnoted sources) or JSON
    Export {
        name: String,
        /// [default: md; json on stdout with --json]
        #[arg(long, value_enum)]
        format: Option<Format>,
        /// Write to this file instead of stdout (`-`: stdout)
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Delete a session with its turns
    // `delete` is the word people reach for first; `rm` stays the name the
    // hints and docs use.
    #[command(visible_alias = "delete")]
    Rm { name: String },
    /// Give a session a new name
    Rename { old: String, new: String },
    /// Branch a session: NEW holds its turns (up to TURN) by reference, not asked again
    Fork {
        name: String,
        new: String,
        /// The last turn to take, as `sessions show` numbers them [default: all]
        #[arg(long, value_name = "TURN", allow_negative_numbers = true)]
        at: Option<i64>,
    },
    /// Full-text search over every session's questions and answers
    Search {
        #[arg(required = true, num_args = 1.., value_name = "QUERY")]
        query: Vec<std::ffi::OsString>,
        /// How many turns to show
        #[arg(long, short = 'n', default_value_t = 20, allow_negative_numbers = true)]
        limit: i64,
    },
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Format {
    Md,
    Json,
}

/// `session_change.v1`: what `rm`, `rename` or `export -o` did, so a script
/// running them with `--json` gets one JSON document as every command gives.
#[derive(Serialize)]
struct ChangeDoc<'a> {
    schema_version: &'static str,
    /// `removed`, `renamed` or `exported`.
    action: &'static str,
    /// The session's name (after a rename, the new one).
    name: &'a str,
    /// A rename's old name.
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<&'a str>,
    turns: i64,
    /// The file an export wrote.
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
}

impl<'a> ChangeDoc<'a> {
    fn new(action: &'static str, name: &'a str, turns: i64) -> ChangeDoc<'a> {
        ChangeDoc { schema_version: "session_change.v1", action, name, from: None, turns, path: None }
    }
}

#[derive(Serialize)]
struct SearchDoc {
    schema_version: &'static str,
    query: String,
    hits: Vec<session::TurnHit>,
}

pub fn run(ctx: &Ctx, cmd: Command) -> Result<i32> {
    let store = ctx.store()?;
    match cmd {
        Command::List => {
            let sessions = session::list(&store)?;
            if ctx.out.json {
                ctx.out.json(&session::ListDoc::new(sessions))?;
            } else if sessions.is_empty() {
                ctx.out.notice("no sessions yet (start one with `kebab --repl --session NAME` or `kebab ask --session NAME …`)");
            } else {
                for s in &sessions {
                    ctx.out.line(answer::session_line(s))?;
                }
            }
        }
        Command::Show { name } => {
            let doc = session::document(&store, session::get(&store, &name)?)?;
            if ctx.out.json {
                ctx.out.json(&doc)?;
            } else if doc.turns.is_empty() {
                // Else nothing at all is printed, as if the command had not run.
                let ask = format!("`kebab --repl --session {name}` or `kebab ask --session {name} …`");
                ctx.out.notice(format!("session {name:?} has no turns yet (ask in it with {ask})"));
            } else {
                for turn in &doc.turns {
                    answer::print_turn(&ctx.out, turn)?;
                    ctx.out.line("")?;
                }
            }
        }
        Command::Export { name, format, output } => {
            let doc = session::document(&store, session::get(&store, &name)?)?;
            // `:session new` makes a session at once: an export of it was a
            // file of "0 turns", where the REPL's `:session export` says there
            // is nothing to export. An error as for a fork of it: exit 1.
            if doc.turns.is_empty() {
                let ask = format!("`kebab --repl --session {name}` or `kebab ask --session {name} …`");
                return Err(UserError::new("bad_input", format!("nothing to export: session {name:?} has no turns yet"))
                    .with_hint(format!("ask in it first with {ask}"))
                    .into());
            }
            // `-o -` is stdout, as for most tools; it wrote a file named `-`.
            let output = output.filter(|p| p.as_os_str() != "-");
            // `--json` promises one JSON document on stdout, so there it means
            // the JSON form; with -o, stdout gets session_change.v1 and the
            // file keeps the Markdown default.
            let format = format.unwrap_or(if ctx.out.json && output.is_none() { Format::Json } else { Format::Md });
            let text = match format {
                Format::Md => export::markdown(&doc),
                Format::Json => crate::script::json_escaped(serde_json::to_string_pretty(&doc)?) + "\n",
            };
            match output {
                Some(path) => {
                    export::refuse_database(&store, &path, &name)?;
                    // A folder that is not there or a path that is a folder is the user's to fix: exit 1.
                    std::fs::write(&path, text).map_err(|e| {
                        UserError::new("bad_input", format!("cannot write {}: {e}", path.display()))
                            .with_hint("give -o a file name in a folder that exists and that you may write")
                    })?;
                    let turns = doc.turns.len() as i64;
                    if ctx.out.json {
                        let path = Some(path.to_string_lossy().into_owned());
                        ctx.out.json(&ChangeDoc { path, ..ChangeDoc::new("exported", &name, turns) })?;
                    }
                    ctx.out.notice(format!("exported {} to {}", session::turns_phrase(turns), path.display()));
                }
                // A file keeps the text as saved; a terminal never gets raw
                // escape sequences from the notes.
                // `write_all`, not `print!`: a closed pipe is an error to
                // return (exit 0), not a panic.
                None => std::io::Write::write_all(&mut std::io::stdout().lock(), crate::script::printable(&text).as_bytes())?,
            }
        }
        Command::Rm { name } => {
            store.writable_for("removing a session")?;
            let turns = session::remove(&store, &name)?;
            if ctx.out.json {
                ctx.out.json(&ChangeDoc::new("removed", &name, turns))?;
            }
            ctx.out.notice(format!("removed session {} ({})", one_line(&name), session::turns_phrase(turns)));
        }
        Command::Rename { old, new } => {
            store.writable_for("renaming a session")?;
            session::rename(&store, &old, &new)?;
            if ctx.out.json {
                let turns = session::turn_count(&store, session::get(&store, &new)?.id)?;
                ctx.out.json(&ChangeDoc { from: Some(&old), ..ChangeDoc::new("renamed", &new, turns) })?;
            }
            ctx.out.notice(format!("renamed session {} to {}", one_line(&old), one_line(&new)));
        }
        Command::Fork { name, new, at } => {
            store.writable_for("forking a session")?;
            let forked = session::fork(&store, &name, Some(&new), at)?;
            if ctx.out.json {
                ctx.out.json(&session::document(&store, forked.conversation)?)?;
            } else {
                let turns = session::turns_phrase(forked.turns);
                ctx.out.notice(format!("forked {turns} of {} into {}", one_line(&name), one_line(&new)));
            }
        }
        Command::Search { query, limit } => {
            let query = super::text_arg("query", &query)?;
            let limit = super::at_least_one("-n", limit, "leave -n out for the 20 best turns")?;
            let hits = session::search(&store, &query, limit)?;
            if ctx.out.json {
                ctx.out.json(&SearchDoc { schema_version: "session_search.v1", query, hits })?;
            } else if hits.is_empty() {
                ctx.out.notice(format!("no past turn matches {:?}", one_line(&query)));
            } else {
                for hit in &hits {
                    for line in crate::render::sessions::hit_lines(hit) {
                        ctx.out.line(line)?;
                    }
                }
            }
        }
    }
    Ok(0)
}
