//! Why a file or folder is not read, said with what to do about it: the
//! reasons a run's skips carry (`Skipped`), and the error when a run named
//! only what it could not read (`nothing_ingested`).

use serde::Serialize;

use super::format::Format;
use super::{Summary, in_root};
use crate::error::UserError;
use crate::script::one_line;

/// A file (or JSONL line) that was not indexed, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
    /// A folder (one that could not be listed, or holds no file kebab
    /// reads), whose way out is not a file's.
    #[serde(skip)]
    pub folder: bool,
}

impl Skipped {
    /// Deleted (or moved) between the walk and its reading: a folder removed mid-run makes hundreds.
    pub fn vanished(&self) -> bool {
        !self.folder && self.reason.ends_with(WENT_AWAY)
    }
}

/// The way out for a file gone while kebab ran.
const WENT_AWAY: &str = "it went away while kebab ran (the next `kebab ingest` catches up)";

/// Why a pipe, socket or device is not read: no format reads one.
pub(super) const NOT_REGULAR: &str = "not a regular file (a named pipe, socket or device); kebab reads only regular files";
/// The way out for a file of no known type: `--format` where the caller has it.
pub(super) fn use_format(format_flag: bool) -> String {
    if format_flag {
        format!("use --format {} to read it as one of those", Format::names("|", None))
    } else {
        format!("kebab reads {}: convert it to one of those", Format::extensions_read())
    }
}

/// Why a folder named is skipped: none of its files (`others`, root-relative)
/// is of a format kebab reads (`format_flag`: the caller takes `--format`).
pub(super) fn no_file_read(root_name: &str, others: &[String], format_flag: bool) -> String {
    let extensions = Format::extensions_read();
    if others.is_empty() {
        let none = "none that is not hidden or in workspace.exclude";
        return format!("holds no file ({none}); kebab reads {extensions}: add notes in one of those formats");
    }
    let or_format = format!(", or `--format {}` reads every file in it as that one", Format::names("|", None));
    format!(
        "holds no file kebab reads ({extensions}), only {} ({}); add notes in one of those formats{}",
        crate::script::count(others.len(), "other file"),
        crate::script::first_few(others.iter().map(|rel| in_root(root_name, rel))),
        if format_flag { or_format.as_str() } else { "" }
    )
}

/// A symbolic link that leads back to itself, said alike of one named and one met in a walk.
pub(super) fn link_loop(e: &std::io::Error) -> Option<String> {
    // ELOOP: `ErrorKind::FilesystemLoop` is unstable (Rust 1.95), so its name is compared.
    let looping = format!("{:?}", e.kind()) == "FilesystemLoop";
    looping.then(|| format!("a symbolic link that leads back to itself, a link loop ({e})"))
}

/// What to do about a link that leads nowhere or back to itself; the way out for any file not to read.
pub const FIX_LINK: &str = "fix or remove the link";
const EXCLUDE_IT: &str = "list it in workspace.exclude";

/// Why a file could not be read, with what to do about it.
pub(super) fn cannot_read(e: &std::io::Error, symlink: bool) -> String {
    use std::io::ErrorKind::{NotFound, PermissionDenied};
    match e.kind() {
        NotFound if symlink => format!("cannot read: a symbolic link whose target is gone ({e}); {FIX_LINK}, or {EXCLUDE_IT}"),
        _ if symlink && let Some(what) = link_loop(e) => format!("cannot read: {what}; {FIX_LINK}, or {EXCLUDE_IT}"),
        NotFound => format!("cannot read: {e}; {WENT_AWAY}"),
        PermissionDenied => format!("cannot read: {e}; let this user read it (chmod u+r), or {EXCLUDE_IT}"),
        _ => format!("cannot read: {e}; if it is not a note, {EXCLUDE_IT}"),
    }
}

/// Everything named was skipped (each said why): that is not success. One
/// file's reason is the message, which stands alone (the MCP tool prints no
/// warnings, and `kebab ingest` holds that skip's back), and what the reason
/// says to do (after its last "; ") the hint, so each is said once;
/// `--format` is suggested only where a reason is the file's type, since no
/// format reads a named pipe, a binary file or a folder it may not list.
pub fn nothing_ingested(summary: &Summary) -> Option<UserError> {
    (summary.added + summary.updated + summary.unchanged == 0 && summary.skipped > 0).then(|| {
        if let [one] = summary.skipped_files.as_slice() {
            // The name as warnings print it: a newline in it would split the error's one line.
            let (why, fix) = one.reason.rsplit_once("; ").map_or((one.reason.as_str(), None), |(why, fix)| (why, Some(fix)));
            let e = UserError::new("bad_input", format!("nothing named could be ingested: skipped {}: {why}", one_line(&one.path)));
            return UserError { hint: fix.map(String::from), ..e };
        }
        let message = format!("nothing named could be ingested: {} skipped", summary.skipped);
        let hint = if summary.skipped_files.iter().any(|s| s.reason.ends_with(&use_format(true))) {
            "see the reasons given; `--format md|txt` reads a file whatever its extension"
        } else {
            "see the reasons given"
        };
        UserError::new("bad_input", message).with_hint(hint)
    })
}
