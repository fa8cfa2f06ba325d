//! `kebab init`: write a commented default config (never over an existing
//! one) and create the database.

use anyhow::{Context, Result};
use serde::Serialize;

use super::Ctx;
use crate::config::default_config_text;
use crate::error::UserError;

#[derive(Serialize)]
struct InitReport {
    schema_version: &'static str,
    config_path: String,
    config_written: bool,
    database: String,
    schema_level: i64,
}

pub fn run(ctx: &Ctx) -> Result<i32> {
    if ctx.readonly {
        return Err(UserError::readonly("`kebab init`").into());
    }
    let path = &ctx.paths.config_file;
    let written = if path.exists() {
        // Parse it so a broken existing config is reported now, not later.
        ctx.config()?;
        false
    } else {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        std::fs::write(path, default_config_text()).with_context(|| format!("cannot write {}", path.display()))?;
        true
    };
    let store = ctx.create_store()?;
    let report = InitReport {
        schema_version: "init.v1",
        config_path: path.display().to_string(),
        config_written: written,
        database: store.path().display().to_string(),
        schema_level: store.schema_level()?,
    };
    if ctx.out.json {
        ctx.out.json(&report)?;
    } else {
        if written {
            ctx.out.line(format!("wrote config {}", report.config_path))?;
        } else {
            ctx.out.line(format!("config {} exists; left unchanged", report.config_path))?;
        }
        // Data this process may not write is reported as it is: nothing needed writing.
        let readonly = if store.is_readonly() { "; read-only here: searched and asked, not written" } else { "" };
        ctx.out.line(format!("database {} ready (schema level {}{readonly})", report.database, report.schema_level))?;
        // Plain lines, not notices: the next steps are the point of running init.
        ctx.out.line("next steps:")?;
        ctx.out.line("  kebab models install      # the built-in embedding model, for semantic search")?;
        ctx.out.line("  kebab ingest ~/notes      # index a folder of Markdown or text notes")?;
        ctx.out.line("  kebab --repl              # ask questions about them (or `kebab search QUERY`)")?;
    }
    Ok(0)
}
