//! The per-path work behind `kebab watch`: given the paths one batch of file
//! events named, bring the index in step with each of them — a saved file is
//! re-chunked and re-embedded alone, a deleted one removed, a renamed one
//! (same bytes at a new path) moved with its documents, chunks and vectors
//! kept, and a folder reconciled with what is on disk. Editors' swap and temp
//! files, hidden folders and `workspace.exclude` are ignored.
//!
//! Every file is its own transaction, so a REPL or an `ask` in another
//! process sees each change as soon as it lands and never waits on the write
//! lock for longer than one file takes. Watching the disk (notify, the
//! debounce, Ctrl-C) is the command's job; this module only reconciles.

use std::collections::{HashMap, HashSet};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Instant, SystemTime};

use anyhow::Result;
use globset::GlobSet;
use serde::Serialize;

use super::chunk::ChunkLimits;
use super::remembered::{self, MissingRoot};
use super::skip::cannot_read;
use super::unlisted::{self, Unlisted};
use super::{
    Candidate, FileError, FormatChoice, Target, build_excludes, format_of, holder, in_root, place_target, relative, resolve_targets, walk,
};
use crate::config::Config;
use crate::embed::Embedder;
use crate::store::{SourcePlace, SourceRow, Store, dir_on_disk};

/// One watched folder (or file), tied to its root in the index.
#[derive(Debug, Clone)]
pub struct WatchRoot {
    pub root_id: i64,
    /// The root's name, the first component of its documents' paths.
    pub name: String,
    pub root_dir: PathBuf,
    /// Root-relative, '/'-separated; empty for the whole root.
    scope: String,
    /// What to hand the file watcher: the folder itself, or for a single
    /// file its folder (editors save by renaming a new file over the old one,
    /// which a watch on the file itself would lose).
    pub watch_path: PathBuf,
    /// Whether `watch_path` is watched with everything below it.
    pub recursive: bool,
    /// A root remembered for the files named in it (no PATH given): only those files are watched, in their
    /// folder alone; the folder stands for them, and a file beside them is passed over.
    named_files: bool,
}

impl WatchRoot {
    /// The watched folder or file itself.
    pub fn target_path(&self) -> PathBuf {
        if self.scope.is_empty() { self.root_dir.clone() } else { self.root_dir.join(&self.scope) }
    }
}

/// What one change did, as `kebab watch` reports it (`watch_event.v1`).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Change {
    Added { path: String, chunks: usize, elapsed_ms: u64 },
    Updated { path: String, chunks: usize, elapsed_ms: u64 },
    Removed { path: String, documents: usize, elapsed_ms: u64 },
    /// Same bytes at a new path: the documents moved, nothing re-embedded.
    Renamed { from: String, path: String, elapsed_ms: u64 },
    /// A file that could not be indexed (or embedded), and why.
    Skipped { path: String, reason: String },
}

/// What reconciling needs besides the paths: the database, the settings, the
/// embedder (none when not configured), the flag Ctrl-C sets, checked
/// between files so the one in hand is always finished, and the skips told.
pub struct Reconcile<'a> {
    pub store: &'a mut Store,
    pub cfg: &'a Config,
    pub embedder: Option<&'a dyn Embedder>,
    pub stop: &'a AtomicBool,
    pub told: Told,
}

/// Each file skipped, or folder that could not be listed, by path, with why and its (mtime, size)
/// then: its folder read again (a folder event, a folder back) finds the same, told once until it
/// changes or is read.
#[derive(Default)]
pub struct Told(HashMap<String, (String, Stamp)>);
/// A file's or folder's mtime and size, when it could be looked at.
type Stamp = Option<(Option<SystemTime>, u64)>;

impl Told {
    /// Whether the skip of `path` (on disk `abs`) for `reason` is news: not told of it as it is now.
    fn news(&mut self, path: &str, reason: &str, abs: &Path) -> bool {
        let stamp = std::fs::metadata(abs).ok().map(|m| (m.modified().ok(), m.len()));
        let told = self.0.insert(path.to_string(), (reason.to_string(), stamp));
        !told.is_some_and(|(why, then)| why == reason && then == stamp)
    }

    /// Forgets what was told at or below `path` but `met` (what a walk of it found again): the
    /// rest is read now or gone, and skipped once more is news.
    fn forget(&mut self, path: &str, met: &HashSet<String>) {
        self.0.retain(|told, _| !in_scope(told, path) || met.contains(told));
    }
}

/// The folders and files being watched.
pub struct Watched {
    roots: Vec<WatchRoot>,
    excludes: GlobSet,
}

/// A file to index and the root it belongs to (an index into `roots`).
struct Present {
    root: usize,
    cand: Candidate,
}

/// Whether `path` itself is a symbolic link, wherever it leads.
fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Whether `path` (below `root_dir`) is a symlink to a folder or lies
/// below one: `kebab ingest` walks no folder symlink (no loops, nothing from
/// outside the folder), so the watcher follows none either. A symlink to a
/// file is read through, as ingest reads it.
fn through_folder_link(path: &Path, root_dir: &Path) -> bool {
    if is_link(path) && path.is_dir() {
        return true;
    }
    path.ancestors().skip(1).take_while(|a| a.starts_with(root_dir) && *a != root_dir).any(is_link)
}

impl Watched {
    /// The folders (or files) in `paths`, each tied to its root in the
    /// index, created if new. With no paths, the folders kebab remembers
    /// (`workspace.roots`, else the roots indexed): one of those that is not
    /// there now is left out and returned apart, its documents kept, as a
    /// bare `kebab ingest` does; a path named that is not there is an error.
    pub fn resolve(store: &mut Store, cfg: &Config, config_dir: &Path, paths: &[PathBuf]) -> Result<(Watched, Vec<MissingRoot>)> {
        let (targets, missing) = if paths.is_empty() {
            let (targets, gone) = remembered::targets(store, cfg, config_dir)?;
            (targets, remembered::kept(store, gone)?)
        } else {
            (resolve_targets(store, cfg, config_dir, paths)?, Vec::new())
        };
        let mut roots = Vec::new();
        for target in targets {
            let (root_id, name, placed) = place_target(store, holder(store, &target)?, &mut |_| {})?;
            let start = placed.start();
            let folder = start.is_dir();
            let named_files = placed.files.is_some();
            let watch_path = if folder { start } else { start.parent().map(Path::to_path_buf).unwrap_or(start) };
            let (scope, recursive) = (placed.scope_key(), folder && !named_files);
            roots.push(WatchRoot { root_id, name, scope, root_dir: placed.root_dir, watch_path, recursive, named_files });
        }
        Ok((Watched { roots, excludes: build_excludes(&cfg.workspace.exclude)? }, missing))
    }

    pub fn roots(&self) -> &[WatchRoot] {
        &self.roots
    }

    /// Brings the index in step with each of `paths`: files, folders (every
    /// file below them, and what the index holds there that is gone), or paths
    /// that no longer exist. `on` hears of every change; unchanged files say
    /// nothing. Stops between files once `sync.stop` is set.
    pub fn apply(&self, sync: &mut Reconcile, paths: &[PathBuf], on: &mut dyn FnMut(&Change)) -> Result<()> {
        let mut present: Vec<Present> = Vec::new();
        let mut gone: Vec<(usize, SourceRow)> = Vec::new();
        let mut listed: HashSet<(usize, String)> = HashSet::new();
        let mut unread: Vec<Change> = Vec::new();
        for (root, rel, path) in self.located(sync.store, paths)? {
            let path = &path;
            match std::fs::metadata(path) {
                Ok(m) if m.is_dir() => {
                    unread.extend(self.reconcile_dir(sync.store, &mut sync.told, root, &rel, &mut present, &mut gone)?);
                }
                Ok(m) if m.is_file() => {
                    if let Some(format) = format_of(path, FormatChoice::Auto) {
                        let cand = Candidate { abs: path.clone(), rel, format, bytes: m.len() };
                        present.push(Present { root, cand });
                    }
                }
                Ok(_) => {}
                // A note's link leading nowhere or back to itself is told as `kebab ingest` tells it, not
                // as a folder that could not be listed; one to nothing goes as its target did.
                Err(error) if is_link(path) => {
                    let r = &self.roots[root];
                    let at = in_root(&r.name, &rel);
                    let reason = cannot_read(&error, true);
                    if format_of(path, FormatChoice::Auto).is_some() && sync.told.news(&at, &reason, path) {
                        unread.push(Change::Skipped { path: at, reason });
                    }
                    if error.kind() == ErrorKind::NotFound {
                        let held = sync.store.sources_under(r.root_id, &rel)?.into_iter();
                        gone.extend(held.filter(|s| in_scope(&s.rel_path, &r.scope)).map(|s| (root, s)));
                    }
                }
                // Not known to be gone (a folder above it may not be entered): kept.
                Err(error) if !matches!(error.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                    unread.push(self.kept(sync.store, root, Unlisted { rel, error })?);
                }
                Err(_) => {
                    let r = &self.roots[root];
                    // Gone: what was told of it (or below it) is dropped, not kept for ever.
                    sync.told.forget(&in_root(&r.name, &rel), &HashSet::new());
                    for source in sync.store.sources_under(r.root_id, &rel)? {
                        if in_scope(&source.rel_path, &r.scope) {
                            gone.push((root, source));
                        }
                    }
                }
            }
        }
        // One event per file even when a batch names it twice (a file and its folder).
        present.retain(|p| listed.insert((p.root, p.cand.rel.clone())));
        gone.retain(|(root, s)| listed.insert((*root, s.rel_path.clone())));
        for change in &unread {
            on(change);
        }

        let mut left = Vec::new();
        for p in present {
            if sync.stop.load(Ordering::SeqCst) {
                return Ok(());
            }
            match self.try_rename(sync.store, &p, &mut gone)? {
                Some(change) => on(&change),
                None => left.push(p),
            }
        }
        for (root, source) in gone {
            if sync.stop.load(Ordering::SeqCst) {
                return Ok(());
            }
            let started = Instant::now();
            let r = &self.roots[root];
            let documents = sync.store.prune(r.root_id, &source.rel_path, &HashSet::new())?;
            let path = format!("{}/{}", r.name, source.rel_path);
            on(&Change::Removed { path, documents, elapsed_ms: started.elapsed().as_millis() as u64 });
        }
        for p in left {
            if sync.stop.load(Ordering::SeqCst) {
                return Ok(());
            }
            for change in self.index_file(sync, &p)? {
                on(&change);
            }
        }
        Ok(())
    }

    /// Each of `paths` in a watched scope, with its root and root-relative path (`locate`). In the folder of
    /// a root of files named, the folder stands for those files (the catch-up, the folder back) and a file
    /// the index does not hold there is passed over.
    fn located(&self, store: &Store, paths: &[PathBuf]) -> Result<Vec<(usize, String, PathBuf)>> {
        let mut found = Vec::new();
        for path in paths {
            let Some((root, rel)) = self.locate(path) else { continue };
            let r = &self.roots[root];
            if !r.named_files {
                found.push((root, rel, path.clone()));
            } else if rel.is_empty() {
                for held in store.sources_under(r.root_id, "")? {
                    let abs = r.root_dir.join(dir_on_disk(&held.rel_path));
                    found.push((root, held.rel_path, abs));
                }
            } else if store.source_hash(r.root_id, &rel)?.is_some() {
                found.push((root, rel, path.clone()));
            }
        }
        Ok(found)
    }

    /// The root a path belongs to and its root-relative path, or `None` when
    /// it is outside every watched scope or is a file to ignore. A folder
    /// above a watched scope (the watched folder's parent, for a single file)
    /// stands for the scope itself.
    fn locate(&self, path: &Path) -> Option<(usize, String)> {
        for (i, r) in self.roots.iter().enumerate() {
            if !path.starts_with(&r.root_dir) {
                continue;
            }
            let rel = relative(path, &r.root_dir);
            // The folders below one of named files are not watched.
            if r.named_files && rel.contains('/') {
                continue;
            }
            let rel = if in_scope(&rel, &r.scope) {
                rel
            } else if in_scope(&r.scope, &rel) && path.is_dir() {
                r.scope.clone()
            } else {
                continue;
            };
            if self.ignored(&rel, path.is_dir()) || through_folder_link(path, &r.root_dir) {
                return None;
            }
            return Some((i, rel));
        }
        None
    }

    /// Editors' swap, backup and temp files, anything in a hidden folder or
    /// hidden itself, and what `workspace.exclude` lists.
    fn ignored(&self, rel: &str, is_dir: bool) -> bool {
        if rel.is_empty() {
            return false;
        }
        let name = rel.rsplit('/').next().unwrap_or(rel);
        let editor_file = name.ends_with('~')
            || name == "4913"
            || [".swp", ".swo", ".swx", ".tmp"].iter().any(|ext| name.ends_with(ext));
        let hidden = rel.split('/').any(|c| c.starts_with('.'));
        // Folder patterns such as `**/.git/**` match what is inside a folder.
        let excluded = self.excludes.is_match(rel) || (is_dir && self.excludes.is_match(format!("{rel}/x")));
        editor_file || hidden || excluded
    }

    /// A folder: every file below it to index, and every source the index
    /// holds below it whose file is no longer on disk. Returns the folders
    /// below it that could not be listed (what the index holds there stays),
    /// those not told of as they are now (`Told`).
    fn reconcile_dir(
        &self,
        store: &Store,
        told: &mut Told,
        root: usize,
        rel: &str,
        present: &mut Vec<Present>,
        gone: &mut Vec<(usize, SourceRow)>,
    ) -> Result<Vec<Change>> {
        let r = &self.roots[root];
        let target = Target { root_dir: r.root_dir.clone(), scope: PathBuf::from(rel), files: None };
        let found = walk(&target, &self.excludes, FormatChoice::Auto, false);
        let mut on_disk: HashSet<String> = found.present.into_iter().collect();
        let mut unread = Vec::new();
        // The files found are told of or forgotten as they are read (`index_file`).
        let mut met: HashSet<String> = found.candidates.iter().map(|c| in_root(&r.name, &c.rel)).collect();
        // Links leading nowhere or back to themselves, told as `kebab ingest` tells them; a file gone
        // since it was listed is an event of its own.
        for skip in found.errors.into_iter().filter(|s| !s.vanished()) {
            let path = in_root(&r.name, &skip.path);
            if !self.ignored(&skip.path, false) && told.news(&path, &skip.reason, &r.root_dir.join(dir_on_disk(&skip.path))) {
                unread.push(Change::Skipped { path: path.clone(), reason: skip.reason });
            }
            met.insert(path);
        }
        for folder in found.unlisted {
            let ignored = self.ignored(&folder.rel, true);
            let abs = r.root_dir.join(&folder.rel);
            let (skip, sources) = unlisted::keep(store, r.root_id, folder)?;
            on_disk.extend(sources);
            let path = in_root(&r.name, &skip.path);
            if !ignored && told.news(&path, &skip.reason, &abs) {
                unread.push(Change::Skipped { path: path.clone(), reason: skip.reason });
            }
            met.insert(path);
        }
        told.forget(&in_root(&r.name, rel), &met);
        for cand in found.candidates {
            on_disk.insert(cand.rel.clone());
            if !self.ignored(&cand.rel, false) {
                present.push(Present { root, cand });
            }
        }
        for source in store.sources_under(r.root_id, rel)? {
            if !on_disk.contains(&source.rel_path) && in_scope(&source.rel_path, &r.scope) {
                gone.push((root, source));
            }
        }
        Ok(unread)
    }

    /// A path that could not be looked at, reported as skipped; the index keeps what it holds there.
    fn kept(&self, store: &Store, root: usize, what: Unlisted) -> Result<Change> {
        let r = &self.roots[root];
        let (skip, _) = unlisted::keep(store, r.root_id, what)?;
        Ok(Change::Skipped { path: in_root(&r.name, &skip.path), reason: skip.reason })
    }

    /// A file the index does not hold yet whose bytes are those of a source
    /// that just went away (of the same format) is that source, renamed: its
    /// documents move, keeping their chunks and vectors.
    fn try_rename(&self, store: &mut Store, p: &Present, gone: &mut Vec<(usize, SourceRow)>) -> Result<Option<Change>> {
        if gone.is_empty() {
            return Ok(None);
        }
        let r = &self.roots[p.root];
        if store.source_hash(r.root_id, &p.cand.rel)?.is_some() {
            return Ok(None);
        }
        let started = Instant::now();
        let Ok(bytes) = std::fs::read(&p.cand.abs) else { return Ok(None) };
        let hash = blake3::hash(&bytes).to_hex().to_string();
        let Some(at) = gone.iter().position(|(_, s)| s.content_hash == hash && s.format == p.cand.format.name()) else {
            return Ok(None);
        };
        let (old_root, old) = gone.remove(at);
        let o = &self.roots[old_root];
        let from = SourcePlace { root_id: o.root_id, root_name: &o.name, rel_path: &old.rel_path };
        let to = SourcePlace { root_id: r.root_id, root_name: &r.name, rel_path: &p.cand.rel };
        store.move_source(&from, &to)?;
        Ok(Some(Change::Renamed {
            from: format!("{}/{}", o.name, old.rel_path),
            path: format!("{}/{}", r.name, p.cand.rel),
            elapsed_ms: started.elapsed().as_millis() as u64,
        }))
    }

    /// Indexes one file the way `kebab ingest` does (unchanged bytes are
    /// passed over), then embeds its new chunks. The JSONL lines left out
    /// follow as skipped `FILE:LINE`, as `kebab ingest` reports them, even
    /// when no record changed (a line just broken is the news). A skip told
    /// of the file as it is now is not told again (`Told`).
    fn index_file(&self, sync: &mut Reconcile, p: &Present) -> Result<Vec<Change>> {
        let started = Instant::now();
        let r = &self.roots[p.root];
        let path = format!("{}/{}", r.name, p.cand.rel);
        let result = super::ingest_file(sync.store, r.root_id, &r.name, &p.cand, sync.cfg, &ChunkLimits::default(), false);
        let file = match result {
            Ok(file) => file,
            Err(FileError::Skip(reason)) => {
                let news = sync.told.news(&path, &reason, &p.cand.abs);
                return Ok(if news { vec![Change::Skipped { path, reason }] } else { Vec::new() });
            }
            Err(FileError::Fatal(e)) => return Err(e.context(format!("indexing {path}"))),
        };
        sync.told.0.remove(&path);
        let bad_lines: Vec<Change> = file
            .bad_lines
            .into_iter()
            .map(|bad| Change::Skipped { path: format!("{path}:{}", bad.line), reason: bad.reason })
            .collect();
        let outcome = file.outcome;
        if outcome.added + outcome.updated + outcome.removed == 0 {
            return Ok(bad_lines);
        }
        let change = if let Some(model) = sync.embedder
            && let Err(e) = super::embed::embed_missing(sync.store, model, false, &mut |_, _| {})
        {
            // The text is indexed; vectors follow on the next change or ingest.
            Change::Skipped { path, reason: format!("indexed, but not embedded: {e:#}") }
        } else {
            let chunks = outcome.chunks_written;
            let elapsed_ms = started.elapsed().as_millis() as u64;
            if outcome.added > 0 && outcome.updated == 0 {
                Change::Added { path, chunks, elapsed_ms }
            } else {
                Change::Updated { path, chunks, elapsed_ms }
            }
        };
        Ok(std::iter::once(change).chain(bad_lines).collect())
    }
}

/// Whether `rel` is `scope` or below it ("" holds everything).
pub(super) fn in_scope(rel: &str, scope: &str) -> bool {
    scope.is_empty() || rel == scope || rel.strip_prefix(scope).is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Where each path lands: `root:rel`, or `None` when it is ignored.
    fn located(w: &Watched, paths: &[&Path]) -> BTreeMap<String, Option<String>> {
        paths
            .iter()
            .map(|p| (p.display().to_string(), w.locate(p).map(|(i, rel)| format!("{}:{rel}", w.roots[i].name))))
            .collect()
    }

    fn watched(dir: &Path, scope: &str) -> Watched {
        let root = WatchRoot {
            root_id: 1,
            name: "notes".into(),
            root_dir: dir.to_path_buf(),
            scope: scope.into(),
            watch_path: dir.to_path_buf(),
            recursive: true,
            named_files: false,
        };
        Watched { roots: vec![root], excludes: build_excludes(&["**/drafts/**".to_string()]).unwrap() }
    }

    #[test]
    fn editor_swap_and_temp_files_hidden_folders_and_excludes_are_ignored() {
        let w = watched(Path::new("/n"), "");
        for ignored in ["a.md.swp", ".a.md.swp", "a.md~", ".#a.md", "4913", "a.tmp", ".git/config", "x/.obsidian/a.md", "drafts/a.md"] {
            assert!(w.ignored(ignored, false), "{ignored} should be ignored");
        }
        for kept in ["a.md", "sub/b.txt", "data.jsonl", "4913.md"] {
            assert!(!w.ignored(kept, false), "{kept} should be kept");
        }
    }

    #[test]
    fn paths_outside_the_watched_scope_belong_to_no_root() {
        let w = watched(Path::new("/n"), "sub");
        let got = located(&w, &[Path::new("/n/sub/a.md"), Path::new("/n/other/a.md"), Path::new("/elsewhere/a.md")]);
        assert_eq!(got["/n/sub/a.md"].as_deref(), Some("notes:sub/a.md"));
        assert_eq!(got["/n/other/a.md"], None);
        assert_eq!(got["/elsewhere/a.md"], None);
    }
}
