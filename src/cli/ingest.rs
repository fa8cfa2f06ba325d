//! `kebab ingest [PATH...]`: index notes, showing progress (a bar on a
//! terminal, one line per file with `KEBAB_PROGRESS=plain`, a line every few
//! seconds otherwise), then a summary. Without PATH it walks
//! `workspace.roots`, or else the folders the database already holds; one of
//! those that is gone is warned about, and the run, having done the others,
//! exits 1. A run that indexes nothing leaves no database it made.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};

use super::Ctx;
use crate::ingest::embed::EmbedSummary;
use crate::ingest::{self, Event, FormatChoice, IngestOptions, Missing, MissingRoot, Skipped, Summary};
use crate::render::{count, human_bytes};
use crate::script::one_line;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Files or folders to index [default: workspace.roots from the config]
    paths: Vec<PathBuf>,
    /// How to read files: by extension, or all as one format
    #[arg(long, value_enum, default_value = "auto")]
    format: FormatChoice,
    /// Remove documents whose files are gone
    #[arg(long)]
    prune: bool,
    /// Re-chunk every file, changed or not
    #[arg(long)]
    force: bool,
}

/// How progress is shown.
enum Progress {
    None,
    /// Off a terminal: a counted line every few seconds; files read, skipped, planned.
    Lines(super::progress::Counter, usize, usize, usize),
    Plain { done: usize, total: usize },
    /// Files read and skipped, counted apart as the lines count them.
    Bar { bar: ProgressBar, files: usize, skipped: usize, started: Instant },
}

impl Progress {
    fn new(ctx: &Ctx) -> Progress {
        if ctx.out.quiet {
            return Progress::None;
        }
        if super::progress::plain_requested() {
            return Progress::Plain { done: 0, total: 0 };
        }
        if ctx.out.progress_on_terminal() {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template("{bar:20} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            return Progress::Bar { bar, files: 0, skipped: 0, started: Instant::now() };
        }
        Progress::Lines(ctx.counter("files read"), 0, 0, 0)
    }

    fn event(&mut self, ctx: &Ctx, ev: Event) {
        match (self, ev) {
            (Progress::Plain { total, .. }, Event::Planned { files, bytes }) => {
                *total += files;
                eprintln!("planned {}, {}", count(files, "file"), human_bytes(bytes));
            }
            (Progress::Plain { done, total }, Event::File { path, what, .. }) => {
                *done += 1;
                eprintln!("[{done}/{total}] {what} {}", one_line(path));
            }
            (Progress::Lines(.., total), Event::Planned { files, .. }) => *total += files,
            (Progress::Lines(counter, read, skipped, total), Event::File { what, .. }) => {
                *(if what == "skipped" { &mut *skipped } else { &mut *read }) += 1;
                counter.set_skipping(*read, *skipped, *total);
            }
            (Progress::Bar { bar, .. }, Event::Planned { bytes, .. }) => bar.inc_length(bytes),
            (Progress::Bar { bar, files, skipped, started }, Event::File { bytes, what, .. }) => {
                *(if what == "skipped" { &mut *skipped } else { &mut *files }) += 1;
                bar.inc(bytes);
                let rate = (*files + *skipped) as f64 / started.elapsed().as_secs_f64().max(1e-3);
                let also = if *skipped > 0 { format!(", {skipped} skipped") } else { String::new() };
                let elapsed = started.elapsed().as_secs();
                bar.set_message(format!("{} read{also} · {rate:.2}/s · {elapsed}s elapsed", count(*files, "file")));
            }
            (progress, Event::Skipped(skip)) => progress.warn(ctx, &skipped_line(skip)),
            (progress, Event::Absorbed { from, into, to, dir, documents }) => {
                let line = format!(
                    "{}/ ({}) lies inside {}/: its {} moved to {}/ (chunks, vectors and saved citations kept)",
                    one_line(from),
                    one_line(&dir.display().to_string()),
                    one_line(into),
                    count(documents, "document"),
                    one_line(to)
                );
                match progress {
                    Progress::Bar { bar, .. } => bar.suspend(|| ctx.out.notice(&line)),
                    _ => ctx.out.notice(&line),
                }
            }
            _ => {}
        }
    }

    /// A warning, printed clear of the bar.
    fn warn(&self, ctx: &Ctx, line: &str) {
        match self {
            Progress::Bar { bar, .. } => bar.suspend(|| ctx.out.warn(line)),
            _ => ctx.out.warn(line),
        }
    }

    fn finish(self) {
        match self {
            Progress::Bar { bar, .. } => bar.finish_and_clear(),
            Progress::Lines(counter, ..) => counter.finish(),
            _ => {}
        }
    }
}

fn skipped_line(skip: &Skipped) -> String {
    format!("skipped {}: {}", one_line(&skip.path), skip.reason)
}

/// Progress, with the run's first skip held back until something follows
/// it: when that skip is all the run did, the error failing the run names it
/// and its reason (`nothing_ingested`, the message `--json` prints too), and
/// the warning said the same just above. Files that vanished mid-run (a
/// folder removed) are told in one warning at the end, not one line each.
struct Live {
    progress: Progress,
    /// The run's first skip, while nothing has followed it.
    held: Option<Skipped>,
    skipped: bool,
    /// Files gone between the walk and their reading: told in one warning at the end.
    vanished: Vec<String>,
}

impl Live {
    fn event(&mut self, ctx: &Ctx, ev: Event) {
        match &ev {
            Event::Skipped(skip) if !self.skipped => {
                self.skipped = true;
                self.held = Some((*skip).clone());
                return;
            }
            Event::Skipped(skip) if skip.vanished() => {
                self.release(ctx);
                self.vanished.push(skip.path.clone());
                return;
            }
            // The walk's count, and the skipped file counted as handled: nothing said of another file.
            Event::Planned { .. } => {}
            Event::File { path, .. } if self.held.as_ref().is_some_and(|held| held.path == *path) => {}
            _ => self.release(ctx),
        }
        self.progress.event(ctx, ev);
    }

    fn release(&mut self, ctx: &Ctx) {
        match self.held.take() {
            Some(skip) if skip.vanished() => self.vanished.push(skip.path),
            Some(skip) => self.progress.warn(ctx, &skipped_line(&skip)),
            None => {}
        }
    }

    /// `told`: the error failing the run names its one skip.
    fn finish(mut self, ctx: &Ctx, told: bool) {
        if !told {
            self.release(ctx);
        }
        if !self.vanished.is_empty() {
            let line = format!(
                "{} vanished during the run and {} skipped: {}; the next `kebab ingest` catches up",
                count(self.vanished.len(), "file"),
                if self.vanished.len() == 1 { "was" } else { "were" },
                crate::script::first_few(self.vanished.drain(..))
            );
            self.progress.warn(ctx, &line);
        }
        self.progress.finish();
    }
}

pub fn run(ctx: &Ctx, args: Args) -> Result<i32> {
    // Refused up front, even when nothing would change: a read-only run must
    // never depend on whether the notes happen to be unchanged.
    ctx.writable_for("`kebab ingest`")?;
    let cfg = ctx.config()?;
    let named = !args.paths.is_empty();
    // A run that fails before it reads a note leaves no new, empty database behind.
    if crate::store::no_database(&ctx.paths.database).is_some() {
        if !named && cfg.workspace.roots.is_empty() {
            return Err(ingest::nothing_to_ingest().into());
        }
        ingest::check_named(&args.paths)?;
    }
    // A database (and data dir) this run makes is kept only once a note is
    // indexed in it; one already there is kept whatever happens.
    let db = &ctx.paths.database;
    let fresh = std::fs::symlink_metadata(db).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
    let new_dirs: Vec<PathBuf> = db.ancestors().skip(1).take_while(|dir| !dir.exists()).map(PathBuf::from).collect();
    let mut store = ctx.create_store()?;
    if !named && cfg.workspace.roots.is_empty() {
        announce_known_roots(ctx, &store)?;
    }
    let opts = IngestOptions { paths: args.paths, format: args.format, prune: args.prune, force: args.force, format_flag: true };
    let mut live = Live { progress: Progress::new(ctx), held: None, skipped: false, vanished: Vec::new() };
    let result = ingest::run(&mut store, &cfg, &ctx.config_dir(), &opts, &mut |ev| live.event(ctx, ev));
    let failed = result.as_ref().ok().and_then(ingest::nothing_ingested).filter(|_| named);
    live.finish(ctx, failed.is_some());
    let summary = result?;
    // A root is kept only once a note in it is indexed: none means nothing was.
    let store = if fresh && store.roots()?.is_empty() {
        discard(ctx, store, &new_dirs);
        None
    } else {
        Some(store)
    };
    for gone in &summary.missing_roots {
        ctx.out.warn(missing_root_warning(gone, !cfg.workspace.roots.is_empty()));
    }
    if let Some(e) = failed {
        return Err(e.into());
    }
    let embedded = match &store {
        Some(store) => embed_stage(ctx, &cfg, store, args.force, summary.chunks_written)?,
        None => None,
    };
    if ctx.out.json {
        ctx.out.json(&ingest::IngestDoc { summary: &summary, embedding: embedded.as_ref() })?;
    } else {
        let resumed = embedded.as_ref().map_or(0, |e| (e.embedded + e.unread).saturating_sub(summary.chunks_written));
        print_summary(ctx, &summary, resumed)?;
        if let Some(e) = embedded.as_ref().filter(|e| e.embedded > 0) {
            let secs = e.elapsed_ms as f64 / 1000.0;
            ctx.out.line(format!(
                "embedded {} with {} in {secs:.1} s ({} chunks/s)",
                count(e.embedded, "chunk"),
                e.model,
                rate(e.embedded as f64 / secs.max(1e-3))
            ))?;
        }
        if let Some(e) = embedded.as_ref().filter(|e| e.unread > 0) {
            ctx.out.line(format!(
                "left {} to lexical search: {} does not read their script (Hangul/CJK; see embedding.reads_cjk)",
                count(e.unread, "chunk"),
                e.model
            ))?;
        }
    }
    // A folder the run was meant to walk is not there: not success, though
    // the others were ingested (exit 1, as for a missing path).
    Ok(if summary.missing_roots.is_empty() { 0 } else { 1 })
}

/// With no PATH and no `workspace.roots` the run walks the folders already
/// in the database (how people re-run ingest after editing notes): they are
/// named first.
fn announce_known_roots(ctx: &Ctx, store: &crate::store::Store) -> Result<()> {
    let roots: Vec<String> = store
        .roots()?
        .iter()
        .map(|r| match files_only(r) {
            Some(only) => format!("{} ({only})", one_line(&r.path)),
            None => one_line(&r.path),
        })
        .collect();
    if roots.is_empty() {
        return Err(ingest::nothing_to_ingest().into());
    }
    ctx.out.notice(format!("no PATH given: walking the folders already indexed: {}", roots.join(", ")));
    Ok(())
}

/// How a root is spoken of when only files in its folder were named: a bare run reads those, not the folder.
/// Bare words, for the caller to put in the brackets it already has (`stats` counts documents in them).
pub(super) fn files_only(root: &crate::store::RootRow) -> Option<&'static str> {
    (!root.whole_folder).then_some("only the files named in it")
}

/// Deletes `store`, made by this run and holding nothing, and `new_dirs`,
/// the data dir and the folders above it the run made (innermost first),
/// those with nothing else in them. What cannot be deleted is only warned
/// about: the run's outcome stands.
fn discard(ctx: &Ctx, store: crate::store::Store, new_dirs: &[PathBuf]) {
    let db = store.path().to_path_buf();
    if let Err(e) = store.discard() {
        ctx.out.warn(format!("nothing was indexed, but the new, empty database {} could not be removed: {e}", db.display()));
    }
    // remove_dir deletes only an empty folder.
    for dir in new_dirs {
        let _ = std::fs::remove_dir(dir);
    }
}

/// What to do about a remembered folder that is gone (`configured`: it is
/// listed in workspace.roots, which must change too for it to be forgotten).
/// `kebab watch` gives the same warning.
pub(super) fn missing_root_warning(gone: &MissingRoot, configured: bool) -> String {
    let path = one_line(&gone.path);
    // A folder where only files were named was never indexed whole: "indexed folder" would
    // say its other files were searched.
    let origin = match (configured, gone.whole_folder) {
        (true, _) => format!("workspace.roots folder {path}"),
        (false, true) => format!("indexed folder {path}"),
        (false, false) => format!("folder {path}, of which only the files named were indexed,"),
    };
    let kept = match gone.documents {
        0 => "nothing was indexed from it".to_string(),
        1 => "its 1 document is kept and still found".to_string(),
        n => format!("its {n} documents are kept and still found"),
    };
    let (state, todo) = match (gone.why, configured) {
        (Missing::LinkLoop, _) => (format!("is {}", gone.reason), ingest::FIX_LINK),
        (Missing::Unreadable, _) => (format!("cannot be read ({})", gone.reason), "check that this user may enter it"),
        (Missing::NotThere, false) => {
            ("is not there".to_string(), "restore it (or mount its disk), or run `kebab ingest --prune` to forget it")
        }
        (Missing::NotThere, true) => (
            "is not there".to_string(),
            "restore it (or mount its disk), or take it out of workspace.roots and run `kebab ingest --prune` to forget it",
        ),
    };
    format!("{origin} {state}: {kept}; {todo}")
}

/// Vectors for every chunk that has none, when an embedder is configured.
/// Chunks beyond the `written` ones of this run were left by an earlier,
/// interrupted run: that is said, so the run does not look like a no-op.
fn embed_stage(ctx: &Ctx, cfg: &crate::config::Config, store: &crate::store::Store, force: bool, written: usize) -> Result<Option<EmbedSummary>> {
    let (model, note) = crate::embed::select(&cfg.embedding, &ctx.paths);
    if let Some(n) = note {
        ctx.out.notice(n);
    }
    let Some(model) = model else { return Ok(None) };
    let waiting = store.count_without_vectors()? as usize;
    let left = waiting.saturating_sub(written);
    if left > 0 && !force {
        ctx.out.notice(format!("embedding {} left from an earlier run", count(left, "chunk")));
    }
    let mut counter = ctx.counter("chunks embedded");
    let summary = ingest::embed::embed_missing(store, model.as_ref(), force, &mut |done, total| counter.set(done, total));
    counter.finish();
    Ok(Some(summary?))
}

fn print_summary(ctx: &Ctx, s: &Summary, resumed: usize) -> Result<()> {
    let secs = s.elapsed_ms as f64 / 1000.0;
    if s.added + s.updated + s.removed == 0 && s.skipped == 0 && resumed > 0 {
        ctx.out.line(format!(
            "no file changed ({} in {}); resumed embedding {} from an earlier run",
            count(s.unchanged, "document"),
            count(s.files_seen, "file"),
            count(resumed, "chunk")
        ))?;
    } else if s.added + s.updated + s.removed == 0 && s.skipped == 0 {
        ctx.out.line(format!(
            "nothing changed: {} in {} unchanged ({secs:.2} s)",
            count(s.unchanged, "document"),
            count(s.files_seen, "file")
        ))?;
    } else {
        // Bad JSONL lines are counted apart from the files skipped whole.
        let skipped = match s.skipped_records {
            0 => format!("{} skipped", s.skipped),
            records => format!("{} skipped, {} skipped", count(s.skipped - records, "file"), count(records, "record")),
        };
        ctx.out.line(format!(
            "{}; documents: {} added, {} updated, {} unchanged, {} removed; {skipped}; {} written",
            count(s.files_seen, "file"),
            s.added,
            s.updated,
            s.unchanged,
            s.removed,
            count(s.chunks_written, "chunk")
        ))?;
        let rate = s.bytes_read as f64 / secs.max(1e-3);
        ctx.out.line(format!("read {} in {secs:.2} s ({}/s)", human_bytes(s.bytes_read), human_bytes(rate as u64)))?;
    }
    for f in &s.forgotten_roots {
        let documents = count(f.documents, "document");
        ctx.out.line(format!("forgot {}: the folder is gone; removed its {documents}", one_line(&f.path)))?;
    }
    // Those of a missing folder were warned about with it.
    let missing = s.missing - s.missing_roots.iter().map(|m| m.documents).sum::<usize>();
    if missing > 0 {
        let (gone, them) =
            if missing == 1 { ("1 document's file is gone".to_string(), "it") } else { (format!("{missing} documents' files are gone"), "them") };
        ctx.out.notice(format!("{gone}; `kebab ingest --prune` removes {them} from the index"));
    }
    Ok(())
}


/// A rate as people read it: whole numbers, but a slow one keeps a decimal
/// rather than showing 0.
fn rate(per_sec: f64) -> String {
    if per_sec < 10.0 { format!("{per_sec:.1}") } else { format!("{per_sec:.0}") }
}
