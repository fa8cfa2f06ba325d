//! `sessions export` and `:session export`: a conversation as Markdown — each
//! question, its answer with the `[#n]` markers turned into footnotes, and the
//! footnotes giving each source's path, lines and section.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use super::SessionDoc;
use crate::error::UserError;
use crate::rag::extract;
use crate::store::Store;

/// Refuses an export whose file is the database or one of SQLite's files
/// beside it: writing the Markdown there replaced the whole index and every
/// session with text (`-o ~/.local/share/kebab/kebab.db`, a slip of Tab
/// completion), and said it had exported.
pub fn refuse_database(store: &Store, file: &Path, session: &str) -> Result<(), UserError> {
    let Some(target) = resolved(file) else {
        return Ok(());
    };
    let ours = crate::store::database_files(store.path()).iter().any(|name| resolved(name).is_some_and(|p| p == target));
    if !ours {
        return Ok(());
    }
    Err(UserError::new("bad_input", format!("{} is the database, not a file to export to", file.display()))
        .with_hint(format!("give the export a file name of its own, e.g. `{session}.md`; the database was left untouched")))
}

/// `NAME.md`, the file `:session export` writes when given none. A file
/// there that is not an earlier export of this session (a note, a README) is
/// not overwritten unasked: it was, silently.
pub fn default_file(session: &str) -> Result<String, UserError> {
    use std::io::Read;
    let file = format!("{session}.md");
    let head = std::fs::File::open(&file).and_then(|f| {
        let mut head = Vec::new();
        f.take(256).read_to_end(&mut head).map(|_| head)
    });
    match head {
        Ok(bytes) if !bytes.starts_with(format!("# Session {session}\n").as_bytes()) => Err(UserError::new(
            "exists",
            format!("{file} already exists and is not an export of session {session}"),
        )
        .with_hint(format!("give another file (`:session export FILE`), or name it to replace it: `:session export {file}`"))),
        _ => Ok(file),
    }
}

/// `path` with its folder's symlinks and `..` resolved (the file itself too
/// when it exists), so two spellings of one file compare equal; `None` when
/// its folder is not there, where no database can be either.
fn resolved(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = std::fs::canonicalize(path) {
        return Some(p);
    }
    let name = path.file_name()?;
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    Some(std::fs::canonicalize(parent).ok()?.join(name))
}

pub fn markdown(doc: &SessionDoc) -> String {
    let c = &doc.conversation;
    let mut s = format!("# Session {}\n\n", c.name);
    let _ = writeln!(s, "Started {}, last turn {}, {}.\n", c.created_at, c.updated_at, super::turns_phrase(doc.turns.len() as i64));
    for turn in &doc.turns {
        let t = turn.turn_index + 1;
        // One heading line, however the question was pasted.
        let _ = writeln!(s, "## {t}. {}\n", turn.question.split_whitespace().collect::<Vec<_>>().join(" "));
        let a = &turn.answer;
        let text = if a.answer.is_empty() { super::UNANSWERED.to_string() } else { footnoted(&a.answer, t) };
        let _ = writeln!(s, "{text}\n");
        if let Some(reason) = a.refusal_reason {
            let _ = writeln!(s, "*Not grounded: {reason}.*\n");
        }
        for c in &a.citations {
            let n = c.marker.trim_matches(['[', ']']);
            let _ = write!(s, "[^{t}-{n}]: `{}` lines {}–{}", c.citation.path, c.citation.start, c.citation.end);
            if let Some(section) = &c.citation.section {
                let _ = write!(s, " · {section}");
            }
            if c.stale {
                s.push_str(if turn.deleted.contains(&c.chunk_id) { " (deleted since)" } else { " (changed since)" });
            }
            if c.origin == crate::rag::answer::Origin::Attributed {
                s.push_str(" · attributed by kebab: the model did not cite it");
            }
            s.push('\n');
        }
        if !a.citations.is_empty() {
            s.push('\n');
        }
    }
    s
}

/// The answer with `[#n]` written as footnote references `[^T-n]`.
fn footnoted(answer: &str, turn: i64) -> String {
    let mut out = String::with_capacity(answer.len());
    let mut last = 0;
    for m in extract::markers(answer) {
        out.push_str(&answer[last..m.start]);
        let _ = write!(out, "[^{turn}-{}]", m.n);
        last = m.end;
    }
    out.push_str(&answer[last..]);
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_become_per_turn_footnote_references() {
        assert_eq!(footnoted("\"x\" [#1] and [#12].", 3), "\"x\" [^3-1] and [^3-12].");
        assert_eq!(footnoted("vec![1] stays", 1), "vec![1] stays");
    }
}
