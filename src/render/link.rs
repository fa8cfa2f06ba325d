//! Clickable citations: on a terminal, a citation's `path:start-end` is an
//! OSC-8 hyperlink to the file, `ESC]8;;file:///abs/path#L<start> ESC\ text
//! ESC]8;; ESC\`. The `#L<line>` fragment is the convention of editors'
//! terminals and code hosts (VS Code opens the file at that line; terminals
//! that know no fragment open the file); a PDF page is `#page=N`, as PDF
//! viewers read it. The path is percent-encoded, so
//! nothing from a note's name reaches the terminal raw; the visible text is
//! escaped as every other path is (`script::one_line`).
//!
//! Whether links are drawn is decided with the colours (`Output::hyperlinks`):
//! never with `--json`, off a terminal, with `--color never` or `NO_COLOR`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::search::{CitationKind, place};
use crate::store::Store;

/// What the terminal decision reads, so it can be tested without one.
#[derive(Debug, Clone, Copy)]
pub struct Terminal {
    /// stdout is a terminal.
    pub stdout: bool,
    /// `NO_COLOR` is set (to anything but the empty string).
    pub no_color: bool,
    /// `TERM=dumb`: a terminal that understands no escape sequences.
    pub dumb: bool,
}

impl Terminal {
    pub fn detect() -> Terminal {
        use std::io::IsTerminal;
        Terminal {
            stdout: std::io::stdout().is_terminal(),
            no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
            dumb: std::env::var_os("TERM").is_some_and(|t| t == "dumb"),
        }
    }
}

/// The ingested folders a citation path (`ROOT/rel/path`) resolves
/// against, read when the command opens its database (`Ctx::create_store`).
/// Carried by the command's `Output`, so every printer (ask, the REPL,
/// search, sessions) can link without the roots passed down to it; the
/// copies of one `Output` share what was read.
#[derive(Debug, Clone, Default)]
pub struct Roots(Arc<Mutex<Vec<Root>>>);

impl Roots {
    /// Reads the roots of the database just opened, in place of any read
    /// before: the REPL opens a database replaced under it again, whose
    /// folders may be others. Without them paths print unlinked.
    pub fn remember(&self, store: &Store) {
        *self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = roots(store).unwrap_or_default();
    }

    /// The file behind a citation path, when its root was read.
    pub fn file_of(&self, doc_path: &str) -> Option<PathBuf> {
        file_of(doc_path, &self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }
}

/// An ingested folder: the name citation paths start with, and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Root {
    pub name: String,
    pub path: PathBuf,
}

/// The database's roots.
pub fn roots(store: &Store) -> anyhow::Result<Vec<Root>> {
    Ok(store.roots()?.into_iter().map(|r| Root { path: r.dir(), name: r.name }).collect())
}

/// The file on disk behind a citation path `ROOT/rel/path` (a JSONL line's
/// `ROOT/file.jsonl#ID` is the file), when `ROOT` is one of `roots`. Each
/// name is the one on disk: a stray byte the index spells `\xNN` is that byte.
pub fn file_of(doc_path: &str, roots: &[Root]) -> Option<PathBuf> {
    let (root, rel) = doc_path.split_once('/')?;
    let rel = crate::search::record_file(rel).unwrap_or(rel);
    let base = &roots.iter().find(|r| r.name == root)?.path;
    Some(rel.split('/').fold(base.clone(), |p, part| p.join(crate::store::name_on_disk(part))))
}

/// `file:///abs/path#L<line>` (`#page=N` for a PDF) from the path's own
/// bytes, every byte outside the unreserved set, `/` and `:` percent-encoded:
/// a backslash is part of a Unix name, and a byte that is not UTF-8 stays
/// that byte (`%E9`), so the link opens the very file.
pub fn file_url(file: &Path, kind: CitationKind, at: u32) -> String {
    use std::os::unix::ffi::OsStrExt;
    let bytes = file.as_os_str().as_bytes();
    let mut url = String::from("file://");
    if !bytes.starts_with(b"/") {
        url.push('/');
    }
    for &b in bytes {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' | b':' => url.push(b as char),
            _ => url.push_str(&format!("%{b:02X}")),
        }
    }
    match kind {
        CitationKind::Line => url.push_str(&format!("#L{at}")),
        CitationKind::Page => url.push_str(&format!("#page={at}")),
    }
    url
}

/// `text` as an OSC-8 hyperlink to `url`.
pub fn hyperlink(text: &str, url: &str) -> String {
    format!("\x1b]8;;{url}\x1b\\{text}\x1b]8;;\x1b\\")
}

/// `path:start-end` (`paper.pdf p. 4`) as printed, a hyperlink to `file` at
/// `start` when given.
pub fn location(path: &str, start: u32, end: u32, file: Option<&Path>) -> String {
    let text = place(path, start, end);
    match file {
        Some(f) => hyperlink(&text, &file_url(f, CitationKind::of_path(path), start)),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots() -> Vec<Root> {
        vec![Root { name: "notes".into(), path: PathBuf::from("/home/me/my notes") }]
    }

    #[test]
    fn a_citation_path_resolves_under_its_root() {
        assert_eq!(file_of("notes/a/b.md", &roots()), Some(PathBuf::from("/home/me/my notes/a/b.md")));
        assert_eq!(file_of("notes/set.jsonl#doc-7", &roots()), Some(PathBuf::from("/home/me/my notes/set.jsonl")));
        assert_eq!(file_of("other/b.md", &roots()), None);
        assert_eq!(file_of("notes", &roots()), None);
    }

    #[test]
    fn file_urls_percent_encode_the_path_and_carry_the_line() {
        let url = file_url(Path::new("/home/me/my notes/caf\u{e9}#1?.md"), CitationKind::Line, 12);
        assert_eq!(url, "file:///home/me/my%20notes/caf%C3%A9%231%3F.md#L12");
        // An escape character in a file name never reaches the terminal raw.
        assert_eq!(file_url(Path::new("/n/\x1b]x.md"), CitationKind::Line, 1), "file:///n/%1B%5Dx.md#L1");
        assert_eq!(file_url(Path::new("/n/paper.pdf"), CitationKind::Page, 4), "file:///n/paper.pdf#page=4");
    }

    #[test]
    fn file_urls_are_built_from_the_paths_own_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let url = |bytes: &[u8]| file_url(Path::new(std::ffi::OsStr::from_bytes(bytes)), CitationKind::Line, 1);
        // On Unix a backslash is a character of the name, not a separator.
        assert_eq!(url(b"/n/bs/back\\slash.md"), "file:///n/bs/back%5Cslash.md#L1");
        assert_eq!(url(b"/n/my notes/a.md"), "file:///n/my%20notes/a.md#L1");
        // A byte that is not UTF-8 is encoded as itself, not as U+FFFD.
        assert_eq!(url(b"/n/caf\xE9.md"), "file:///n/caf%E9.md#L1");
        assert_eq!(url("/n/한글.md".as_bytes()), "file:///n/%ED%95%9C%EA%B8%80.md#L1");
    }

    #[test]
    fn a_citation_path_resolves_to_the_file_names_bytes() {
        use std::os::unix::ffi::OsStrExt;
        // The index spells a name's stray byte 0xE9 `\xE9` (`ingest::relative`); the file has the byte.
        let file = file_of("notes/caf\\xE9.md", &roots()).unwrap();
        assert_eq!(file.as_os_str().as_bytes(), b"/home/me/my notes/caf\xE9.md");
        assert_eq!(file_url(&file, CitationKind::Line, 1), "file:///home/me/my%20notes/caf%E9.md#L1");
        let file = file_of("notes/bs/back\\slash.md", &roots()).unwrap();
        assert_eq!(file_url(&file, CitationKind::Line, 1), "file:///home/me/my%20notes/bs/back%5Cslash.md#L1");
        // A name whose text is `\xC3\xA9` has no stray byte behind it (those two bytes are `é`): kept as written.
        assert_eq!(file_of("notes/\\xC3\\xA9.md", &roots()), Some(PathBuf::from("/home/me/my notes/\\xC3\\xA9.md")));
    }

    #[test]
    fn a_location_is_an_osc8_link_only_when_given_a_file() {
        let linked = location("notes/a.md", 3, 9, Some(Path::new("/home/me/notes/a.md")));
        assert_eq!(linked, "\x1b]8;;file:///home/me/notes/a.md#L3\x1b\\notes/a.md:3-9\x1b]8;;\x1b\\");
        assert_eq!(location("notes/a.md", 3, 9, None), "notes/a.md:3-9");
        let page = location("notes/paper.pdf", 4, 4, Some(Path::new("/home/me/notes/paper.pdf")));
        assert_eq!(page, "\x1b]8;;file:///home/me/notes/paper.pdf#page=4\x1b\\notes/paper.pdf p. 4\x1b]8;;\x1b\\");
        // The visible text is escaped as every printed path is.
        assert_eq!(location("notes/\x1b[2Jx.md", 1, 2, None), "notes/\\u{1b}[2Jx.md:1-2");
    }
}
