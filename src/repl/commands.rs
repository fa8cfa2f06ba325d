//! The REPL's command table. One table drives `:help`, Tab completion and
//! argument checking, so the three can never disagree.

use crate::config::MAX_K;
use crate::search::Mode;

/// What a command's arguments complete to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Complete {
    Nothing,
    /// `:session` subcommands and session names.
    Sessions,
    Modes,
    /// `on` and `off`.
    OnOff,
}

pub struct Spec {
    pub name: &'static str,
    pub usage: &'static str,
    pub help: &'static str,
    pub complete: Complete,
    /// Checks the arguments; the error is the one-line reason.
    pub check: fn(&[&str]) -> Result<Parsed, String>,
}

/// A command with its arguments checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    Help,
    Explain,
    Cite(Option<usize>),
    Session(SessionCmd),
    History,
    /// `:mode M`; `None` asks for the current mode.
    Mode(Option<Mode>),
    /// `:k N`; `None` asks for the k in use.
    K(Option<usize>),
    /// `:multihop on|off`; `None` asks for the current setting.
    MultiHop(Option<bool>),
    /// `:fork [NEW] [TURN]`: the new session's name and the last turn to take (1-based).
    Fork { name: Option<String>, at: Option<i64> },
    /// `:find QUERY`.
    Find(String),
    Quit,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionCmd {
    Current,
    Switch(String),
    List,
    New(Option<String>),
    Rm(String),
    Export(Option<String>),
}


pub const TABLE: &[Spec] = &[
    Spec { name: "help", usage: ":help", help: "this list", complete: Complete::Nothing, check: |a| none(a, Parsed::Help) },
    Spec {
        name: "explain",
        usage: ":explain",
        help: "how the last answer was found: query, gate, hits, packing, history, timings",
        complete: Complete::Nothing,
        check: |a| none(a, Parsed::Explain),
    },
    Spec {
        name: "cite",
        usage: ":cite [N]",
        help: "sources of the last answer; with N, the full text of source N",
        complete: Complete::Nothing,
        check: |a| match a {
            [] => Ok(Parsed::Cite(None)),
            [n] => n.parse::<usize>().ok().filter(|&n| n >= 1).map(|n| Parsed::Cite(Some(n))).ok_or_else(|| {
                format!("{n:?} is not a source number; use :cite N with N from the answer's [N] markers")
            }),
            _ => Err("give one source number at most".into()),
        },
    },
    Spec {
        name: "session",
        usage: ":session [NAME | use NAME | list | new [NAME] | rm NAME | export [FILE]]",
        help: "the current session; switch to (or start) NAME (use NAME for one named as a subcommand); \
               list, start, remove or export sessions",
        complete: Complete::Sessions,
        check: session,
    },
    Spec {
        name: "history",
        usage: ":history",
        help: "the questions of this session and how each was answered",
        complete: Complete::Nothing,
        check: |a| none(a, Parsed::History),
    },
    Spec {
        name: "fork",
        usage: ":fork [NEW] [TURN]",
        help: "branch this session into NEW with its turns (up to TURN), not asked again, and switch to it",
        complete: Complete::Nothing,
        check: fork,
    },
    Spec {
        name: "find",
        usage: ":find QUERY",
        help: "search the questions and answers of every session",
        complete: Complete::Nothing,
        check: |a| if a.is_empty() { Err("say what to look for".into()) } else { Ok(Parsed::Find(a.join(" "))) },
    },
    Spec {
        name: "mode",
        usage: ":mode [M]",
        help: "retrieval mode for the next questions; alone, the one in use",
        complete: Complete::Modes,
        check: |a| match a {
            [] => Ok(Parsed::Mode(None)),
            [m] => <Mode as clap::ValueEnum>::from_str(m, true)
                .map(|m| Parsed::Mode(Some(m)))
                .map_err(|_| format!("unknown mode {m:?}; modes: {}", mode_names().join(", "))),
            _ => Err(format!("give one mode: {}", mode_names().join(", "))),
        },
    },
    Spec {
        name: "k",
        usage: ":k [N]",
        help: "how many chunks to retrieve and pack; alone, the k in use",
        complete: Complete::Nothing,
        check: |a| match a {
            [] => Ok(Parsed::K(None)),
            [n] => n
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=MAX_K).contains(n))
                .map(|n| Parsed::K(Some(n)))
                .ok_or_else(|| format!("{n:?} is not a number from 1 to {MAX_K}")),
            _ => Err(format!("give one number from 1 to {MAX_K}")),
        },
    },
    Spec {
        name: "multihop",
        usage: ":multihop [on|off]",
        help: "multi-hop asking for the next questions: sub-questions, several searches, then the answer",
        complete: Complete::OnOff,
        check: |a| match a {
            [] => Ok(Parsed::MultiHop(None)),
            [word] => on_off(word).map(|on| Parsed::MultiHop(Some(on))),
            _ => Err("give on or off".into()),
        },
    },
    Spec { name: "quit", usage: ":quit", help: "leave (Ctrl-D does too)", complete: Complete::Nothing, check: |a| none(a, Parsed::Quit) },
];

/// Words after `:session` that are subcommands, not session names: the
/// session layer gives none of them to a session (`session::check_new_name`).
pub const SESSION_WORDS: [&str; 5] = crate::session::COMMAND_WORDS;

/// What `Complete::OnOff` offers: `on` (true) and `off` (false), in that order.
const ON_OFF: [(&str, bool); 2] = [("on", true), ("off", false)];

/// `on` or `off` in any case, as `:mode LEXICAL` is taken: `:multihop ON`
/// (caps lock, or a habit from config files) was refused as "neither on nor off".
fn on_off(word: &str) -> Result<bool, String> {
    let found = ON_OFF.iter().find(|(w, _)| w.eq_ignore_ascii_case(word));
    found.map(|&(_, on)| on).ok_or_else(|| format!("{word:?} is neither on nor off"))
}

fn none(args: &[&str], p: Parsed) -> Result<Parsed, String> {
    if args.is_empty() { Ok(p) } else { Err("this command takes no arguments".into()) }
}

/// A session name in the form it is stored in (NFC, so the REPL's own
/// comparisons with the current name hold for any spelling), or why not
/// with what a name may hold (the reason alone leaves the user guessing).
fn session_name(n: &str) -> Result<String, String> {
    crate::session::check_name(n).map(|_| crate::session::canonical_name(n)).map_err(|e| match e.hint {
        Some(hint) => format!("{}: {hint}", e.message),
        None => e.message,
    })
}

fn session(args: &[&str]) -> Result<Parsed, String> {
    let name = session_name;
    let cmd = match args {
        [] => SessionCmd::Current,
        ["list"] => SessionCmd::List,
        ["new"] => SessionCmd::New(None),
        ["new", n] => SessionCmd::New(Some(name(n)?)),
        ["rm", n] => SessionCmd::Rm(name(n)?),
        // Reaches a session named as a subcommand (`:session use list`).
        ["use", n] => SessionCmd::Switch(name(n)?),
        ["export"] => SessionCmd::Export(None),
        ["export", file @ ..] => SessionCmd::Export(Some(path(file)?)),
        [n] if !SESSION_WORDS.contains(n) => SessionCmd::Switch(name(n)?),
        ["rm"] => return Err("name the session to remove".into()),
        ["use"] => return Err("name the session to switch to".into()),
        // `list` takes nothing; `new`, `rm` and `use` one word.
        [word, rest @ ..] if SESSION_WORDS.contains(word) => {
            let (kept, extra) = rest.split_at(usize::from(*word != "list"));
            let command = [&[":session", word], kept].concat().join(" ");
            return Err(format!("too many words after {command}: {:?}", extra.join(" ")));
        }
        _ => return Err(format!("a session name is one word, not {:?}", args.join(" "))),
    };
    Ok(Parsed::Session(cmd))
}

/// A path argument: the rest of the line, as `:find` takes its query, so a
/// path may hold spaces; quotes around it all, as a shell would want, are
/// dropped. Quotes around nothing but spaces are no file name: `""` and
/// `"  "` wrote files named `""` and ` `, said as "exported 1 turn to  ".
fn path(words: &[&str]) -> Result<String, String> {
    let path = words.join(" ");
    for q in ['"', '\''] {
        if let Some(inner) = path.strip_prefix(q).and_then(|p| p.strip_suffix(q)).filter(|_| path.len() >= 2) {
            if inner.trim().is_empty() {
                return Err(format!("{path} is no file name; give one, or nothing for the default"));
            }
            return Ok(inner.to_string());
        }
    }
    Ok(path)
}

/// `:fork`, `:fork NEW`, `:fork TURN`, `:fork NEW TURN`: a word of digits
/// alone is a turn number.
fn fork(args: &[&str]) -> Result<Parsed, String> {
    let name = session_name;
    let turn = |t: &str| t.parse::<i64>().ok().filter(|&t| t >= 1).ok_or_else(|| format!("{t:?} is not a turn number"));
    let is_turn = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_digit());
    match args {
        [] => Ok(Parsed::Fork { name: None, at: None }),
        [t] if is_turn(t) => Ok(Parsed::Fork { name: None, at: Some(turn(t)?) }),
        [n] => Ok(Parsed::Fork { name: Some(name(n)?), at: None }),
        [n, t] => Ok(Parsed::Fork { name: Some(name(n)?), at: Some(turn(t)?) }),
        _ => Err("too many words: give a new name, a turn number, or both".into()),
    }
}

pub fn mode_names() -> Vec<String> {
    <Mode as clap::ValueEnum>::value_variants()
        .iter()
        .filter_map(|m| clap::ValueEnum::to_possible_value(m).map(|v| v.get_name().to_string()))
        .collect()
}

/// Parses a `:command args` line; the error is the line to show the user.
pub fn parse(line: &str) -> Result<Parsed, String> {
    let mut words = line.trim().trim_start_matches(':').split_whitespace();
    let name = words.next().unwrap_or("");
    let args: Vec<&str> = words.collect();
    if name.is_empty() {
        return Err("no command after the colon; :help lists the commands".into());
    }
    // The reasons in the table say what is wrong, never the usage: it is added here, once.
    match TABLE.iter().find(|s| s.name == name) {
        Some(spec) => (spec.check)(&args).map_err(|e| format!("{e} (usage: {})", spec.usage)),
        None => Err(match closest(name) {
            Some(s) => format!("unknown command :{name}; did you mean :{}? (:help lists them all)", s.name),
            None => format!("unknown command :{name}; :help lists the commands"),
        }),
    }
}

/// The command whose name is nearest to `name` (prefix first, then edit
/// distance ≤ 2), in any case: commands are lowercase, and `:QUIT` (caps
/// lock) is suggested `:quit` as a typo is, not run as a guess.
fn closest(name: &str) -> Option<&'static Spec> {
    let name = name.to_lowercase();
    let name = name.as_str();
    if name.is_empty() {
        return None;
    }
    if let Some(s) = TABLE.iter().find(|s| s.name.starts_with(name)) {
        return Some(s);
    }
    TABLE.iter().map(|s| (distance(s.name, name), s)).filter(|(d, _)| *d <= 2).min_by_key(|(d, _)| *d).map(|(_, s)| s)
}

/// Levenshtein distance over chars.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb { prev } else { 1 + prev.min(cur).min(row[j]) };
            prev = cur;
        }
    }
    row[b.len()]
}

/// Columns `:help` fits in.
const HELP_WIDTH: usize = 80;
/// Where each command's description starts: a usage as long as
/// `:multihop [on|off]` fits before it; a longer one (`:session …`) has its
/// line to itself, rather than pushing every description to the right.
const HELP_COLUMN: usize = 2 + 18 + 2;

/// `:help` text, from the table: usages on the left, descriptions wrapped
/// to `HELP_WIDTH` columns beside them.
pub fn help() -> String {
    let mut lines = wrap("Type a question to ask your notes; follow-ups build on the previous answer.", HELP_WIDTH);
    for spec in TABLE {
        let usage = format!("  {}", spec.usage);
        let mut text = wrap(spec.help, HELP_WIDTH - HELP_COLUMN).into_iter();
        if usage.chars().count() + 2 <= HELP_COLUMN {
            lines.push(format!("{usage:<HELP_COLUMN$}{}", text.next().unwrap_or_default()));
        } else {
            lines.push(usage);
        }
        lines.extend(text.map(|t| format!("{:HELP_COLUMN$}{t}", "")));
    }
    lines.push("Ctrl-C stops an answer (keeping what was written) or clears the line.".into());
    lines.push("Ctrl-D leaves.".into());
    lines.join("\n")
}

/// `text` in lines of at most `width` characters, broken between words.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// Completions for the text before the cursor: command names after `:`, then
/// each command's arguments. `sessions` are the saved session names.
pub fn complete(before_cursor: &str, sessions: &[String]) -> (usize, Vec<String>) {
    let Some(rest) = before_cursor.strip_prefix(':') else { return (0, Vec::new()) };
    let Some((cmd, args)) = rest.split_once(' ') else {
        let names = TABLE.iter().filter(|s| s.name.starts_with(rest)).map(|s| format!(":{}", s.name)).collect();
        return (0, names);
    };
    let Some(spec) = TABLE.iter().find(|s| s.name == cmd) else { return (0, Vec::new()) };
    let start = before_cursor.len() - args.rsplit(' ').next().unwrap_or("").len();
    let word = &before_cursor[start..];
    let previous: Vec<&str> = args.split_whitespace().collect();
    let finished_words = if args.ends_with(' ') || args.is_empty() { previous.len() } else { previous.len() - 1 };
    let candidates: Vec<String> = match (spec.complete, finished_words) {
        (Complete::Modes, 0) => mode_names(),
        (Complete::OnOff, 0) => ON_OFF.iter().map(|(w, _)| w.to_string()).collect(),
        (Complete::Sessions, 0) => SESSION_WORDS.iter().map(|s| s.to_string()).chain(sessions.iter().cloned()).collect(),
        (Complete::Sessions, 1) if matches!(previous.first(), Some(&"rm" | &"use")) => sessions.to_vec(),
        _ => Vec::new(),
    };
    // Modes and on/off are taken in any case (`:mode LEXICAL`), so they
    // complete in any case too; session names are as they were made.
    let any_case = matches!(spec.complete, Complete::Modes | Complete::OnOff);
    let fits = |c: &String| c.starts_with(word) || (any_case && c.starts_with(&word.to_ascii_lowercase()));
    (start, candidates.into_iter().filter(fits).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_in_the_table_parses_and_is_in_help() {
        let help = help();
        for spec in TABLE {
            assert!(help.contains(spec.usage), "{}", spec.name);
        }
        assert_eq!(parse(":cite 2"), Ok(Parsed::Cite(Some(2))));
        assert_eq!(parse(":k 12"), Ok(Parsed::K(Some(12))));
        assert_eq!(parse(":k"), Ok(Parsed::K(None)));
        assert_eq!(parse(":mode lexical"), Ok(Parsed::Mode(Some(Mode::Lexical))));
        assert_eq!(parse(":mode"), Ok(Parsed::Mode(None)));
        assert_eq!(parse(":session work"), Ok(Parsed::Session(SessionCmd::Switch("work".into()))));
        assert_eq!(parse(":session new"), Ok(Parsed::Session(SessionCmd::New(None))));
        assert_eq!(parse(":session use list"), Ok(Parsed::Session(SessionCmd::Switch("list".into()))));
        // Every word the session layer keeps from names is a subcommand here, never a switch.
        for word in SESSION_WORDS {
            assert!(!matches!(parse(&format!(":session {word}")), Ok(Parsed::Session(SessionCmd::Switch(_)))), "{word}");
        }
        assert_eq!(parse(":session export out.md"), Ok(Parsed::Session(SessionCmd::Export(Some("out.md".into())))));
        assert_eq!(parse(":session export my notes/a.md"), Ok(Parsed::Session(SessionCmd::Export(Some("my notes/a.md".into())))));
        assert_eq!(parse(":session export 'my a.md'"), Ok(Parsed::Session(SessionCmd::Export(Some("my a.md".into())))));
        assert_eq!(parse(":quit"), Ok(Parsed::Quit));
        assert_eq!(parse(":multihop on"), Ok(Parsed::MultiHop(Some(true))));
        assert_eq!(parse(":multihop off"), Ok(Parsed::MultiHop(Some(false))));
        assert_eq!(parse(":multihop"), Ok(Parsed::MultiHop(None)));
        assert_eq!(parse(":multihop ON"), Ok(Parsed::MultiHop(Some(true))));
        assert_eq!(parse(":multihop Off"), Ok(Parsed::MultiHop(Some(false))));
        assert_eq!(parse(":fork"), Ok(Parsed::Fork { name: None, at: None }));
        assert_eq!(parse(":fork 2"), Ok(Parsed::Fork { name: None, at: Some(2) }));
        assert_eq!(parse(":fork alt"), Ok(Parsed::Fork { name: Some("alt".into()), at: None }));
        assert_eq!(parse(":fork alt 3"), Ok(Parsed::Fork { name: Some("alt".into()), at: Some(3) }));
        assert_eq!(parse(":find alcohol  wash"), Ok(Parsed::Find("alcohol wash".into())));
    }

    #[test]
    fn bad_arguments_name_the_usage() {
        for bad in [":k 0", ":k many", ":cite x", ":cite 0", ":mode sideways", ":help me", ":session rm", ":session a b c", ":multihop yes", ":fork a b c", ":fork alt 0", ":fork two/words", ":find", ":session export \"\"", ":session export '  '"] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains("usage: :"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_bad_argument_says_what_is_wrong_and_the_usage_once() {
        assert!(parse(":session rm a b").unwrap_err().starts_with("too many words after :session rm a: \"b\" (usage: "));
        let bad_lines = [":session rm", ":session list extra", ":session a b", ":cite 1 2", ":mode a b", ":k 1 2", ":multihop yes", ":fork a 1 2"];
        for bad in bad_lines {
            let e = parse(bad).unwrap_err();
            let name = bad[1..].split(' ').next().unwrap();
            let usage = TABLE.iter().find(|s| s.name == name).unwrap().usage;
            assert_eq!(e.matches(usage).count(), 1, "{bad}: {e}");
            assert!(!e.starts_with("use "), "{bad}: {e}");
        }
    }

    #[test]
    fn help_fits_in_80_columns() {
        for line in help().lines() {
            assert!(line.chars().count() <= HELP_WIDTH, "{line}");
        }
        assert!(help().contains("\n  :k [N]              how many chunks to retrieve and pack; alone, the k in use\n"), "{}", help());
    }

    #[test]
    fn unknown_commands_suggest_the_closest() {
        assert!(parse(":QUIT").unwrap_err().contains("did you mean :quit?"));
        assert!(parse(":EXP").unwrap_err().contains("did you mean :explain?"));
        assert_eq!(parse(":").unwrap_err(), "no command after the colon; :help lists the commands");
        assert!(parse(":cit 1").unwrap_err().contains("did you mean :cite?"));
        assert!(parse(":exp").unwrap_err().contains("did you mean :explain?"));
        assert!(parse(":hsitory").unwrap_err().contains("did you mean :history?"));
        assert!(!parse(":zzzzzz").unwrap_err().contains("did you mean"));
    }

    #[test]
    fn completion_follows_the_table() {
        assert_eq!(complete(":ex", &[]), (0, vec![":explain".to_string()]));
        let sessions = vec!["work".to_string(), "thesis".to_string()];
        assert_eq!(complete(":session w", &sessions), (9, vec!["work".to_string()]));
        assert_eq!(complete(":session rm t", &sessions), (12, vec!["thesis".to_string()]));
        assert_eq!(complete(":session use t", &sessions), (13, vec!["thesis".to_string()]));
        assert_eq!(complete(":mode l", &[]), (6, vec!["lexical".to_string()]));
        assert_eq!(complete(":multihop o", &[]), (10, vec!["on".to_string(), "off".to_string()]));
        assert_eq!(complete(":mu", &[]), (0, vec![":multihop".to_string()]));
        assert_eq!(complete(":multihop O", &[]), (10, vec!["on".to_string(), "off".to_string()]));
        assert_eq!(complete(":mode LEX", &[]), (6, vec!["lexical".to_string()]));
        assert!(complete(":session W", &sessions).1.is_empty());
        assert!(complete("what is", &sessions).1.is_empty());
    }
}
