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
    let (kb, mode, model_note) = ctx.kb(ctx.config()?, ctx.create_store()?, None)?;
    let history_file = ctx.paths.data_dir.join("repl_history");
    let shell = Repl::new(ctx.out.clone(), kb, mode, args.session.as_deref())?;
    repl::run(shell, model_note, &history_file)
}
