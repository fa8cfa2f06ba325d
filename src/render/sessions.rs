//! How sessions' own extras print: the mark on a turn taken over by a fork,
//! and a past turn found by `sessions search` / `:find`.

use crate::script::one_line;
use crate::session::{ForkedFrom, TurnHit};

/// ` · forked from NAME turn N` (N as `:history` numbers it), or nothing.
pub fn fork_mark(forked: Option<&ForkedFrom>) -> String {
    match forked {
        Some(ForkedFrom { session: Some(name), turn_index }) => format!(" · forked from {} turn {}", one_line(name), turn_index + 1),
        Some(ForkedFrom { session: None, turn_index }) => format!(" · forked from a removed session, turn {}", turn_index + 1),
        None => String::new(),
    }
}

/// `session · turn · question`, then the snippet indented below it.
pub fn hit_lines(hit: &TurnHit) -> [String; 2] {
    let forked = if hit.forked { " (forked)" } else { "" };
    [
        format!("{} · {} · {}{forked}", one_line(&hit.session), hit.turn_index + 1, one_line(&hit.question)),
        format!("    {}", one_line(&snippet_line(&hit.snippet))),
    ]
}

/// The snippet on its one line: an answer's line breaks (and tabs) read as
/// one space, before `one_line` escapes what is left, which would otherwise
/// print them as a literal `\n`. `--json` keeps the answer's own newlines.
fn snippet_line(snippet: &str) -> String {
    let mut out = String::with_capacity(snippet.len());
    for c in snippet.chars() {
        if c.is_whitespace() && c.is_control() {
            if !out.ends_with(' ') {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
    out
}
