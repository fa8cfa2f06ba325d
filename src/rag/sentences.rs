//! The sentences of an answer, as attribution judges them: byte spans cut at
//! line breaks and at sentence ends, with any citation markers that follow a
//! sentence's full stop kept with that sentence ("… the heap. [#2]"). List
//! bullets and numbers at the start of a line are not sentences of their own.

/// One sentence of an answer: `answer[start..end]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// The non-blank sentences of `answer`, in order.
pub fn split(answer: &str) -> Vec<Span> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < answer.len() {
        let next_line = answer[at..].find('\n').map_or(answer.len(), |i| at + i + 1);
        let line = &answer[at..next_line];
        let body_start = at + list_mark_len(line);
        if let Some(end) = cited_block_end(answer, body_start) {
            push(answer, body_start, end, &mut out);
            // The rest of the block's last line is read as a line.
            at = end;
            continue;
        }
        let line_end = at + line.trim_end_matches(['\n', '\r']).len();
        if body_start < line_end {
            split_line(answer, body_start, line_end, &mut out);
        }
        at = next_line;
    }
    out
}

/// Where a quote that opens at `at` and closes on a later line ends, with
/// the markers after it, when it has any: a code block or a list quoted
/// whole is one cited claim, not one sentence per line ("Cargo.toml" alone
/// would read as uncited).
fn cited_block_end(answer: &str, at: usize) -> Option<usize> {
    let open = answer[at..].chars().next()?;
    let close = match open {
        '\u{201C}' => '\u{201D}',
        '"' => '"',
        _ => return None,
    };
    let body = at + open.len_utf8();
    let closed = body + answer[body..].find(close)? + close.len_utf8();
    if !answer[body..closed].contains('\n') {
        return None;
    }
    let mut end = closed;
    loop {
        let rest = answer[end..].trim_start_matches([' ', '\t']);
        match rest.strip_prefix("[#").and_then(|r| r.find(']')) {
            Some(bracket) => end = answer.len() - rest.len() + "[#".len() + bracket + 1,
            None => break,
        }
    }
    (end > closed).then_some(end)
}

/// Bytes of leading indentation, bullet (`-`, `*`, `+`), numbering (`1.`,
/// `2)`) and quote marks of a line.
fn list_mark_len(line: &str) -> usize {
    let rest = line.trim_start().trim_start_matches(['-', '*', '+', '>']);
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let after_digits = &rest[digits..];
    let numbered = digits > 0 && (after_digits.starts_with(". ") || after_digits.starts_with(") "));
    let rest = if numbered { &after_digits[1..] } else { rest };
    line.len() - rest.trim_start().len()
}

/// Cuts `answer[from..to]` (one line) at `.`, `!`, `?` followed by a space
/// and a capital, digit, quote or backtick; markers right after the stop stay
/// with the sentence before.
fn split_line(answer: &str, from: usize, to: usize, out: &mut Vec<Span>) {
    let bytes = answer.as_bytes();
    let mut start = from;
    let mut i = from;
    while i < to {
        let c = bytes[i];
        if matches!(c, b'.' | b'!' | b'?') && i + 1 < to && bytes[i + 1] == b' ' {
            let mut end = i + 1;
            // Markers after the stop: "… heap. [#2] Next".
            let mut j = end;
            loop {
                let k = j + answer[j..to].len() - answer[j..to].trim_start().len();
                if answer[k..to].starts_with("[#")
                    && let Some(close) = answer[k..to].find(']')
                {
                    end = k + close + 1;
                    j = end;
                    continue;
                }
                break;
            }
            let next = answer[end..to].trim_start().chars().next();
            if next.is_some_and(|n| n.is_uppercase() || (!n.is_ascii() && n.is_alphabetic() && !n.is_lowercase()) || n.is_ascii_digit() || matches!(n, '"' | '`' | '\u{201C}' | '(')) {
                push(answer, start, end, out);
                start = end;
                i = end;
                continue;
            }
        }
        i += 1;
    }
    push(answer, start, to, out);
}

fn push(answer: &str, start: usize, end: usize, out: &mut Vec<Span>) {
    let text = &answer[start..end];
    let lead = text.len() - text.trim_start().len();
    let trail = text.len() - text.trim_end().len();
    if lead + trail < text.len() {
        out.push(Span { start: start + lead, end: end - trail });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(a: &str) -> Vec<&str> {
        split(a).iter().map(|s| &a[s.start..s.end]).collect()
    }

    #[test]
    fn sentences_end_at_stops_before_a_capital_and_keep_their_markers() {
        assert_eq!(texts("A box owns heap data. [#2] It is dropped. Then e.g. more."), ["A box owns heap data. [#2]", "It is dropped.", "Then e.g. more."]);
        assert_eq!(texts("Use `cargo new`. \"Quoted\" too!"), ["Use `cargo new`.", "\"Quoted\" too!"]);
    }

    #[test]
    fn a_quote_across_lines_with_its_marker_is_one_sentence() {
        let a = "Run it: [#1]\n\u{201C}$ cargo new app\n$ ls app\nCargo.toml\nsrc\u{201D} [#2]\nThen build. [#1]";
        assert_eq!(texts(a), ["Run it: [#1]", "\u{201C}$ cargo new app\n$ ls app\nCargo.toml\nsrc\u{201D} [#2]", "Then build. [#1]"]);
        // Without a marker after it, its lines are sentences as before.
        assert_eq!(texts("\"one\ntwo\"\nthree"), ["\"one", "two\"", "three"]);
    }

    #[test]
    fn lines_and_list_marks_separate_sentences() {
        assert_eq!(texts("Steps:\n1. Run cargo new.\n- Build it\n\n   "), ["Steps:", "Run cargo new.", "Build it"]);
        assert_eq!(texts("소유권은 규칙이다. 값은 이동한다."), ["소유권은 규칙이다.", "값은 이동한다."]);
    }
}
