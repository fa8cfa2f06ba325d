//! `kebab completions SHELL`: the shell's completion script for every
//! command and flag, generated from the command line's own definition so it
//! never drifts. `docs/usage.md` has the install line for each shell.

use anyhow::Result;
use clap::CommandFactory;
use clap_complete::Shell;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell to complete for
    #[arg(value_enum)]
    shell: Shell,
}

pub fn run(ctx: &super::Ctx, args: Args) -> Result<i32> {
    // A script is shell code, not a JSON document: printed under --json it
    // would break the one-JSON-document promise (refused as the REPL is).
    if ctx.out.json {
        return Err(crate::error::UserError::new("usage", "a completion script is shell code and has no --json output")
            .with_hint(format!("drop --json: `kebab completions {} > FILE`", args.shell))
            .into());
    }
    let mut cmd = super::Cli::command();
    // Generated into memory, then written here: clap_complete panics on a
    // failed write, and a closed pipe (`| head`) must exit 0 and a full disk
    // be an `error:` line (exit 2), as for every other command.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "kebab", &mut script);
    let mut out = std::io::stdout().lock();
    std::io::Write::write_all(&mut out, &script)?;
    std::io::Write::flush(&mut out)?;
    Ok(0)
}
