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
                .map_err(|e| UserError::new("bad_input", format!("bad --path-glob {g:?}: {e}")))?
                .compile_matcher(),
        ),
        None => None,
    };
    let store = ctx.store()?;
    let documents: Vec<DocRow> =
        store.documents()?.into_iter().filter(|d| matcher.as_ref().is_none_or(|m| m.is_match(&d.path))).collect();
    if ctx.out.json {
        ctx.out.json(&DocsDoc { schema_version: "docs.v1", documents })?;
        return Ok(0);
    }
    if documents.is_empty() {
        ctx.out.notice("no documents (index notes with `kebab ingest PATH`)");
    }
    for d in &documents {
        ctx.out.line(format!(
            "{}\t{}\t{}\t{} chunks\t{}",
            one_line(&d.path),
            one_line(d.title.as_deref().unwrap_or("")),
            d.lang,
            d.chunks,
            human_bytes(d.bytes as u64)
        ))?;
    }
    Ok(0)
}
