//! History: which earlier turns of a conversation go into the prompt. Newest
//! first, at most `history_max_turns`, within the tokens the model's context
//! has left after the system prompt, the evidence and the question; the oldest
//! drop first. Old answers lose their `[#n]` markers, which pointed at evidence
//! the model no longer sees and must not be confused with the new numbering.
//! A turn without any answer text (the model failed before writing, or wrote
//! nothing and kebab said so in its place) is left out.
//! Under a small context the previous turn is still kept — its question and a
//! short form of its answer — when not even it fits whole: the ask keeps room
//! for it (`reserve`) before packing the evidence, so a follow-up's prompt
//! always has the conversation it follows.

use super::expand::{PriorTurn, clean};
use crate::script::{estimate_tokens, shorten};

/// The short form of the previous answer, in characters.
const SHORT_ANSWER_CHARS: usize = 300;

/// Each message carries a few tokens of chat framing.
const FRAMING_TOKENS: usize = 8;

/// One earlier turn as the prompt shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryTurn {
    pub question: String,
    pub answer: String,
}

#[derive(Debug, Clone, Default)]
pub struct HistorySelection {
    /// Oldest first, ready to render as alternating messages.
    pub turns: Vec<HistoryTurn>,
    pub dropped: usize,
    pub tokens: usize,
    /// The one turn kept is the previous one with its answer shortened.
    pub shortened: bool,
}

/// Whether the model wrote anything in `t`: a turn it never answered is no
/// exchange, and an empty reply would only confuse the next prompt.
fn answered(t: &PriorTurn) -> bool {
    !clean(&t.answer).trim().is_empty() && !super::run::is_no_answer_text(&t.answer)
}

/// The previous answered turn, with its answer cut to its short form.
fn short_form(turns: &[PriorTurn]) -> Option<HistoryTurn> {
    let t = turns.iter().rev().find(|t| answered(t))?;
    Some(HistoryTurn { question: t.question.clone(), answer: shorten(&clean(&t.answer), SHORT_ANSWER_CHARS) })
}

fn cost(h: &HistoryTurn) -> usize {
    estimate_tokens(&h.question) + estimate_tokens(&h.answer) + FRAMING_TOKENS
}

/// Tokens kept back from the evidence for the previous turn's short form;
/// 0 outside a conversation.
pub fn reserve(turns: &[PriorTurn]) -> usize {
    short_form(turns).map_or(0, |h| cost(&h))
}

/// `turns` is the whole conversation so far, oldest first.
pub fn select(turns: &[PriorTurn], max_turns: usize, budget_tokens: usize) -> HistorySelection {
    let mut kept = Vec::new();
    let mut used = 0;
    for t in turns.iter().rev() {
        if kept.len() == max_turns {
            break;
        }
        if !answered(t) {
            continue;
        }
        let h = HistoryTurn { question: t.question.clone(), answer: clean(&t.answer) };
        let cost = cost(&h);
        if used + cost > budget_tokens {
            break;
        }
        used += cost;
        kept.push(h);
    }
    let mut shortened = false;
    if kept.is_empty() && max_turns > 0
        && let Some(short) = short_form(turns).filter(|h| cost(h) <= budget_tokens)
    {
        used = cost(&short);
        kept.push(short);
        shortened = true;
    }
    kept.reverse();
    HistorySelection { dropped: turns.len() - kept.len(), turns: kept, tokens: used, shortened }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turns(n: usize) -> Vec<PriorTurn> {
        (0..n)
            .map(|i| PriorTurn { question: format!("question {i}"), answer: format!("answer {i} [#1]"), grounded: true })
            .collect()
    }

    #[test]
    fn newest_turns_are_kept_and_the_oldest_dropped_by_count() {
        let s = select(&turns(5), 2, 10_000);
        let qs: Vec<&str> = s.turns.iter().map(|t| t.question.as_str()).collect();
        assert_eq!(qs, ["question 3", "question 4"]);
        assert_eq!(s.dropped, 3);
    }

    #[test]
    fn the_budget_drops_the_oldest_first() {
        let one = select(&turns(1), 8, 10_000).tokens;
        let s = select(&turns(4), 8, one * 2 + 1);
        assert_eq!(s.turns.len(), 2);
        assert_eq!(s.turns[1].question, "question 3");
        assert_eq!(s.dropped, 2);
        assert!(select(&turns(3), 8, 0).turns.is_empty());
    }

    #[test]
    fn a_turn_the_model_never_answered_is_left_out() {
        let mut all = turns(3);
        all[1].answer = String::new();
        all[1].grounded = false;
        let s = select(&all, 8, 10_000);
        let qs: Vec<&str> = s.turns.iter().map(|t| t.question.as_str()).collect();
        assert_eq!(qs, ["question 0", "question 2"]);
        assert_eq!(s.dropped, 1);
    }

    #[test]
    fn when_no_whole_turn_fits_the_previous_one_is_kept_in_short_form() {
        let mut all = turns(2);
        all[1].answer = format!("{} [#1]", "a long answer ".repeat(100));
        let short = reserve(&all);
        assert!(short < select(&all[1..], 8, 10_000).tokens);
        let s = select(&all, 8, short);
        assert!(s.shortened);
        assert_eq!(s.turns.len(), 1);
        assert_eq!(s.turns[0].question, "question 1");
        assert!(s.turns[0].answer.ends_with('…') && s.turns[0].answer.chars().count() <= SHORT_ANSWER_CHARS + 1);
        assert_eq!(s.dropped, 1);
        assert!(select(&all, 8, short - 1).turns.is_empty());
        assert_eq!(reserve(&[]), 0);
    }

    #[test]
    fn old_answers_lose_their_markers() {
        let s = select(&turns(1), 8, 10_000);
        assert_eq!(s.turns[0].answer, "answer 0");
    }
}
