//! `kebab init`: write a commented default config (never over an existing
//! one) and create the database.

use anyhow::Result;
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
    // An existing config was parsed before init ran (`super::reads_config`):
    // one that does not parse is reported now, not later.
    let written = if path.exists() {
        false
    } else {
        // The user's to fix (permissions, a path that is wrong): exit 1 with what to do, as for the data dir.
        let cannot = |e: std::io::Error| {
            UserError::new("config", format!("cannot write the config file {}: {e}", path.display())).with_hint(
                "let this user write in its folder, or point --config (or KEBAB_CONFIG) at a file in a folder it may write",
            )
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(cannot)?;
        }
        std::fs::write(path, default_config_text()).map_err(cannot)?;
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
        for step in next_steps(&ctx.out.kebab) {
            ctx.out.line(step)?;
        }
    }
    Ok(0)
}

/// The commands to run after init, each with its comment in one column.
/// `kebab` carries the --config and --data-dir init ran with (flag or
/// variable), or a copied step would run against the default ones.
fn next_steps(kebab: &str) -> Vec<String> {
    let steps = [
        (format!("{kebab} models install"), "the built-in embedding model, for semantic search"),
        (format!("{kebab} ingest ~/notes"), "index a folder of Markdown or text notes"),
        (format!("{kebab} --repl"), "ask questions about them (or `kebab search QUERY`)"),
    ];
    let width = steps.iter().map(|(cmd, _)| cmd.chars().count()).max().unwrap_or(0).max(24);
    steps.iter().map(|(cmd, why)| format!("  {cmd:<width$}  # {}", crate::render::hint::as_run(why, kebab))).collect()
}
