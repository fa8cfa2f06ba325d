//! Pack: hits in rank order become `[#n]`-numbered evidence entries until the
//! token budget is spent — always at least one. A chunk deleted between the
//! search and now is skipped.

use std::collections::HashMap;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::script::estimate_tokens;
use crate::search::SearchHit;
use crate::store::Store;

/// One evidence entry as the model saw it; persisted with the answer so
/// `:cite` and `:explain` work on old turns.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Packed {
    pub n: usize,
    pub chunk_id: i64,
    pub doc_path: String,
    pub heading_path: Vec<String>,
    pub line_start: u32,
    pub line_end: u32,
    pub text: String,
    pub rank: usize,
    pub score: f64,
    pub tokens: usize,
    /// True when the text was cut to fit the budget (only ever the first entry).
    #[serde(default)]
    pub truncated: bool,
}

impl Packed {
    /// `[#n] path · heading · lines a–b`
    pub fn header(&self) -> String {
        let mut h = format!("[#{}] {}", self.n, self.doc_path);
        if !self.heading_path.is_empty() {
            h.push_str(&format!(" · {}", self.heading_path.join(" > ")));
        }
        match crate::search::CitationKind::of_path(&self.doc_path) {
            crate::search::CitationKind::Page => h.push_str(&format!(" · page {}", self.line_start)),
            crate::search::CitationKind::Line => h.push_str(&format!(" · lines {}–{}", self.line_start, self.line_end)),
        }
        h
    }
}

#[derive(Debug, Clone, Default)]
pub struct Packing {
    pub entries: Vec<Packed>,
    pub budget_tokens: usize,
    pub used_tokens: usize,
    /// Hits whose chunk no longer exists.
    pub skipped_deleted: usize,
    /// Hits left out because the budget was spent.
    pub left_out: usize,
}

pub fn pack(store: &Store, hits: &[SearchHit], budget_tokens: usize) -> Result<Packing> {
    let ids: Vec<i64> = hits.iter().map(|h| h.chunk_id).collect();
    let mut rows: HashMap<i64, _> = store.chunks_by_ids(&ids)?.into_iter().map(|r| (r.chunk_id, r)).collect();
    let mut p = Packing { budget_tokens, ..Packing::default() };
    for hit in hits {
        let Some(row) = rows.remove(&hit.chunk_id) else {
            p.skipped_deleted += 1;
            continue;
        };
        let mut entry = Packed {
            n: p.entries.len() + 1,
            chunk_id: row.chunk_id,
            doc_path: row.doc_path,
            heading_path: row.heading_path,
            line_start: row.line_start,
            line_end: row.line_end,
            text: row.text,
            rank: hit.rank,
            score: hit.score,
            tokens: 0,
            truncated: false,
        };
        entry.tokens = estimate_tokens(&entry.header()) + estimate_tokens(&entry.text) + 2;
        if p.used_tokens + entry.tokens > budget_tokens {
            if !p.entries.is_empty() {
                p.left_out += 1;
                continue;
            }
            // The first entry alone is over budget: keep its beginning.
            let room = budget_tokens.saturating_sub(estimate_tokens(&entry.header()) + 2).max(16);
            entry.text = cut_to_tokens(&entry.text, room);
            entry.truncated = true;
            entry.tokens = estimate_tokens(&entry.header()) + estimate_tokens(&entry.text) + 2;
        }
        p.used_tokens += entry.tokens;
        p.entries.push(entry);
    }
    Ok(p)
}

/// The longest prefix of `text` (on a char boundary) estimated at ≤ `tokens`.
fn cut_to_tokens(text: &str, tokens: usize) -> String {
    let mut end = text.len();
    while end > 0 && estimate_tokens(&text[..end]) > tokens {
        end = text.floor_char_boundary(end * 9 / 10);
    }
    text[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_respects_the_budget_and_char_boundaries() {
        let t = "소유권 ".repeat(100);
        let cut = cut_to_tokens(&t, 50);
        assert!(estimate_tokens(&cut) <= 50 && !cut.is_empty());
        assert!(t.starts_with(&cut));
    }
}
