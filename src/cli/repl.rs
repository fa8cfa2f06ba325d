//! `kebab repl` / `kebab --repl`: the conversation shell (see `crate::repl`).

use anyhow::Result;

use super::Ctx;
use crate::repl::{self, Repl};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The session to hold (created with its first question); default: a new one
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<i32> {
    // Prompts and streamed answers are for a person: on stdout they would break
    // the one-JSON-document promise of `--json`.
    if ctx.out.json {
        return Err(crate::error::UserError::new("usage", "the REPL prints for a person and has no --json output")
            .with_hint("drop --json; for JSON answers in a session run `kebab --json ask --session NAME QUESTION`")
            .into());
    }
    let (kb, mode, model_note) = ctx.kb(ctx.config()?, ctx.create_store()?, None)?;
    let history_file = ctx.paths.data_dir.join("repl_history");
    let shell = Repl::new(ctx.out.clone(), kb, mode, args.session.as_deref(), ctx.opener())?;
    repl::run(shell, model_note, &history_file)
}
