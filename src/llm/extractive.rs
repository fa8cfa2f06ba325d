//! The built-in extractive model: no server, no weights. It answers from the
//! evidence alone by picking the sentences that cover the most of the
//! question (words weighted by rarity among the candidate sentences), quoting
//! each exactly with its `[#n]` marker — so rag-v2 verification holds — and
//! streaming the quotes word by word. When no sentence covers enough of the
//! question it says so in words, with no marker, which the pipeline records
//! as the model's own refusal.

use std::time::Instant;

use super::{ChatModel, ChatRequest, Completion, Flow, Grounding, LlmError, Usage};
use crate::script::{estimate_tokens, is_cjk};
use crate::words as query;

/// Below this share of the question covered, the best sentence does not
/// answer it. Low on purpose: the ask gate has already refused weak evidence;
/// this catches evidence that matched only by heading. Swept 0.15–0.45 on the
/// labelled Rust Book sets (README "The gate").
pub const MIN_COVERAGE: f64 = 0.15;
/// Further sentences must score at least this share of the best one.
const FOLLOW_SHARE: f64 = 0.7;
const MAX_QUOTES: usize = 3;
/// How much a follow-up's context counts next to the question's own words.
const CONTEXT_WEIGHT: f64 = 0.5;

#[derive(Debug, Default, Clone)]
pub struct Extractive;

impl ChatModel for Extractive {
    fn id(&self) -> &str {
        "extractive-v1"
    }

    fn provider(&self) -> &'static str {
        "extractive"
    }

    fn follows_instructions(&self) -> bool {
        false
    }

    fn chat(&self, req: &ChatRequest, on_text: &mut dyn FnMut(&str) -> Flow) -> Result<Completion, LlmError> {
        let started = Instant::now();
        let Some(g) = &req.grounding else {
            return Err(LlmError::Other("the extractive model answers only questions asked over your notes".into()));
        };
        let text = answer(g);
        let mut out = Completion {
            usage: Usage {
                prompt_tokens: Some(req.messages.iter().map(|m| estimate_tokens(&m.content) as u32).sum()),
                completion_tokens: Some(0),
            },
            ..Completion::default()
        };
        for piece in pieces(&text) {
            out.first_token.get_or_insert_with(|| started.elapsed());
            out.text.push_str(piece);
            out.usage.completion_tokens = out.usage.completion_tokens.map(|n| n + 1);
            if on_text(piece) == Flow::Stop {
                out.stopped = true;
                break;
            }
        }
        Ok(out)
    }
}

/// Words with the whitespace before them, so joined pieces give the text back.
fn pieces(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let lead = rest.len() - rest.trim_start().len();
        let end = rest[lead..].find(char::is_whitespace).map_or(rest.len(), |i| lead + i);
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
}

struct Sentence {
    n: usize,
    text: String,
    words: Vec<String>,
}

/// Content words of `text`, stemmed (Korean: particle stripped).
fn content_terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in query::terms(text).into_iter().filter(|t| !query::is_question_word(&t.word)) {
        let term = if t.cjk { query::strip_particle(&t.word).to_string() } else { stem(&t.word) };
        if !out.contains(&term) {
            out.push(term);
        }
    }
    out
}

/// The whole answer text for a grounded question.
pub fn answer(g: &Grounding) -> String {
    let terms = content_terms(&g.question);
    // Context words (a follow-up's previous turn) only break ties between
    // sentences that answer the question itself.
    let context: Vec<String> = content_terms(&g.context).into_iter().filter(|t| !terms.contains(t)).collect();
    let sentences: Vec<Sentence> = g
        .evidence
        .iter()
        .flat_map(|(n, text)| sentences(text).into_iter().map(move |s| (*n, s)))
        .map(|(n, s)| Sentence { n, words: query::words(&s).iter().map(|w| stem(w)).collect(), text: s })
        .collect();
    let refuse = if g.korean {
        "주어진 노트의 근거로는 이 질문에 답할 수 없습니다."
    } else {
        "The notes I was given do not answer this question."
    };
    if terms.is_empty() || sentences.is_empty() {
        return refuse.to_string();
    }
    let has = |s: &Sentence, term: &str| {
        if term.chars().any(is_cjk) { s.text.contains(term) } else { s.words.iter().any(|w| w == term) }
    };
    let total = sentences.len() as f64;
    let weigh = |terms: &[String]| -> Vec<f64> {
        terms
            .iter()
            .map(|t| {
                let df = sentences.iter().filter(|s| has(s, t)).count() as f64;
                (1.0 + total / (1.0 + df)).ln()
            })
            .collect()
    };
    let (weights, context_weights) = (weigh(&terms), weigh(&context));
    let sum: f64 = weights.iter().sum();
    let context_sum: f64 = context_weights.iter().sum::<f64>().max(f64::MIN_POSITIVE);
    let coverage = |s: &Sentence, terms: &[String], weights: &[f64]| -> f64 {
        terms.iter().zip(weights).filter(|(t, _)| has(s, t)).map(|(_, w)| w).sum()
    };
    let mut scored: Vec<(f64, &Sentence)> = sentences
        .iter()
        .filter_map(|s| {
            // Earlier evidence ranked higher in search; very long sentences say less per word.
            let rank = 1.0 / (1.0 + 0.03 * (s.n as f64 - 1.0));
            let length = if s.text.chars().count() > 400 { 0.85 } else { 1.0 };
            let own = coverage(s, &terms, &weights) / sum * rank * length;
            if own < MIN_COVERAGE {
                return None;
            }
            let ctx = coverage(s, &context, &context_weights) / context_sum * rank * length;
            Some((own + CONTEXT_WEIGHT * ctx, s))
        })
        .collect();
    if scored.is_empty() {
        return refuse.to_string();
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let best = scored[0].0;
    let mut chosen: Vec<&Sentence> = Vec::new();
    for (score, s) in &scored {
        if chosen.len() == MAX_QUOTES || *score < best * FOLLOW_SHARE {
            break;
        }
        if !chosen.iter().any(|c| c.text == s.text) {
            chosen.push(s);
        }
    }
    chosen.iter().map(|s| format!("\"{}\" [#{}]", s.text, s.n)).collect::<Vec<_>>().join("\n")
}

/// A light English stemmer: enough to match `borrowing` with `borrow`, not a
/// linguistic one.
fn stem(word: &str) -> String {
    if word.chars().any(is_cjk) {
        return word.to_string();
    }
    let mut base = word;
    for suffix in ["ations", "ation", "ings", "ing", "ers", "ies", "ied", "ed", "es", "er", "ly", "s"] {
        if let Some(b) = word.strip_suffix(suffix)
            && b.chars().count() >= 3 {
                base = b;
                break;
            }
    }
    // A final e goes too, so `take`, `takes` and `taken`'s neighbours meet: `tak`.
    match base.strip_suffix('e') {
        Some(b) if b.chars().count() >= 3 => b.to_string(),
        _ => base.to_string(),
    }
}

/// Prose sentences of a chunk: code fences, headings, HTML and include lines
/// are left out and list markers dropped; lines of one paragraph are joined,
/// so a sentence may span lines (quotes are checked with whitespace folded).
fn sentences(text: &str) -> Vec<String> {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut in_fence = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
        }
        let prose = !(in_fence || t.starts_with("```") || t.starts_with("~~~") || t.is_empty() || t.starts_with('#')
            || t.starts_with('<') || t.starts_with("{{") || t.starts_with('|'));
        let item = t.starts_with("- ") || t.starts_with("* ") || t.starts_with("+ ") || t.starts_with("> ");
        if !prose || item {
            paragraphs.push(std::mem::take(&mut current));
        }
        if prose {
            let t = t.trim_start_matches(|c: char| matches!(c, '-' | '*' | '+' | '>') || c.is_whitespace());
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(t);
        }
    }
    paragraphs.push(current);
    let mut out = Vec::new();
    for p in &paragraphs {
        let mut start = 0;
        let bytes = p.as_bytes();
        for (i, c) in p.char_indices() {
            let end_mark = matches!(c, '.' | '!' | '?' | '。');
            let at_break = bytes.get(i + c.len_utf8()).is_none_or(|b| *b == b' ');
            if end_mark && at_break {
                push(&mut out, &p[start..i + c.len_utf8()]);
                start = i + c.len_utf8();
            }
        }
        push(&mut out, &p[start..]);
    }
    out
}

fn push(out: &mut Vec<String>, s: &str) {
    let s = s.trim();
    let enough = s.split_whitespace().count() >= 4 || (s.chars().filter(|c| is_cjk(*c)).count() >= 6);
    // A sentence holding a double quote could not be quoted unambiguously.
    if enough && !s.contains('"') {
        out.push(s.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{Message, Role};

    fn grounding(q: &str, ev: &[&str]) -> Grounding {
        Grounding { question: q.into(), evidence: ev.iter().enumerate().map(|(i, t)| (i + 1, t.to_string())).collect(), korean: false, context: String::new() }
    }

    #[test]
    fn stems_meet_across_inflections() {
        for group in [["take", "takes"], ["store", "stored"], ["borrow", "borrowing"]] {
            assert_eq!(stem(group[0]), stem(group[1]), "{group:?}");
        }
    }

    #[test]
    fn context_picks_between_sentences_that_answer_the_question_alike() {
        let ev = ["A full inspection takes about 20 minutes per hive.", "One alcohol wash takes about ten minutes per hive."];
        let mut g = grounding("How long does that take?", &ev);
        g.context = "I counted mites with an alcohol wash of about 300 bees.".into();
        assert!(answer(&g).starts_with("\"One alcohol wash takes about ten minutes per hive.\" [#2]"), "{}", answer(&g));
        // Context alone never makes a sentence an answer.
        let mut off = grounding("What colour is the roof?", &ev);
        off.context = g.context.clone();
        assert!(!answer(&off).contains("[#"));
    }

    #[test]
    fn quotes_the_sentence_that_answers_with_its_marker() {
        let g = grounding(
            "How do I create a new project with cargo?",
            &["Cargo is the build tool.", "# Creating\n\nTo create a new project, run `cargo new hello`. It makes a folder.\n\n```\n$ cargo new x\n```"],
        );
        let a = answer(&g);
        assert!(a.starts_with("\"To create a new project, run `cargo new hello`.\" [#2]"), "{a}");
    }

    #[test]
    fn refuses_in_words_when_nothing_covers_the_question() {
        let g = grounding("What temperature should sourdough proof at?", &["Ownership rules apply to every value in Rust."]);
        assert_eq!(answer(&g), "The notes I was given do not answer this question.");
    }

    #[test]
    fn streams_word_by_word_and_stops_when_asked() {
        let req = ChatRequest {
            messages: vec![Message::new(Role::User, "q")],
            temperature: 0.0,
            seed: None,
            max_tokens: None,
            stream: true,
            grounding: Some(grounding("borrow checker rules", &["The borrow checker enforces the borrowing rules at compile time."])),
        };
        let mut got = Vec::new();
        let c = Extractive.chat(&req, &mut |p| {
            got.push(p.to_string());
            if got.len() == 2 { Flow::Stop } else { Flow::Continue }
        }).unwrap();
        assert!(c.stopped);
        assert_eq!(got.len(), 2);
        assert_eq!(c.text, got.concat());
        let full = Extractive.chat(&req, &mut |_| Flow::Continue).unwrap();
        assert!(!full.stopped && full.text.ends_with("[#1]"));
    }

    #[test]
    fn korean_questions_match_korean_sentences() {
        let mut g = grounding("소유권 규칙은 무엇인가요?", &["소유권 규칙부터 알아보겠습니다. 러스트에서 각각의 값은 소유자가 정해져 있습니다."]);
        g.korean = true;
        let a = answer(&g);
        assert!(a.contains("[#1]") && a.contains("소유권 규칙"), "{a}");
    }

    #[test]
    fn pieces_rebuild_the_text() {
        let t = "\"a b\" [#1]\n\"c\"  [#2]";
        assert_eq!(pieces(t).collect::<String>(), t);
    }
}
