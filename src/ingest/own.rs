//! kebab's own data is never a note: the index (`kebab.db` and the journals
//! SQLite keeps beside it) and the data folder's `models` folder (where
//! `kebab models install` puts the embedding model) are left out of every
//! walk, and a folder named that is the data folder, or inside it, is said to be so. Otherwise `kebab
//! ingest DATA_DIR` advised `--format txt`, which then indexed `kebab.db-wal`
//! (and the embedding model's JSON files) as notes.

use std::path::{Path, PathBuf};

use super::watch::in_scope;
use super::{Walk, relative};
use crate::store::{Store, database_files};

/// Why a folder named inside kebab's data folder is skipped, and what to do.
pub(super) const DATA_DIR: &str =
    "kebab's own data (the index, kebab.db, and the model files in its folder), not notes; name the folder your notes are in";

/// The data folder, and the index's files and the model folder in it (canonical).
pub(super) struct Own {
    dir: PathBuf,
    paths: Vec<PathBuf>,
}

impl Own {
    pub(super) fn of(store: &Store) -> Own {
        let parent = store.path().parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        // The store is open, so its folder is there; a path left as given still compares right when it is absolute.
        let dir = std::fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
        let mut paths = database_files(&dir.join(store.path().file_name().unwrap_or_default())).to_vec();
        paths.push(dir.join("models"));
        Own { dir, paths }
    }

    /// Whether `path` (canonical) is the data folder or lies inside it.
    pub(super) fn holds(&self, path: &Path) -> bool {
        path.starts_with(&self.dir)
    }

    /// `walk` without kebab's own files, whether read (`--format txt`), named or merely present.
    pub(super) fn leave_out(&self, mut walk: Walk, root_dir: &Path) -> Walk {
        // Root-relative scopes of kebab's files; "" (all of it) for a folder inside the model folder.
        let scope = |p: &PathBuf| match root_dir.starts_with(p) {
            true => Some(String::new()),
            false => p.starts_with(root_dir).then(|| relative(p, root_dir)),
        };
        let own: Vec<String> = self.paths.iter().filter_map(scope).collect();
        let mine = |rel: &str| own.iter().any(|scope| in_scope(rel, scope));
        walk.candidates.retain(|c| !mine(&c.rel));
        walk.errors.retain(|s| !mine(&s.path));
        walk.present.retain(|rel| !mine(rel));
        walk
    }
}
