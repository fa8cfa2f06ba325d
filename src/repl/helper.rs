//! The rustyline helper: Tab completion from the command table, with the
//! saved session names for `:session`.

use rustyline::completion::{Completer, Pair};
use rustyline::{Context, Helper as HelperTrait, Highlighter, Hinter, Validator};

use super::commands;

#[derive(Default, Highlighter, Hinter, Validator)]
pub struct Helper {
    /// Session names, refreshed before each prompt.
    pub sessions: Vec<String>,
}

impl HelperTrait for Helper {}

impl Completer for Helper {
    type Candidate = Pair;

    fn complete(&self, line: &str, pos: usize, _: &Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> {
        let (start, words) = commands::complete(&line[..pos], &self.sessions);
        Ok((start, words.into_iter().map(|w| Pair { display: w.clone(), replacement: w }).collect()))
    }
}
