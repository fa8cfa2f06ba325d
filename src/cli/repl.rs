//! `kebab repl` / `kebab --repl`: the conversation shell (see `crate::repl`).

use anyhow::Result;

use super::Ctx;
use crate::llm::auto;
use crate::repl::{self, Repl};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The session to hold (created with its first question); default: a new one
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<i32> {
    let cfg = ctx.config()?;
    let store = ctx.create_store()?;
    let engine = ctx.engine(&cfg, &store, None)?;
    let selected = auto::select(&cfg.llm);
    let history_file = ctx.paths.data_dir.join("repl_history");
    let shell = Repl::new(ctx.out, store, cfg, selected.model, engine, args.session.as_deref())?;
    repl::run(shell, selected.note, &history_file)
}
