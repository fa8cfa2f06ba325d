//! A folder the walk could not list (`chmod 000`, an I/O error, a disk going
//! away mid-walk) looks empty, yet its files are still on disk: like a file
//! that could not be read, what the index holds under it is kept, never
//! pruned — by `kebab ingest --prune` or by `kebab watch` — and the folder is
//! reported as skipped, with how many documents were kept and what to do.

use std::collections::HashSet;

use anyhow::Result;

use super::Skipped;
use crate::store::Store;

/// A root-relative path the walk could not look into ("" for the root itself), and why.
pub(super) struct Unlisted {
    pub rel: String,
    pub error: std::io::Error,
}

/// What the index holds under `folder`, to count as still on disk (the
/// root-relative paths of its sources), and the skip that reports the folder
/// (its path still root-relative, as the walk's other skips are).
pub(super) fn keep(store: &Store, root_id: i64, folder: Unlisted) -> Result<(Skipped, Vec<String>)> {
    let sources: Vec<String> = store.sources_under(root_id, &folder.rel)?.into_iter().map(|s| s.rel_path).collect();
    // Every document under it: what a prune would have removed.
    let kept = match store.count_missing(root_id, &folder.rel, &HashSet::new())? {
        0 => "nothing is indexed under it".to_string(),
        1 => "its 1 indexed document is kept, not pruned".to_string(),
        n => format!("its {n} indexed documents are kept, not pruned"),
    };
    let todo = if folder.error.kind() == std::io::ErrorKind::PermissionDenied {
        "let this user list and enter it (chmod u+rx) to index what it holds"
    } else {
        "what it holds is indexed once it can be read"
    };
    let reason = format!("cannot read: {}; {kept}; {todo}", folder.error);
    Ok((Skipped { path: folder.rel, reason, folder: true }, sources))
}
