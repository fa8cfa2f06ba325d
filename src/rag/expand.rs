//! Expand: the retrieval query of a turn in a conversation. A follow-up such
//! as "How is it different for references?" names too little to search with
//! on its own, so the first `expansion_chars` of the previous answer join it.
//! Citation markers and quotation marks are stripped first: they are prompt
//! syntax, not words of the notes. When the previous turn was a refusal its
//! answer says nothing about the notes, so its question is used instead.
//! README "Conversations" has the measurement behind this.

use super::extract;

/// The earlier turn a follow-up builds on.
#[derive(Debug, Clone, PartialEq)]
pub struct PriorTurn {
    pub question: String,
    pub answer: String,
    pub grounded: bool,
}

/// The text a turn searches with: the question, then the cleaned start of the
/// previous answer (or question, after a refusal), cut at a word boundary.
pub fn retrieval_query(question: &str, previous: Option<&PriorTurn>, chars: usize) -> String {
    let Some(prev) = previous else { return question.to_string() };
    if chars == 0 {
        return question.to_string();
    }
    let context = if prev.grounded { clean(&prev.answer) } else { clean(&prev.question) };
    let context = cut_at_word(&context, chars);
    if context.is_empty() { question.to_string() } else { format!("{question} {context}") }
}

/// An answer without `[#n]` markers, wire markers `[n]`, quotation marks or
/// line breaks, on one line.
pub fn clean(answer: &str) -> String {
    let mut text = String::with_capacity(answer.len());
    let mut last = 0;
    for m in extract::markers(answer) {
        text.push_str(&answer[last..m.start]);
        last = m.end;
    }
    text.push_str(&answer[last..]);
    let text = strip_wire_markers(&text);
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\u{201C}' | '\u{201D}' | '\u{2018}' | '\u{2019}' | '`'))
        .filter(|w| !w.is_empty())
        .collect();
    words.join(" ")
}

/// Removes `[n]` (n of 1–3 digits), the marker shape users see in answers.
fn strip_wire_markers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('[') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if (1..=3).contains(&digits) && after.as_bytes().get(digits) == Some(&b']') {
            rest = &after[digits + 1..];
        } else {
            out.push('[');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// At most `chars` characters of `text`, ending at a word boundary when one exists.
fn cut_at_word(text: &str, chars: usize) -> &str {
    let Some((end, next)) = text.char_indices().nth(chars) else { return text };
    if next == ' ' {
        return &text[..end];
    }
    match text[..end].rfind(' ') {
        Some(space) if space > 0 => &text[..space],
        _ => &text[..end],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prior(answer: &str, grounded: bool) -> PriorTurn {
        PriorTurn { question: "What is ownership?".into(), answer: answer.into(), grounded }
    }

    #[test]
    fn first_turn_searches_with_the_question_alone() {
        assert_eq!(retrieval_query("What is ownership?", None, 200), "What is ownership?");
    }

    #[test]
    fn follow_up_gets_the_cleaned_start_of_the_previous_answer() {
        let p = prior("\"Each value has an owner\" [#1]. It is dropped [2] at scope end [#2].", true);
        let q = retrieval_query("And references?", Some(&p), 200);
        assert_eq!(q, "And references? Each value has an owner . It is dropped at scope end .");
    }

    #[test]
    fn expansion_is_cut_at_a_word_boundary_within_the_limit() {
        let p = prior("alpha beta gamma delta", true);
        assert_eq!(retrieval_query("Q?", Some(&p), 13), "Q? alpha beta");
        assert_eq!(retrieval_query("Q?", Some(&p), 0), "Q?");
        // Hangul counts in characters, not bytes.
        let k = prior("소유권 규칙은 세 가지", true);
        assert_eq!(retrieval_query("왜?", Some(&k), 7), "왜? 소유권 규칙은");
        assert_eq!(retrieval_query("왜?", Some(&k), 6), "왜? 소유권");
    }

    #[test]
    fn after_a_refusal_the_previous_question_is_used() {
        let p = prior("Your notes do not seem to answer this.", false);
        assert_eq!(retrieval_query("Why?", Some(&p), 200), "Why? What is ownership?");
    }

    #[test]
    fn brackets_that_are_not_markers_survive() {
        assert_eq!(clean("use vec![1, 2] and a[i] [x]"), "use vec![1, 2] and a[i] [x]");
    }
}
