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
        // An answer's line breaks read as spaces on this one line (`one_line`
        // would print them as a literal `\n`); `--json` keeps them.
        format!("    {}", one_line(&hit.snippet.split_whitespace().collect::<Vec<_>>().join(" "))),
    ]
}
