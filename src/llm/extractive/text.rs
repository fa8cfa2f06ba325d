//! Evidence text cut into what the extractive model can quote: prose
//! sentences, list items, code blocks and table rows (each with its
//! header), in order, with mdBook markup that is not text stripped (the
//! same stripping verification applies, so every quote stays an exact
//! substring of its evidence). A sentence that introduces a
//! list or a code block (it ends with `:` or announces one) carries what
//! follows it, so the answer can quote both.

use crate::markup::strip_markup;
use crate::script::is_cjk;

/// What a unit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitKind {
    Sentence,
    Item,
    Code,
    /// A table's header row: quoted before a row of its table, never alone.
    Header,
}

impl UnitKind {
    /// Whether the unit is scored for answering: code and table headers are
    /// only brought along by what introduces them.
    pub fn is_scored(self) -> bool {
        !matches!(self, UnitKind::Code | UnitKind::Header)
    }
}

#[derive(Debug, Clone)]
pub struct Unit {
    /// The evidence entry it comes from (`[#n]`).
    pub n: usize,
    pub kind: UnitKind,
    /// The exact text to quote.
    pub text: String,
    /// Units (indexes into the same list) this sentence introduces: the list
    /// items or the code block right after it.
    pub follow: Vec<usize>,
    /// The next sentence of the same paragraph, which often says the rest.
    pub next: Option<usize>,
    /// A table row's header row: what its cells are.
    pub header: Option<usize>,
}

impl Unit {
    /// Unit `i` (this one) as it is quoted: a table row after its header,
    /// a sentence before what it introduces.
    pub fn quoted_with(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        self.header.into_iter().chain([i]).chain(self.follow.iter().copied())
    }
}

/// Most list items a sentence brings with it.
const MAX_ITEMS: usize = 8;
/// Longest code block quoted, in characters.
const MAX_CODE: usize = 1200;

enum Block {
    Prose(String),
    /// Items with the indentation of their first line (a nested item is
    /// indented under its parent).
    List(Vec<(usize, String)>),
    Code(String),
    /// A Markdown table's rows as written, the header (when a `|---|` line
    /// follows it) first.
    Table { header: Option<String>, rows: Vec<String> },
}

/// All units of all evidence entries, in order.
pub fn units(evidence: &[(usize, String)]) -> Vec<Unit> {
    let mut out: Vec<Unit> = Vec::new();
    for (n, text) in evidence {
        let blocks = blocks(&strip_markup(text));
        let mut intro: Option<usize> = None;
        // The last sentence before a table, when it names one ("Table 3-1:
        // Integer Types in Rust", "The table below …"): it introduces it.
        let mut caption: Option<usize> = None;
        let count = blocks.len();
        for (b, block) in blocks.into_iter().enumerate() {
            let before = caption.take();
            match block {
                Block::Prose(p) => {
                    let sentences = split_sentences(&p);
                    let last = sentences.len();
                    // A chunk may end inside a sentence ("… The program won't
                    // panic, but the"): that half sentence says nothing whole.
                    let cut = b + 1 == count && last > 1 && sentences.last().is_some_and(|s| cut_off(s));
                    intro = None;
                    let mut prev: Option<usize> = None;
                    for (i, s) in sentences.into_iter().enumerate() {
                        if cut && i + 1 == last {
                            prev = None;
                            continue;
                        }
                        if !quotable(&s) {
                            // Too short to say anything alone ("`&str` 타입이죠."),
                            // it finishes the sentence before it.
                            match prev.map(|p| (p, format!("{} {s}", out[p].text))) {
                                Some((p, whole)) if short(&s) && quotable(&whole) => out[p].text = whole,
                                _ => prev = None,
                            }
                            continue;
                        }
                        let announces = i + 1 == last && introduces(&s);
                        if let Some(p) = prev {
                            out[p].next = Some(out.len());
                        }
                        prev = Some(out.len());
                        out.push(Unit { n: *n, kind: UnitKind::Sentence, text: s, follow: Vec::new(), next: None, header: None });
                        if announces {
                            intro = Some(out.len() - 1);
                        }
                        if i + 1 == last && names_a_table(&out[out.len() - 1].text) {
                            caption = Some(out.len() - 1);
                        }
                    }
                }
                Block::List(items) => {
                    let first = out.len();
                    let mut indents = Vec::new();
                    for (indent, item) in items {
                        if !item.trim().is_empty() {
                            indents.push(indent);
                            out.push(Unit { n: *n, kind: UnitKind::Item, text: item, follow: Vec::new(), next: None, header: None });
                        }
                    }
                    // An item that introduces ("… in these places:") brings
                    // the items nested under it.
                    for k in 0..indents.len() {
                        if introduces(&out[first + k].text) {
                            let nested = indents[k + 1..].iter().take_while(|&&d| d > indents[k]).count();
                            out[first + k].follow = (first + k + 1..first + k + 1 + nested).take(MAX_ITEMS).collect();
                        }
                    }
                    if let Some(i) = intro.take() {
                        out[i].follow = (first..out.len()).take(MAX_ITEMS).collect();
                    }
                }
                Block::Table { header, rows } => {
                    let head = header.filter(|h| quotable(h)).map(|h| {
                        out.push(Unit { n: *n, kind: UnitKind::Header, text: h, follow: Vec::new(), next: None, header: None });
                        out.len() - 1
                    });
                    let first = out.len();
                    for row in rows.into_iter().filter(|r| quotable(r)) {
                        out.push(Unit { n: *n, kind: UnitKind::Item, text: row, follow: Vec::new(), next: None, header: head });
                    }
                    // A sentence that introduces the table brings it, header first.
                    if let Some(i) = intro.take().or(before) {
                        out[i].follow = head.into_iter().chain((first..out.len()).take(MAX_ITEMS)).collect();
                    }
                }
                Block::Code(code) => {
                    if code.trim().is_empty() || code.chars().count() > MAX_CODE {
                        intro = None;
                        continue;
                    }
                    out.push(Unit { n: *n, kind: UnitKind::Code, text: code, follow: Vec::new(), next: None, header: None });
                    if let Some(i) = intro.take() {
                        out[i].follow = vec![out.len() - 1];
                    }
                }
            }
        }
    }
    out
}

/// Whether a paragraph's last sentence stops mid-way: it ends in a word or
/// a comma, not in a sentence's closing punctuation, bracket or quote.
fn cut_off(s: &str) -> bool {
    s.trim_end().chars().last().is_some_and(|c| c.is_alphanumeric() || c == ',')
}

/// Whether a paragraph's last sentence introduces what comes next.
fn introduces(s: &str) -> bool {
    let t = s.trim_end();
    let lower = t.to_lowercase();
    t.ends_with(':')
        || ["the following", "as follows", "these are", "listed below", "다음과 같", "다음은", "아래와 같"].iter().any(|w| lower.contains(w))
}

/// Whether a sentence names a table ("Table 3-1: …", "the tables below",
/// "아래 표는"): a whole word, so `표현` or `표준` is not one.
fn names_a_table(s: &str) -> bool {
    crate::words::words(s).iter().any(|w| matches!(crate::words::strip_particle(w), "table" | "tables" | "표"))
}

/// A sentence says something alone, and a quote may not hold the
/// delimiters it is written between.
fn quotable(s: &str) -> bool {
    !short(s) && !(s.contains('"') && (s.contains('\u{201C}') || s.contains('\u{201D}')))
}

/// Fewer than three words (six Hangul/CJK characters): too short to say
/// anything alone.
fn short(s: &str) -> bool {
    s.split_whitespace().count() < 3 && s.chars().filter(|c| is_cjk(*c)).count() < 6
}

fn is_item(t: &str) -> Option<&str> {
    for m in ["* ", "- ", "+ "] {
        if let Some(rest) = t.strip_prefix(m) {
            return Some(rest);
        }
    }
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    if digits > 0
        && digits < 3
        && let Some(rest) = t[digits..].strip_prefix(". ")
    {
        return Some(rest);
    }
    None
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut para = String::new();
    let mut items: Vec<(usize, String)> = Vec::new();
    let mut fence: Option<Vec<&str>> = None;
    let mut table: Vec<&str> = Vec::new();
    let flush = |para: &mut String, items: &mut Vec<(usize, String)>, out: &mut Vec<Block>| {
        if !para.trim().is_empty() {
            out.push(Block::Prose(std::mem::take(para)));
        }
        para.clear();
        if !items.is_empty() {
            out.push(Block::List(std::mem::take(items)));
        }
    };
    for line in text.lines() {
        let t = line.trim();
        if fence.is_none() && t.starts_with('|') {
            flush(&mut para, &mut items, &mut out);
            table.push(t);
            continue;
        }
        if !table.is_empty() {
            out.push(table_block(&std::mem::take(&mut table)));
        }
        if let Some(code) = fence.as_mut() {
            if t.starts_with("```") || t.starts_with("~~~") {
                out.push(Block::Code(code_text(code)));
                fence = None;
            } else {
                code.push(line);
            }
            continue;
        }
        if t.starts_with("```") || t.starts_with("~~~") {
            flush(&mut para, &mut items, &mut out);
            fence = Some(Vec::new());
            continue;
        }
        let skip = t.is_empty() || t.starts_with('#') || t.starts_with('<') || t.starts_with("{{");
        if skip {
            // A blank line ends a paragraph; a list may go on after one.
            if !para.trim().is_empty() || !t.is_empty() {
                flush(&mut para, &mut items, &mut out);
            }
            continue;
        }
        if let Some(item) = is_item(t) {
            if !para.trim().is_empty() {
                out.push(Block::Prose(std::mem::take(&mut para)));
            }
            items.push((line.len() - line.trim_start().len(), item.to_string()));
        } else if line.starts_with(' ') && !items.is_empty() && para.is_empty() {
            // An indented line continues the last item.
            if let Some((_, last)) = items.last_mut() {
                last.push(' ');
                last.push_str(t);
            }
        } else {
            if !items.is_empty() {
                out.push(Block::List(std::mem::take(&mut items)));
            }
            if !para.is_empty() {
                para.push(' ');
            }
            para.push_str(t);
        }
    }
    flush(&mut para, &mut items, &mut out);
    if !table.is_empty() {
        out.push(table_block(&table));
    }
    out
}

/// A table's lines as a block: its `|---|` line says the line before it is
/// the header, and is no row itself. The padding that aligns the columns
/// is cut to one space, as a paragraph's line breaks are (verification
/// reads runs of whitespace as one).
fn table_block(lines: &[&str]) -> Block {
    let rule = |l: &str| l.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t')) && l.contains('-');
    let row = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    let header = (lines.len() > 1 && rule(lines[1])).then(|| row(lines[0]));
    let body = if header.is_some() { &lines[2..] } else { lines };
    Block::Table { header, rows: body.iter().filter(|l| !rule(l)).map(|l| row(l)).collect() }
}

/// A fenced block's text: its longest run of lines that are not mdBook
/// include directives (those stand for code the notes do not hold).
fn code_text(lines: &[&str]) -> String {
    let mut best: &[&str] = &[];
    for run in lines.split(|l| l.trim_start().starts_with("{{#")) {
        if run.len() > best.len() {
            best = run;
        }
    }
    best.join("\n").trim_matches('\n').to_string()
}

/// Words a full stop follows inside a sentence ("Dr. Han", "e.g. rye").
const ABBREVIATIONS: &[&str] = &[
    "dr", "mr", "mrs", "ms", "prof", "st", "mt", "jr", "sr", "vs", "no", "fig", "approx", "cf", "al", "e.g", "i.e", "etc", "ca",
];

/// Whether the full stop ending `before` (the sentence so far) closes an
/// abbreviation or an initial rather than the sentence: the word before it
/// is one, or what follows starts in lower case ("e.g. rye flour"). A known
/// abbreviation before a capital ("Dr. Han") does not end it either, but
/// "etc." before a capital does.
fn abbreviated(before: &str, after: &str) -> bool {
    let next = after.trim_start().chars().next();
    if next.is_some_and(char::is_lowercase) {
        return true;
    }
    let word = before.rsplit(|c: char| c.is_whitespace() || c == '(').next().unwrap_or("").to_lowercase();
    let initial = word.chars().count() == 1 && word.chars().all(char::is_alphabetic) && next.is_some_and(char::is_uppercase);
    initial || (word != "etc" && ABBREVIATIONS.contains(&word.as_str()) && next.is_some_and(|n| n.is_alphanumeric()))
}

/// Sentences of a paragraph: cut after `.`, `!`, `?`, `。` followed by a
/// space (or the end), and after Korean endings (`다.`, `요.`, `까?`) even
/// when no space follows.
pub fn split_sentences(p: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = p.char_indices().collect();
    for (k, &(i, c)) in chars.iter().enumerate() {
        if !matches!(c, '.' | '!' | '?' | '。') {
            continue;
        }
        let next = chars.get(k + 1).map(|x| x.1);
        let prev = if k > 0 { Some(chars[k - 1].1) } else { None };
        let korean_end = matches!(prev, Some('다' | '요' | '까' | '죠'));
        let at_break = (next.is_none_or(char::is_whitespace) && !(c == '.' && abbreviated(&p[start..i], &p[i + 1..])))
            || (korean_end && next.is_some_and(|n| n != '.'));
        if at_break {
            let end = i + c.len_utf8();
            let s = p[start..end].trim();
            if !s.is_empty() {
                out.push(s.to_string());
            }
            start = end;
        }
    }
    let s = p[start..].trim();
    if !s.is_empty() {
        out.push(s.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(us: &[Unit]) -> Vec<&str> {
        us.iter().map(|u| u.text.as_str()).collect()
    }

    #[test]
    fn a_sentence_ending_in_a_colon_brings_the_list_after_it() {
        let ev = vec![(1, "Hives need three things:\n\n* Dry frames.\n* A queen that lays.\n* Room\n  to grow.\n\nThat is all.".to_string())];
        let us = units(&ev);
        assert_eq!(texts(&us), ["Hives need three things:", "Dry frames.", "A queen that lays.", "Room to grow.", "That is all."]);
        assert_eq!(us[0].follow, vec![1, 2, 3]);
        assert!(us[4].follow.is_empty());
    }

    #[test]
    fn abbreviations_and_initials_do_not_end_a_sentence() {
        let p = "Dentist: Dr. Han, Tuesday 3 pm. Use rye, e.g. the dark kind. Read J. Smith (vs. Lee). Bring jars, lids etc. Then rest.";
        assert_eq!(
            split_sentences(p),
            ["Dentist: Dr. Han, Tuesday 3 pm.", "Use rye, e.g. the dark kind.", "Read J. Smith (vs. Lee).", "Bring jars, lids etc.", "Then rest."]
        );
    }

    #[test]
    fn a_sentence_the_chunk_cuts_off_is_not_a_unit() {
        // The entry ends where its chunk did, inside a sentence.
        let ev = vec![(1, "A u8 holds 0 to 255. Past that it wraps to 0. The program goes on, but the".to_string())];
        assert_eq!(texts(&units(&ev)), ["A u8 holds 0 to 255.", "Past that it wraps to 0."]);
        // A note's one line without a full stop, or a paragraph before the last block, is whole.
        let ev = vec![(1, "Bees swarmed on 27 May".to_string()), (2, "Fed the starter. It rose well\n\nTomorrow it gets rye flour.".to_string())];
        assert_eq!(texts(&units(&ev)), ["Bees swarmed on 27 May", "Fed the starter.", "It rose well", "Tomorrow it gets rye flour."]);
    }

    #[test]
    fn an_item_ending_in_a_colon_brings_the_items_nested_under_it() {
        let ev = vec![(
            1,
            "- **Frames**: a frame sits in one of these places:\n  - In the brood box\n  - In a super\n- **Lids**: every hive has one.\n".to_string(),
        )];
        let us = units(&ev);
        assert_eq!(texts(&us), ["**Frames**: a frame sits in one of these places:", "In the brood box", "In a super", "**Lids**: every hive has one."]);
        assert_eq!(us[0].follow, vec![1, 2]);
        assert!(us[3].follow.is_empty(), "a sibling item is not nested");
    }

    #[test]
    fn code_blocks_are_units_and_include_directives_are_left_out() {
        let ev = vec![(2, "Start one like this:\n\n```console\n$ hive new apiary\n```\n\n```rust\n{{#include ../x.rs}}\n```".to_string())];
        let us = units(&ev);
        assert_eq!(texts(&us), ["Start one like this:", "$ hive new apiary"]);
        assert_eq!(us[0].follow, vec![1]);
        assert_eq!(us[1].kind, UnitKind::Code);
    }

    #[test]
    fn table_rows_are_units_that_know_their_header() {
        let ev = vec![(3, "Mite counts by hive, in Table 2\n\n| Hive | Mites | Date |\n|------|------:|------|\n| North  |   12 | May 2 |\n| South | 40 | May 3 |\n\nSouth was treated.".to_string())];
        let us = units(&ev);
        assert_eq!(texts(&us), ["Mite counts by hive, in Table 2", "| Hive | Mites | Date |", "| North | 12 | May 2 |", "| South | 40 | May 3 |", "South was treated."]);
        assert_eq!(us[1].kind, UnitKind::Header);
        assert_eq!((us[2].header, us[3].header, us[4].header), (Some(1), Some(1), None));
        assert_eq!(us[0].follow, vec![1, 2, 3], "the sentence naming the table brings it");
        // A Korean caption names the table as a word (`표는`); `표현` does not.
        let caption = |first: &str| units(&[(1, format!("{first}\n\n| 벌통 | 응애 |\n|---|---|\n| 북쪽 | 12 |"))])[0].follow.len();
        assert_eq!(caption("아래 표는 벌통별 응애 수입니다."), 2);
        assert_eq!(caption("이 결과를 간단한 표현으로 정리했습니다."), 0);
        // Without a `|---|` line there is no header: every line is a row.
        let us = units(&[(1, "| a b c | d |\n| e f g | h |".to_string())]);
        assert!(us.iter().all(|u| u.kind == UnitKind::Item && u.header.is_none()) && us.len() == 2);
    }

    #[test]
    fn markup_is_stripped_from_units() {
        let ev = vec![(1, "Use the [`smoker` tool][smoker]<!-- ignore --> before you open a hive.\n\n[smoker]: https://example.org/smoker".to_string())];
        assert_eq!(texts(&units(&ev)), ["Use the `smoker` tool before you open a hive."]);
    }

    #[test]
    fn korean_sentences_split_on_their_endings() {
        assert_eq!(split_sentences("벌통을 엽니다.그다음 틀을 꺼내요. 왜 그럴까? 끝"), ["벌통을 엽니다.", "그다음 틀을 꺼내요.", "왜 그럴까?", "끝"]);
    }
}
