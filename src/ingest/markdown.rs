//! Markdown chunking: reads front matter (title, tags), then cuts the document
//! into heading-aware chunks that each know the headings above them and the
//! exact source lines they came from.
//!
//! pulldown-cmark only tells us where top-level blocks and headings start, so
//! that fences, setext headings and HTML blocks are judged by a real CommonMark
//! parser; the chunk text itself is always taken from whole source lines.

use pulldown_cmark::{Event, Options, Parser, Tag};

use super::chunk::{ChunkDraft, ChunkLimits};
use super::text::{Lines, Packing, Unit, line_units, pack};

/// What indexing needs from one Markdown file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkdownDoc {
    /// Front-matter `title`, else the first H1's plain text.
    pub title: Option<String>,
    /// Front-matter `tags`, in order, without duplicates.
    pub tags: Vec<String>,
    pub chunks: Vec<ChunkDraft>,
}

/// Parse `src` and cut it into chunks no bigger than `limits.max_chars`,
/// except code blocks, which are never cut.
pub fn chunk_markdown(src: &str, limits: &ChunkLimits) -> MarkdownDoc {
    let lines = Lines::new(src);
    let outline = Outline::parse(src, &lines);
    let (fm_title, tags) = outline.front.map(|(open, close)| front_matter(&lines, open, close)).unwrap_or_default();
    let title = fm_title.or_else(|| outline.headings.iter().find(|h| h.level == 1).map(|h| h.text.clone()));

    let chunks = outline.chunk(&lines, limits);
    MarkdownDoc { title, tags, chunks }
}

impl Outline {
    /// Cut the document into sections under their headings, each emitted
    /// whole or cut between blocks. The HTML reader builds an outline of
    /// its own and shares this, so both formats chunk alike.
    pub(crate) fn chunk(&self, lines: &Lines, limits: &ChunkLimits) -> Vec<ChunkDraft> {
        let mut chunks = Vec::new();
        let total = lines.count();
        let body_first = self.front.map_or(1, |(_, close)| close + 1);
        let preamble_end = self.headings.first().map_or(total, |h| h.line.saturating_sub(1));
        if let Some(first) = (body_first..=preamble_end).find(|&n| !lines.is_blank(n)) {
            let last = lines.last_non_blank(first, preamble_end).unwrap_or(first);
            self.emit(lines, first, last, limits, &[], &mut chunks);
        }

        let mut stack: Vec<(u8, &str)> = Vec::new();
        // Start line of heading-only sections waiting to join the next section.
        let mut pending: Option<u32> = None;
        for (i, heading) in self.headings.iter().enumerate() {
            while stack.last().is_some_and(|&(level, _)| level >= heading.level) {
                stack.pop();
            }
            stack.push((heading.level, &heading.text));
            let next = self.headings.get(i + 1);
            let end = next.map_or(total, |n| n.line.saturating_sub(1));
            let last = lines.last_non_blank(heading.line, end).unwrap_or(heading.line).max(heading.last);
            let start = *pending.get_or_insert(heading.line);
            if last <= heading.last && next.is_some() {
                continue;
            }
            pending = None;
            let path: Vec<String> = stack.iter().map(|&(_, text)| text.to_string()).collect();
            self.emit(lines, start, last, limits, &path, &mut chunks);
        }
        chunks
    }
}

pub(crate) struct Heading {
    /// First and last source line (a setext heading spans its underline too).
    pub(crate) line: u32,
    pub(crate) last: u32,
    pub(crate) level: u8,
    /// Plain text: inline markup dropped, code spans kept, whitespace collapsed.
    pub(crate) text: String,
}

/// The document structure the chunker needs, as 1-based line numbers.
pub(crate) struct Outline {
    /// Front matter's opening and closing `---` lines.
    pub(crate) front: Option<(u32, u32)>,
    /// Top-level blocks in order: first line, and whether it is a code block.
    pub(crate) blocks: Vec<(u32, bool)>,
    /// Code blocks inside lists or quotes, as line spans; also never cut.
    pub(crate) nested_code: Vec<(u32, u32)>,
    pub(crate) headings: Vec<Heading>,
}

impl Outline {
    fn parse(src: &str, lines: &Lines) -> Outline {
        // A byte-order mark would hide front matter from the parser.
        let bom = if src.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
        let front = front_matter_span(src, bom, lines);
        let skip = front.map_or(bom, |(_, close)| lines.start_of(close + 1));
        let mut outline = Outline { front, blocks: Vec::new(), nested_code: Vec::new(), headings: Vec::new() };
        let mut depth = 0usize;
        let mut heading: Option<Heading> = None;
        for (event, range) in Parser::new_ext(&src[skip..], Options::ENABLE_TABLES).into_offset_iter() {
            let first = lines.line_of(skip + range.start);
            let last = lines.line_of(skip + range.end.max(range.start + 1) - 1);
            match event {
                Event::Start(tag) => {
                    let is_code = matches!(tag, Tag::CodeBlock(_));
                    if depth == 0 {
                        if let Tag::Heading { level, .. } = tag {
                            heading = Some(Heading { line: first, last, level: level as u8, text: String::new() });
                        }
                        outline.blocks.push((first, is_code));
                    } else if is_code {
                        outline.nested_code.push((first, last));
                    }
                    depth += 1;
                }
                Event::End(_) => {
                    depth = depth.saturating_sub(1);
                    if depth == 0
                        && let Some(mut done) = heading.take()
                    {
                        done.text = done.text.split_whitespace().collect::<Vec<_>>().join(" ");
                        outline.headings.push(done);
                    }
                }
                Event::Text(text) | Event::Code(text) => {
                    if let Some(h) = heading.as_mut() {
                        h.text.push_str(&text);
                    }
                }
                Event::SoftBreak | Event::HardBreak => {
                    if let Some(h) = heading.as_mut() {
                        h.text.push(' ');
                    }
                }
                // Thematic breaks and any other leaf that arrives outside a block.
                _ if depth == 0 => outline.blocks.push((first, false)),
                _ => {}
            }
        }
        outline
    }

    /// Emit the section `first..=last` whole if it fits, else cut it between
    /// top-level blocks, and cut a too-big block between lines.
    fn emit(&self, lines: &Lines, first: u32, last: u32, limits: &ChunkLimits, path: &[String], out: &mut Vec<ChunkDraft>) {
        let max = limits.max_chars.max(1);
        if lines.chars(first, last) <= max {
            out.push(lines.draft(first, last, path));
            return;
        }
        let from = self.blocks.partition_point(|&(line, _)| line < first);
        let to = self.blocks.partition_point(|&(line, _)| line <= last);
        let mut blocks = Vec::new();
        // Lines before the first block (say, link definitions) ride along with it.
        let mut open = Unit { first, last: first, atomic: false };
        for &(line, is_code) in &self.blocks[from..to] {
            if line > open.first {
                open.last = lines.last_non_blank(open.first, line - 1).unwrap_or(open.first);
                blocks.push(open);
                open = Unit { first: line, last: line, atomic: is_code };
            } else {
                open.atomic |= is_code;
            }
        }
        open.last = lines.last_non_blank(open.first, last).unwrap_or(open.first);
        blocks.push(open);

        let mut units = Vec::new();
        for block in blocks {
            if block.atomic || lines.chars(block.first, block.last) <= max {
                units.push(block);
            } else {
                self.explode(lines, block, &mut units);
            }
        }
        pack(lines, &units, limits, Packing::Fill, path, out);
    }

    /// Break a too-big block (a long list or quote) into per-line units, but
    /// keep any code block nested inside it in one piece.
    fn explode(&self, lines: &Lines, block: Unit, units: &mut Vec<Unit>) {
        let mut next = block.first;
        let from = self.nested_code.partition_point(|&(line, _)| line < block.first);
        for &(start, end) in &self.nested_code[from..] {
            if start > block.last {
                break;
            }
            if start < next {
                continue;
            }
            line_units(lines, next, start - 1, units);
            let end = end.min(block.last);
            units.push(Unit { first: start, last: end, atomic: true });
            next = end + 1;
        }
        line_units(lines, next, block.last, units);
    }
}

/// Opening and closing line of front matter, if the file starts with it.
///
/// pulldown-cmark's metadata option also claims any later `---` … `---` pair,
/// which would swallow the headings between two thematic breaks. So it only
/// sees the top of the file, up to the first line that could close the block,
/// and the body is parsed without the option.
fn front_matter_span(src: &str, bom: usize, lines: &Lines) -> Option<(u32, u32)> {
    if !src[bom..].starts_with("---") {
        return None;
    }
    let close = (2..=lines.count()).find(|&n| matches!(lines.line(n).trim_end_matches([' ', '\r']), "---" | "..."))?;
    // An empty block (Jekyll's `---` `---`: a page with no settings) is front
    // matter too, though pulldown-cmark reads it as two thematic breaks.
    let fence = |n: u32| lines.line(n).trim_end_matches([' ', '\r']);
    if fence(1).trim_start_matches('\u{feff}') == "---" && (2..close).all(|n| fence(n).trim().is_empty()) {
        return Some((1, close));
    }
    // pulldown-cmark's metadata block ends its lines at `\n` only: a lone
    // `\r` (old Mac files, which the lines here allow) becomes one, byte for byte.
    let head = lone_cr_as_lf(&src[bom..lines.start_of(close + 1)]);
    let options = Options::ENABLE_YAML_STYLE_METADATA_BLOCKS | Options::ENABLE_TABLES;
    match Parser::new_ext(&head, options).into_offset_iter().next() {
        Some((Event::Start(Tag::MetadataBlock(_)), range)) if range.start == 0 => Some((1, close)),
        _ => None,
    }
}

/// `text` with every `\r` not followed by `\n` turned into `\n` (same length).
fn lone_cr_as_lf(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\r') {
        return text.into();
    }
    let mut chars = text.chars().peekable();
    let mut out = String::with_capacity(text.len());
    while let Some(c) = chars.next() {
        out.push(if c == '\r' && chars.peek() != Some(&'\n') { '\n' } else { c });
    }
    out.into()
}

/// Read `title` and `tags` from the YAML between the fences by hand: only
/// these two keys matter, and a YAML crate would be a heavy dependency.
fn front_matter(lines: &Lines, open: u32, close: u32) -> (Option<String>, Vec<String>) {
    let mut title = None;
    let mut tags: Vec<String> = Vec::new();
    let mut in_tag_list = false;
    for n in open + 1..close {
        let line = lines.line(n);
        if in_tag_list {
            let item = line.trim_start();
            if let Some(rest) = item.strip_prefix('-').filter(|r| r.is_empty() || r.starts_with(char::is_whitespace)) {
                tags.push(scalar(rest));
                continue;
            }
            if line.trim().is_empty() || item.starts_with('#') || line.starts_with(char::is_whitespace) {
                continue;
            }
            in_tag_list = false;
        }
        if line.starts_with(char::is_whitespace) {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else { continue };
        let value = value.trim();
        match key.trim() {
            "title" => title = Some(scalar(value)).filter(|t| !t.is_empty()),
            "tags" if value.is_empty() => in_tag_list = true,
            "tags" => match value.strip_prefix('[').and_then(|v| v.rfind(']').map(|end| &v[..end])) {
                Some(inner) => tags.extend(inner.split(',').map(scalar)),
                None => tags.push(scalar(value)),
            },
            _ => {}
        }
    }
    let mut unique: Vec<String> = Vec::new();
    for tag in tags {
        if !tag.is_empty() && !unique.contains(&tag) {
            unique.push(tag);
        }
    }
    (title, unique)
}

/// A YAML scalar's value: quotes removed, or a trailing ` # comment` dropped.
fn scalar(raw: &str) -> String {
    let raw = raw.trim();
    for quote in ['"', '\''] {
        if let Some(inner) = raw.strip_prefix(quote).and_then(|r| r.strip_suffix(quote)) {
            return if quote == '"' { inner.replace("\\\"", "\"") } else { inner.replace("''", "'") };
        }
    }
    match raw.find(" #") {
        Some(at) => raw[..at].trim_end().to_string(),
        None => raw.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::text::testkit::{assert_covers, assert_spans, random_docs};
    use super::*;

    fn small(target_chars: usize, max_chars: usize) -> ChunkLimits {
        ChunkLimits { target_chars, max_chars }
    }

    fn chunk(src: &str) -> MarkdownDoc {
        let doc = chunk_markdown(src, &ChunkLimits::default());
        assert_spans(src, &doc.chunks);
        doc
    }

    fn paths(doc: &MarkdownDoc) -> Vec<String> {
        doc.chunks.iter().map(|c| c.heading_path.join(" > ")).collect()
    }

    #[test]
    fn heading_path_nests_and_pops() {
        let src = "intro line\n\n# A\na\n## B\nb\n### C\nc\n## D\nd\n#### E\ne\n# F\nf\n";
        let doc = chunk(src);
        assert_eq!(paths(&doc), ["", "A", "A > B", "A > B > C", "A > D", "A > D > E", "F"]);
        assert_eq!(doc.chunks[0].text, "intro line");
        assert_eq!((doc.chunks[3].line_start, doc.chunks[3].line_end), (7, 8));
    }

    #[test]
    fn section_text_is_exact_source_lines_without_trailing_blanks() {
        let src = "# Top\n\nPara *one*.\n\n- a\n- b\n\n\n## Next\n\n> quote\n\n\n";
        let doc = chunk(src);
        assert_eq!(doc.chunks[0].text, "# Top\n\nPara *one*.\n\n- a\n- b");
        assert_eq!((doc.chunks[1].line_start, doc.chunks[1].line_end), (9, 11));
    }

    #[test]
    fn hashes_inside_fence_are_not_headings_and_fence_is_never_split() {
        let body: String = (0..200).map(|i| format!("# comment {i}\n")).collect();
        let src = format!("# Real\n\nbefore\n\n```sh\n{body}```\n\nafter\n");
        let doc = chunk_markdown(&src, &small(100, 300));
        assert_spans(&src, &doc.chunks);
        assert!(doc.chunks.iter().all(|c| c.heading_path == ["Real"]));
        let fence = doc.chunks.iter().find(|c| c.text.contains("# comment 0")).expect("fence chunk");
        assert!(fence.text.contains("# comment 199") && fence.text.chars().count() > 300);
        assert!(fence.text.starts_with("```sh") && fence.text.ends_with("```"));
    }

    #[test]
    fn code_nested_in_a_list_is_not_split() {
        let code: String = (0..50).map(|i| format!("    let x{i} = {i};\n")).collect();
        let src = format!("- item\n\n    ```\n{code}    ```\n- other item\n");
        let doc = chunk_markdown(&src, &small(50, 100));
        assert_spans(&src, &doc.chunks);
        assert!(doc.chunks.iter().any(|c| c.text.contains("x0 =") && c.text.contains("x49 =")));
    }

    #[test]
    fn long_section_splits_on_paragraph_boundaries() {
        let paras: Vec<String> = (0..12).map(|i| format!("Paragraph {i} says something fairly ordinary.")).collect();
        let src = format!("# Long\n\n{}\n", paras.join("\n\n"));
        let doc = chunk_markdown(&src, &small(100, 150));
        assert_spans(&src, &doc.chunks);
        assert_covers(&src, 1, &doc.chunks);
        assert!(doc.chunks.len() > 2);
        for c in &doc.chunks {
            assert!(c.text.chars().count() <= 150, "{c:?}");
            assert_eq!(c.heading_path, ["Long"]);
            assert!(paras.iter().any(|p| c.text.ends_with(p.as_str())), "cut mid-paragraph: {c:?}");
        }
    }

    #[test]
    fn front_matter_title_and_flow_tags() {
        let src = "---\ntitle: \"Notes: week 3\"\ntags: [rust, 'cli', rust]\n---\n# Heading\nbody\n";
        let doc = chunk(src);
        assert_eq!(doc.title.as_deref(), Some("Notes: week 3"));
        assert_eq!(doc.tags, ["rust", "cli"]);
        assert_eq!(doc.chunks.len(), 1);
        assert_eq!(doc.chunks[0].line_start, 5);
        assert!(!doc.chunks[0].text.contains("title:"));
    }

    #[test]
    fn front_matter_block_list_and_single_tags() {
        let doc = chunk("---\ntitle: Plain title # note\ntags:\n  - one\n  - \"two words\"\nauthor: me\n---\ntext\n");
        assert_eq!(doc.title.as_deref(), Some("Plain title"));
        assert_eq!(doc.tags, ["one", "two words"]);
        let doc = chunk("---\ntags: solo\n---\n");
        assert_eq!((doc.title, doc.tags, doc.chunks.len()), (None, vec!["solo".to_string()], 0));
    }

    #[test]
    fn title_falls_back_to_first_h1_plain_text() {
        let doc = chunk("## Not this\n\n# The `Box<T>` *type*\n\ntext\n\n# Later\n");
        assert_eq!(doc.title.as_deref(), Some("The Box<T> type"));
        assert_eq!(doc.chunks[0].heading_path, ["The Box<T> type"]);
        assert_eq!(chunk("just text\n").title, None);
    }

    #[test]
    fn heading_only_section_merges_forward() {
        let src = "# Book\n## Chapter\n\n### Part\ntext\n";
        let doc = chunk(src);
        assert_eq!(doc.chunks.len(), 1);
        assert_eq!((doc.chunks[0].line_start, doc.chunks[0].line_end), (1, 5));
        assert_eq!(doc.chunks[0].heading_path, ["Book", "Chapter", "Part"]);
    }

    #[test]
    fn trailing_heading_only_sections_are_kept() {
        let src = "# A\ntext\n\n## Empty one\n\n## Empty two\n\n";
        let doc = chunk(src);
        assert_eq!(doc.chunks.len(), 2);
        assert_eq!(doc.chunks[1].text, "## Empty one\n\n## Empty two");
        assert_eq!(doc.chunks[1].heading_path, ["A", "Empty two"]);
    }

    #[test]
    fn thematic_break_pairs_mid_document_are_not_front_matter() {
        let src = "intro\n\n---\n## Kept heading\ntext\n\n---\nmore\n";
        let doc = chunk(src);
        assert_eq!(paths(&doc), ["", "Kept heading"]);
        assert_eq!(doc.chunks[0].text, "intro\n\n---");
    }

    #[test]
    fn setext_headings_count() {
        let src = "Title\n=====\n\nintro\n\nSub\n---\nmore\n";
        let doc = chunk(src);
        assert_eq!(doc.title.as_deref(), Some("Title"));
        assert_eq!(paths(&doc), ["Title", "Title > Sub"]);
        assert_eq!(doc.chunks[1].line_start, 6);
        assert_eq!(chunk("A\n===\n## B\ntext\n").chunks.len(), 1, "setext underline is part of the heading");
    }

    #[test]
    fn crlf_input_keeps_line_spans() {
        let src = "---\r\ntitle: Win\r\n---\r\n# H\r\n\r\nbody\r\n## I\r\nmore\r\n";
        let doc = chunk(src);
        assert_eq!(doc.title.as_deref(), Some("Win"));
        assert_eq!(doc.chunks[0].text, "# H\n\nbody");
        assert_eq!((doc.chunks[1].line_start, doc.chunks[1].line_end), (7, 8));
    }

    #[test]
    fn empty_and_blank_input_gives_no_chunks() {
        for src in ["", "\n\n", "  \t \r\n"] {
            let doc = chunk(src);
            assert!(doc.chunks.is_empty() && doc.title.is_none(), "{src:?}");
        }
    }

    #[test]
    fn giant_single_line_is_cut_into_bounded_pieces() {
        let src = format!("# Big\n{}\n", "lorem ipsum ".repeat(90_000));
        let doc = chunk(&src);
        let pieces: Vec<_> = doc.chunks.iter().filter(|c| c.line_start == 2).collect();
        assert!(pieces.len() > 600);
        assert!(pieces.iter().all(|c| c.line_end == 2 && c.text.chars().count() <= 1600));
        assert_eq!(doc.chunks[0].text, "# Big");
    }

    #[test]
    fn korean_text_splits_cleanly() {
        let src = format!("# 한국어\n\n{}\n\n{}\n", "가나다라 마바사 ".repeat(400), "아자차카타파하".repeat(300));
        let doc = chunk_markdown(&src, &small(150, 200));
        assert_spans(&src, &doc.chunks);
        assert_covers(&src, 1, &doc.chunks);
        assert!(doc.chunks.iter().all(|c| c.text.chars().count() <= 200 && c.heading_path == ["한국어"]));
    }

    #[test]
    fn odd_inputs_do_not_panic() {
        let nested = "> - ".repeat(500) + "deep\n";
        let odd = [
            "```\nunclosed\n# inside\n", "\0\0# \0\n", "<div>\n# in html\n</div>\n", "\t# tab\n\tcode\n",
            "\u{feff}---\ntitle: bom\n---\nx\n", "---\n---\n", "#\n##\n", "a\r", nested.as_str(),
        ];
        for src in odd {
            let doc = chunk_markdown(src, &small(5, 10));
            assert_spans(src, &doc.chunks);
        }
        assert_eq!(chunk("\u{feff}---\ntitle: bom\n---\nx\n").title.as_deref(), Some("bom"));
    }

    #[test]
    fn random_inputs_never_panic_and_keep_spans_exact() {
        for src in random_docs(300) {
            for lim in [small(20, 40), small(1, 1), ChunkLimits::default()] {
                let doc = chunk_markdown(&src, &lim);
                assert_spans(&src, &doc.chunks);
                let front = Outline::parse(&src, &Lines::new(&src)).front;
                let body_first = front.map_or(1, |(_, close)| close as usize + 1);
                assert_covers(&src, body_first, &doc.chunks);
            }
        }
    }
}
