//! The rustyline helper: Tab completion from the command table, with the
//! saved session names for `:session` read from the database when Tab is
//! pressed — another process may have added a session, or replaced the
//! database, since the prompt was shown (the REPL opens the new one at the
//! next line, `Repl::follow_index`).

use std::path::PathBuf;

use rustyline::completion::{Completer, Pair};
use rustyline::{Context, Helper as HelperTrait, Highlighter, Hinter, Validator};

use super::commands;
use crate::session;
use crate::store::Store;

#[derive(Highlighter, Hinter, Validator)]
pub struct Helper {
    /// The database file the session names are read from.
    database: PathBuf,
}

impl Helper {
    pub fn new(database: PathBuf) -> Helper {
        Helper { database }
    }

    /// The session names in the database there now, read-only; none when it cannot be read.
    fn sessions(&self) -> Vec<String> {
        let Ok(store) = Store::open(&self.database, true) else { return Vec::new() };
        session::list(&store).map(|l| l.into_iter().map(|s| s.conversation.name).collect()).unwrap_or_default()
    }
}

impl HelperTrait for Helper {}

impl Completer for Helper {
    type Candidate = Pair;

    fn complete(&self, line: &str, pos: usize, _: &Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> {
        let (start, words) = commands::complete(&line[..pos], &self.sessions());
        Ok((start, words.into_iter().map(|w| Pair { display: w.clone(), replacement: w }).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustyline::history::DefaultHistory;

    fn completed(helper: &Helper, line: &str) -> Vec<String> {
        let history = DefaultHistory::new();
        let (_, pairs) = helper.complete(line, line.len(), &Context::new(&history)).unwrap();
        pairs.into_iter().map(|p| p.replacement).collect()
    }

    #[test]
    fn session_names_complete_from_the_database_there_when_tab_is_pressed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kebab.db");
        // Held open, as the REPL holds the database it opened.
        let held = Store::open(&path, false).unwrap();
        session::open_or_create(&held, "apiary").unwrap();
        let helper = Helper::new(path.clone());
        assert_eq!(completed(&helper, ":session use a"), ["apiary"]);
        // Replaced by another process's new index: its names, before the REPL reads a line and opens it.
        for file in crate::store::database_files(&path) {
            let _ = std::fs::remove_file(file);
        }
        session::open_or_create(&Store::open(&path, false).unwrap(), "almanac").unwrap();
        assert_eq!(completed(&helper, ":session use a"), ["almanac"]);
        // Removed: no names, and commands still complete.
        std::fs::remove_file(&path).unwrap();
        assert!(completed(&helper, ":session use a").is_empty());
        assert_eq!(completed(&helper, ":hist"), [":history"]);
        drop(held);
    }
}
