//! `kebab mcp`: the knowledge base served to coding agents and editors over
//! the Model Context Protocol (stdio, the official `rmcp` SDK). Six tools —
//! `search`, `ask`, `cite`, `sessions_list`, `session_show`, `ingest` —
//! answer with the documents the CLI prints with `--json` (`search_response.v1`
//! with its `search_hit.v1` hits, `answer.v1`, `session.v1`, the ingest
//! summary, and `evidence.v1` for `cite`); a failed call is a tool error whose
//! content is the `error.v1` document.
//!
//! The knowledge base is not thread-safe (SQLite connection, cached vectors),
//! so one worker thread owns it and runs the calls in turn (`worker`); the
//! protocol runs on a current-thread runtime beside it (`server`). What the
//! tools do is plain synchronous code over the `Kb` (`tools`).

mod lines;
mod server;
mod tools;
mod worker;

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::rag::{Open, Opener};

/// What the server is started with.
pub struct Setup {
    /// Called on the worker thread on the first call that needs the
    /// database, and again after a call that could not open it.
    pub open: Opener,
    /// The folder relative `workspace.roots` are resolved against.
    pub config_dir: PathBuf,
    /// `--readonly`: the `ingest` tool is refused.
    pub readonly: bool,
    /// The program the commands in hints name (`render::hint::kebab_as_run`):
    /// one the user runs beside the server reads the same config and index.
    pub kebab: String,
}

/// Serves MCP on stdin/stdout until the client closes stdin.
pub fn serve(setup: Setup) -> Result<()> {
    let kebab = setup.kebab.clone();
    let worker = worker::Worker::start(setup)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the MCP server's runtime")?;
    runtime.block_on(server::run(worker, kebab))
}
