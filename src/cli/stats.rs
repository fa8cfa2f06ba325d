//! `kebab stats`: counts, sizes and the schema level.

use anyhow::Result;
use serde::Serialize;

use super::Ctx;
use crate::render::{count, human_bytes};
use crate::script::one_line;
use crate::store::Stats;

#[derive(Serialize)]
struct StatsDoc {
    schema_version: &'static str,
    #[serde(flatten)]
    stats: Stats,
}

pub fn run(ctx: &Ctx) -> Result<i32> {
    let store = ctx.store()?;
    let stats = store.stats()?;
    if ctx.out.json {
        ctx.out.json(&StatsDoc { schema_version: "stats.v1", stats })?;
        return Ok(0);
    }
    let s = &stats;
    ctx.out.line(format!("database      {} (schema level {})", s.database, s.schema_level))?;
    ctx.out.line(format!("size          {} (+ {} write-ahead log)", human_bytes(s.database_bytes), human_bytes(s.wal_bytes)))?;
    ctx.out.line(format!("documents     {} from {}", count(s.documents, "document"), count(s.sources, "file")))?;
    ctx.out.line(format!("chunks        {} ({} with Hangul/CJK), {} of text", s.chunks, s.cjk_chunks, human_bytes(s.text_bytes as u64)))?;
    ctx.out.line(format!("last indexed  {}", s.last_indexed_at.as_deref().unwrap_or("never")))?;
    for r in &s.roots {
        let (name, path) = (one_line(&r.name), one_line(&r.path));
        // One pair of brackets: `(1 document; only the files named in it)`, not two side by side.
        let held = match super::ingest::files_only(r) {
            Some(only) => format!("{}; {only}", count(r.documents, "document")),
            None => count(r.documents, "document"),
        };
        ctx.out.line(format!("root          {name} = {path} ({held})"))?;
    }
    Ok(0)
}
