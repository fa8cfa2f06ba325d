//! Terminal output: where text goes (stdout for results, stderr for hints and
//! progress), colours that follow `--color`, `NO_COLOR` and the terminal, and
//! JSON documents for `--json`. Text that came from notes passes through
//! `script::printable` before it is printed.

use std::collections::HashSet;
use std::fmt::Display;
use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};

use crate::script::json_escaped;

pub mod answer;
pub mod failure;
pub mod hint;
pub mod link;
pub mod sessions;

use owo_colors::{OwoColorize, Stream, Style};
use serde::Serialize;

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Where and how a command prints.
#[derive(Debug, Clone)]
pub struct Output {
    pub json: bool,
    pub quiet: bool,
    pub color: ColorChoice,
    /// What citation links resolve against (`render::link`).
    pub roots: link::Roots,
    /// The program a command the user is told to run names: `kebab` with
    /// the --config and --data-dir this one ran with (`hint::kebab_as_run`).
    pub kebab: String,
    said: Said,
}

/// The notices said with `Output::notice_once`, shared by the copies of one
/// `Output`: a front end that opens the knowledge base again (the REPL,
/// `kebab mcp`) says what opening it finds only when it is new.
#[derive(Debug, Clone, Default)]
struct Said(Arc<Mutex<HashSet<String>>>);

impl Output {
    pub fn new(json: bool, quiet: bool, color: ColorChoice) -> Output {
        Output { json, quiet, color, roots: link::Roots::default(), kebab: "kebab".into(), said: Said::default() }
    }

    /// This `Output`, naming `kebab` (`hint::kebab_as_run`) in the commands its hints tell the user to run.
    pub fn run_as(self, kebab: String) -> Output {
        Output { kebab, ..self }
    }

    /// `text` (a hint, a notice) with the commands it tells the user to run
    /// naming this run's --config and --data-dir (`hint::as_run`).
    pub fn as_run(&self, text: &str) -> String {
        hint::as_run(text, &self.kebab)
    }

    /// Prints one line of results on stdout.
    pub fn line(&self, text: impl Display) -> std::io::Result<()> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{text}")
    }

    /// Prints `value` as one JSON document on stdout.
    pub fn json<T: Serialize>(&self, value: &T) -> anyhow::Result<()> {
        let text = json_escaped(serde_json::to_string_pretty(value)?);
        let mut out = std::io::stdout().lock();
        writeln!(out, "{text}")?;
        Ok(())
    }

    /// A hint or notice for a person: stderr, and not with `--quiet`.
    pub fn notice(&self, text: impl Display) {
        if !self.quiet {
            eprintln!("{}", self.as_run(&text.to_string()));
        }
    }

    /// `notice`, unless this `Output` (or a copy) has said the same already.
    pub fn notice_once(&self, text: impl Display) {
        let text = text.to_string();
        let new = self.said.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(text.clone());
        if new {
            self.notice(text);
        }
    }

    /// A warning (a skipped file, …): stderr, even with `--quiet`, since it reports
    /// something the user needs to act on; the JSON result carries it too.
    pub fn warn(&self, text: impl Display) {
        eprintln!("{} {}", self.paint_err("warning:", Style::new().yellow().bold()), self.as_run(&text.to_string()));
    }

    /// `text` styled for stdout when colours are on there.
    pub fn paint(&self, text: impl Display, style: Style) -> String {
        self.paint_on(Stream::Stdout, text, style)
    }

    /// `text` styled for stderr when colours are on there.
    pub fn paint_err(&self, text: impl Display, style: Style) -> String {
        self.paint_on(Stream::Stderr, text, style)
    }

    fn paint_on(&self, stream: Stream, text: impl Display, style: Style) -> String {
        match self.color {
            ColorChoice::Never => text.to_string(),
            ColorChoice::Always => text.style(style).to_string(),
            ColorChoice::Auto => text.if_supports_color(stream, |t| t.style(style)).to_string(),
        }
    }

    /// Whether citation paths on stdout are OSC-8 hyperlinks (`render::link`).
    pub fn hyperlinks(&self) -> bool {
        self.hyperlinks_on(link::Terminal::detect())
    }

    /// The decision itself: a terminal on stdout, no `--json`, colours not
    /// switched off by `--color never` or `NO_COLOR` (`--color always` does
    /// not draw links into a pipe), and not `TERM=dumb`.
    pub fn hyperlinks_on(&self, term: link::Terminal) -> bool {
        !self.json && self.color != ColorChoice::Never && term.stdout && !term.no_color && !term.dumb
    }

    /// A citation's `path:start-end` (`p. N` for a PDF), escaped, a hyperlink
    /// to the file when links are on and the path's root is known.
    pub fn location(&self, path: &str, start: u32, end: u32) -> String {
        let file = if self.hyperlinks() { self.roots.file_of(path) } else { None };
        link::location(path, start, end, file.as_deref())
    }

    /// Whether stderr is a terminal a progress bar may draw on.
    pub fn progress_on_terminal(&self) -> bool {
        !self.quiet && std::io::stderr().is_terminal()
    }
}

pub use crate::script::count;

/// Bytes as a human size: `1.2 MB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1000.0 && unit < UNITS.len() - 1 {
        v /= 1000.0;
        unit += 1;
    }
    if unit == 0 { format!("{n} B") } else { format!("{v:.1} {}", UNITS[unit]) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_drawn_only_on_a_terminal_with_colours_on() {
        let term = link::Terminal { stdout: true, no_color: false, dumb: false };
        let out = |json, color| Output::new(json, false, color);
        assert!(out(false, ColorChoice::Auto).hyperlinks_on(term));
        assert!(out(false, ColorChoice::Always).hyperlinks_on(term));
        assert!(!out(true, ColorChoice::Auto).hyperlinks_on(term), "--json");
        assert!(!out(false, ColorChoice::Never).hyperlinks_on(term), "--color never");
        assert!(!out(false, ColorChoice::Always).hyperlinks_on(link::Terminal { stdout: false, ..term }), "a pipe");
        assert!(!out(false, ColorChoice::Auto).hyperlinks_on(link::Terminal { no_color: true, ..term }), "NO_COLOR");
        assert!(!out(false, ColorChoice::Auto).hyperlinks_on(link::Terminal { dumb: true, ..term }), "TERM=dumb");
    }

    #[test]
    fn human_bytes_picks_a_unit() {
        assert_eq!(human_bytes(999), "999 B");
        assert_eq!(human_bytes(1_250_000), "1.2 MB");
    }
}
