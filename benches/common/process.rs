//! Running the kebab binary from a bench: finding a fresh release build, timing a
//! command, the REPL's time to its first output, and a child's peak memory.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};

/// The kebab binary, if present and newer than every source it is built from.
pub fn binary() -> std::result::Result<PathBuf, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = option_env!("CARGO_BIN_EXE_kebab").map_or_else(|| root.join("target/release/kebab"), PathBuf::from);
    let build = "run `cargo build --release` (or `bench/run`), then rerun";
    let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let Some(built) = mtime(&bin) else {
        return Err(format!("{} is missing: {build}", bin.display()));
    };
    let sources = walkdir::WalkDir::new(root.join("src")).into_iter().filter_map(|e| e.ok()).map(|e| e.into_path());
    let newest = sources
        .chain([root.join("Cargo.toml"), root.join("Cargo.lock")])
        .filter_map(|p| mtime(&p).map(|t| (t, p)))
        .max_by_key(|(t, _)| *t);
    match newest {
        Some((t, p)) if t > built => {
            let age = t.duration_since(built).unwrap_or_default().as_secs();
            Err(format!("{} is older than {} (by {age}s): {build}", bin.display(), p.display()))
        }
        _ => Ok(bin),
    }
}

/// `/proc/loadavg`'s first three fields, or "n/a".
pub fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let fields: Vec<&str> = text.split_whitespace().take(3).collect();
    if fields.len() == 3 { fields.join(" ") } else { "n/a".to_string() }
}

/// The binary with a given config file and no kebab settings from the environment.
pub fn kebab(bin: &Path, config: &Path) -> Command {
    let mut cmd = Command::new(bin);
    cmd.env("KEBAB_CONFIG", config).env_remove("KEBAB_DATA_DIR").env_remove("KEBAB_READONLY").env("NO_COLOR", "1");
    cmd
}

/// Milliseconds from spawn to exit, output captured; a failure is an error.
pub fn timed(cmd: &mut Command) -> Result<f64> {
    let t = Instant::now();
    let out = cmd.stdin(Stdio::null()).output().with_context(|| format!("running {cmd:?}"))?;
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    if !out.status.success() {
        bail!("{cmd:?} failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(ms)
}

/// Milliseconds from spawn to the REPL's first stdout byte, and to its exit, with
/// `:quit` written to its stdin at once.
pub fn repl_start(bin: &Path, data_dir: &Path, config: &Path) -> Result<(f64, f64)> {
    let mut cmd = kebab(bin, config);
    cmd.arg("--data-dir").arg(data_dir).args(["--repl", "--session", "bench"]);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let t = Instant::now();
    let mut child = cmd.spawn().with_context(|| format!("running {cmd:?}"))?;
    // Dropped at once: end of input after the line (the REPL stops at `:quit` anyway).
    // A write error means the child is already gone; its status says why.
    let _ = child.stdin.take().context("no stdin")?.write_all(b":quit\n");
    let mut stdout = child.stdout.take().context("no stdout")?;
    let mut first = [0u8; 1];
    let got = stdout.read(&mut first)?;
    let first_ms = t.elapsed().as_secs_f64() * 1000.0;
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest)?;
    let mut err = String::new();
    child.stderr.take().context("no stderr")?.read_to_string(&mut err)?;
    let status = child.wait()?;
    let exit_ms = t.elapsed().as_secs_f64() * 1000.0;
    let echoed = String::from_utf8_lossy(&first[..got]).into_owned() + &String::from_utf8_lossy(&rest);
    if !status.success() || !echoed.starts_with("kebab[bench]> :quit") {
        bail!("kebab --repl ({status}) printed {echoed:?}; stderr: {}", err.trim());
    }
    Ok((first_ms, exit_ms))
}

/// Peak RSS (kB) and wall milliseconds of `cmd`, which must succeed.
pub fn child_peak_rss(cmd: Command, work: &Path) -> Result<(u64, f64)> {
    let time = Path::new("/usr/bin/time");
    if time.is_file() {
        let report = work.join("time.out");
        let mut timed_cmd = Command::new(time);
        timed_cmd.args(["-f", "%M", "-o"]).arg(&report).arg(cmd.get_program()).args(cmd.get_args());
        for (k, v) in cmd.get_envs() {
            match v {
                Some(v) => timed_cmd.env(k, v),
                None => timed_cmd.env_remove(k),
            };
        }
        let t = Instant::now();
        let out = timed_cmd.stdin(Stdio::null()).output().with_context(|| format!("running {timed_cmd:?}"))?;
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        if !out.status.success() {
            bail!("{cmd:?} failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim());
        }
        let text = std::fs::read_to_string(&report).context("reading /usr/bin/time's report")?;
        let kb = text.lines().filter_map(|l| l.trim().parse().ok()).next_back();
        return Ok((kb.ok_or_else(|| anyhow!("no RSS in /usr/bin/time's report {text:?}"))?, ms));
    }
    // No GNU time: poll the child's high-water mark until it exits.
    let mut cmd = cmd;
    let t = Instant::now();
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn()?;
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0u64;
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        let hwm = std::fs::read_to_string(&status_file).ok().and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        });
        peak = peak.max(hwm.unwrap_or(0));
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    if !status.success() {
        bail!("{cmd:?} failed ({status})");
    }
    Ok((peak, ms))
}
