//! Extract: the citation markers in an answer. The grammar is strict — `[#N]`
//! with N of one to three digits — so `[1]`, `[ #1 ]`, `[#x]`, `[#1234]` and
//! `vec![1]` are never taken for citations.

/// A marker found in the answer text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    pub n: usize,
    /// Byte range of `[#N]` in the answer.
    pub start: usize,
    pub end: usize,
}

pub fn markers(answer: &str) -> Vec<Marker> {
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
    fn multibyte_text_around_markers_is_fine() {
        assert_eq!(ns("소유권 \"규칙\" [#2] 입니다 [#3]"), [2, 3]);
    }
}
