//! Ingest: walk the given folders, read each supported file, chunk it, and
//! bring the index to match — files committed in batches, each file whole or
//! not at all, skipping files whose blake3 hash is unchanged. A bad file is reported with its path and reason
//! and skipped; the run goes on. A folder becomes a root only when a note in it is indexed; a file named makes
//! its folder a root that remembers only the files named in it, until the folder itself is named.

pub mod chunk;
pub mod embed;
mod format;
pub mod html;
pub mod jsonl;
pub mod markdown;
mod own;
pub mod pdf;
mod pipeline;
mod remembered;
mod skip;
pub mod text;
mod unlisted;
pub mod watch;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Serialize;

use crate::config::Config;
use crate::error::UserError;
use crate::script::one_line;
use crate::store::{Store, name_in_index};
use chunk::ChunkLimits;
pub use skip::{FIX_LINK, Skipped, nothing_ingested};
use skip::{NOT_REGULAR, cannot_read, link_loop, no_file_read, use_format};
pub use format::{Format, FormatChoice};
pub use remembered::{Missing, MissingRoot, nothing_to_ingest};

/// A JSONL record is a passage someone already cut to size: it stays whole up
/// to this size (on SciFact train, whole abstracts beat 1,600-char pieces:
/// nDCG@10 0.707 against 0.701).
const RECORD_LIMITS: ChunkLimits = ChunkLimits { target_chars: 2000, max_chars: 4000 };

/// A PDF page is a unit its author laid out; most pages stay one chunk at
/// these limits, so a page citation and `:cite` show the whole page.
const PAGE_LIMITS: ChunkLimits = RECORD_LIMITS;

#[derive(Debug, Clone)]
pub struct IngestOptions {
    /// Files or folders; empty means the folders kebab remembers:
    /// `workspace.roots`, or when that is empty the roots already indexed.
    pub paths: Vec<PathBuf>,
    pub format: FormatChoice,
    pub prune: bool,
    pub force: bool,
    /// The caller takes a format (`kebab ingest --format`): a skip whose way
    /// out is one names it only then (the MCP tool has no such argument).
    pub format_flag: bool,
}

impl IngestOptions {
    /// `paths` read as `kebab ingest PATH…` reads them: each file's format
    /// from its extension, nothing pruned or forced.
    pub fn of(paths: Vec<PathBuf>) -> IngestOptions {
        IngestOptions { paths, format: FormatChoice::Auto, prune: false, force: false, format_flag: true }
    }
}

/// What a run did. Documents are counted; a JSONL file holds many.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub schema_version: &'static str,
    pub files_seen: usize,
    pub added: usize,
    pub updated: usize,
    pub unchanged: usize,
    /// Every entry of `skipped_files`: files not indexed, and JSONL lines.
    pub skipped: usize,
    /// Of `skipped`, the JSONL lines (records) not indexed, listed as
    /// `FILE:LINE`; the rest are whole files.
    pub skipped_records: usize,
    pub removed: usize,
    /// Documents whose files are gone but were kept because `--prune` was not given.
    pub missing: usize,
    pub chunks_written: usize,
    pub bytes_read: u64,
    pub elapsed_ms: u64,
    pub skipped_files: Vec<Skipped>,
    /// Remembered folders (no PATH given) that are not there now: their
    /// documents are kept, and counted in `missing`.
    pub missing_roots: Vec<MissingRoot>,
    /// Remembered folders that are gone and whose documents `--prune` removed.
    pub forgotten_roots: Vec<MissingRoot>,
}

/// What the caller is told as the run goes, to draw progress.
pub enum Event<'a> {
    /// The walk is done: this many files, this many bytes, to look at.
    Planned { files: usize, bytes: u64 },
    /// One file was handled.
    File { path: &'a str, bytes: u64, what: &'static str },
    Skipped(&'a Skipped),
    /// A root found to lie inside the folder of root `into`: its documents
    /// (`from/…`, a root's name) now have their paths under `to/`.
    Absorbed { from: &'a str, into: &'a str, to: &'a str, dir: &'a Path, documents: usize },
}

/// A file found by the walk.
struct Candidate {
    abs: PathBuf,
    rel: String,
    format: Format,
    bytes: u64,
}

/// One folder to walk (or one file, with `scope` naming it).
#[derive(Clone)]
struct Target {
    root_dir: PathBuf,
    /// Root-relative path of what to walk, as on disk (any bytes); empty for the whole root.
    scope: PathBuf,
    /// For a root remembered for the files named in it (no PATH given): those files, root-relative, as on
    /// disk, read again instead of the folder walked (`remembered::walk_named`).
    files: Option<Vec<PathBuf>>,
}

impl Target {
    /// Whether this is a whole folder, which its root remembers (named files make a root of files only).
    fn whole(&self) -> bool {
        self.scope.as_os_str().is_empty() && self.files.is_none()
    }

    fn start(&self) -> PathBuf {
        if self.scope.as_os_str().is_empty() { self.root_dir.clone() } else { self.root_dir.join(&self.scope) }
    }

    /// The scope as the index spells paths.
    fn scope_key(&self) -> String {
        relative(&self.scope, Path::new(""))
    }
}

/// `path` relative to `base`, '/'-separated (paths in the index look the same
/// everywhere). A name that is not UTF-8 keeps its stray bytes as `\xNN`, so
/// it reads close to what `ls` shows and maps back to one file on every run.
pub fn relative(path: &Path, base: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let component = |c: std::path::Component| name_in_index(c.as_os_str().as_bytes());
    path.strip_prefix(base).unwrap_or(path).components().map(component).collect::<Vec<_>>().join("/")
}

/// A root-relative path as the index names it: under the root's name (the
/// root itself when `rel` is empty).
fn in_root(root_name: &str, rel: &str) -> String {
    if rel.is_empty() { root_name.to_string() } else { format!("{root_name}/{rel}") }
}

pub fn run(store: &mut Store, cfg: &Config, config_dir: &Path, opts: &IngestOptions, on: &mut dyn FnMut(Event)) -> Result<Summary> {
    let summary = run_targets(store, cfg, config_dir, opts, on);
    // A new root's batch an error left open is neither kept nor left open
    // under a caller that goes on with the store (the MCP server).
    if summary.is_err() {
        store.rollback_batch();
    }
    summary
}

fn run_targets(
    store: &mut Store,
    cfg: &Config,
    config_dir: &Path,
    opts: &IngestOptions,
    on: &mut dyn FnMut(Event),
) -> Result<Summary> {
    let started = Instant::now();
    // Named paths must all be there; remembered ones that are gone are reported apart.
    let (targets, gone) = if opts.paths.is_empty() {
        remembered::targets(store, cfg, config_dir)?
    } else {
        (resolve_targets(store, cfg, config_dir, &opts.paths)?, Vec::new())
    };
    let excludes = build_excludes(&cfg.workspace.exclude)?;
    let limits = ChunkLimits::default();
    let mut summary = Summary { schema_version: "ingest_summary.v1", ..Summary::default() };
    let held = |store: &Store, root_id, scope: &str| store.count_missing(root_id, scope, &std::collections::HashSet::new());
    let own = own::Own::of(store);

    let walk_at = |target: &Target| own.leave_out(walk(target, &excludes, opts.format, opts.format_flag), &target.root_dir);
    for target in &targets {
        // Walked before the write transaction a new root opens (below): other writers (kebab watch, the
        // MCP server, another ingest) wait on this run only while it writes, not while it lists a large folder.
        let walked_at = holder(store, target)?.1;
        let found = walk_at(&walked_at);
        on(Event::Planned { files: found.candidates.len(), bytes: found.candidates.iter().map(|c| c.bytes).sum() });
        // A root this run makes (absorbing none) is written in the batch of its notes, and rolled back
        // with it when none is indexed (`pipeline::write_target`): the database stays as it was.
        let holding = holder(store, target)?;
        let created = holding.0.is_none();
        if created && (!holding.1.whole() || store.roots_inside(&target.root_dir)?.is_empty()) {
            store.begin_batch()?;
        }
        let (root_id, root_name, target) = place_target(store, holding, on)?;
        let target = &target;
        // Another run made a root holding this folder during the walk: its paths are relative to that root.
        let found = if target.root_dir == walked_at.root_dir { found } else { walk_at(target) };
        let Walk { candidates, errors: mut walk_errors, unlisted, present } = found;
        // A folder named that holds no file kebab reads (and nothing indexed)
        // is said to, not passed as "nothing changed".
        if !opts.paths.is_empty()
            && candidates.is_empty()
            && walk_errors.is_empty()
            && unlisted.is_empty()
            && (created || held(store, root_id, &target.scope_key())? == 0)
        {
            let own_data = own.holds(&target.start());
            let reason = if own_data { own::DATA_DIR.into() } else { no_file_read(&root_name, &present, opts.format_flag) };
            walk_errors.push(Skipped { path: target.scope_key(), reason, folder: true });
        }
        // What the index holds under a folder that could not be listed is
        // still on disk, as far as anyone knows: counted as present, so kept.
        let mut kept = Vec::new();
        for folder in unlisted {
            let (skip, sources) = unlisted::keep(store, root_id, folder)?;
            walk_errors.push(skip);
            kept.extend(sources);
        }
        for mut skip in walk_errors {
            // Named like every other path in the index and its warnings.
            skip.path = in_root(&root_name, &skip.path);
            on(Event::Skipped(&skip));
            summary.skipped += 1;
            summary.skipped_files.push(skip);
        }

        let reformat = !matches!(opts.format, FormatChoice::Auto);
        let reading = pipeline::Reading { root_id, root_name: &root_name, cfg, limits: &limits, force: opts.force, reformat };
        let mut seen = pipeline::write_target(store, &reading, &candidates, &mut pipeline::Tally { summary: &mut summary, on: &mut *on })?;
        // A file still on disk is not gone, even when this run did not read it
        // (another extension, an earlier `--format`): only what is missing goes.
        seen.extend(present);
        seen.extend(kept);
        if opts.prune {
            summary.removed += store.prune(root_id, &target.scope_key(), &seen)?;
        } else {
            summary.missing += store.count_missing(root_id, &target.scope_key(), &seen)?;
        }
    }
    remembered::settle(store, gone, opts.prune, &mut summary)?;
    store.settle_postings()?;
    summary.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(summary)
}

/// The root holding a target, if any (id, name), and the target against it.
type Holding = (Option<(i64, String)>, Target);

/// The root already holding a target (id, name), if any, and the target
/// re-expressed against it: a folder or file inside an already ingested folder
/// belongs to that root, so its documents keep their paths instead of being
/// indexed twice. Writes nothing.
fn holder(store: &Store, target: &Target) -> Result<Holding> {
    let wanted = target.start();
    Ok(match store.root_containing(&wanted)? {
        Some((id, name, dir)) => {
            let scope = wanted.strip_prefix(&dir).map(Path::to_path_buf).unwrap_or_default();
            (Some((id, name)), Target { root_dir: dir, scope, files: target.files.clone() })
        }
        None => (None, target.clone()),
    })
}

/// The root a target belongs to (id, name), made when none holds it, and the
/// target re-expressed against it: what `holder` found. A folder named is
/// remembered whole from then on, a file named only as a file (a bare run
/// reads it again, not the files beside it). A root inside a whole folder
/// joins its root (`on` hears of it), for the same reason: no folder is a
/// root inside another.
fn place_target(store: &mut Store, holding: Holding, on: &mut dyn FnMut(Event)) -> Result<(i64, String, Target)> {
    let (held, placed) = holding;
    let whole = placed.whole();
    let (id, name) = match held {
        Some(root) if !whole => root,
        _ => store.ensure_root_as(&placed.root_dir, whole)?,
    };
    // A root of files named holds none of the folders below it.
    let inside = if whole { store.roots_inside(&placed.root_dir)? } else { Vec::new() };
    for inner in inside {
        let prefix = relative(&inner.dir, &placed.root_dir);
        let documents = store.absorb_root(&inner, (id, &name), &prefix)?;
        on(Event::Absorbed { from: &inner.name, into: &name, to: &in_root(&name, &prefix), dir: &inner.dir, documents });
    }
    Ok((id, name, placed))
}

/// The targets without those another covers: a folder named twice, or a
/// folder or file inside another folder named, is walked once (a walk of
/// each read it twice, and counted it twice).
fn outermost(targets: Vec<Target>) -> Vec<Target> {
    let covers = |outer: &Target, inner: &Target| outer.whole() && inner.start().starts_with(&outer.root_dir);
    let mut kept: Vec<Target> = Vec::new();
    for (i, t) in targets.iter().enumerate() {
        let inside_another = targets.iter().enumerate().any(|(j, u)| j != i && covers(u, t) && u.start() != t.start());
        if !inside_another && !kept.iter().any(|k| k.start() == t.start()) {
            kept.push(t.clone());
        }
    }
    kept
}

fn resolve_targets(store: &Store, cfg: &Config, config_dir: &Path, paths: &[PathBuf]) -> Result<Vec<Target>> {
    let from_config = paths.is_empty();
    let list: Vec<PathBuf> = if from_config {
        cfg.workspace.roots.iter().map(|p| expand_root(p, config_dir)).collect()
    } else {
        paths.to_vec()
    };
    if list.is_empty() {
        return Err(UserError::new("bad_input", "nothing to ingest: no PATH given and workspace.roots is empty")
            .with_hint("run `kebab ingest PATH...`, or list your notes folders in workspace.roots (`kebab config path` shows the file)")
            .into());
    }
    let mut targets = Vec::new();
    for p in list {
        let abs = match locate(&p) {
            Ok(abs) => abs,
            Err(e) => {
                let origin = if from_config { " (from workspace.roots)" } else { "" };
                return Err(cannot_ingest(Some(store), &p, e, origin)?);
            }
        };
        targets.push(target_of(abs));
    }
    Ok(outermost(targets))
}

/// Fails on the first path named that is not there, as `run` would, for a
/// caller yet to open the database: a run that fails for it must not leave
/// a new, empty database behind.
pub fn check_named(paths: &[PathBuf]) -> Result<()> {
    for p in paths {
        if let Err(e) = locate(p) {
            return Err(cannot_ingest(None, p, e, "")?);
        }
    }
    Ok(())
}

/// The error for a path `p` that cannot be resolved (`e`); `store`, when
/// there is one, may still hold documents from it.
fn cannot_ingest(store: Option<&Store>, p: &Path, e: std::io::Error, origin: &str) -> Result<anyhow::Error> {
    // A note or folder deleted since it was indexed: its documents are kept until a prune.
    let held = match store {
        Some(store) => remembered::still_held(store, p, &e)?,
        None => None,
    };
    let looping = link_loop(&e);
    let hint = match held {
        Some((n, root)) => format!(
            "the index still holds {} from it; `kebab ingest --prune {}` forgets what is gone from that folder",
            crate::script::count(n, "document"),
            crate::script::shell_word(&root.to_string_lossy())
        ),
        None if looping.is_some() => FIX_LINK.to_string(),
        None => "check the path exists and is readable".to_string(),
    };
    let named = one_line(&p.display().to_string());
    let why = looping.unwrap_or_else(|| e.to_string());
    Ok(UserError::new("bad_input", format!("cannot ingest {named}{origin}: {why}")).with_hint(hint).into())
}

/// `p` made absolute with its symlinks resolved (`canonicalize`), except a
/// link to a device, pipe or socket: that keeps the link's own name (in its
/// resolved folder), so it is reported as the path the user named, not as
/// `/dev/zero`. Such a file is never read, so it has no index path of its own.
fn locate(p: &Path) -> std::io::Result<PathBuf> {
    let abs = std::fs::canonicalize(p)?;
    let special = std::fs::metadata(&abs).is_ok_and(|m| !m.is_dir() && !m.is_file());
    match (p.parent(), p.file_name()) {
        (Some(parent), Some(name)) if special => {
            let parent = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
            Ok(std::fs::canonicalize(parent)?.join(name))
        }
        _ => Ok(abs),
    }
}

/// What walks `abs` (a canonical path): the folder itself, or a file as a
/// scope in its folder.
fn target_of(abs: PathBuf) -> Target {
    if abs.is_dir() {
        return Target { root_dir: abs, scope: PathBuf::new(), files: None };
    }
    let parent = abs.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("/"));
    let name = abs.file_name().map(PathBuf::from).unwrap_or_default();
    Target { root_dir: parent, scope: name, files: None }
}

/// `~/notes` and paths relative to the config file's folder.
fn expand_root(p: &Path, config_dir: &Path) -> PathBuf {
    crate::config::from_config_dir(p, config_dir)
}

fn build_excludes(patterns: &[String]) -> Result<GlobSet> {
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        b.add(Glob::new(p).with_context(|| format!("bad workspace.exclude pattern {p:?}"))?);
    }
    Ok(b.build()?)
}

fn format_of(path: &Path, choice: FormatChoice) -> Option<Format> {
    match choice {
        FormatChoice::Only(format) => Some(format),
        FormatChoice::Auto => Format::of_extension(&path.extension()?.to_string_lossy()),
    }
}

/// What a walk found.
#[derive(Default)]
struct Walk {
    candidates: Vec<Candidate>,
    /// Files that could not be read, or a named file of no known type.
    errors: Vec<Skipped>,
    /// Folders (or entries) the walk could not look into: whatever is
    /// indexed under them must be kept.
    unlisted: Vec<unlisted::Unlisted>,
    /// Root-relative paths of files on disk that this run does not read.
    present: Vec<String>,
}

fn walk(target: &Target, excludes: &GlobSet, format: FormatChoice, format_flag: bool) -> Walk {
    if let Some(files) = &target.files {
        return remembered::walk_named(target, files, excludes, format);
    }
    let mut found = Vec::new();
    let mut errors = Vec::new();
    let mut unlisted = Vec::new();
    let mut present = Vec::new();
    let start = target.start();
    let rel_of = |p: &Path| relative(p, &target.root_dir);
    let walker = walkdir::WalkDir::new(&start).follow_links(false).sort_by_file_name().into_iter();
    let walker = walker.filter_entry(|e| {
        // Hidden files and folders below what was named are not notes (`.obsidian/`, Obsidian's
        // `.trash/`), as `kebab watch` holds: one it ignored, an ingest read back.
        let hidden = e.depth() > 0 && e.file_name().as_encoded_bytes().starts_with(b".");
        let rel = rel_of(e.path());
        // Directory patterns such as `**/.git/**` match what is inside the
        // folder, so test a name inside it to prune the whole folder.
        let excluded = excludes.is_match(&rel) || (e.file_type().is_dir() && !rel.is_empty() && excludes.is_match(format!("{rel}/x")));
        !(hidden || excluded)
    });
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                // Mostly a folder that could not be listed; an error naming no
                // path stands for all the walk covers.
                let rel = e.path().map(&rel_of).unwrap_or_else(|| target.scope_key());
                let text = e.to_string();
                let error = e.into_io_error().unwrap_or_else(|| std::io::Error::other(text));
                unlisted.push(unlisted::Unlisted { rel, error });
                continue;
            }
        };
        let ft = entry.file_type();
        // Symlinks to files are read through; symlinks to folders are not
        // followed, which rules out loops.
        let meta = if ft.is_symlink() { std::fs::metadata(entry.path()) } else { entry.metadata().map_err(std::io::Error::other) };
        let Some(fmt) = format_of(entry.path(), format) else {
            if !ft.is_dir() {
                present.push(rel_of(entry.path()));
            }
            // A file named on the command line is never passed over in silence.
            if entry.depth() == 0 && !ft.is_dir() {
                let reason = match entry.path().extension() {
                    // No format makes a device readable: say what it is.
                    _ if meta.as_ref().is_ok_and(|m| !m.is_file()) => NOT_REGULAR.into(),
                    Some(e) => format!("unsupported extension .{}; {}", e.to_string_lossy(), use_format(format_flag)),
                    None => format!("no extension to tell its type; {}", use_format(format_flag)),
                };
                errors.push(Skipped { path: rel_of(entry.path()), reason, folder: false });
            }
            continue;
        };
        match meta {
            Ok(m) if m.is_file() => found.push(Candidate {
                abs: entry.path().to_path_buf(),
                rel: rel_of(entry.path()),
                format: fmt,
                bytes: m.len(),
            }),
            // A named pipe, socket or device: reading it could wait forever
            // or never end. Passed over in a folder; reported when named.
            Ok(m) if entry.depth() == 0 && !m.is_dir() => {
                errors.push(Skipped { path: rel_of(entry.path()), reason: NOT_REGULAR.into(), folder: false })
            }
            Ok(_) => {}
            Err(e) => {
                // Listed but not looked at (its folder closed to us since it
                // was listed): it is there, so what the index holds of it is
                // kept, not pruned as gone.
                if e.kind() != std::io::ErrorKind::NotFound {
                    present.push(rel_of(entry.path()));
                }
                errors.push(Skipped { path: rel_of(entry.path()), reason: cannot_read(&e, ft.is_symlink()), folder: ft.is_dir() })
            }
        }
    }
    Walk { candidates: found, errors, unlisted, present }
}

struct FileResult {
    outcome: crate::store::SourceOutcome,
    bad_lines: Vec<jsonl::BadLine>,
}

enum FileError {
    /// The file is bad; report it and go on.
    Skip(String),
    /// The database failed; stop the run.
    Fatal(anyhow::Error),
}

fn ingest_file(
    store: &mut Store,
    root_id: i64,
    root_name: &str,
    cand: &Candidate,
    cfg: &Config,
    limits: &ChunkLimits,
    force: bool,
) -> Result<FileResult, FileError> {
    let reading = pipeline::Reading { root_id, root_name, cfg, limits, force, reformat: false };
    let indexed = store.source_hash(root_id, &cand.rel).map_err(FileError::Fatal)?;
    match pipeline::prepare(&reading, cand, indexed.as_ref(), false).map_err(FileError::Skip)? {
        pipeline::Prepared::Unchanged { docs } => {
            let outcome = crate::store::SourceOutcome { unchanged: docs, ..Default::default() };
            Ok(FileResult { outcome, bad_lines: Vec::new() })
        }
        pipeline::Prepared::Changed { input, bad_lines } => {
            let outcome = store.apply_source(&input, force).map_err(FileError::Fatal)?;
            Ok(FileResult { outcome, bad_lines })
        }
    }
}

/// What `kebab ingest --json` and the MCP `ingest` tool return: the run's
/// summary, with the embedding run when there was one.
#[derive(Debug, Serialize)]
pub struct IngestDoc<'a> {
    #[serde(flatten)]
    pub summary: &'a Summary,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding: Option<&'a embed::EmbedSummary>,
}

