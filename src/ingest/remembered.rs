//! What `kebab ingest` walks when no PATH is given: the folders kebab
//! remembers (`workspace.roots`, or when that is empty the roots already
//! indexed: a folder named whole is walked, one where only files were named
//! has those files read again), and what becomes of one that is not there now — an unmounted
//! disk, a folder moved away. It does not stop the others: its documents are
//! kept, and still found, and the run reports it; with `--prune` they go,
//! with the root itself. `kebab watch` with no PATH treats it the same way:
//! warned about, its documents kept, the others watched. A path named on the
//! command line is another matter: one that is missing stays an error
//! (`resolve_targets`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::Serialize;

use globset::GlobSet;

use super::{FormatChoice, Summary, Target, Walk, expand_root, format_of, link_loop, locate, outermost, relative, target_of, walk};
use crate::config::Config;
use crate::error::UserError;
use crate::store::{Store, dir_on_disk};

/// A remembered folder this run could not walk, and its documents in the index.
#[derive(Debug, Clone, Serialize)]
pub struct MissingRoot {
    pub path: String,
    /// Its documents in the index: kept (and counted as `missing`) by a
    /// plain run, removed by `--prune`.
    pub documents: usize,
    /// Why it could not be walked (`No such file or directory (os error 2)`).
    pub reason: String,
    #[serde(skip)]
    pub why: Missing,
    /// False for a root that remembers only the files named in it (`roots.whole_folder`): the
    /// warning then says so, as it cannot call it an indexed folder.
    #[serde(skip)]
    pub whole_folder: bool,
}

/// What is wrong with a remembered folder, which says what to do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// Nothing is there at all: only such a folder is forgotten by `--prune`.
    NotThere,
    /// A symbolic link that leads back to itself: the link is to fix.
    LinkLoop,
    /// There, but this process may not enter it.
    Unreadable,
}

/// A remembered folder that could not be resolved, and why.
pub(super) struct Gone {
    path: PathBuf,
    error: std::io::Error,
    /// Walked whole (a folder named, or in workspace.roots), not only for the files named in it.
    whole_folder: bool,
}

/// No PATH, no `workspace.roots` and no root in the index.
pub fn nothing_to_ingest() -> UserError {
    UserError::new("bad_input", "nothing to ingest: no PATH given, workspace.roots is empty and nothing is indexed yet")
        .with_hint("run `kebab ingest PATH...`, or list your notes folders in workspace.roots (`kebab config path` shows the file)")
}

/// The folders to walk, and apart from them the ones that are gone.
pub(super) fn targets(store: &Store, cfg: &Config, config_dir: &Path) -> Result<(Vec<Target>, Vec<Gone>)> {
    let list: Vec<(PathBuf, Option<Vec<PathBuf>>)> = if cfg.workspace.roots.is_empty() {
        let mut list = Vec::new();
        for r in store.roots()? {
            // Only files in it were named: those are what it holds, not the files beside them.
            let held = (!r.whole_folder).then(|| store.sources_under(r.id, "")).transpose()?;
            let files = held.map(|held| held.iter().map(|s| dir_on_disk(&s.rel_path)).collect());
            list.push((r.dir(), files));
        }
        list
    } else {
        cfg.workspace.roots.iter().map(|p| (expand_root(p, config_dir), None)).collect()
    };
    if list.is_empty() {
        return Err(nothing_to_ingest().into());
    }
    let (mut targets, mut gone) = (Vec::new(), Vec::new());
    for (p, files) in list {
        match locate(&p) {
            Ok(abs) => targets.push(Target { files, ..target_of(abs) }),
            Err(error) => gone.push(Gone { path: resolved(&p), error, whole_folder: files.is_none() }),
        }
    }
    Ok((outermost(targets), gone))
}

/// What the walk of a root remembered for the files named in it finds: each of those files that is still
/// there, read as a file named is; nothing beside them. One gone is not found, so it counts as missing (removed
/// by `--prune`), as a file deleted from a folder walked does. One indexed under `--format` whose extension
/// tells no type is kept, not read, as in a folder walked.
pub(super) fn walk_named(target: &Target, files: &[PathBuf], excludes: &GlobSet, format: FormatChoice) -> Walk {
    let mut found = Walk::default();
    for file in files {
        let one = Target { root_dir: target.root_dir.clone(), scope: file.clone(), files: None };
        let gone = std::fs::symlink_metadata(one.start())
            .is_err_and(|e| matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory));
        if gone {
            continue;
        }
        if format_of(&one.start(), format).is_none() {
            found.present.push(one.scope_key());
            continue;
        }
        let Walk { candidates, errors, unlisted, present } = walk(&one, excludes, format, false);
        found.candidates.extend(candidates);
        found.errors.extend(errors);
        found.unlisted.extend(unlisted);
        found.present.extend(present);
    }
    found
}

/// Counts the documents of each gone folder as missing and keeps them, or
/// with `prune`, when nothing is there at all, removes them (and the root,
/// when the folder was a whole root).
pub(super) fn settle(store: &mut Store, gone: Vec<Gone>, prune: bool, summary: &mut Summary) -> Result<()> {
    for gone in gone {
        let (mut missing, place) = describe(store, gone)?;
        if prune
            && missing.why == Missing::NotThere
            && let Some((id, scope)) = place
        {
            let removed = if scope.is_empty() { store.forget_root(id)? } else { store.prune(id, &scope, &HashSet::new())? };
            missing.documents = removed;
            summary.removed += missing.documents;
            summary.forgotten_roots.push(missing);
            continue;
        }
        summary.missing += missing.documents;
        summary.missing_roots.push(missing);
    }
    Ok(())
}

/// The gone folders as a run that prunes nothing reports them, their
/// documents kept: what `kebab watch` warns about and leaves alone.
pub(super) fn kept(store: &Store, gone: Vec<Gone>) -> Result<Vec<MissingRoot>> {
    gone.into_iter().map(|g| describe(store, g).map(|(missing, _)| missing)).collect()
}

/// A gone folder as reported, its documents counted, and where the index
/// holds them: the root it is, or the one it was a folder of (a root in the
/// config may be a subfolder of an ingested one), and its scope there.
fn describe(store: &Store, Gone { path, error, whole_folder }: Gone) -> Result<(MissingRoot, Option<(i64, String)>)> {
    let path_text = crate::store::dir_in_index(&path);
    let (why, reason) = match link_loop(&error) {
        Some(looping) => (Missing::LinkLoop, looping),
        None if error.kind() == std::io::ErrorKind::NotFound => (Missing::NotThere, error.to_string()),
        None => (Missing::Unreadable, error.to_string()),
    };
    let mut missing = MissingRoot { path: path_text, documents: 0, reason, why, whole_folder };
    let place = store.root_containing(&path)?.map(|(id, _, dir)| (id, relative(&path, &dir)));
    if let Some((id, scope)) = &place {
        missing.documents = store.count_missing(*id, scope, &HashSet::new())?;
    }
    Ok((missing, place))
}

/// For a path named that is not there (`error`), how many documents the
/// index still holds from it and the folder they were indexed under.
pub(super) fn still_held(store: &Store, path: &Path, error: &std::io::Error) -> Result<Option<(usize, PathBuf)>> {
    if !matches!(error.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory) {
        return Ok(None);
    }
    let path = resolved(&std::path::absolute(path)?);
    let Some((id, _, dir)) = store.root_containing(&path)? else { return Ok(None) };
    let n = store.count_missing(id, &relative(&path, &dir), &HashSet::new())?;
    Ok((n > 0).then_some((n, dir)))
}

/// `path` with its longest existing ancestor resolved (symlinks, `..`), so a
/// folder that is gone still compares equal to the root it was.
fn resolved(path: &Path) -> PathBuf {
    let mut names = Vec::new();
    let mut at = path;
    loop {
        if let Ok(abs) = std::fs::canonicalize(at) {
            return names.iter().rev().fold(abs, |p, name| p.join(name));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                names.push(name.to_owned());
                at = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}
