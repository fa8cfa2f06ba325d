//! `kebab mcp`: serves the knowledge base to an MCP client over stdio (see
//! `crate::mcp`). The database is opened as every command opens it, on the
//! first call that needs it.

use anyhow::Result;

use super::Ctx;
use crate::mcp::{self, Setup};

pub fn run(ctx: &Ctx) -> Result<i32> {
    // Nothing but the protocol may reach stdout: notices go to stderr, the
    // client's log.
    let kebab = ctx.out.kebab.clone();
    mcp::serve(Setup { open: ctx.opener(), config_dir: ctx.config_dir(), readonly: ctx.readonly, kebab })?;
    Ok(0)
}
