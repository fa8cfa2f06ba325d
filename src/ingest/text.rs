//! Plain-text chunking, plus the line bookkeeping and size-splitting helpers
//! that the Markdown chunker shares, so both formats cut text the same way.
//!
//! Every chunk covers whole source lines, so its 1-based span can be opened in
//! an editor and shows exactly the chunk's text. The only exception is a line
//! longer than `max_chars`, which is cut into pieces that all carry its number.

use super::chunk::{ChunkDraft, ChunkLimits};

/// Split plain text into chunks: paragraphs (runs of non-blank lines) are
/// merged while the result stays within `target_chars`; a paragraph over
/// `max_chars` is cut at line boundaries, a line over it at char boundaries.
pub fn chunk_text(src: &str, limits: &ChunkLimits) -> Vec<ChunkDraft> {
    let lines = Lines::new(src);
    let mut units = Vec::new();
    let mut start = None;
    for n in 1..=lines.count() {
        if lines.is_blank(n) {
            if let Some(first) = start.take() {
                units.push(Unit { first, last: n - 1, atomic: false });
            }
        } else if start.is_none() {
            start = Some(n);
        }
    }
    if let Some(first) = start {
        units.push(Unit { first, last: lines.count(), atomic: false });
    }
    let mut out = Vec::new();
    pack(&lines, &units, limits, Packing::Tight, &[], &mut out);
    out
}

/// A source split into lines: `\n`, `\r\n` or a lone `\r` (old Mac files)
/// ends a line, and a final terminator does not start a new one, so the spans
/// we report agree with what editors show. Every line number a citation
/// carries is counted here.
pub(crate) struct Lines<'a> {
    src: &'a str,
    /// Byte offset where each line starts; binary-searched to map offsets.
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(src: &'a str) -> Self {
        let bytes = src.as_bytes();
        let mut starts = Vec::new();
        if !src.is_empty() {
            starts.push(0);
        }
        // A `\r` ends a line unless a `\n` follows it (then that `\n` does).
        let ends = |i: usize, b: u8| b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n'));
        starts.extend(bytes.iter().enumerate().filter(|&(i, &b)| ends(i, b) && i + 1 < src.len()).map(|(i, _)| i + 1));
        Lines { src, starts }
    }

    pub(crate) fn count(&self) -> u32 {
        u32::try_from(self.starts.len()).unwrap_or(u32::MAX)
    }

    /// 1-based line holding byte `offset` (clamped into the document).
    pub(crate) fn line_of(&self, offset: usize) -> u32 {
        let n = self.starts.partition_point(|&s| s <= offset).max(1);
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    /// Byte offset where line `n` starts (the end of the source past the last line).
    pub(crate) fn start_of(&self, n: u32) -> usize {
        let i = (n as usize).saturating_sub(1);
        self.starts.get(i).copied().unwrap_or(self.src.len())
    }

    /// Byte range of line `n`'s content, without its terminator.
    fn bounds(&self, n: u32) -> (usize, usize) {
        let len = self.src.len();
        let i = (n as usize).saturating_sub(1);
        let Some(&start) = self.starts.get(i) else { return (len, len) };
        let mut end = self.starts.get(i + 1).copied().unwrap_or(len);
        let bytes = self.src.as_bytes();
        // The line's terminator, if it has one: `\n`, `\r\n` or `\r`.
        if end > start && bytes[end - 1] == b'\n' {
            end -= 1;
        }
        if end > start && bytes[end - 1] == b'\r' {
            end -= 1;
        }
        (start, end)
    }

    pub(crate) fn line(&self, n: u32) -> &'a str {
        let (start, end) = self.bounds(n);
        &self.src[start..end]
    }

    pub(crate) fn is_blank(&self, n: u32) -> bool {
        self.line(n).trim().is_empty()
    }

    /// Last non-blank line in `first..=last`, if any.
    pub(crate) fn last_non_blank(&self, first: u32, last: u32) -> Option<u32> {
        (first..=last).rev().find(|&n| !self.is_blank(n))
    }

    /// Length in chars of `text(first, last)`, without building it.
    pub(crate) fn chars(&self, first: u32, last: u32) -> usize {
        if first > last {
            return 0;
        }
        let body: usize = (first..=last).map(|n| self.line(n).chars().count()).sum();
        body + (last - first) as usize
    }

    /// Lines `first..=last` joined by `\n`: the exact source slice, except that
    /// CRLF and a lone CR become LF so the text matches the lines an editor shows.
    pub(crate) fn text(&self, first: u32, last: u32) -> String {
        if first > last {
            return String::new();
        }
        let slice = &self.src[self.bounds(first).0..self.bounds(last).1];
        if slice.contains('\r') { slice.replace("\r\n", "\n").replace('\r', "\n") } else { slice.to_string() }
    }

    pub(crate) fn draft(&self, first: u32, last: u32, path: &[String]) -> ChunkDraft {
        ChunkDraft {
            heading_path: path.to_vec(),
            text: self.text(first, last),
            line_start: first,
            line_end: last,
        }
    }
}

/// A run of lines the packer treats as one piece. An `atomic` unit (a code
/// block) is never cut, even when it alone exceeds `max_chars`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Unit {
    pub(crate) first: u32,
    pub(crate) last: u32,
    pub(crate) atomic: bool,
}

/// How eagerly neighbouring units are merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Packing {
    /// Merge only while the merged chunk stays within `target_chars`.
    Tight,
    /// Keep adding while the chunk is under `target_chars`, never past
    /// `max_chars`: used when cutting something too big, to avoid slivers.
    Fill,
}

/// One unit per non-blank line of `first..=last`; blank lines between them
/// still end up inside a chunk when their neighbours are merged.
pub(crate) fn line_units(lines: &Lines, first: u32, last: u32, out: &mut Vec<Unit>) {
    out.extend((first..=last).filter(|&n| !lines.is_blank(n)).map(|n| Unit { first: n, last: n, atomic: false }));
}

/// Turn ordered units into chunks: merge neighbours per `packing`, cut a
/// too-big unit at lines (then chars), leave atomic units whole.
pub(crate) fn pack(
    lines: &Lines,
    units: &[Unit],
    limits: &ChunkLimits,
    packing: Packing,
    path: &[String],
    out: &mut Vec<ChunkDraft>,
) {
    let max = limits.max_chars.max(1);
    // The chunk being built: first line, last line, length in chars.
    let mut cur: Option<(u32, u32, usize)> = None;
    for unit in units {
        let len = lines.chars(unit.first, unit.last);
        if len > max {
            if let Some((first, last, _)) = cur.take() {
                out.push(lines.draft(first, last, path));
            }
            if unit.atomic {
                out.push(lines.draft(unit.first, unit.last, path));
            } else if unit.first < unit.last {
                let mut sub = Vec::new();
                line_units(lines, unit.first, unit.last, &mut sub);
                pack(lines, &sub, limits, Packing::Fill, path, out);
            } else {
                out.extend(
                    split_line_chars(lines.line(unit.first), max)
                        .into_iter()
                        // Only whitespace-runs are dropped; the words stay.
                        .filter(|piece| !piece.trim().is_empty())
                        .map(|piece| ChunkDraft {
                            heading_path: path.to_vec(),
                            text: piece.to_string(),
                            line_start: unit.first,
                            line_end: unit.first,
                        }),
                );
            }
            continue;
        }
        if let Some((first, last, chars)) = cur {
            let merged = chars + 1 + lines.chars(last + 1, unit.last);
            let fits = merged <= max
                && match packing {
                    Packing::Tight => merged <= limits.target_chars,
                    Packing::Fill => chars < limits.target_chars,
                };
            if fits {
                cur = Some((first, unit.last, merged));
                continue;
            }
            out.push(lines.draft(first, last, path));
        }
        cur = Some((unit.first, unit.last, len));
    }
    if let Some((first, last, _)) = cur {
        out.push(lines.draft(first, last, path));
    }
}

/// Cut one line into pieces of at most `max` chars, preferring to cut just
/// after whitespace in the back half of a piece so words stay whole. The
/// pieces concatenate back to the line.
pub(crate) fn split_line_chars(line: &str, max: usize) -> Vec<&str> {
    let max = max.max(1);
    let mut pieces = Vec::new();
    let mut rest = line;
    while !rest.is_empty() {
        let Some((cut, _)) = rest.char_indices().nth(max) else {
            pieces.push(rest);
            break;
        };
        let floor = rest.char_indices().nth(max / 2).map_or(0, |(i, _)| i);
        let at = rest[..cut]
            .char_indices()
            .rev()
            .take_while(|&(i, _)| i >= floor)
            .find(|&(_, c)| c.is_whitespace())
            .map_or(cut, |(i, c)| i + c.len_utf8());
        pieces.push(&rest[..at]);
        rest = &rest[at..];
    }
    pieces
}

/// Checks and input generators shared with the Markdown chunker's tests.
#[cfg(test)]
pub(crate) mod testkit {
    use super::ChunkDraft;

    /// Every chunk is non-empty and in order; spans never overlap (pieces of
    /// one over-long line share it); whole-line chunks equal their lines.
    pub(crate) fn assert_spans(src: &str, chunks: &[ChunkDraft]) {
        let lines = source_lines(src);
        let mut prev: Option<&ChunkDraft> = None;
        for c in chunks {
            assert!(!c.text.trim().is_empty(), "empty chunk {c:?}");
            assert!(c.line_start >= 1 && c.line_start <= c.line_end, "bad span {c:?}");
            assert!(c.line_end as usize <= lines.len(), "span past EOF {c:?}");
            let (s, e) = (c.line_start as usize, c.line_end as usize);
            let whole = lines[s - 1..e].join("\n");
            if whole != c.text {
                assert_eq!(s, e, "multi-line chunk differs from its lines: {c:?}");
                assert!(whole.contains(&c.text), "piece not in its line: {c:?}");
            }
            if let Some(p) = prev {
                let same_line_pieces = p.line_start == p.line_end && p.line_end == c.line_start && s == e;
                assert!(p.line_end < c.line_start || same_line_pieces, "overlap {p:?} / {c:?}");
            }
            prev = Some(c);
        }
    }

    /// The source's lines as an editor shows them (`\n`, `\r\n` or a lone
    /// `\r` ends one), worked out apart from `Lines`.
    fn source_lines(src: &str) -> Vec<String> {
        src.replace("\r\n", "\n").replace('\r', "\n").lines().map(String::from).collect()
    }

    /// Lines from `from` on that are not blank must all fall inside a chunk.
    pub(crate) fn assert_covers(src: &str, from: usize, chunks: &[ChunkDraft]) {
        for (i, line) in source_lines(src).iter().enumerate().skip(from - 1) {
            let n = (i + 1) as u32;
            let covered = chunks.iter().any(|c| c.line_start <= n && n <= c.line_end);
            assert!(line.trim().is_empty() || covered, "line {n} lost: {line:?}");
        }
    }

    /// Deterministic pseudo-random documents assembled from awkward pieces.
    pub(crate) fn random_docs(count: usize) -> Vec<String> {
        const FRAGMENTS: &[&str] = &[
            "# 제목 하나\n", "## Sub *section*\n", "### deep `code`\n", "Setext\n===\n",
            "```\n# not a heading\ncode line\n```\n", "```rust\nunclosed fence\n", "\n", "\n\n",
            "\r\n", "old mac\r", "한국어 단어 문장입니다 ", "plain words here ", "- item one\n- item two\n",
            "> quoted\n> # quoted heading\n", "    indented code\n", "\t\ttabs\n", "<div>\nhtml\n</div>\n",
            "---\n", "| a | b |\n|---|---|\n| 1 | 2 |\n", "\0nul\n", "[ref]: http://x\n",
        ];
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..count)
            .map(|_| {
                let n = next() % 40;
                (0..n).map(|_| FRAGMENTS[(next() % FRAGMENTS.len() as u64) as usize]).collect()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::testkit::{assert_covers, assert_spans, random_docs};
    use super::*;

    fn limits(target_chars: usize, max_chars: usize) -> ChunkLimits {
        ChunkLimits { target_chars, max_chars }
    }

    #[test]
    fn empty_and_whitespace_only_input_gives_no_chunks() {
        for src in ["", "\n", "  \n\t\n", "\r\n\r\n   "] {
            assert!(chunk_text(src, &ChunkLimits::default()).is_empty(), "{src:?}");
        }
    }

    #[test]
    fn small_paragraphs_merge_up_to_target() {
        let src = "alpha one\n\nbeta two\n\n\ngamma three\ndelta four\n\nepsilon";
        let chunks = chunk_text(src, &limits(32, 100));
        assert_spans(src, &chunks);
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].text, "alpha one\n\nbeta two");
        assert_eq!((chunks[1].line_start, chunks[1].line_end), (6, 9));
        assert!(chunks.iter().all(|c| c.heading_path.is_empty() && c.text.chars().count() <= 32));
    }

    #[test]
    fn whitespace_only_line_separates_paragraphs() {
        let src = "first para\n   \t\nsecond para";
        let chunks = chunk_text(src, &limits(5, 20));
        assert_eq!(chunks.len(), 2);
        assert_eq!((chunks[1].line_start, chunks[1].text.as_str()), (3, "second para"));
    }

    #[test]
    fn long_paragraph_splits_at_line_boundaries() {
        let src: String = (1..=20).map(|i| format!("line number {i:02} of the paragraph\n")).collect();
        let chunks = chunk_text(&src, &limits(80, 120));
        assert!(chunks.len() > 1);
        assert_spans(&src, &chunks);
        assert_covers(&src, 1, &chunks);
        assert!(chunks.iter().all(|c| c.text.chars().count() <= 120));
    }

    #[test]
    fn giant_single_line_splits_into_bounded_pieces() {
        let src = "word ".repeat(200_000) + "end";
        assert!(src.len() > 1_000_000);
        let chunks = chunk_text(&src, &ChunkLimits::default());
        assert!(chunks.len() > 600);
        assert!(chunks.iter().all(|c| c.text.chars().count() <= 1600));
        assert!(chunks.iter().all(|c| (c.line_start, c.line_end) == (1, 1)));
        let rejoined: String = chunks.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(rejoined, src, "pieces of a split line lose nothing");
        assert!(chunks[0].text.ends_with(' '), "cut after whitespace, not mid-word");
    }

    #[test]
    fn korean_text_splits_on_char_boundaries() {
        let src = "가나다라마바사".repeat(500) + "\n\n" + &"한국어 문장 ".repeat(300);
        let chunks = chunk_text(&src, &limits(100, 137));
        assert_spans(&src, &chunks);
        assert!(chunks.iter().all(|c| c.text.chars().count() <= 137));
        let first_line: String = chunks.iter().filter(|c| c.line_start == 1).map(|c| c.text.as_str()).collect();
        assert_eq!(first_line, "가나다라마바사".repeat(500));
    }

    #[test]
    fn crlf_input_spans_match_lines() {
        let src = "one\r\ntwo\r\n\r\nthree\r\n";
        let chunks = chunk_text(src, &limits(5, 10));
        assert_spans(src, &chunks);
        assert_eq!(chunks[0].text, "one\ntwo");
        assert_eq!((chunks[1].line_start, chunks[1].text.as_str()), (4, "three"));
    }

    #[test]
    fn line_char_split_prefers_whitespace_and_never_exceeds_max() {
        assert_eq!(split_line_chars("aaaa bbbb cccc", 10), ["aaaa bbbb ", "cccc"]);
        assert_eq!(split_line_chars("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(split_line_chars("ééé", 0), ["é", "é", "é"]);
    }

    #[test]
    fn line_index_splits_at_lf_crlf_and_a_lone_cr() {
        let cases: [(&str, &[&str]); 9] = [
            ("a\nb", &["a", "b"]),
            ("a\n", &["a"]),
            ("\n", &[""]),
            ("a\r\nb\r\n", &["a", "b"]),
            ("x\r", &["x"]),
            ("a\n\n\nb", &["a", "", "", "b"]),
            ("a\rb\r\rc", &["a", "b", "", "c"]),
            ("a\r\r\nb\n\rc", &["a", "", "b", "", "c"]),
            ("", &[]),
        ];
        for (src, want) in cases {
            let lines = Lines::new(src);
            let got: Vec<&str> = (1..=lines.count()).map(|n| lines.line(n)).collect();
            assert_eq!(got, want, "{src:?}");
        }
        let lines = Lines::new("ab\ncd\n");
        assert_eq!([lines.line_of(0), lines.line_of(2), lines.line_of(3), lines.line_of(99)], [1, 1, 2, 2]);
        let mac = Lines::new("ab\rcd\r");
        assert_eq!((mac.line_of(2), mac.line_of(3), mac.text(1, 2)), (1, 2, "ab\ncd".to_string()));
    }

    #[test]
    fn cr_only_input_is_cut_into_lines() {
        let src = "one\rtwo\r\rthree\r";
        let chunks = chunk_text(src, &limits(5, 10));
        assert_spans(src, &chunks);
        assert_eq!(chunks[0].text, "one\ntwo");
        assert_eq!((chunks[1].line_start, chunks[1].text.as_str()), (4, "three"));
    }

    #[test]
    fn random_inputs_never_panic_and_keep_spans_exact() {
        for src in random_docs(300) {
            for lim in [limits(20, 40), limits(1, 1), ChunkLimits::default()] {
                let chunks = chunk_text(&src, &lim);
                assert_spans(&src, &chunks);
                assert_covers(&src, 1, &chunks);
            }
        }
    }
}
