//! HTML chunking: the page's readable text, cut like Markdown, with every
//! chunk keeping the line span of the HTML source it came from.
//!
//! html5ever's WHATWG tokenizer does the parsing (entities, comments, raw-text
//! elements, broken markup) and says on which source line each token ends.
//! The text is laid out as a plain document whose lines each remember their
//! source lines: headings become `#` lines, `<pre>` becomes a fenced block,
//! scripts, styles and page furniture (nav, header, footer, aside) are left
//! out. The Markdown chunker's outline logic then cuts that document, and the
//! spans are mapped back, so a citation opens the HTML file at the right lines.
//!
//! No tree is built: text extraction needs only where blocks start and end,
//! and the tokenizer alone is the lightest maintained html5ever entry point.

use std::cell::RefCell;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{
    BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts, states::RawKind,
};

use super::chunk::{ChunkDraft, ChunkLimits};
use super::markdown::{Heading, Outline};
use super::text::Lines;

/// What indexing needs from one HTML file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HtmlDoc {
    /// `<title>`, else the first `<h1>`.
    pub title: Option<String>,
    pub chunks: Vec<ChunkDraft>,
}

/// Parse `src` and cut its readable text into chunks no bigger than
/// `limits.max_chars`, except `<pre>` blocks, which are never cut.
pub fn chunk_html(src: &str, limits: &ChunkLimits) -> HtmlDoc {
    let sink = Sink { state: RefCell::new(Layout::default()) };
    let tokenizer = Tokenizer::new(sink, TokenizerOpts::default());
    let queue = BufferQueue::default();
    queue.push_back(StrTendril::from_slice(src));
    // We never ask the tokenizer to pause for a script, so one feed runs to the end.
    let _ = tokenizer.feed(&queue);
    tokenizer.end();
    let mut layout = tokenizer.sink.state.into_inner();
    layout.end_line();

    let source_lines = Lines::new(src).count().max(1);
    let text = layout.lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join("\n");
    let lines = Lines::new(&text);
    let title = layout.title.take().map(|t| t.split_whitespace().collect::<Vec<_>>().join(" ")).filter(|t| !t.is_empty());
    let title = title.or_else(|| layout.headings.iter().find(|h| h.level == 1).map(|h| h.text.clone()));
    let outline = Outline { front: None, blocks: layout.blocks, nested_code: Vec::new(), headings: layout.headings };
    let mut chunks = outline.chunk(&lines, limits);
    for c in &mut chunks {
        let span = |n: u32| layout.lines.get((n as usize).saturating_sub(1)).map_or((1, 1), |l| l.source);
        let start = span(c.line_start).0.clamp(1, source_lines);
        let end = span(c.line_end).1.clamp(start, source_lines);
        c.line_start = start;
        c.line_end = end;
    }
    HtmlDoc { title, chunks }
}

/// Elements whose content is never part of the note's text (a `<header>`
/// inside `<article>` or `<main>` is kept: it holds the article's own title).
const DROPPED: &[&str] = &["script", "style", "noscript", "template", "nav", "header", "footer", "aside", "svg", "math"];

/// Elements that start and end a block of text.
const BLOCKS: &[&str] = &[
    "address", "article", "blockquote", "body", "caption", "dd", "details", "dialog", "div", "dl", "dt", "fieldset",
    "figcaption", "figure", "form", "hr", "html", "li", "main", "ol", "p", "section", "summary", "table", "tbody",
    "td", "tfoot", "th", "thead", "tr", "ul", "option", "select", "textarea", "center", "menu", "legend",
];

fn heading_level(name: &str) -> Option<u8> {
    match name {
        "h1" => Some(1),
        "h2" => Some(2),
        "h3" => Some(3),
        "h4" => Some(4),
        "h5" => Some(5),
        "h6" => Some(6),
        _ => None,
    }
}

/// How the tokenizer must read an element's content (what a tree builder
/// would tell it): a script's `</p>` is not a tag.
fn raw_kind(name: &str) -> Option<TokenSinkResult<()>> {
    match name {
        "script" => Some(TokenSinkResult::RawData(RawKind::ScriptData)),
        "style" | "xmp" | "iframe" | "noembed" | "noframes" => Some(TokenSinkResult::RawData(RawKind::Rawtext)),
        "title" | "textarea" => Some(TokenSinkResult::RawData(RawKind::Rcdata)),
        "plaintext" => Some(TokenSinkResult::Plaintext),
        _ => None,
    }
}

/// One line of the laid-out text and the source lines it came from.
#[derive(Debug, Default)]
struct OutLine {
    text: String,
    source: (u32, u32),
}

/// The laid-out document being built, token by token.
#[derive(Default)]
struct Layout {
    lines: Vec<OutLine>,
    /// The line being filled, if any.
    open: Option<OutLine>,
    /// Whitespace was seen since the last word on the open line.
    space: bool,
    /// The next text starts a new block (a blank line before it).
    new_block: bool,
    blocks: Vec<(u32, bool)>,
    headings: Vec<Heading>,
    /// Nesting depth inside dropped elements.
    dropped: usize,
    /// Open `<article>`/`<main>` elements, and `<header>`s kept inside them.
    articles: usize,
    kept_headers: usize,
    /// Inside `<pre>`, with the line it opened on.
    pre: Option<u32>,
    /// A newline right after `<pre>` is not content (HTML drops it).
    pre_fresh: bool,
    /// The heading being read: level, text, first source line.
    heading: Option<(u8, String, u32)>,
    /// `<title>` text while inside it, then the title.
    in_title: bool,
    title: Option<String>,
}

impl Layout {
    /// Close the open line, if any.
    fn end_line(&mut self) {
        if let Some(line) = self.open.take()
            && !line.text.trim().is_empty()
        {
            self.push(OutLine { text: line.text.trim_end().to_string(), source: line.source });
        }
        self.space = false;
    }

    /// Lay out a line. Its source span never starts before the previous
    /// line's: broken markup (a heading opened before a `<pre>` and closed
    /// after it) can finish an element after lines that came later in the
    /// file, and chunks must follow the file's order.
    fn push(&mut self, mut line: OutLine) {
        let floor = self.lines.last().map_or(1, |l| l.source.0);
        line.source.0 = line.source.0.max(floor);
        line.source.1 = line.source.1.max(line.source.0);
        self.lines.push(line);
    }

    fn break_block(&mut self) {
        self.end_line();
        self.new_block = true;
    }

    /// Start a line on source line `at`; a new block gets a blank line before it
    /// and joins the outline.
    fn start_line(&mut self, at: u32, code: bool) {
        self.end_line();
        if self.new_block || self.lines.is_empty() {
            if let Some(prev) = self.lines.last() {
                let end = prev.source.1;
                self.push(OutLine { text: String::new(), source: (end, end) });
            }
            self.blocks.push((self.next_number(), code));
            self.new_block = false;
        }
        self.open = Some(OutLine { text: String::new(), source: (at, at) });
    }

    /// The 1-based number the next pushed line will have.
    fn next_number(&self) -> u32 {
        u32::try_from(self.lines.len() + 1).unwrap_or(u32::MAX)
    }

    /// A whole line of its own (a heading, a fence): `Some(is_code)` starts a
    /// new block with it, `None` continues the open one.
    fn push_line(&mut self, text: String, source: (u32, u32), block: Option<bool>) {
        if block.is_some() {
            self.new_block = true;
        }
        self.start_line(source.0, block.unwrap_or(false));
        self.open = Some(OutLine { text, source });
        self.end_line();
    }

    /// Flowing text whose last character sits on source line `end`.
    fn text(&mut self, text: &str, end: u32) {
        let newlines = u32::try_from(text.matches('\n').count()).unwrap_or(0);
        let mut line = end.saturating_sub(newlines).max(1);
        // The tokenizer cuts text at entities and inline tags (`AT&amp;T`,
        // `Hyd<b>ra</b>tion`), so pieces are joined as they stand: the
        // whitespace in the text is what parts words.
        if self.in_title {
            self.title.get_or_insert_with(String::new).push_str(text);
            return;
        }
        if self.dropped > 0 {
            return;
        }
        if let Some((_, heading, _)) = self.heading.as_mut() {
            heading.push_str(text);
            return;
        }
        if self.pre.is_some() {
            return self.pre_text(text, line);
        }
        for (i, piece) in text.split('\n').enumerate() {
            if i > 0 {
                line += 1;
                self.space = true;
            }
            let starts_blank = piece.starts_with(char::is_whitespace);
            let mut words = piece.split_whitespace().peekable();
            if words.peek().is_none() {
                self.space |= !piece.is_empty();
                continue;
            }
            match self.open.as_ref() {
                Some(open) if open.source.1 == line => {}
                Some(_) => {
                    // Same block, next source line: a new laid-out line.
                    self.end_line();
                    self.open = Some(OutLine { text: String::new(), source: (line, line) });
                }
                None => self.start_line(line, false),
            }
            let Some(open) = self.open.as_mut() else { continue };
            if (self.space || starts_blank) && !open.text.is_empty() {
                open.text.push(' ');
            }
            open.text.push_str(&words.collect::<Vec<_>>().join(" "));
            self.space = piece.ends_with(char::is_whitespace);
        }
    }

    /// Preformatted text: kept as it stands, one laid-out line per source line.
    fn pre_text(&mut self, text: &str, mut line: u32) {
        let mut text = text.replace('\r', "");
        if self.pre_fresh {
            self.pre_fresh = false;
            if let Some(rest) = text.strip_prefix('\n') {
                text = rest.to_string();
                line += 1;
            }
        }
        for (i, piece) in text.split('\n').enumerate() {
            if i > 0 {
                // A blank line inside <pre> is content: keep it as a line.
                let open = self.open.take().unwrap_or(OutLine { text: String::new(), source: (line, line) });
                self.push(open);
                line += 1;
                self.open = Some(OutLine { text: String::new(), source: (line, line) });
            }
            let open = self.open.get_or_insert(OutLine { text: String::new(), source: (line, line) });
            open.text.push_str(&piece.replace('\t', "    "));
            open.source.1 = line;
        }
    }

    fn start_tag(&mut self, name: &str, self_closing: bool, line: u32) {
        if matches!(name, "article" | "main") && !self_closing {
            self.articles += 1;
        }
        if name == "header" && self.articles > 0 && self.dropped == 0 {
            self.kept_headers += 1;
            return self.break_block();
        }
        if DROPPED.contains(&name) {
            if !self_closing {
                self.dropped += 1;
            }
            return;
        }
        if name == "title" {
            self.in_title = self.title.is_none() && self.dropped == 0;
            return;
        }
        if self.dropped > 0 {
            return;
        }
        // A heading left open (`<h1>` without `</h1>`) ends where the next
        // heading or a `<pre>` starts: its line must come before theirs.
        if heading_level(name).is_some() || name == "pre" {
            self.finish_heading(line);
        }
        // A line break or a block inside a heading parts its words.
        if let Some((_, heading, _)) = self.heading.as_mut()
            && (name == "br" || BLOCKS.contains(&name))
        {
            heading.push(' ');
        }
        if let Some(level) = heading_level(name) {
            self.break_block();
            self.heading = Some((level, String::new(), line));
        } else if name == "pre" && self.pre.is_none() {
            self.push_line("```".into(), (line, line), Some(true));
            self.pre = Some(line);
            self.pre_fresh = true;
        } else if name == "br" {
            if self.pre.is_none() {
                self.end_line();
            }
        } else if BLOCKS.contains(&name) && self.pre.is_none() {
            self.break_block();
        }
    }

    fn end_tag(&mut self, name: &str, line: u32) {
        if matches!(name, "article" | "main") {
            self.articles = self.articles.saturating_sub(1);
        }
        if name == "header" && self.kept_headers > 0 {
            self.kept_headers -= 1;
            return self.break_block();
        }
        if DROPPED.contains(&name) {
            self.dropped = self.dropped.saturating_sub(1);
            return;
        }
        if name == "title" {
            self.in_title = false;
            if let Some(t) = self.title.as_mut() {
                *t = t.split_whitespace().collect::<Vec<_>>().join(" ");
            }
            return;
        }
        if self.dropped > 0 {
            return;
        }
        if heading_level(name).is_some() {
            self.finish_heading(line);
        } else if name == "pre" && self.pre.is_some() {
            if let Some(open) = self.open.take()
                && !open.text.trim().is_empty()
            {
                self.push(open);
            }
            self.pre = None;
            self.push_line("```".into(), (line, line), None);
            self.new_block = true;
        } else if BLOCKS.contains(&name) && self.pre.is_none() {
            self.break_block();
        }
    }

    fn finish_heading(&mut self, line: u32) {
        let Some((level, text, first)) = self.heading.take() else { return };
        // Doc generators append a link glyph (`¶`, or an icon-font character
        // from the private use area) to every heading; it is not a word.
        let text: String = text.chars().filter(|c| *c != '¶' && !('\u{e000}'..='\u{f8ff}').contains(c)).collect();
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if text.is_empty() {
            return;
        }
        let marks = "#".repeat(usize::from(level));
        self.push_line(format!("{marks} {text}"), (first, line.max(first)), Some(false));
        let n = self.next_number() - 1;
        self.headings.push(Heading { line: n, last: n, level, text });
        self.new_block = true;
    }
}

struct Sink {
    state: RefCell<Layout>,
}

impl TokenSink for Sink {
    type Handle = ();

    fn process_token(&self, token: Token, line_number: u64) -> TokenSinkResult<()> {
        let line = u32::try_from(line_number).unwrap_or(u32::MAX);
        let mut state = self.state.borrow_mut();
        match token {
            Token::TagToken(tag) => {
                let name: &str = &tag.name;
                match tag.kind {
                    TagKind::StartTag => {
                        state.start_tag(name, tag.self_closing, line);
                        if !tag.self_closing
                            && let Some(raw) = raw_kind(name)
                        {
                            return raw;
                        }
                    }
                    TagKind::EndTag => state.end_tag(name, line),
                }
            }
            Token::CharacterTokens(text) => state.text(&text, line),
            Token::EOFToken => {
                let line = state.open.as_ref().map_or(line, |o| o.source.1);
                if state.heading.is_some() {
                    state.finish_heading(line);
                }
            }
            _ => {}
        }
        TokenSinkResult::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(src: &str) -> HtmlDoc {
        chunk_html(src, &ChunkLimits::default())
    }

    /// Source lines `a..=b` of `src`, for checking what a span points at.
    fn source(src: &str, a: u32, b: u32) -> String {
        src.lines().skip(a as usize - 1).take((b - a + 1) as usize).collect::<Vec<_>>().join("\n")
    }

    const PAGE: &str = "<!doctype html>
<html><head>
<title>Sourdough &amp; time</title>
<style>p { color: red }</style>
<script>var x = '<h1>not a heading</h1>';</script>
</head>
<body>
<nav><a href=/>Home</a> <a href=/b>Blog</a></nav>
<h1>Starter care</h1>
<p>Feed the starter
every twelve hours.</p>
<h2>Flour</h2>
<p>Rye wakes it up.</p>
<pre>
fn feed() {

    water();
}
</pre>
<footer>Copyright nobody</footer>
</body></html>
";

    #[test]
    fn title_comes_from_the_title_element_with_entities_decoded() {
        assert_eq!(chunk(PAGE).title.as_deref(), Some("Sourdough & time"));
        assert_eq!(chunk("<h1>Only <em>this</em></h1><p>x</p>").title.as_deref(), Some("Only this"));
        let linked = chunk("<h2>Usage<a class=headerlink href=#u>\u{f0c1}</a></h2><h3>More<a href=#m>¶</a></h3><p>x</p>");
        assert_eq!(linked.chunks[0].heading_path, ["Usage", "More"]);
    }

    #[test]
    fn headings_become_the_path_and_spans_point_at_the_source() {
        let doc = chunk(PAGE);
        let paths: Vec<String> = doc.chunks.iter().map(|c| c.heading_path.join(" > ")).collect();
        assert_eq!(paths, ["Starter care", "Starter care > Flour"]);
        let first = &doc.chunks[0];
        assert_eq!(first.text, "# Starter care\n\nFeed the starter\nevery twelve hours.");
        assert_eq!((first.line_start, first.line_end), (9, 11));
        assert!(source(PAGE, first.line_start, first.line_end).contains("every twelve hours"));
        let second = &doc.chunks[1];
        assert_eq!((second.line_start, second.line_end), (12, 19));
    }

    #[test]
    fn scripts_styles_and_page_furniture_are_dropped() {
        let all: String = chunk(PAGE).chunks.iter().map(|c| c.text.clone()).collect();
        for gone in ["not a heading", "color", "Home", "Blog", "Copyright"] {
            assert!(!all.contains(gone), "{gone} leaked into {all:?}");
        }
    }

    #[test]
    fn pre_blocks_stay_whole_and_keep_their_layout() {
        let body: String = (0..200).map(|i| format!("let x{i} = {i};\n")).collect();
        let src = format!("<h1>Code</h1>\n<p>before</p>\n<pre>{body}</pre>\n<p>after</p>\n");
        let doc = chunk_html(&src, &ChunkLimits { target_chars: 100, max_chars: 300 });
        let fence = doc.chunks.iter().find(|c| c.text.contains("let x0 =")).expect("pre chunk");
        assert!(fence.text.contains("let x199 = 199;") && fence.text.starts_with("```"), "{fence:?}");
        assert_eq!((fence.line_start, fence.line_end), (3, 203));
        let pre = chunk(PAGE).chunks[1].text.clone();
        assert!(pre.contains("```\nfn feed() {\n\n    water();\n}\n```"), "{pre:?}");
    }

    #[test]
    fn minified_html_on_one_line_keeps_headings() {
        let doc = chunk("<h1>A</h1><p>one</p><h2>B</h2><p>two</p>");
        let paths: Vec<String> = doc.chunks.iter().map(|c| c.heading_path.join(" > ")).collect();
        assert_eq!(paths, ["A", "A > B"]);
        assert!(doc.chunks.iter().all(|c| (c.line_start, c.line_end) == (1, 1)));
    }

    #[test]
    fn an_article_header_is_kept_but_the_page_header_is_not() {
        let doc = chunk("<header>Site name</header>\n<article><header><h1>Post</h1></header><p>Body.</p></article>");
        assert_eq!(doc.title.as_deref(), Some("Post"));
        let all: String = doc.chunks.iter().map(|c| c.text.clone()).collect();
        assert!(!all.contains("Site name") && all.contains("Body."), "{all:?}");
    }

    #[test]
    fn inline_markup_does_not_split_words() {
        let doc = chunk("<p>A <b>bold</b>word and <a href=x>a link</a>.</p>");
        assert_eq!(doc.chunks[0].text, "A boldword and a link.");
    }

    #[test]
    fn an_unclosed_heading_ends_before_the_pre_block_that_follows_it() {
        let src = "<h1>Kiln<p>one\ntwo\n<pre>\nfire\n</pre>\n<h2>Glaze<h3>Cone six</h3><p>hot</p>";
        let doc = chunk(src);
        let starts: Vec<u32> = doc.chunks.iter().map(|c| c.line_start).collect();
        assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{:?}", doc.chunks);
        let text: String = doc.chunks.iter().map(|c| c.text.as_str()).collect::<Vec<_>>().join("\n");
        let (heading, fence) = (text.find("# Kiln one two").unwrap(), text.find("```").unwrap());
        assert!(heading < fence, "{text}");
        // The heading left open by the next one keeps its text.
        assert!(doc.chunks.iter().any(|c| c.heading_path.iter().any(|h| h == "Glaze")), "{:?}", doc.chunks);
    }

    #[test]
    fn broken_and_odd_markup_does_not_panic_and_keeps_spans_in_the_file() {
        let odd = [
            "", "<", "<pre>", "</pre></pre><pre>x", "<h1>", "<h1><h2>x</h1>", "<nav>never closed <p>text", "\r\n\r\n<p>\rx\r</p>",
            "<script>", "<title>t", "&#0;&#xFFFFFF;&bogus;", "<pre>\n\n\n</pre>", "<p>a<br>b<br/>c</p>", "<plaintext><h1>x",
        ];
        for src in odd {
            let doc = chunk_html(src, &ChunkLimits { target_chars: 3, max_chars: 5 });
            let count = Lines::new(src).count().max(1);
            for c in &doc.chunks {
                assert!(1 <= c.line_start && c.line_start <= c.line_end && c.line_end <= count, "{src:?}: {c:?}");
            }
        }
    }
}
