//! Pack: hits in rank order become `[#n]`-numbered evidence entries until the
//! token budget is spent — always at least one. A chunk deleted between the
//! search and now is skipped. With `rag.evidence = "passages"` each entry is
//! the chunk's best window of sentences for the question (its line span
//! narrowed to the window's exact lines), so a CPU model reads far less.

use std::collections::HashMap;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::config::EvidenceMode;
use crate::llm::Heading;
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

    /// The heading the entry's first sentence goes on from: a JSONL record's
    /// title, or, when the text opens with a heading line (a section's
    /// start, not the rest of a long one), the headings it sits under: the
    /// note's title says what every section is about ("what did I write
    /// about kimchi?" over "# Kimchi > ## Salting the cabbage").
    pub fn heading(&self) -> Option<Heading> {
        let last = self.heading_path.last()?;
        let record = crate::search::record_file(&self.doc_path).is_some();
        let text = if record { last.clone() } else { self.heading_path.join(" > ") };
        (record || self.text.trim_start().starts_with('#')).then_some(Heading { n: self.n, text, record })
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

/// The longest passage, in estimated tokens: a few sentences.
const PASSAGE_TOKENS: usize = 120;

/// What to pack, beside the hits.
pub struct Spec<'a> {
    pub budget_tokens: usize,
    pub evidence: EvidenceMode,
    /// What passages are chosen for (the retrieval query).
    pub query: &'a str,
}

/// Whole chunks, in rank order, within `budget_tokens`.
pub fn pack(store: &Store, hits: &[SearchHit], budget_tokens: usize) -> Result<Packing> {
    pack_with(store, hits, &Spec { budget_tokens, evidence: EvidenceMode::Chunks, query: "" })
}

pub fn pack_with(store: &Store, hits: &[SearchHit], spec: &Spec) -> Result<Packing> {
    let budget_tokens = spec.budget_tokens;
    let query = super::attribute::content_stems(spec.query);
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
        if spec.evidence == EvidenceMode::Passages {
            narrow_to_passage(&mut entry, &query);
        }
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

/// Narrows `entry` to its best window of consecutive sentences: the one
/// holding the most distinct query words (ties: the earliest), widened by
/// its neighbours while it stays within `PASSAGE_TOKENS`. Its lines are recounted so the citation
/// still names exactly the lines it quotes.
fn narrow_to_passage(entry: &mut Packed, query: &[String]) {
    let text = entry.text.as_str();
    if estimate_tokens(text) <= PASSAGE_TOKENS {
        return;
    }
    let spans = super::sentences::split(text);
    let hits: Vec<Vec<&String>> = spans
        .iter()
        .map(|s| {
            let stems = super::attribute::content_stems(&text[s.start..s.end]);
            query.iter().filter(|q| stems.contains(q)).collect()
        })
        .collect();
    let mut best: Option<(usize, usize, usize)> = None; // (matched, first, last)
    for first in 0..spans.len() {
        let mut matched: Vec<&String> = Vec::new();
        for last in first..spans.len() {
            if last > first && estimate_tokens(&text[spans[first].start..spans[last].end]) > PASSAGE_TOKENS {
                break;
            }
            for q in &hits[last] {
                if !matched.contains(q) {
                    matched.push(q);
                }
            }
            if best.is_none_or(|(m, _, _)| matched.len() > m) {
                best = Some((matched.len(), first, last));
            }
        }
    }
    let Some((_, mut first, mut last)) = best else { return };
    // Room left in the window goes to what follows the match (it usually
    // explains it), then to what precedes it.
    let fits = |a: usize, b: usize| estimate_tokens(&text[spans[a].start..spans[b].end]) <= PASSAGE_TOKENS;
    while last + 1 < spans.len() && fits(first, last + 1) {
        last += 1;
    }
    while first > 0 && fits(first - 1, last) {
        first -= 1;
    }
    let (start, end) = (spans[first].start, spans[last].end);
    let lines_before = text[..start].matches('\n').count() as u32;
    let lines_in = text[start..end].matches('\n').count() as u32;
    entry.line_start += lines_before;
    entry.line_end = entry.line_start + lines_in;
    entry.text = text[start..end].to_string();
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

    fn entry(text: &str) -> Packed {
        Packed {
            n: 1,
            chunk_id: 1,
            doc_path: "a.md".into(),
            heading_path: vec!["H".into()],
            line_start: 10,
            line_end: 10 + text.matches('\n').count() as u32,
            text: text.into(),
            rank: 1,
            score: 1.0,
            tokens: 0,
            truncated: false,
        }
    }

    #[test]
    fn a_passage_is_the_window_with_the_question_words_and_its_exact_lines() {
        let filler = "Some unrelated words about gardens and weather fill this line to make it long enough.\n";
        let text = format!("{}Shadowing declares a new variable with the same name.\nThe first variable is shadowed by the second.\n{}", filler.repeat(8), filler.repeat(8));
        let mut e = entry(&text);
        narrow_to_passage(&mut e, &crate::rag::attribute::content_stems("What is shadowing of a variable?"));
        assert!(e.text.contains("Shadowing declares") && e.text.contains("shadowed by the second"), "{}", e.text);
        assert!(estimate_tokens(&e.text) <= PASSAGE_TOKENS && e.text.len() < text.len() / 2);
        // Line 10 is the chunk's first line: the passage's lines are exactly
        // the chunk lines it holds.
        let lines: Vec<&str> = text.lines().collect();
        let held: Vec<&str> = e.text.lines().collect();
        assert_eq!(lines[(e.line_start - 10) as usize..=(e.line_end - 10) as usize], held[..]);
    }

    #[test]
    fn a_short_chunk_is_kept_whole() {
        let mut e = entry("One short line.\nAnother.");
        narrow_to_passage(&mut e, &["line".to_string()]);
        assert_eq!((e.text.as_str(), e.line_start, e.line_end), ("One short line.\nAnother.", 10, 11));
    }

    #[test]
    fn an_entry_goes_on_from_a_records_title_or_the_heading_it_opens_under() {
        let record = Packed { doc_path: "notes/g.jsonl#b".into(), heading_path: vec!["BM25".into()], ..entry("A ranking function.") };
        assert_eq!(record.heading(), Some(Heading { n: 1, text: "BM25".into(), record: true }));
        let section = Packed { heading_path: vec!["Bread".into(), "Autolyse".into()], ..entry("## Autolyse\n\nMixing flour and water.") };
        assert_eq!(section.heading(), Some(Heading { n: 1, text: "Bread > Autolyse".into(), record: false }));
        // The rest of a long section does not open under its heading.
        assert_eq!(entry("More about it.").heading(), None);
    }

    #[test]
    fn cut_respects_the_budget_and_char_boundaries() {
        let t = "소유권 ".repeat(100);
        let cut = cut_to_tokens(&t, 50);
        assert!(estimate_tokens(&cut) <= 50 && !cut.is_empty());
        assert!(t.starts_with(&cut));
    }
}
