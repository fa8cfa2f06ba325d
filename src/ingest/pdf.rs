//! PDF notes: the text layer of each page, through `pdf-extract` (lopdf
//! underneath), chunked per page. A chunk's line span holds its page number
//! (`line_start == line_end == page`); the `.pdf` path tells readers so.
//!
//! A PDF parser is a large attack surface: it can panic, recurse until the
//! stack overflows, or loop. So `kebab ingest` never parses a PDF in its own
//! process: it runs itself as a helper (`kebab __pdf-text`), hands it the
//! bytes on stdin, reads pages back as JSON on stdout, and kills it when
//! `workspace.pdf_timeout_secs` runs out. A thread could not be stopped, and
//! `catch_unwind` alone does not survive a stack overflow or an abort. Only
//! when the running program is not `kebab` (unit tests, fuzzing) is the
//! parser called in-process, behind `catch_unwind`.

use std::io::{Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::chunk::{ChunkDraft, ChunkLimits};
use super::text::chunk_text;

/// The first argument that makes `kebab` run as the PDF helper.
pub const HELPER_ARG: &str = "__pdf-text";

/// Why a PDF gave no text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "error", rename_all = "snake_case")]
pub enum PdfError {
    /// 0 bytes: an export or a copy that never finished. Said as such, not as
    /// the parser's "invalid file header", which sends the user looking for damage.
    Empty,
    /// Protected by a password (or an encryption the reader does not know).
    Encrypted,
    /// Not a PDF at all: no `%PDF-` header (a Markdown note read with
    /// `--format pdf`, a web page saved as .pdf). Said so, not as the parser's
    /// "invalid file header", which sends the user to re-export a file that is fine.
    NotPdf,
    /// Not a readable PDF: truncated, a broken cross-reference table.
    Broken { reason: String },
    /// Pages, but no text on any of them: a scan.
    NoText { pages: usize },
    /// The reader failed in a way it should not (a panic, a crash).
    Crashed { reason: String },
    TimedOut { seconds: u64 },
}

impl PdfError {
    /// What the ingest report says: the problem and what to do about it.
    pub fn message(&self) -> String {
        match self {
            PdfError::Empty => {
                "empty (0 bytes), so there is no PDF to read; save or export it again, or list it in workspace.exclude".into()
            }
            PdfError::Encrypted => "encrypted PDF; save an unprotected copy to index it".into(),
            PdfError::NotPdf => {
                "not a PDF (it does not begin with %PDF-); if it should be one, export it again, or list it in workspace.exclude".into()
            }
            PdfError::Broken { reason } => format!("unreadable PDF ({reason}); re-save or re-export it, or list it in workspace.exclude"),
            PdfError::NoText { pages } => format!(
                "PDF with no text layer ({pages} page(s), probably scanned); kebab does not do OCR: run it through an OCR tool (e.g. ocrmypdf) and index the result"
            ),
            PdfError::Crashed { reason } => format!("the PDF reader failed on this file ({reason}); re-save it, or list it in workspace.exclude"),
            PdfError::TimedOut { seconds } => format!(
                "the PDF reader gave up after {seconds} s; raise workspace.pdf_timeout_secs to give it longer, or list the file in workspace.exclude"
            ),
        }
    }
}

/// Page texts, in order (page 1 first); an empty string for a page without text.
pub type Pages = Vec<String>;

/// Read the text layer of every page, in this process. A panic inside the
/// parser comes back as `Crashed`.
pub fn extract(bytes: &[u8]) -> Result<Pages, PdfError> {
    match catch_unwind(AssertUnwindSafe(|| extract_unguarded(bytes))) {
        Ok(result) => result,
        Err(panic) => {
            let what = panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned());
            Err(PdfError::Crashed { reason: format!("panic: {}", what.unwrap_or_else(|| "unknown".into())) })
        }
    }
}

fn extract_unguarded(bytes: &[u8]) -> Result<Pages, PdfError> {
    unparsed_check(bytes)?;
    let broken = |e: &dyn std::fmt::Display| PdfError::Broken { reason: e.to_string() };
    let mut doc = pdf_extract::Document::load_mem(bytes).map_err(|e| {
        if e.to_string().to_ascii_lowercase().contains("crypt") { PdfError::Encrypted } else { broken(&e) }
    })?;
    if doc.is_encrypted() && doc.decrypt("").is_err() {
        return Err(PdfError::Encrypted);
    }
    let numbers: Vec<u32> = doc.get_pages().keys().copied().collect();
    if numbers.is_empty() {
        return Err(PdfError::Broken { reason: "no pages".into() });
    }
    let mut pages = Vec::with_capacity(numbers.len());
    let mut failed = None;
    for n in numbers {
        let mut raw = String::new();
        // One bad page (a missing font, a broken stream) costs that page only.
        let done = pdf_extract::output_doc_page(&doc, &mut pdf_extract::PlainTextOutput::new(&mut raw), n);
        let text = match done {
            Ok(()) => clean(&raw),
            Err(e) => {
                failed.get_or_insert_with(|| e.to_string());
                String::new()
            }
        };
        pages.push(text);
    }
    if pages.iter().all(String::is_empty) {
        return Err(match failed {
            Some(reason) => PdfError::Broken { reason },
            None => PdfError::NoText { pages: pages.len() },
        });
    }
    Ok(pages)
}

/// A page's text as it will be stored: control characters gone, line ends
/// trimmed, at most one blank line in a row, no blank lines at either end.
fn clean(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut blank_run = 0;
    for line in raw.lines() {
        let line: String = line.chars().filter(|c| !c.is_control() || *c == '\t').collect();
        let line = line.trim_end();
        if line.trim().is_empty() {
            blank_run += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank_run > 0 { "\n\n" } else { "\n" });
        }
        blank_run = 0;
        out.push_str(line);
    }
    out
}

/// Chunks of every page: a page's text cut like plain text, each piece
/// carrying its page number as its line span.
pub fn chunk_pages(pages: &[String], limits: &ChunkLimits) -> Vec<ChunkDraft> {
    let mut out = Vec::new();
    for (i, page) in pages.iter().enumerate() {
        let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
        out.extend(chunk_text(page, limits).into_iter().map(|c| ChunkDraft { line_start: number, line_end: number, ..c }));
    }
    out
}

/// What the helper writes on stdout.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Reply {
    Pages(Pages),
    Failed(PdfError),
}

/// `kebab __pdf-text`: read a PDF on stdin, write its pages as JSON on stdout.
pub fn helper_main() -> i32 {
    let mut bytes = Vec::new();
    if std::io::stdin().read_to_end(&mut bytes).is_err() {
        return 2;
    }
    let reply = match extract(&bytes) {
        Ok(pages) => Reply::Pages(pages),
        Err(e) => Reply::Failed(e),
    };
    let mut out = std::io::stdout().lock();
    match serde_json::to_writer(&mut out, &reply).map(|()| out.flush()) {
        Ok(Ok(())) => 0,
        _ => 2,
    }
}

/// The `kebab` binary to run as the helper, when this process is one.
fn helper_program() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    (exe.file_stem()? == std::ffi::OsStr::new("kebab")).then_some(exe)
}

/// What can be told of a PDF before parsing it: that there is one. Readers
/// accept the `%PDF-` header anywhere in the first 1024 bytes.
fn unparsed_check(bytes: &[u8]) -> Result<(), PdfError> {
    if bytes.is_empty() {
        return Err(PdfError::Empty);
    }
    if !bytes[..bytes.len().min(1024)].windows(5).any(|w| w == b"%PDF-") {
        return Err(PdfError::NotPdf);
    }
    Ok(())
}

/// Read a PDF's pages with the time bound, in a helper process when possible.
pub fn extract_bounded(bytes: &[u8], limit: Duration) -> Result<Pages, PdfError> {
    unparsed_check(bytes)?;
    let Some(program) = helper_program() else { return extract(bytes) };
    let mut cmd = Command::new(program);
    cmd.arg(HELPER_ARG);
    let out = match run_bounded(cmd, bytes, limit) {
        Ok(out) => out,
        Err(Bounded::TimedOut) => return Err(PdfError::TimedOut { seconds: limit.as_secs() }),
        Err(Bounded::Failed(reason)) => return Err(PdfError::Crashed { reason }),
    };
    match serde_json::from_slice::<Reply>(&out) {
        Ok(Reply::Pages(pages)) => Ok(pages),
        Ok(Reply::Failed(e)) => Err(e),
        Err(e) => Err(PdfError::Crashed { reason: format!("the helper's reply is unreadable: {e}") }),
    }
}

/// Why a bounded child gave no output.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Bounded {
    TimedOut,
    Failed(String),
}

/// Run `cmd` with `input` on stdin; its stdout if it exits 0 within `limit`,
/// else it is killed. stdin and stdout are pumped by threads so a child that
/// writes before reading all its input never deadlocks with us.
pub(crate) fn run_bounded(mut cmd: Command, input: &[u8], limit: Duration) -> Result<Vec<u8>, Bounded> {
    let failed = |what: &str, e: std::io::Error| Bounded::Failed(format!("{what}: {e}"));
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| failed("cannot start the PDF helper", e))?;
    let started = Instant::now();
    let mut stdin = child.stdin.take();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        if let Some(pipe) = stdin.as_mut() {
            // A child that stops reading (it crashed) breaks the pipe; its exit status says why.
            let _ = pipe.write_all(&input);
        }
        drop(stdin);
    });
    let mut stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(pipe) = stdout.as_mut() {
            let _ = pipe.read_to_end(&mut out);
        }
        out
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() >= limit => {
                let _ = child.kill();
                let _ = child.wait();
                let _ = writer.join();
                let _ = reader.join();
                return Err(Bounded::TimedOut);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(failed("waiting for the PDF helper", e)),
        }
    };
    let _ = writer.join();
    let out = reader.join().unwrap_or_default();
    if status.success() { Ok(out) } else { Err(Bounded::Failed(format!("the PDF helper stopped: {status}"))) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleaning_drops_control_characters_and_extra_blank_lines() {
        assert_eq!(clean("\n\n  Title  \n\n\n\nbody\u{0}\u{c} line \nnext\n\n"), "  Title\n\nbody line\nnext");
        assert_eq!(clean(" \n\t\n"), "");
    }

    #[test]
    fn every_chunk_carries_its_page_number() {
        let pages = vec!["first page".to_string(), String::new(), "third page\n\nmore".to_string()];
        let chunks = chunk_pages(&pages, &ChunkLimits::default());
        let spans: Vec<(u32, u32)> = chunks.iter().map(|c| (c.line_start, c.line_end)).collect();
        assert_eq!(spans, [(1, 1), (3, 3)]);
        assert_eq!(chunks[1].text, "third page\n\nmore");
    }

    #[test]
    fn garbage_and_truncated_input_are_broken_not_panics() {
        assert_eq!(extract(b"# A note\n\nnot a pdf at all\n"), Err(PdfError::NotPdf));
        assert!(matches!(extract(b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog"), Err(PdfError::Broken { .. })));
        assert_eq!(extract(b""), Err(PdfError::Empty));
    }

    #[test]
    fn a_child_that_runs_too_long_is_killed() {
        let mut cmd = Command::new("sleep");
        cmd.arg("30");
        assert_eq!(run_bounded(cmd, b"", Duration::from_millis(200)), Err(Bounded::TimedOut));
    }

    #[test]
    fn a_child_that_fails_is_reported_and_its_output_is_returned_when_it_succeeds() {
        let cat = Command::new("cat");
        assert_eq!(run_bounded(cat, b"pages", Duration::from_secs(60)), Ok(b"pages".to_vec()));
        assert!(matches!(run_bounded(Command::new("false"), b"", Duration::from_secs(60)), Err(Bounded::Failed(_))));
    }
}
