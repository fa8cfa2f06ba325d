//! Markdown and mdBook markup that is not text — HTML comments such as
//! `<!-- ignore -->`, tags, link targets, reference labels — and the folding
//! (case, whitespace, typographic quotes, emphasis) under which a quote is
//! compared with its evidence. The built-in answerer strips the same markup
//! from what it quotes that rag-v2 verification strips from both sides.

/// What a quote and its evidence are compared as.
pub fn fold(text: &str) -> String {
    normalise(&strip_markup(text))
}

/// Text without the Markdown/mdBook markup that is not text: HTML comments
/// (`<!-- ignore -->`), link targets (`[text](url)` → `text`), reference
/// labels (`[text][label]` → `text`), reference definitions (`[label]: url`
/// lines) and the `>` that opens each line of a block quote. The built-in
/// model quotes this form, and verification compares it, so a quote never
/// carries markup.
pub fn strip_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_fence = false;
    for line in text.split_inclusive('\n').filter(|l| !is_reference_definition(l)) {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
        }
        // A sentence of a block quote runs across lines that each open with
        // `>`; in a code block, `>` is a prompt or an operator, and stays.
        if !in_fence && t.starts_with('>') {
            out.push_str(t.trim_start_matches(['>', ' ', '\t']));
        } else {
            out.push_str(line);
        }
    }
    let mut s = out;
    while let Some(start) = s.find("<!--") {
        let Some(len) = s[start..].find("-->") else { break };
        s.replace_range(start..start + len + 3, "");
    }
    strip_links(&strip_tags(&s))
}

/// Inline HTML tags mdBook sources use (`<span id="…">`, `</span>`, `<br>`);
/// the text between them stays. Only these names, so `Vec<T>` is untouched.
fn strip_tags(s: &str) -> String {
    const TAGS: &[&str] = &["span", "a", "sup", "sub", "br", "img", "em", "strong", "kbd", "code", "div", "p"];
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let name: String = after.trim_start_matches('/').chars().take_while(char::is_ascii_alphabetic).collect();
        let end = after.find('>');
        let boundary = after.trim_start_matches('/')[name.len()..].chars().next().is_some_and(|c| c == '>' || c == ' ' || c == '/');
        match end {
            Some(e) if TAGS.contains(&name.to_ascii_lowercase().as_str()) && boundary && !after[..e].contains('\n') => {
                rest = &after[e + 1..];
            }
            _ => {
                out.push('<');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn is_reference_definition(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with('[') && t.find("]: ").is_some_and(|i| {
        let target = t[i + 3..].trim();
        !target.is_empty() && !target.contains(char::is_whitespace)
    })
}

/// `[text](target)` and `[text][label]` → `text`; other brackets stay.
fn strip_links(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find(']') else {
            out.push('[');
            rest = after;
            continue;
        };
        let (inner, tail) = (&after[..close], &after[close + 1..]);
        let target = match tail.chars().next() {
            Some('(') => tail.find(')').map(|e| e + 1),
            Some('[') => tail.find(']').map(|e| e + 1).filter(|&e| !tail[1..e - 1].contains('[')),
            _ => None,
        };
        match target {
            Some(skip) if !inner.contains('[') => {
                out.push_str(inner);
                rest = &tail[skip..];
            }
            _ => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Lowercase, one space between words, no Markdown emphasis or code marks,
/// straight quotes and dashes.
pub fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        let c = match c {
            '\u{2018}' | '\u{2019}' => '\'',
            '\u{201C}' | '\u{201D}' => '"',
            '\u{2013}' | '\u{2014}' => '-',
            '*' | '_' | '`' => continue,
            c => c,
        };
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.extend(c.to_lowercase());
    }
    out
}

