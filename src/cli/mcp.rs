//! `kebab mcp`: serves the knowledge base to an MCP client over stdio (see
//! `crate::mcp`). The database is opened as every command opens it, on the
//! first call that needs it.

use anyhow::Result;

use super::Ctx;
use crate::mcp::{self, Open, Setup};

pub fn run(ctx: &Ctx) -> Result<i32> {
    let (paths, out, readonly) = (ctx.paths.clone(), ctx.out.clone(), ctx.readonly);
    let config_dir = ctx.config_dir();
    let open = move |how: Open| {
        let ctx = Ctx::new(paths.clone(), out.clone(), readonly);
        let cfg = ctx.config()?;
        let store = match how {
            Open::Existing => ctx.store()?,
            Open::Create => ctx.create_store()?,
        };
        let (kb, _, note) = ctx.kb(cfg, store, None)?;
        if let Some(n) = note {
            ctx.out.notice(n);
        }
        Ok(kb)
    };
    // Nothing but the protocol may reach stdout: notices go to stderr, the
    // client's log.
    mcp::serve(Setup { open: Box::new(open), config_dir, readonly })?;
    Ok(0)
}
