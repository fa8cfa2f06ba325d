//! `kebab config show | path`: the effective configuration, and where the
//! files live.

use anyhow::Result;
use clap::Subcommand;
use serde::Serialize;

use super::Ctx;

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the effective config (file merged over defaults)
    Show,
    /// Print the config file's path (and, with --json, the data paths)
    Path,
}

#[derive(Serialize)]
struct ShowDoc<'a> {
    schema_version: &'static str,
    config_path: String,
    config_exists: bool,
    config: &'a crate::config::Config,
}

#[derive(Serialize)]
struct PathDoc<'a> {
    schema_version: &'static str,
    #[serde(flatten)]
    paths: &'a crate::config::Paths,
}

pub fn run(ctx: &Ctx, cmd: Command) -> Result<i32> {
    match cmd {
        Command::Show => {
            let cfg = ctx.config()?;
            if ctx.out.json {
                ctx.out.json(&ShowDoc {
                    schema_version: "config.v1",
                    config_path: ctx.paths.config_file.display().to_string(),
                    config_exists: ctx.paths.config_file.exists(),
                    config: &cfg,
                })?;
            } else {
                let origin = if ctx.paths.config_file.exists() { "" } else { " (not present: defaults)" };
                ctx.out.line(format!("# {}{origin}", ctx.paths.config_file.display()))?;
                ctx.out.line(toml::to_string_pretty(&cfg)?.trim_end())?;
            }
        }
        Command::Path => {
            if ctx.out.json {
                ctx.out.json(&PathDoc { schema_version: "config_paths.v1", paths: &ctx.paths })?;
            } else {
                ctx.out.line(ctx.paths.config_file.display())?;
            }
        }
    }
    Ok(0)
}
