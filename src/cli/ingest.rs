//! `kebab ingest [PATH...]`: index notes, showing progress (a bar on a
//! terminal, one line per file with `KEBAB_PROGRESS=plain`), then a summary.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};

use super::Ctx;
use crate::error::UserError;
use crate::ingest::embed::EmbedSummary;
use crate::ingest::{self, Event, FormatChoice, IngestOptions, Summary};
use crate::render::human_bytes;
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
    Plain { done: usize, total: usize },
    Bar { bar: ProgressBar, files: usize, started: Instant },
}

impl Progress {
    fn new(ctx: &Ctx) -> Progress {
        if ctx.out.quiet {
            return Progress::None;
        }
        if std::env::var("KEBAB_PROGRESS").is_ok_and(|v| v == "plain") {
            return Progress::Plain { done: 0, total: 0 };
        }
        if ctx.out.progress_on_terminal() {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template("{bar:20} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            return Progress::Bar { bar, files: 0, started: Instant::now() };
        }
        Progress::None
    }

    fn event(&mut self, ctx: &Ctx, ev: Event) {
        match (self, ev) {
            (Progress::Plain { total, .. }, Event::Planned { files, bytes }) => {
                *total += files;
                eprintln!("planned {files} files, {}", human_bytes(bytes));
            }
            (Progress::Plain { done, total }, Event::File { path, what, .. }) => {
                *done += 1;
                eprintln!("[{done}/{total}] {what} {}", one_line(path));
            }
            (Progress::Bar { bar, .. }, Event::Planned { bytes, .. }) => bar.inc_length(bytes),
            (Progress::Bar { bar, files, started }, Event::File { bytes, .. }) => {
                *files += 1;
                bar.inc(bytes);
                let rate = *files as f64 / started.elapsed().as_secs_f64().max(1e-3);
                bar.set_message(format!("{files} files {rate:.0}/s"));
            }
            (progress, Event::Skipped(skip)) => {
                let line = format!("skipped {}: {}", one_line(&skip.path), skip.reason);
                match progress {
                    Progress::Bar { bar, .. } => bar.suspend(|| ctx.out.warn(&line)),
                    _ => ctx.out.warn(&line),
                }
            }
            _ => {}
        }
    }

    fn finish(self) {
        if let Progress::Bar { bar, .. } = self {
            bar.finish_and_clear();
        }
    }
}

pub fn run(ctx: &Ctx, args: Args) -> Result<i32> {
    // Refused up front, even when nothing would change: a read-only run must
    // never depend on whether the notes happen to be unchanged.
    if ctx.readonly {
        return Err(UserError::readonly("`kebab ingest`").into());
    }
    let cfg = ctx.config()?;
    let mut store = ctx.store()?;
    let opts = IngestOptions { paths: args.paths, format: args.format, prune: args.prune, force: args.force };
    let mut progress = Progress::new(ctx);
    let result = ingest::run(&mut store, &cfg, &ctx.config_dir(), &opts, &mut |ev| progress.event(ctx, ev));
    progress.finish();
    let summary = result?;
    let embedded = embed_stage(ctx, &cfg, &store, args.force)?;
    if ctx.out.json {
        ctx.out.json(&IngestDoc { summary: &summary, embedding: embedded.as_ref() })?;
    } else {
        print_summary(ctx, &summary)?;
        if let Some(e) = embedded.as_ref().filter(|e| e.embedded > 0) {
            let secs = e.elapsed_ms as f64 / 1000.0;
            ctx.out.line(format!(
                "embedded {} chunks with {} in {secs:.1} s ({:.0} chunks/s)",
                e.embedded,
                e.model,
                e.embedded as f64 / secs.max(1e-3)
            ))?;
        }
    }
    Ok(0)
}

#[derive(serde::Serialize)]
struct IngestDoc<'a> {
    #[serde(flatten)]
    summary: &'a Summary,
    #[serde(skip_serializing_if = "Option::is_none")]
    embedding: Option<&'a EmbedSummary>,
}

/// Vectors for every chunk that has none, when an embedder is configured.
fn embed_stage(ctx: &Ctx, cfg: &crate::config::Config, store: &crate::store::Store, force: bool) -> Result<Option<EmbedSummary>> {
    let (model, note) = crate::embed::select(&cfg.embedding, &ctx.paths.data_dir);
    if let Some(n) = note {
        ctx.out.notice(n);
    }
    let Some(model) = model else { return Ok(None) };
    let counter = ctx.counter("chunks embedded");
    let summary = ingest::embed::embed_missing(store, model.as_ref(), force, &mut |done, total| counter.set(done, total));
    counter.finish();
    Ok(Some(summary?))
}

fn print_summary(ctx: &Ctx, s: &Summary) -> Result<()> {
    let secs = s.elapsed_ms as f64 / 1000.0;
    if s.added + s.updated + s.removed == 0 && s.skipped == 0 {
        ctx.out.line(format!(
            "nothing changed: {} documents in {} files unchanged ({secs:.2} s)",
            s.unchanged, s.files_seen
        ))?;
    } else {
        ctx.out.line(format!(
            "{} files; documents: {} added, {} updated, {} unchanged, {} removed; {} skipped; {} chunks written",
            s.files_seen, s.added, s.updated, s.unchanged, s.removed, s.skipped, s.chunks_written
        ))?;
        let rate = s.bytes_read as f64 / secs.max(1e-3);
        ctx.out.line(format!("read {} in {secs:.2} s ({}/s)", human_bytes(s.bytes_read), human_bytes(rate as u64)))?;
    }
    if s.missing > 0 {
        ctx.out.notice(format!(
            "{} documents' files are gone; `kebab ingest --prune` removes them from the index",
            s.missing
        ));
    }
    Ok(())
}
