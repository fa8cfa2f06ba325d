//! `kebab watch [PATH...]`: keeps the index in step with the notes as they
//! change. File events (notify) are debounced until the folder has been quiet
//! for half a second, then the paths they name are handed to `ingest::watch`,
//! which reconciles each file in its own transaction. Reads are not changes:
//! access events (kebab's own reads among them) are dropped. One line per change (`--json`: one
//! `watch_event.v1` object per line), after the `watching` line, the catch-up's
//! changes (what changed while nothing watched) included; a file skipped or a folder it cannot
//! list is said once, until it changes or is read; one below that may not be read at the start
//! is left out of the watch, the rest watched, until a change (its chmod) finds it readable. A
//! watched folder that disappears is watched again when it comes back; one of the remembered folders (no PATH)
//! that is not there at the start is warned about, its notes kept, and the
//! others are watched; one where only files were named is watched for those files alone. An index
//! deleted or replaced under it stops it (exit 1). Ctrl-C finishes the file in hand and exits 0.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use notify::event::ModifyKind;
use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use serde::Serialize;

use super::Ctx;
use crate::error::UserError;
use crate::ingest::watch::{Change, Reconcile, WatchRoot, Watched};
use crate::render::answer::ctrl_c_flag;
use crate::script::{count, json_escaped, one_line};

/// How long the watched folders must be quiet before the changes are
/// handled, all together: an editor's save (write a temp file, rename it over
/// the note) settles well within it, and both halves of a rename arrive in
/// one batch.
const DEBOUNCE: Duration = Duration::from_millis(500);
/// A folder that never goes quiet still has its changes handled this often.
const MAX_WAIT: Duration = Duration::from_secs(5);
/// How often the loop looks at Ctrl-C and at folders waiting to come back.
const TICK: Duration = Duration::from_millis(250);

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Folders or files to watch [default: workspace.roots from the config]
    paths: Vec<PathBuf>,
}

/// One NDJSON line of `--json`.
#[derive(Serialize)]
struct EventDoc<'a> {
    schema_version: &'static str,
    #[serde(flatten)]
    event: Event<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Event<'a> {
    Change(&'a Change),
    /// Watching started (or a vanished folder is watched again): what.
    Watching { event: &'static str, paths: Vec<String> },
}

/// The file watcher and, for each watched folder, the folder it holds a
/// watch on (device and inode), if any, and the folders below it that could
/// not be watched (mode 000): tried again before each batch is read.
struct Arms {
    watcher: RecommendedWatcher,
    armed: Vec<Option<(u64, u64)>>,
    blind: Vec<Vec<PathBuf>>,
}

/// The identity of the folder at `path` now: one removed and made again
/// has a new inode, and the watch on the old one is dead.
fn folder_id(path: &Path) -> Option<(u64, u64)> {
    crate::store::file_id(path).filter(|_| path.is_dir())
}

impl Arms {
    /// Watches `root` (again); false when it is not there right now.
    fn arm(&mut self, i: usize, root: &WatchRoot) -> bool {
        // A watch left over from before the folder went is dead: drop it first.
        let _ = self.watcher.unwatch(&root.watch_path);
        self.blind[i].clear();
        let id = folder_id(&root.watch_path);
        self.armed[i] = id.filter(|_| {
            if root.recursive {
                self.watch_tree(&root.watch_path, i)
            } else {
                self.watcher.watch(&root.watch_path, RecursiveMode::NonRecursive).is_ok()
            }
        });
        self.armed[i].is_some()
    }

    /// Watches `folder` and everything below it but the folders that may not be read, which
    /// go to root `i`'s blind ones; false when `folder` itself cannot be watched. notify's walk
    /// stops at the first folder it cannot watch, keeping the watches put on the folders met
    /// before it: each folder below is then watched on its own, so that the rest are reached.
    fn watch_tree(&mut self, folder: &Path, i: usize) -> bool {
        let Err(e) = self.watcher.watch(folder, RecursiveMode::Recursive) else { return true };
        // One that went during the walk needs no watch; one that may not be read, one once it may.
        let skippable = match &e.kind {
            notify::ErrorKind::Io(io) => io.kind() == std::io::ErrorKind::PermissionDenied,
            kind => matches!(kind, notify::ErrorKind::PathNotFound),
        };
        if !skippable || !e.paths.iter().any(|p| p != folder && p.starts_with(folder)) {
            return false;
        }
        let subfolders: Vec<PathBuf> = std::fs::read_dir(folder)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
            .map(|entry| entry.path())
            .collect();
        for sub in subfolders {
            if !self.watch_tree(&sub, i) && sub.is_dir() {
                self.blind[i].push(sub);
            }
        }
        true
    }

    /// The blind folders that may be read now, watched from here: read them again, as
    /// they were not watched until now. A blind folder gone is forgotten: the watch on
    /// the folder above it takes one made again there.
    fn open_blind(&mut self) -> Vec<PathBuf> {
        let mut opened = Vec::new();
        for i in 0..self.blind.len() {
            for folder in std::mem::take(&mut self.blind[i]) {
                if self.watch_tree(&folder, i) {
                    opened.push(folder);
                } else if folder.is_dir() {
                    self.blind[i].push(folder);
                }
            }
        }
        opened
    }
}

pub fn run(ctx: &Ctx, args: Args) -> Result<i32> {
    ctx.writable_for("`kebab watch`")?;
    let cfg = ctx.config()?;
    let remembered = args.paths.is_empty();
    // A path that is not there, or nothing to watch at all, leaves no new,
    // empty database behind, as for `kebab ingest`.
    if crate::store::no_database(&ctx.paths.database).is_some() {
        if remembered && cfg.workspace.roots.is_empty() {
            return Err(nothing_to_watch().into());
        }
        crate::ingest::check_named(&args.paths)?;
    }
    let mut store = ctx.create_store()?;
    store.writable_for("`kebab watch`")?;
    if remembered && cfg.workspace.roots.is_empty() && store.roots()?.is_empty() {
        return Err(nothing_to_watch().into());
    }
    // A remembered folder that is gone (an unmounted disk) does not stop the
    // others, as for a bare `kebab ingest`; a PATH named that is gone does.
    let (watched, missing) = Watched::resolve(&mut store, &cfg, &ctx.config_dir(), &args.paths)?;
    for gone in &missing {
        let warning = super::ingest::missing_root_warning(gone, !cfg.workspace.roots.is_empty());
        // A link loop is there all along: what brings it back is its link fixed.
        let back = if gone.why == crate::ingest::Missing::LinkLoop { "the link is fixed" } else { "it is back" };
        ctx.out.warn(format!("{warning} (not watched: start `kebab watch` again once {back})"));
    }
    if watched.roots().is_empty() {
        return Err(UserError::new("bad_input", "nothing to watch: none of the remembered folders is there")
            .with_hint("restore them (or mount their disk), or run `kebab watch PATH...`")
            .into());
    }
    let (embedder, note) = crate::embed::select(&cfg.embedding, &ctx.paths);
    if let Some(n) = note {
        ctx.out.notice(n);
    }
    let stop = ctrl_c_flag();
    let (tx, rx) = channel();
    // Folder symlinks are not followed (as `kebab ingest` walks none): no watches outside the folders.
    let config = notify::Config::default().with_follow_symlinks(false);
    let watcher = RecommendedWatcher::new(tx, config).context("starting the file watcher")?;
    let roots = watched.roots();
    let mut arms = Arms { watcher, armed: vec![None; roots.len()], blind: vec![Vec::new(); roots.len()] };
    // Armed before the first pass, so a change made during it is not missed.
    for (i, root) in roots.iter().enumerate() {
        if !arms.arm(i, root) {
            ctx.out.warn(format!("cannot watch {} yet; waiting for it to appear", root.watch_path.display()));
        }
    }
    let embedder = embedder.as_deref();
    let mut sync = Reconcile { store: &mut store, cfg: &cfg, embedder, stop: &stop, told: Default::default() };
    // Said first, as it is true from here: a reader waiting for it to know
    // the watch began got the catch-up's changes before it.
    let targets: Vec<PathBuf> = roots.iter().map(WatchRoot::target_path).collect();
    announce(ctx, "watching", &targets)?;
    // Catch up with whatever changed while nothing was watching.
    watched.apply(&mut sync, &targets, &mut |c| print_change(ctx, &stop, c))?;
    watch_loop(ctx, &watched, &mut sync, &mut arms, &rx)?;
    ctx.out.notice("stopped watching");
    Ok(0)
}

/// No PATH, no `workspace.roots` and no root in the index.
fn nothing_to_watch() -> UserError {
    UserError::new("bad_input", "nothing to watch: no PATH given, workspace.roots is empty and nothing is indexed yet")
        .with_hint("run `kebab watch PATH...`, or list your notes folders in workspace.roots (`kebab config path` shows the file)")
}

/// Paths named by events since the last batch, and when the first and the
/// latest of those events came.
#[derive(Default)]
struct Pending {
    paths: BTreeSet<PathBuf>,
    first: Option<Instant>,
    last: Option<Instant>,
}

impl Pending {
    fn add(&mut self, event: notify::Event) {
        // Opening or reading a file changes nothing (and kebab's own reads
        // would otherwise come back as events, for ever).
        if matches!(event.kind, EventKind::Access(_)) || event.paths.is_empty() {
            return;
        }
        let now = Instant::now();
        self.first.get_or_insert(now);
        self.last = Some(now);
        self.paths.extend(event.paths);
    }

    /// The batch, once the folders have been quiet long enough (or have
    /// been busy for too long).
    fn take_due(&mut self) -> Option<Vec<PathBuf>> {
        let (first, last) = (self.first?, self.last?);
        if last.elapsed() < DEBOUNCE && first.elapsed() < MAX_WAIT {
            return None;
        }
        let paths = std::mem::take(&mut self.paths).into_iter().collect();
        *self = Pending::default();
        Some(paths)
    }
}

/// Handles debounced batches until Ctrl-C, or until the index is deleted
/// or replaced under it: its open file would take every later change into
/// nothing.
fn watch_loop(ctx: &Ctx, watched: &Watched, sync: &mut Reconcile, arms: &mut Arms, rx: &Receiver<notify::Result<notify::Event>>) -> Result<()> {
    let mut pending = Pending::default();
    while !sync.stop.load(Ordering::SeqCst) {
        if sync.store.replaced() {
            let index = sync.store.path().display();
            return Err(UserError::new("not_found", format!("{index} was deleted or replaced while kebab watch ran"))
                .with_hint("run `kebab watch` again: it indexes the notes anew and catches up with what changed")
                .into());
        }
        match rx.recv_timeout(TICK) {
            Ok(Ok(event)) => {
                // A watched folder itself removed or moved away: its watch went with it. Its own
                // mode or times changed (chmod, touch) leave the watch as it was: the folder is
                // only read again, as the event's path.
                let went = matches!(event.kind, EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(_)));
                for (i, root) in watched.roots().iter().enumerate() {
                    if went && event.paths.contains(&root.watch_path) {
                        arms.armed[i] = None;
                    }
                }
                pending.add(event);
            }
            Ok(Err(e)) => ctx.out.warn(format!("file watcher: {e}")),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => anyhow::bail!("the file watcher stopped"),
        }
        if let Some(mut paths) = pending.take_due() {
            // Watched before they are read, so that a change made meanwhile is not missed (the
            // event that opened one, a chmod, names it to the watch on the folder above).
            paths.extend(arms.open_blind());
            watched.apply(sync, &paths, &mut |c| print_change(ctx, sync.stop, c))?;
        }
        rearm(ctx, watched, sync, arms)?;
    }
    Ok(())
}

/// Folders that went away are reconciled (their notes removed); when they
/// are back (the same path, a new folder) they are watched again and
/// reconciled with what they hold.
fn rearm(ctx: &Ctx, watched: &Watched, sync: &mut Reconcile, arms: &mut Arms) -> Result<()> {
    for (i, root) in watched.roots().iter().enumerate() {
        let now = folder_id(&root.watch_path);
        if arms.armed[i].is_some() && arms.armed[i] != now {
            arms.armed[i] = None;
            if now.is_none() {
                watched.apply(sync, &[root.target_path()], &mut |c| print_change(ctx, sync.stop, c))?;
            }
        }
        if arms.armed[i].is_none() && now.is_some() && arms.arm(i, root) {
            // Said once the folder is in step again, after what was found in
            // it: a reader acting on it (changing the folder) then does not
            // race the catch-up, which could find a file it had listed
            // closed to it by then.
            watched.apply(sync, &[root.target_path()], &mut |c| print_change(ctx, sync.stop, c))?;
            announce(ctx, "rewatching", &[root.target_path()])?;
        }
    }
    Ok(())
}

fn announce(ctx: &Ctx, event: &'static str, paths: &[PathBuf]) -> Result<()> {
    // As the index spells a folder (a byte that is not UTF-8 as `\xNN`), as
    // the changes' paths, `ingest --json`'s missing_roots and `stats` are:
    // `display()` made it U+FFFD, a folder no reader could find again.
    let paths: Vec<String> = paths.iter().map(|p| crate::store::dir_in_index(p)).collect();
    if ctx.out.json {
        return json_line(Event::Watching { event, paths });
    }
    let what = if event == "watching" { "watching" } else { "watching again" };
    ctx.out.notice(format!("{what} {} (Ctrl-C stops)", one_line(&paths.join(", "))));
    Ok(())
}

/// Prints one change. Once stdout is gone (`kebab watch | head`), nobody is
/// listening: watching stops as after Ctrl-C, the file in hand finished.
fn print_change(ctx: &Ctx, stop: &AtomicBool, change: &Change) {
    let result = if ctx.out.json {
        json_line(Event::Change(change))
    } else {
        match change {
            Change::Skipped { path, reason } => {
                ctx.out.warn(format!("skipped {}: {reason}", one_line(path)));
                Ok(())
            }
            _ => ctx.out.line(change_line(change)).map_err(Into::into),
        }
    };
    if result.is_err() {
        stop.store(true, Ordering::SeqCst);
    }
}

/// `updated notes/x.md (3 chunks) in 40 ms`.
fn change_line(change: &Change) -> String {
    match change {
        Change::Added { path, chunks: n, elapsed_ms } => format!("added {} ({}) in {elapsed_ms} ms", one_line(path), count(n, "chunk")),
        Change::Updated { path, chunks: n, elapsed_ms } => format!("updated {} ({}) in {elapsed_ms} ms", one_line(path), count(n, "chunk")),
        Change::Removed { path, documents, elapsed_ms } => {
            format!("removed {} ({}) in {elapsed_ms} ms", one_line(path), count(documents, "document"))
        }
        Change::Renamed { from, path, .. } => format!("renamed {} → {}", one_line(from), one_line(path)),
        Change::Skipped { path, reason } => format!("skipped {}: {reason}", one_line(path)),
    }
}

/// One compact JSON object on its own line, flushed, for NDJSON readers.
fn json_line(event: Event) -> Result<()> {
    use std::io::Write;
    let text = json_escaped(serde_json::to_string(&EventDoc { schema_version: "watch_event.v1", event })?);
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()?;
    Ok(())
}
