//! The two halves of an ingest run: one thread reads each file, hashes it and,
//! unless its bytes are the ones already indexed, decodes and chunks it, while
//! the calling thread writes the files before it into the index. The reading
//! and cutting were a quarter of a bulk ingest's time; on their own thread
//! they overlap with SQLite's (docs/performance.md, issue 20). The writer
//! stays one thread on one connection, and files are written in walk order.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::mpsc;
use std::time::Instant;

use anyhow::{Result, anyhow};

use super::{Candidate, Event, FileResult, Format, PAGE_LIMITS, RECORD_LIMITS, Skipped, Summary, html, jsonl, markdown, pdf, text};
use crate::config::Config;
use crate::ingest::chunk::ChunkLimits;
use crate::store::{DocumentInput, SourceInput, SourceOutcome, SourceRows, Store};

/// Files read ahead of the writer: enough to keep it busy, few enough that
/// large files do not pile up in memory.
const READ_AHEAD: usize = 16;

/// When to commit the open batch of files: often enough that a crash loses
/// little and another writer (a REPL saving a turn) waits well under its busy
/// timeout, rarely enough that FTS5 is not merging tiny segments all day.
/// Each commit writes both indexes' pending terms out as new segments: two
/// seconds rather than one made a 100k-chunk ingest a fifth faster
/// (docs/performance.md, issue 20).
struct BatchClock {
    started: Instant,
    bytes: u64,
}

impl Default for BatchClock {
    fn default() -> Self {
        BatchClock { started: Instant::now(), bytes: 0 }
    }
}

impl BatchClock {
    const MAX_BYTES: u64 = 16_000_000;
    const MAX_AGE: std::time::Duration = std::time::Duration::from_millis(2000);

    /// True (and the clock restarts) when the batch should be committed
    /// before a file of `next_bytes` joins it.
    fn due(&mut self, next_bytes: u64) -> bool {
        let due = self.bytes > 0 && (self.bytes + next_bytes > Self::MAX_BYTES || self.started.elapsed() > Self::MAX_AGE);
        if due {
            *self = BatchClock::default();
        }
        self.bytes += next_bytes;
        due
    }
}

/// What the reader needs to know about the root it reads.
pub(super) struct Reading<'a> {
    pub root_id: i64,
    pub root_name: &'a str,
    pub cfg: &'a Config,
    pub limits: &'a ChunkLimits,
    /// Cut every file, even one whose bytes are unchanged.
    pub force: bool,
    /// `--format` named a format: a file indexed as another one is read again
    /// even when its bytes are unchanged (a bare run keeps what was chosen).
    pub reformat: bool,
}

/// A file read and cut, ready for the writer.
pub(super) enum Prepared {
    /// Its bytes are the ones indexed: nothing to write.
    Unchanged { docs: usize },
    Changed { input: SourceRows, bad_lines: Vec<jsonl::BadLine> },
}

/// Where the writer counts what it did and tells the caller.
pub(super) struct Tally<'s> {
    pub summary: &'s mut Summary,
    pub on: &'s mut dyn FnMut(Event),
}

impl Tally<'_> {
    fn skipped(&mut self, skip: Skipped) {
        (self.on)(Event::Skipped(&skip));
        self.summary.skipped += 1;
        self.summary.skipped_files.push(skip);
    }
}

/// Reads `cand`; `indexed` is the hash and document count the index holds
/// for it, if any; `recut`: cut it even if its bytes are the indexed ones
/// (as `reading.force` does for every file). `Err` is why the file is skipped.
pub(super) fn prepare(reading: &Reading, cand: &Candidate, indexed: Option<&(String, usize)>, recut: bool) -> Result<Prepared, String> {
    let max = reading.cfg.workspace.max_file_bytes;
    if cand.bytes > max {
        return Err(too_big(cand.bytes, max));
    }
    let bytes = std::fs::read(&cand.abs).map_err(|e| super::skip::cannot_read(&e, false))?;
    if bytes.len() as u64 > max {
        return Err(too_big(bytes.len() as u64, max));
    }
    let hash = blake3::hash(&bytes).to_hex().to_string();
    // An empty or blank file holds no note, whatever its format: skipped, and said so alike on
    // every run, while nothing of it is indexed; one whose text was indexed is written with no
    // document, so that its old text goes.
    let nothing_indexed = indexed.is_none_or(|(_, docs)| *docs == 0);
    let blank = Blank::of(&bytes);
    if let Some(blank) = blank
        && nothing_indexed
    {
        return Err(blank.reason(cand.format));
    }
    if !reading.force
        && !recut
        && let Some((old, docs)) = indexed
        && *old == hash
    {
        return Ok(Prepared::Unchanged { docs: *docs });
    }

    let path = format!("{}/{}", reading.root_name, cand.rel);
    let stem = Path::new(&cand.rel).file_stem().map(|s| s.to_string_lossy().to_string());
    let mut bad_lines = Vec::new();
    let documents = if blank.is_some() {
        Vec::new()
    } else if cand.format == Format::Pdf {
        let limit = std::time::Duration::from_secs(reading.cfg.workspace.pdf_timeout_secs);
        let pages = pdf::extract_bounded(&bytes, limit).map_err(|e| match e {
            pdf::PdfError::NotPdf if reading.reformat => {
                not_in_format(cand, "not a PDF (it does not begin with %PDF-)").unwrap_or_else(|| e.message())
            }
            e => e.message(),
        })?;
        vec![DocumentInput {
            external_id: path.clone(),
            path,
            title: stem,
            media: "application/pdf",
            tags: Vec::new(),
            body: pages.join("\n\n"),
            chunks: pdf::chunk_pages(&pages, &PAGE_LIMITS),
        }]
    } else {
        let text = decode(&bytes)?;
        match cand.format {
            Format::Md => {
                let doc = markdown::chunk_markdown(text, reading.limits);
                vec![DocumentInput {
                    external_id: path.clone(),
                    path,
                    title: doc.title.or(stem),
                    media: "text/markdown",
                    tags: doc.tags,
                    body: text.to_string(),
                    chunks: doc.chunks,
                }]
            }
            Format::Html => {
                let doc = html::chunk_html(text, reading.limits);
                // A page with nothing to search (its text written by a script,
                // or inside what is left out) is said to be so, as a scanned PDF
                // is, not counted "added" with 0 chunks. One indexed before is
                // written, so that its old text goes.
                if doc.chunks.is_empty() && nothing_indexed {
                    return Err(html_without_text());
                }
                vec![DocumentInput {
                    external_id: path.clone(),
                    path,
                    title: doc.title.or(stem),
                    media: "text/html",
                    tags: Vec::new(),
                    body: doc.chunks.iter().map(|c| c.text.as_str()).collect::<Vec<_>>().join("\n\n"),
                    chunks: doc.chunks,
                }]
            }
            Format::Txt => vec![DocumentInput {
                external_id: path.clone(),
                path,
                title: stem,
                media: "text/plain",
                tags: Vec::new(),
                body: text.to_string(),
                chunks: text::chunk_text(text, reading.limits),
            }],
            // JSON Lines (a PDF was read above).
            Format::Jsonl | Format::Pdf => {
                let (records, bad) = jsonl::parse_jsonl(text, &RECORD_LIMITS);
                bad_lines = bad;
                if records.is_empty() && !bad_lines.is_empty() {
                    let problem = format!("no usable JSONL record (line {}: {})", bad_lines[0].line, bad_lines[0].reason);
                    return Err(if reading.reformat { not_in_format(cand, &problem).unwrap_or(problem) } else { problem });
                }
                // A file of blank lines only was skipped above (Blank): with
                // no bad line, a line here is a record.
                records
                    .into_iter()
                    .map(|r| DocumentInput {
                        path: format!("{path}#{}", r.id),
                        external_id: r.id,
                        body: match &r.title {
                            Some(t) => format!("{t}\n{}", r.text),
                            None => r.text,
                        },
                        title: r.title,
                        media: "application/jsonl",
                        tags: Vec::new(),
                        chunks: r.chunks,
                    })
                    .collect()
            }
        }
    };
    let input = SourceInput {
        root_id: reading.root_id,
        rel_path: cand.rel.clone(),
        format: cand.format.name(),
        content_hash: hash,
        bytes: bytes.len() as u64,
        documents,
    };
    // Here, on the reading thread: hashes, languages, CJK words.
    Ok(Prepared::Changed { input: input.into_rows(), bad_lines })
}

/// Writes the files of one root, read on a second thread, in batches;
/// returns the root-relative paths it looked at (skipped ones included).
pub(super) fn write_target(store: &mut Store, reading: &Reading, files: &[Candidate], tally: &mut Tally) -> Result<HashSet<String>> {
    // Read with --force too: what a file held decides how an empty one is told.
    let indexed: HashMap<String, (String, usize, String)> = store.indexed_sources(reading.root_id)?;
    // Files indexed as another format than `--format` names: cut again, as with --force.
    let recut: HashSet<String> = if reading.reformat {
        let other = |c: &&Candidate| indexed.get(&c.rel).is_some_and(|(_, _, f)| f != c.format.name());
        files.iter().filter(other).map(|c| c.rel.clone()).collect()
    } else {
        HashSet::new()
    };
    let indexed: HashMap<String, (String, usize)> = indexed.into_iter().map(|(rel, (hash, docs, _))| (rel, (hash, docs))).collect();
    std::thread::scope(|scope| {
        let (send, receive) = mpsc::sync_channel(READ_AHEAD);
        let recut = &recut;
        let reader = scope.spawn(move || {
            for cand in files {
                // The writer stopped (an error): stop reading.
                if send.send(prepare(reading, cand, indexed.get(&cand.rel), recut.contains(&cand.rel))).is_err() {
                    break;
                }
            }
        });
        let written = write_files(store, reading, files, recut, receive, tally);
        let read_all = reader.join().is_ok();
        match written {
            Ok((seen, wrote)) if read_all => {
                // A batch that wrote no file holds nothing but, maybe, the row
                // of a root this run made: without a note, no root is kept.
                // With none open, every write is committed and the postings
                // built for it stand (a rollback would drop them, and the
                // last block would be rebuilt from the table).
                if wrote {
                    store.commit_batch()?;
                } else if store.in_batch() {
                    store.rollback_batch();
                }
                Ok(seen)
            }
            Ok(_) => {
                store.rollback_batch();
                Err(anyhow!("reading the files of {} stopped unexpectedly; the last batch was not written", reading.root_name))
            }
            Err(e) => {
                store.rollback_batch();
                Err(e)
            }
        }
    })
}

/// The writer's half: each prepared file into the batch, in walk order.
/// Returns with the last batch still open, and whether a file was written in
/// it: the caller commits it once the reader is known to have finished, or
/// rolls it back on an error. A batch opens at the first file to write, not
/// before: reading a file to find it unchanged takes no write lock, so a
/// re-ingest with nothing changed keeps no other writer (kebab watch, the MCP
/// server, another ingest) waiting on it, nor failing past its busy timeout.
fn write_files(
    store: &mut Store,
    reading: &Reading,
    files: &[Candidate],
    recut: &HashSet<String>,
    prepared: mpsc::Receiver<Result<Prepared, String>>,
    tally: &mut Tally,
) -> Result<(HashSet<String>, bool)> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut batch = BatchClock::default();
    // Committed early only once a file is written in it: until then it may
    // hold a new root's row alone, which is kept only with a note.
    let mut wrote = false;
    // A reader that stopped early ends the loop short; the caller reports it.
    for (cand, file) in files.iter().zip(prepared.iter()) {
        if batch.due(cand.bytes) && wrote {
            store.commit_batch()?;
            wrote = false;
        }
        tally.summary.files_seen += 1;
        // Seen even when skipped below: a file that is unreadable today
        // keeps its old index entries rather than being pruned.
        seen.insert(cand.rel.clone());
        let display = format!("{}/{}", reading.root_name, cand.rel);
        let FileResult { outcome, bad_lines } = match file {
            Err(reason) => {
                tally.skipped(Skipped { path: display.clone(), reason, folder: false });
                // Counted as handled, or progress would never reach the total.
                (tally.on)(Event::File { path: &display, bytes: cand.bytes, what: "skipped" });
                continue;
            }
            Ok(Prepared::Unchanged { docs }) => {
                FileResult { outcome: SourceOutcome { unchanged: docs, ..Default::default() }, bad_lines: Vec::new() }
            }
            Ok(Prepared::Changed { input, bad_lines }) => {
                let force = reading.force || recut.contains(&cand.rel);
                // Opened at the first file to write; gone on with when open (a new root's, an earlier file's).
                store.begin_batch()?;
                let outcome = store.apply_source(&input, force).map_err(|e| e.context(format!("indexing {display}")))?;
                wrote = true;
                FileResult { outcome, bad_lines }
            }
        };
        let summary = &mut *tally.summary;
        summary.bytes_read += cand.bytes;
        summary.added += outcome.added;
        summary.updated += outcome.updated;
        summary.unchanged += outcome.unchanged;
        summary.removed += outcome.removed;
        summary.chunks_written += outcome.chunks_written;
        let what = if outcome.added + outcome.updated + outcome.removed == 0 {
            "unchanged"
        } else if outcome.added > 0 && outcome.updated == 0 {
            "added"
        } else {
            "updated"
        };
        (tally.on)(Event::File { path: &display, bytes: cand.bytes, what });
        for bad in bad_lines {
            tally.summary.skipped_records += 1;
            tally.skipped(Skipped { path: format!("{display}:{}", bad.line), reason: bad.reason, folder: false });
        }
    }
    Ok((seen, wrote))
}

/// A file with nothing in it to index, whatever its format: a note not written yet, or a save,
/// export or copy that never finished. Told apart so the reason says what the file holds: a file
/// of blank lines is not 0 bytes, and "empty (0 bytes)" would send the user to check a size that
/// is not 0.
#[derive(Clone, Copy)]
enum Blank {
    /// 0 bytes.
    Empty,
    /// Only white space (spaces, tabs, line breaks), maybe after a UTF-8 byte-order mark.
    OnlySpace,
}

impl Blank {
    fn of(bytes: &[u8]) -> Option<Blank> {
        if bytes.is_empty() {
            return Some(Blank::Empty);
        }
        // Looked at up to the first character that is not white space, which is most often the
        // first byte: every file is, unchanged ones too, so a note is never decoded whole here.
        // Not UTF-8 (UTF-16, binary): not blank here; decoding says what it is.
        let rest = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes).trim_ascii_start();
        let first = rest.utf8_chunks().next().and_then(|c| c.valid().chars().next());
        let blank = match first {
            None => rest.is_empty(),
            // A space past ASCII (U+00A0, U+3000) may open a blank file; any other character a note.
            Some(c) if c.is_whitespace() => std::str::from_utf8(rest).is_ok_and(|t| t.trim().is_empty()),
            Some(_) => false,
        };
        blank.then_some(Blank::OnlySpace)
    }

    /// Why the file is skipped. The same way out for every format.
    fn reason(self, format: Format) -> String {
        let what = match self {
            Blank::Empty => "empty (0 bytes)",
            Blank::OnlySpace => "holds only blank space",
        };
        let none = match format {
            Format::Md | Format::Txt => "no text",
            Format::Jsonl => "no JSONL record",
            Format::Html => "no readable text",
            Format::Pdf => "no PDF",
        };
        format!("{what}, so there is {none} to index; write or save it again, or list it in workspace.exclude")
    }
}

/// Why an HTML page that gave no chunk is skipped, and what to do about it.
fn html_without_text() -> String {
    "no readable text (kebab leaves out <script>, <style>, <nav>, <header>, <footer> and <aside>, and an element left open, \
     such as <nav> without </nav>, hides the rest of the page); save the page as a browser shows it, \
     or list it in workspace.exclude"
        .to_string()
}

/// Why a file read as `--format` said is not in that format, with the way
/// out: `--format pdf notes.md` said "unreadable PDF … re-save or re-export
/// it", which sent the user to repair a note that was fine. `None` when the
/// file's name says it is in that format: then --format is not to blame.
fn not_in_format(cand: &Candidate, problem: &str) -> Option<String> {
    let forced = cand.format;
    let fix = match super::format_of(Path::new(&cand.rel), super::FormatChoice::Auto) {
        // Its name says it is in that format: --format is not what went wrong.
        Some(own) if own == forced => return None,
        Some(own) => format!("drop --format {} to read it as {}, as its extension says", forced.name(), own.prose()),
        None => format!("give --format the format it is in ({})", Format::names(", ", Some(forced))),
    };
    Some(format!("{problem}, and --format {} reads every file given as {}: {fix}", forced.name(), forced.prose()))
}

fn too_big(bytes: u64, max: u64) -> String {
    format!("{bytes} bytes, larger than workspace.max_file_bytes ({max}); raise that setting to index it")
}

/// A text file's contents, or why it cannot be read as text.
fn decode(bytes: &[u8]) -> Result<&str, String> {
    // Windows editors save "Unicode" as UTF-16 with a byte-order mark; its
    // ASCII has NUL bytes, which would otherwise call the note binary.
    if let Some(form) = crate::script::utf16_or_32(bytes) {
        return Err(format!(
            "{form} text, not UTF-8; convert it (e.g. `iconv -f {} -t utf-8`) or list it in workspace.exclude",
            form.to_lowercase()
        ));
    }
    if bytes.contains(&0) {
        return Err("binary file (contains NUL bytes); if it is not a note, list it in workspace.exclude".into());
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        format!(
            "not valid UTF-8 (byte {}); convert it (e.g. `iconv -f latin1 -t utf-8`) or list it in workspace.exclude",
            e.valid_up_to()
        )
    })?;
    Ok(crate::script::without_bom(text))
}
