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

/// The paths as text, as every `--json` document prints a path: serde
/// refuses a `PathBuf` that is not UTF-8, and the command then failed.
#[derive(Serialize)]
struct PathDoc {
    schema_version: &'static str,
    config_file: String,
    data_dir: String,
    database: String,
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
                let p = &ctx.paths;
                let text = |path: &std::path::Path| path.display().to_string();
                ctx.out.json(&PathDoc {
                    schema_version: "config_paths.v1",
                    config_file: text(&p.config_file),
                    data_dir: text(&p.data_dir),
                    database: text(&p.database),
                })?;
            } else {
                ctx.out.line(ctx.paths.config_file.display())?;
            }
        }
    }
    Ok(0)
}
