//! Hints say what to do where the user is. Errors are written once, with the
//! command-line commands that fix them (`kebab sessions list`, `kebab ingest
//! PATH`); in the REPL the same fix may be a `:command`, and an MCP client
//! calls a tool. The phrases that differ are mapped here, in one place, so no
//! error needs a message per front end.

use std::path::Path;

/// Where an error is shown, when it is not the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontEnd {
    Repl,
    Mcp,
}

/// Command-line phrases in hints and what the REPL says instead. Commands
/// with no REPL form (`kebab ingest`) stay: the user runs them outside it.
const REPL: &[(&str, &str)] = &[("`kebab sessions list`", "`:session list`"), ("`--mode lexical`", "`:mode lexical`")];

/// Command-line phrases in hints and how an MCP client is told to do the
/// same. Applied in order, so a longer phrase comes before one it holds; a
/// command with no tool (`kebab init`, `kebab models install`) stays, as the
/// user has to run it.
const MCP: &[(&str, &str)] = &[
    (
        "run `kebab ingest PATH` (without --readonly)",
        "start the server without --readonly, then call the `ingest` tool with {\"paths\": [\"/path/to/notes\"]}",
    ),
    ("run `kebab ingest PATH...`", "call the `ingest` tool with {\"paths\": [\"/path/to/notes\"]}"),
    ("run `kebab ingest PATH`", "call the `ingest` tool with {\"paths\": [\"/path/to/notes\"]}"),
    ("run `kebab ingest --force`", "call the `ingest` tool with {\"force\": true}"),
    ("run `kebab ingest`", "call the `ingest` tool"),
    ("then `kebab ingest`", "then call the `ingest` tool"),
    ("`kebab ingest` it", "index it with the `ingest` tool"),
    ("(`--force` if", "(`\"force\": true` if"),
    ("`kebab ingest`", "the `ingest` tool"),
    ("`kebab sessions list`", "the `sessions_list` tool"),
    ("`--mode lexical`", "`\"mode\": \"lexical\"`"),
];

/// `hint`, written for the command line, as `front` says it.
pub fn hint_for(front: FrontEnd, hint: &str) -> String {
    let table = match front {
        FrontEnd::Repl => REPL,
        FrontEnd::Mcp => MCP,
    };
    table.iter().fold(hint.to_string(), |hint, (cli, ours)| hint.replace(cli, ours))
}

/// `kebab` with the `--config` and `--data-dir` a command ran with (flag or
/// variable), each quoted for a shell: a command the user is then told to run
/// reads the same config and index, where a bare `kebab` would read the
/// default ones (and `kebab ingest` index the notes there).
pub fn kebab_as_run(config: Option<&Path>, data_dir: Option<&Path>) -> String {
    let mut kebab = String::from("kebab");
    for (flag, path) in [("--config", config), ("--data-dir", data_dir)] {
        if let Some(path) = path {
            kebab.push_str(&format!(" {flag} {}", crate::script::shell_word(&path.to_string_lossy())));
        }
    }
    kebab
}

/// `text` with each command in backquotes that runs kebab (`` `kebab ingest
/// PATH` ``, `` `echo … | kebab ask -` ``) given `kebab` (`kebab_as_run`) for
/// the program, so hints are written once, with a bare `kebab`. A command
/// that names `--config` or `--data-dir` itself is about choosing them, and
/// stays as written.
pub fn as_run(text: &str, kebab: &str) -> String {
    if kebab == "kebab" {
        return text.to_string();
    }
    let with = format!("{kebab} ");
    // The odd pieces are inside backquotes.
    let pieces = text.split('`').enumerate().map(|(i, piece)| {
        let command = i % 2 == 1 && !piece.contains("--config") && !piece.contains("--data-dir");
        if !command {
            return piece.to_string();
        }
        let piece = piece.replace("| kebab ", &format!("| {with}"));
        match piece.strip_prefix("kebab ") {
            Some(rest) => format!("{with}{rest}"),
            None => piece,
        }
    });
    pieces.collect::<Vec<_>>().join("`")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hint_naming_a_command_names_the_tool_for_mcp_and_the_command_for_the_repl() {
        let list = "`kebab sessions list` shows the sessions there are";
        assert_eq!(hint_for(FrontEnd::Mcp, list), "the `sessions_list` tool shows the sessions there are");
        assert_eq!(hint_for(FrontEnd::Repl, list), "`:session list` shows the sessions there are");
        let embed = "run `kebab models install`, then `kebab ingest` to embed the notes";
        assert_eq!(hint_for(FrontEnd::Mcp, embed), "run `kebab models install`, then call the `ingest` tool to embed the notes");
        assert_eq!(hint_for(FrontEnd::Repl, embed), embed);
        let force = "run `kebab ingest --force` to re-embed every chunk with the configured model";
        let called = "call the `ingest` tool with {\"force\": true} to re-embed every chunk with the configured model";
        assert_eq!(hint_for(FrontEnd::Mcp, force), called);
        let now = "`--mode lexical` searches by words meanwhile";
        assert_eq!(hint_for(FrontEnd::Mcp, now), "`\"mode\": \"lexical\"` searches by words meanwhile");
        assert_eq!(hint_for(FrontEnd::Repl, now), "`:mode lexical` searches by words meanwhile");
    }

    #[test]
    fn a_command_to_run_names_the_flags_kebab_ran_with_unless_it_chooses_them_itself() {
        let kebab = kebab_as_run(Some(Path::new("/my notes/c.toml")), Some(Path::new("/kb")));
        assert_eq!(kebab, "kebab --config '/my notes/c.toml' --data-dir /kb");
        let hint = "run `kebab ingest PATH`, or pipe it: `echo QUESTION | kebab ask -`; or `kebab --config FILE init`";
        let want = "run `kebab --config '/my notes/c.toml' --data-dir /kb ingest PATH`, or pipe it: \
                    `echo QUESTION | kebab --config '/my notes/c.toml' --data-dir /kb ask -`; or `kebab --config FILE init`";
        assert_eq!(as_run(hint, &kebab), want);
        assert_eq!(as_run(hint, &kebab_as_run(None, None)), hint);
    }

    /// Every hint in the code that names `kebab ingest` or `kebab sessions
    /// list` reads as a tool call for MCP: a new hint with a phrase the
    /// table lacks fails here rather than reaching a client as a command
    /// line. `eval` runs only on the command line.
    #[test]
    fn every_hint_naming_a_command_with_a_tool_is_mapped_for_mcp() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let literal = regex::Regex::new(r#"with_hint\((?:format!\()?"((?:[^"\\]|\\.)*)""#).unwrap();
        let mut checked = 0;
        for entry in walkdir::WalkDir::new(&src).into_iter().map(Result::unwrap) {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "rs") || path.starts_with(src.join("eval")) {
                continue;
            }
            let text = std::fs::read_to_string(path).unwrap();
            for hint in literal.captures_iter(&text).map(|c| c[1].replace("\\\"", "\"")) {
                if hint.contains("`kebab ingest") || hint.contains("`kebab sessions list`") {
                    let mcp = hint_for(FrontEnd::Mcp, &hint);
                    assert!(!mcp.contains("`kebab ingest") && !mcp.contains("`kebab sessions list`"), "{}: {mcp}", path.display());
                    checked += 1;
                }
            }
        }
        assert!(checked >= 8, "found only {checked} hints: is the pattern still right?");
    }
}
