//! Terminal output: where text goes (stdout for results, stderr for hints and
//! progress), colours that follow `--color`, `NO_COLOR` and the terminal, and
//! JSON documents for `--json`. Text that came from notes passes through
//! `script::printable` before it is printed.

use std::fmt::Display;
use std::io::{IsTerminal, Write};

pub mod answer;

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
#[derive(Debug, Clone, Copy)]
pub struct Output {
    pub json: bool,
    pub quiet: bool,
    pub color: ColorChoice,
}

impl Output {
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
            eprintln!("{text}");
        }
    }

    /// A warning (a skipped file, …): stderr, even with `--quiet`, since it reports
    /// something the user needs to act on; the JSON result carries it too.
    pub fn warn(&self, text: impl Display) {
        eprintln!("{} {text}", self.paint_err("warning:", Style::new().yellow().bold()));
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

    /// Whether stderr is a terminal a progress bar may draw on.
    pub fn progress_on_terminal(&self) -> bool {
        !self.quiet && std::io::stderr().is_terminal()
    }
}

/// A path or name from the index, made safe for one terminal line: control
/// characters (newlines in file names, escape sequences) and bidi overrides
/// (which can make `evil\u{202e}dm.exe` read as `evilexe.md`) are shown escaped.
pub fn one_line(text: &str) -> String {
    let escape = |c: char| c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}');
    if !text.chars().any(escape) {
        return text.to_string();
    }
    text.chars().map(|c| if escape(c) { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// JSON text with the control characters serde leaves raw (DEL, the C1
/// range with its one-byte CSI and OSC, bidi overrides) written as `\uXXXX`:
/// the same strings to a JSON reader, nothing a terminal would obey.
/// Outside strings JSON holds none of these, so every occurrence is in one.
pub fn json_escaped(text: String) -> String {
    let unsafe_char = |c: char| c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}');
    // serde already escapes the C0 controls; `\n` here is layout.
    if !text.chars().any(|c| unsafe_char(c) && c != '\n') {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_char(c) && c != '\n' {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` on one line (whitespace runs made one space), cut to `max_chars`
/// with `…` when longer.
pub fn shorten(text: &str, max_chars: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(max_chars) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line,
    }
}

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
    fn one_line_escapes_newlines_and_escapes() {
        assert_eq!(one_line("a\nb\u{1b}[2J"), "a\\nb\\u{1b}[2J");
        assert_eq!(one_line("plain/path.md"), "plain/path.md");
        assert_eq!(one_line("evil\u{202e}dm.txt"), "evil\\u{202e}dm.txt");
    }

    #[test]
    fn json_escaping_keeps_the_value_and_hides_c1_controls() {
        let value = serde_json::json!({"t": "a\u{9b}31m\u{1b}]0;x\u{7}\u{202e}b\nc"});
        let text = json_escaped(serde_json::to_string_pretty(&value).unwrap());
        assert!(!text.contains(['\u{9b}', '\u{1b}', '\u{7}', '\u{202e}']), "{text}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), value);
    }

    #[test]
    fn human_bytes_picks_a_unit() {
        assert_eq!(human_bytes(999), "999 B");
        assert_eq!(human_bytes(1_250_000), "1.2 MB");
    }
}
