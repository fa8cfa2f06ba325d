//! Extract: the citation markers in an answer. The grammar is strict — `[#N]`
//! with N of one to three digits — so `[1]`, `[ #1 ]`, `[#x]`, `[#1234]` and
//! `vec![1]` are never taken for citations. A line shaped like an evidence
//! entry's header (`[#2] notes/a.md · Heading · lines 3–9`) is a copy of the
//! prompt, not a claim: its markers are not taken either, so an answer that
//! only echoes a header is not grounded.

/// A marker found in the answer text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    pub n: usize,
    /// Byte range of `[#N]` in the answer.
    pub start: usize,
    pub end: usize,
}

pub fn markers(answer: &str) -> Vec<Marker> {
    let headers = header_lines(answer);
    let in_header = |at: usize| headers.iter().any(|&(a, b)| a <= at && at < b);
    let mut out = all_markers(answer);
    out.retain(|m| !in_header(m.start));
    out
}

/// Byte ranges of the lines of `answer` that copy an entry header: after
/// optional indentation and list or quote marks, `[#N] ` then text ending in
/// `lines A–B` (en dash or hyphen), as `Packed::header` writes it.
fn header_lines(answer: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for line in answer.split_inclusive('\n') {
        let end = start + line.len();
        if is_header_copy(line) {
            out.push((start, end));
        }
        start = end;
    }
    out
}

pub(crate) fn is_header_copy(line: &str) -> bool {
    let body = line.trim().trim_start_matches(['-', '*', '>', ' ', '`']).trim_end_matches(['`', '.', ' ']);
    let starts_as_entry = all_markers(body).first().is_some_and(|m| m.start == 0 && body[m.end..].starts_with(' '));
    let Some((_, range)) = body.rsplit_once(" lines ") else { return false };
    let mut ends = range.split(['–', '-']);
    let numbers = |s: Option<&str>| s.is_some_and(|s| !s.is_empty() && s.trim().chars().all(|c| c.is_ascii_digit()));
    starts_as_entry && numbers(ends.next()) && numbers(ends.next()) && ends.next().is_none()
}

/// Every `[#N]` in `answer`, header copies included.
fn all_markers(answer: &str) -> Vec<Marker> {
    let bytes = answer.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'[' && bytes.get(i + 1) == Some(&b'#') {
            let digits_start = i + 2;
            let mut j = digits_start;
            while j < bytes.len() && bytes[j].is_ascii_digit() && j - digits_start < 4 {
                j += 1;
            }
            let len = j - digits_start;
            if (1..=3).contains(&len) && bytes.get(j) == Some(&b']') {
                let n = answer[digits_start..j].parse().unwrap_or(0);
                out.push(Marker { n, start: i, end: j + 1 });
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(s: &str) -> Vec<usize> {
        markers(s).iter().map(|m| m.n).collect()
    }

    #[test]
    fn strict_markers_only() {
        assert_eq!(ns("a [#1] b [#22][#333]"), [1, 22, 333]);
        assert!(ns("[1] [ #1 ] [#x] [#1234] vec![1] [# 1] [#]").is_empty());
    }

    #[test]
    fn marker_positions_cover_the_brackets() {
        let m = markers("see [#12].")[0];
        assert_eq!((m.start, m.end), (4, 9));
    }

    #[test]
    fn a_copied_entry_header_is_not_a_citation() {
        assert!(ns("[#2] src/ch03-01-variables.md · Variables > Shadowing · lines 142–158").is_empty());
        assert!(ns("  - [#1] notes/a.md · lines 3-9\n").is_empty());
        // A claim after a copied header still counts, and so does a line that only mentions lines.
        assert_eq!(ns("[#1] notes/a.md · lines 1–4\nRun `cargo new` [#1]."), [1]);
        assert_eq!(ns("[#3] says the build uses two lines."), [3]);
        let m = markers("[#1] a.md · lines 1–2\nYes [#2]")[0];
        assert_eq!((m.n, m.start), (2, 29));
    }

    #[test]
    fn multibyte_text_around_markers_is_fine() {
        assert_eq!(ns("소유권 \"규칙\" [#2] 입니다 [#3]"), [2, 3]);
    }
}
