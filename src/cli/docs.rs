//! `kebab docs [--path-glob G]`: the indexed documents.

use anyhow::Result;
use serde::Serialize;

use super::Ctx;
use crate::error::UserError;
use crate::render::human_bytes;
use crate::script::one_line;
use crate::store::DocRow;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only documents whose path matches this glob (e.g. 'notes/**/*.md')
    #[arg(long, value_name = "G")]
    path_glob: Option<String>,
}

#[derive(Serialize)]
struct DocsDoc {
    schema_version: &'static str,
    documents: Vec<DocRow>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<i32> {
    let matcher = match &args.path_glob {
        Some(g) => Some(
            globset::Glob::new(g)
                .map_err(|e| {
                    UserError::new("bad_input", format!("bad --path-glob {g:?}: {e}"))
                        .with_hint("give a glob over the paths `kebab docs` lists, e.g. 'notes/**/*.md' (quoted, so the shell leaves it)")
                })?
                .compile_matcher(),
        ),
        None => None,
    };
    let store = ctx.store()?;
    let all = store.documents()?;
    // Kept for the notice: an index that holds documents, none of them matching.
    let first = all.first().map(|d| d.path.clone());
    let total = all.len();
    // A glob naming a folder ('notes', 'notes/') matches no path: the files under it are 'notes/**'.
    let folder = args.path_glob.as_deref().map(|g| g.trim_end_matches('/')).filter(|f| !f.is_empty()).and_then(|f| {
        let under = globset::Glob::new(&format!("{f}/**")).ok()?.compile_matcher();
        all.iter().any(|d| under.is_match(&d.path)).then(|| f.to_string())
    });
    // A JSONL record's path is FILE#ID: a glob naming the file ('**/*.jsonl') matches its records too.
    let matches =
        |m: &globset::GlobMatcher, path: &str| m.is_match(path) || path.rsplit_once('#').is_some_and(|(f, _)| m.is_match(f));
    let documents: Vec<DocRow> = all.into_iter().filter(|d| matcher.as_ref().is_none_or(|m| matches(m, &d.path))).collect();
    if ctx.out.json {
        ctx.out.json(&DocsDoc { schema_version: "docs.v1", documents })?;
        return Ok(0);
    }
    match (&args.path_glob, &first) {
        (Some(g), Some(_)) if documents.is_empty() && let Some(f) = &folder => ctx.out.notice(format!(
            "no document path matches {:?}: {f} is a folder: '{f}/**' matches the documents under it",
            one_line(g),
            f = one_line(f)
        )),
        (Some(g), Some(first)) if documents.is_empty() => ctx.out.notice(format!(
            "no document path matches {:?} ({} in all; paths look like {}, so a glob starts with the root's name)",
            one_line(g),
            crate::render::count(total, "document"),
            one_line(first)
        )),
        _ if documents.is_empty() => ctx.out.notice("no documents (index notes with `kebab ingest PATH`)"),
        _ => {}
    }
    for d in &documents {
        ctx.out.line(format!(
            "{}\t{}\t{}\t{}\t{}",
            one_line(&d.path),
            one_line(d.title.as_deref().unwrap_or("")),
            d.lang,
            crate::render::count(d.chunks, "chunk"),
            human_bytes(d.bytes as u64)
        ))?;
    }
    Ok(0)
}
