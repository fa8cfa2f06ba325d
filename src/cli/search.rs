//! `kebab search QUERY`: ranked chunks with where they are, as text or as
//! `search_response.v1`.

use anyhow::Result;
use owo_colors::Style;

use super::Ctx;
use crate::error::UserError;
use crate::script::one_line;
use crate::script::printable;
use crate::search::engine::Trace;
use crate::search::{Mode, SearchResponse, query, spelling};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to look for (several words may be given without quotes)
    #[arg(required = true, num_args = 1.., value_name = "QUERY")]
    query: Vec<std::ffi::OsString>,
    /// Retrieval mode [default: search.default_mode, hybrid]
    #[arg(long, value_enum)]
    mode: Option<Mode>,
    /// Number of hits [default: search.default_k]
    #[arg(short, value_name = "N", allow_negative_numbers = true)]
    k: Option<i128>,
    /// Show the index queries, candidate counts and timings
    #[arg(long)]
    trace: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<i32> {
    let cfg = ctx.config()?;
    let text = super::text_arg("query", &args.query)?;
    if query::build(&text).is_empty() {
        return Err(UserError::new("bad_input", format!("the query {text:?} has no words to search for"))
            .with_hint("search for words or numbers; punctuation alone matches nothing")
            .into());
    }
    let k = args.k.unwrap_or(cfg.search.default_k as i128);
    let k = super::k_flag(k, "leave -k out for the configured default (search.default_k)")?;
    let store = ctx.store()?;
    let (engine, mode) = ctx.engine(&cfg, &store, args.mode)?;
    let mode = match engine.mode_for(&text, mode) {
        m if m != mode => {
            ctx.out.notice(format!("the embedding model reads English only: {} search for this query", m.as_str()));
            m
        }
        m => m,
    };
    let (reading, respelled) = spelling::respell(&store, &text)?;
    for r in &respelled {
        ctx.out.notice(format!("read {:?} as {:?}", r.typed, r.read));
    }
    let (hits, trace) = engine.search_traced(&store, &reading, mode, k, true)?;
    if hits.is_empty() && store.chunk_count()? == 0 {
        ctx.out.notice("the index is empty: run `kebab ingest PATH` first");
    }
    let response = SearchResponse {
        schema_version: "search_response.v1",
        query: text,
        mode,
        hits,
        respelled,
        trace: Some(trace).filter(|_| args.trace),
    };
    if ctx.out.json {
        ctx.out.json(&response)?;
        return Ok(0);
    }
    if response.hits.is_empty() {
        ctx.out.notice(format!("no matches for {:?}", response.query));
    }
    for hit in &response.hits {
        let c = &hit.citation;
        let mut head = format!("{:>2}. {}", hit.rank, ctx.out.location(&c.path, c.start, c.end));
        if let Some(section) = &c.section {
            head.push_str(&format!(" · {}", one_line(section)));
        }
        ctx.out.line(format!(
            "{}  {}",
            ctx.out.paint(head, Style::new().bold()),
            ctx.out.paint(format!("{} {:.2}", hit.score_kind, hit.score), Style::new().dimmed())
        ))?;
        let snippet = printable(&hit.snippet).replace('\n', " ");
        let snippet = highlight(ctx, &snippet);
        ctx.out.line(format!("    {snippet}"))?;
    }
    if let Some(t) = &response.trace {
        print_trace(ctx, t)?;
    }
    Ok(0)
}

/// `--trace`: each channel's queries and candidates, the fusion, timings.
fn print_trace(ctx: &Ctx, t: &Trace) -> Result<()> {
    /// Candidates shown per channel (all of them are in `--json`).
    const SHOWN: usize = 10;
    let list = |items: Vec<String>, total: usize| {
        let more = if total > SHOWN { format!(" … ({total} in all)") } else { String::new() };
        format!("{}{more}", items.join(" "))
    };
    if let Some(l) = &t.lexical {
        let ms = &l.timings_ms;
        // The expressions as the index saw them, not Rust's `Some("…")`.
        let expr = |e: &Option<String>| e.as_deref().map_or("(not used)".to_string(), one_line);
        ctx.out.line(format!("trace: word index  {} → {} candidates", expr(&l.word_match), l.word_candidates))?;
        ctx.out.line(format!("       trigram     {} → {} candidates", expr(&l.trigram_match), l.trigram_candidates))?;
        if !l.weightless.is_empty() {
            // FTS5's BM25 gives them no weight; scoring their every chunk is what they would cost.
            ctx.out.line(format!("       left out, in half the chunks or more: {}", l.weightless.join(" ")))?;
        }
        ctx.out.line(format!(
            "       lexical ms: word {:.2}, trigram {:.2}, load {:.2}, total {:.2}",
            ms.word_index, ms.trigram_index, ms.load_chunks, ms.total
        ))?;
    }
    if let Some(f) = &t.fusion {
        let shown = f.lexical_candidates.iter().take(SHOWN).map(|(id, s)| format!("#{id}:{s:.2}")).collect();
        ctx.out.line(format!("       lexical candidates (chunk:bm25) {}", list(shown, f.lexical_candidates.len())))?;
    }
    if let Some(v) = &t.vector {
        let shown = v.candidates.iter().take(SHOWN).map(|(id, s)| format!("#{id}:{s:.3}")).collect();
        ctx.out.line(format!("trace: vectors     {} of {} scanned", v.model, v.vectors))?;
        ctx.out.line(format!("       vector candidates (chunk:cosine) {}", list(shown, v.candidates.len())))?;
        ctx.out.line(format!(
            "       vector ms: model load {:.2}, embed query {:.2}, load vectors {:.2}, scan {:.2}",
            v.model_load_ms, v.embed_ms, v.load_ms, v.scan_ms
        ))?;
    }
    if let Some(f) = &t.fusion {
        ctx.out.line(format!(
            "trace: fusion      RRF, rrf_k {}, score = Σ 1/(rrf_k + rank) ÷ {:.4}; {:.2} ms",
            f.rrf_k,
            2.0 / (f.rrf_k + 1.0),
            f.fuse_ms
        ))?;
        if let Some(lead) = f.lead {
            ctx.out.line(format!(
                "       the lexical top hit stays first if its BM25 is ≥ {} × the second's and the vectors rank it in their top {}",
                lead.ratio, lead.within
            ))?;
        }
    }
    ctx.out.line(format!("       total {:.2} ms", t.total_ms))?;
    Ok(())
}

/// Matched terms (between « and ») in bold when colours are on.
fn highlight(ctx: &Ctx, snippet: &str) -> String {
    let mut out = String::new();
    let mut rest = snippet;
    while let Some(start) = rest.find('«') {
        let Some(len) = rest[start..].find('»') else { break };
        out.push_str(&rest[..start]);
        let term = &rest[start + '«'.len_utf8()..start + len];
        let painted = ctx.out.paint(term, Style::new().bold().yellow());
        // Without colour the markers stay, so the match is still visible.
        if painted == term { out.push_str(&rest[start..start + len + '»'.len_utf8()]) } else { out.push_str(&painted) }
        rest = &rest[start + len + '»'.len_utf8()..];
    }
    out.push_str(rest);
    out
}
