//! The built-in extractive model: no server, no weights. It answers from the
//! evidence alone by picking the sentences, list items and code blocks that
//! answer the question (`score`: the question's words weighted by rarity,
//! new content over echo, the kind of answer the question's form asks for),
//! quoting each exactly with its `[#n]` marker — so rag-v2 verification holds
//! — and streaming the quotes word by word. A sentence that introduces a list
//! or code block brings it along (`text`). When nothing covers enough of the
//! question it says so in words, with no marker, which the pipeline records
//! as the model's own refusal.

mod score;
mod text;

use std::time::Instant;

use super::{ChatModel, ChatRequest, Completion, Flow, Grounding, LlmError, Usage};
use crate::rag::verify;
use crate::script::estimate_tokens;
use score::{AskKind, Indexed, Question};
use text::{Unit, UnitKind};

/// Below this share of the question covered, the best sentence does not
/// answer it. Low on purpose: the ask gate has already refused weak evidence;
/// this catches evidence that matched only by heading. Swept 0.15–0.45 on the
/// labelled Rust Book sets (README "The gate").
pub const MIN_COVERAGE: f64 = 0.15;
/// Further sentences must score at least this share of the best one.
const FOLLOW_SHARE: f64 = 0.5;
const MAX_QUOTES: usize = 5;
/// How much less each later evidence entry counts (search ranked it lower).
const RANK_DECAY: f64 = 0.08;
/// How much a follow-up's context counts next to the question's own words.
const CONTEXT_WEIGHT: f64 = 0.5;

#[derive(Debug, Default)]
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

/// The whole answer text for a grounded question.
pub fn answer(g: &Grounding) -> String {
    let refuse = if g.korean {
        "주어진 노트의 근거로는 이 질문에 답할 수 없습니다."
    } else {
        "The notes I was given do not answer this question."
    };
    let all = text::units(&g.evidence);
    // A follow-up that names nothing ("why?", "show me an example") is
    // about what the previous turn was about.
    let own = score::content_terms(&g.question);
    let context_terms: Vec<String> = score::content_terms(&g.context).into_iter().filter(|t| !own.contains(t)).collect();
    let (terms, context) = if own.is_empty() { (context_terms, Vec::new()) } else { (own, context_terms) };
    if terms.is_empty() || all.is_empty() {
        return refuse.to_string();
    }
    let indexed: Vec<Indexed> = all.iter().map(|u| Indexed::new(u, &all)).collect();
    let kind = AskKind::of(&g.question);
    let q = Question { kind, weights: score::weigh(&terms, &indexed), terms };
    let ctx_q = Question { kind, weights: score::weigh(&context, &indexed), terms: context };
    let said = verify::normalise(&g.context);
    let mut scored: Vec<(f64, usize)> = indexed
        .iter()
        .enumerate()
        .filter(|(_, u)| u.unit.kind != UnitKind::Code && !already_said(&said, &u.unit.text))
        .filter_map(|(i, u)| {
            // Earlier evidence ranked higher in search.
            let rank = 1.0 / (1.0 + RANK_DECAY * (u.unit.n as f64 - 1.0));
            let cov = score::coverage(u, &q) * rank;
            if cov < MIN_COVERAGE {
                return None;
            }
            let ctx = if ctx_q.terms.is_empty() { 0.0 } else { score::coverage(u, &ctx_q) * rank };
            Some((score::answer_score(u, &q, cov) + CONTEXT_WEIGHT * ctx * 0.1, i))
        })
        .collect();
    if scored.is_empty() {
        return refuse.to_string();
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let best = scored[0].0;
    let mut chosen: Vec<usize> = Vec::new();
    for &(s, i) in &scored {
        if chosen.len() == MAX_QUOTES || s < best * FOLLOW_SHARE {
            break;
        }
        let dup = chosen.iter().any(|&c| all[c].text == all[i].text || all[c].follow.contains(&i));
        if !dup {
            chosen.push(i);
        }
    }
    let mut quotes: Vec<usize> = Vec::new();
    for (k, &c) in chosen.iter().enumerate() {
        // The best sentence brings the one after it when that one goes on
        // about the same thing (a definition's second half, the command).
        let next = all[c].next.filter(|&x| k == 0 && all[c].follow.is_empty() && !already_said(&said, &all[x].text));
        for i in std::iter::once(c).chain(all[c].follow.iter().copied()).chain(next) {
            if !quotes.contains(&i) {
                quotes.push(i);
            }
        }
    }
    // An example question wants code: the block nearest the best sentence, in its entry.
    if kind == AskKind::Example && !quotes.iter().any(|&i| all[i].kind == UnitKind::Code) {
        if let Some(code) = nearest_code(&all, chosen[0]) {
            quotes.push(code);
        }
    }
    quotes.iter().map(|&i| quote(&all[i])).collect::<Vec<_>>().join("\n")
}

/// Whether the previous turn already quoted this (its opening is in the context).
fn already_said(said: &str, text: &str) -> bool {
    if said.is_empty() {
        return false;
    }
    let t = verify::normalise(text);
    let head: String = t.chars().take(60).collect();
    head.chars().count() >= 20 && said.contains(&head)
}

/// The code block closest to unit `at` within the same evidence entry.
fn nearest_code(all: &[Unit], at: usize) -> Option<usize> {
    let n = all[at].n;
    (0..all.len())
        .filter(|&i| all[i].n == n && all[i].kind == UnitKind::Code)
        .min_by_key(|&i| (i.abs_diff(at), i < at))
}

/// A unit quoted with its marker, between delimiters its text does not hold.
fn quote(u: &Unit) -> String {
    if u.text.contains('"') || u.kind == UnitKind::Code {
        format!("\u{201C}{}\u{201D} [#{}]", u.text, u.n)
    } else {
        format!("\"{}\" [#{}]", u.text, u.n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use super::score::stem;
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
