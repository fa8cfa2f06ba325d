//! The built-in extractive model: no server, no weights. It answers from the
//! evidence alone by picking the sentences, list items and code blocks that
//! answer the question (`score`: the question's words weighted by rarity,
//! new content over echo, the kind of answer the question's form asks for),
//! quoting each exactly with its `[#n]` marker — so rag-v2 verification holds
//! — and streaming the quotes word by word. A sentence that introduces a list
//! or code block brings it along (`text`, `quote`). When nothing covers enough of the
//! question it says so in words, with no marker, which the pipeline records
//! as the model's own refusal.

mod quote;
mod score;
mod text;

use std::time::Instant;

use super::{ChatModel, ChatRequest, Completion, Flow, Grounding, LlmError, Usage};
use crate::{markup, words};
use crate::script::estimate_tokens;
use score::{AskKind, Indexed, Question};
use text::Unit;

/// Below this share of the question covered, the best sentence does not
/// answer it. Low on purpose: the ask gate has already refused weak evidence;
/// this catches evidence that matched only by heading. Swept 0.15–0.45 on the
/// labelled Rust Book sets (README "The gate").
pub const MIN_COVERAGE: f64 = 0.15;
/// Further sentences must score at least this share of the best one, and
/// an answer quotes at most `llm.extractive_quotes` units
/// (`config::DEFAULT_EXTRACTIVE_QUOTES`; a list or code block a unit brings
/// comes with it). Chosen together on
/// the dev splits of every labelled set (docs/gate-log.md, session 61): a
/// fact is often in the fifth or sixth unit, and on words alone a cut at
/// half the best score left it out. The cap of eight (session 64): with
/// the built-in embedder, dev answers gain nothing past it.
const FOLLOW_SHARE: f64 = 0.35;
/// A unit brought in for a question word the others miss must score at
/// least this share of the best one.
const MISSING_SHARE: f64 = 0.25;
/// How much less each later evidence entry counts (search ranked it lower).
const RANK_DECAY: f64 = 0.08;
/// How much a follow-up's context counts next to the question's own words.
const CONTEXT_WEIGHT: f64 = 0.5;
/// Most candidates whose closeness in meaning is measured. A paraphrase's
/// answer can share a single word with it and rank low on words; 64 rather
/// than 32 costs about 20 ms an ask (docs/gate.md, session 52).
const MAX_CANDIDATES: usize = 64;
/// Longest candidate text read for closeness, in characters.
const MAX_CANDIDATE_CHARS: usize = 400;
/// Most sentences (and items) an entry under a Markdown heading holds for
/// the heading to say what its first one is about: no labelled Rust Book
/// answer changes (its sections are longer), and notes written under
/// labels are answered.
const LABELLED_SECTION: usize = 2;
/// How much closeness in meaning counts against the word score, when
/// measured. Chosen on the English dev split from 0.3–1.0 (hybrid, built-in
/// model): 0.8 answered best; words alone (0) or meaning alone (1) less well.
const MEANING_WEIGHT: f64 = 0.8;

#[derive(Debug, Clone)]
pub struct Extractive {
    /// The most units an answer quotes (`llm.extractive_quotes`).
    pub max_quotes: usize,
}

impl Default for Extractive {
    fn default() -> Self {
        Extractive::from_config(&crate::config::LlmConfig::default())
    }
}

impl Extractive {
    pub fn from_config(cfg: &crate::config::LlmConfig) -> Extractive {
        Extractive { max_quotes: cfg.extractive_quotes }
    }
}

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

    fn reads_closeness(&self) -> bool {
        true
    }

    fn chat(&self, req: &ChatRequest, on_text: &mut dyn FnMut(&str) -> Flow) -> Result<Completion, LlmError> {
        let started = Instant::now();
        let Some(g) = &req.grounding else {
            return Err(LlmError::Other("the extractive model answers only questions asked over your notes".into()));
        };
        let text = answer(g, self.max_quotes);
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

/// Candidates whose closeness in meaning to the question the pipeline may
/// measure (`Grounding::closeness`): the units the question's words pick
/// out, best first, as `(unit index, text with what it brings)`. Reading
/// only these bounds the embedding work of one answer.
pub fn candidates(g: &Grounding) -> Vec<(usize, String)> {
    let all = text::units(&g.evidence);
    let Some(read) = Reading::of(g, &all, false) else {
        return Vec::new();
    };
    read.lexical()
        .into_iter()
        .take(MAX_CANDIDATES)
        .map(|Scored { i, .. }| {
            // The opening says what a unit is about (with the title it goes
            // on from); a long list or code block after it would only slow
            // the embedder down.
            let title = Some(read.indexed[i].title.as_str()).filter(|t| !t.is_empty());
            let with: Vec<&str> = title.into_iter().chain(all[i].quoted_with(i).map(|j| all[j].text.as_str())).collect();
            (i, with.join("\n").chars().take(MAX_CANDIDATE_CHARS).collect())
        })
        .collect()
}

/// The question as read against the units: its terms (a bare follow-up's
/// come from the conversation), the context's, and what was said before.
struct Reading<'a> {
    all: &'a [Unit],
    indexed: Vec<Indexed<'a>>,
    q: Question,
    ctx_q: Question,
    bare: bool,
    said: String,
}

impl<'a> Reading<'a> {
    /// `with_sections`: Markdown headings count for the first sentence under
    /// them, as records' titles (and a short section's heading) always do.
    fn of(g: &Grounding, all: &'a [Unit], with_sections: bool) -> Option<Reading<'a>> {
        // A follow-up that names nothing ("why?", "show me an example") is
        // about what the previous turn was about.
        let own = score::content_terms(&g.question);
        let bare = own.is_empty();
        let context_terms: Vec<String> = score::content_terms(&g.context).into_iter().filter(|t| !own.contains(t)).collect();
        let (terms, context) = if bare { (context_terms, Vec::new()) } else { (own, context_terms) };
        if terms.is_empty() || all.is_empty() {
            return None;
        }
        // The first sentence of a titled entry is about its title.
        let mut opened: Vec<usize> = Vec::new();
        let indexed: Vec<Indexed> = all
            .iter()
            .map(|u| {
                let indexed = Indexed::new(u, all);
                if !u.kind.is_scored() || opened.contains(&u.n) {
                    return indexed;
                }
                opened.push(u.n);
                // A section of a sentence or two is a label and its value
                // ("## Wi-Fi password" over "The network key is hunter2."):
                // its heading is what it is about, as a record's title is.
                // Its own heading only: the note's title above it is what
                // every section is about, and would answer for all of them.
                let short = all.iter().filter(|x| x.n == u.n && x.kind.is_scored()).count() <= LABELLED_SECTION;
                match g.headings.iter().find(|h| h.n == u.n) {
                    Some(h) if h.record || with_sections => indexed.with_title(&h.text),
                    Some(h) if short => indexed.with_title(h.text.rsplit(" > ").next().unwrap_or(&h.text)),
                    _ => indexed,
                }
            })
            .collect();
        // A Korean verb form no unit has (`헹군`) is read as the first stem
        // it may be written from that one has (`헹구`, as in `헹구고`), as
        // the gate reads it; a fee word (`숙소비`) as what it is the cost of,
        // and a verb made of a noun (`패닉해야`) as the noun.
        let held = |t: &str| indexed.iter().any(|u| u.has(t));
        let terms: Vec<String> = terms
            .into_iter()
            .map(|t| {
                if held(&t) {
                    return t;
                }
                let nouns = words::fee_of(&t).into_iter().chain(words::noun_of_verb(&t)).map(str::to_string);
                let stems = crate::script::hangul_stems(&t).into_iter().chain(nouns);
                stems.into_iter().find(|s| held(s)).unwrap_or(t)
            })
            .collect();
        let kind = AskKind::of(&g.question);
        let q = Question { kind, weights: score::weigh(&terms, &indexed), terms, listed: words::listed(&g.question) };
        let ctx_q = Question { kind, weights: score::weigh(&context, &indexed), terms: context, listed: None };
        Some(Reading { all, indexed, q, ctx_q, bare, said: markup::normalise(&g.said) })
    }

    /// For a question that names the value it wants: keeps the units that
    /// hold one (or bring one), in the entries most about the topic.
    fn keep_holding(&self, g: &Grounding, value: &score::Value, touched: &mut Vec<Scored>) {
        let all = self.all;
        // How much of the topic each entry holds, once per entry, its
        // headings included (a list of prices under "Bathroom silicone").
        let mut about: Vec<(usize, f64)> = Vec::new();
        for u in &self.indexed {
            let n = u.unit.n;
            if !about.iter().any(|&(m, _)| m == n) {
                let titled = g.headings.iter().find(|h| h.n == n).map(|h| Indexed::new(u.unit, all).with_title(&h.text));
                let topic = self.q.terms.iter().zip(&self.q.weights).filter(|(t, _)| !value.named_by(t));
                let in_entry = |t: &str| titled.as_ref().is_some_and(|x| x.has(t)) || self.indexed.iter().any(|v| v.unit.n == n && v.has(t));
                let held = topic.filter(|(t, _)| in_entry(t)).map(|(_, w)| w);
                about.push((n, held.sum()));
            }
        }
        let most = about.iter().map(|&(_, a)| a).fold(0.0, f64::max);
        let most_about = |n: usize| about.iter().any(|&(m, a)| m == n && a >= most);
        // The value may be in the sentence after the one naming the topic
        // ("The guesthouse was near the beach. Two nights were 300,000 won."),
        // which the best sentence brings with it.
        let entry = |n: usize| g.evidence.iter().find(|(m, _)| *m == n).map_or("", |(_, text)| text.as_str());
        let asked = words::words(&g.question);
        let holds = |i: usize| all[i].quoted_with(i).chain(all[i].next).any(|j| value.in_entry(&all[j].text, entry(all[j].n), &asked));
        touched.retain(|s| most_about(all[s.i].n) && holds(s.i));
    }

    /// Whether unit `i`, or what it brings, has the (stemmed) word `t`.
    fn has(&self, i: usize, t: &str) -> bool {
        self.indexed[i].has(t) || self.all[i].follow.iter().any(|&f| self.indexed[f].has(t))
    }

    /// Whether unit `i` names something of the question's besides a count:
    /// "two feeds in a row" says nothing of "two writers".
    fn on_topic(&self, i: usize) -> bool {
        self.q.terms.iter().any(|t| !is_count(t) && self.has(i, t))
    }

    /// Units the question's words touch, scored on words alone, best first.
    fn lexical(&self) -> Vec<Scored> {
        let near = if self.bare { after_said(self.all, &self.said) } else { vec![0.0; self.all.len()] };
        let mut scored: Vec<Scored> = self
            .indexed
            .iter()
            .enumerate()
            // A bare follow-up ("why?", "tell me more") wants something new; a
            // question with words of its own may well be answered by the same
            // sentence again.
            .filter(|(_, u)| u.unit.kind.is_scored() && !(self.bare && already_said(&self.said, &u.unit.text)))
            .filter_map(|(i, u)| {
                // Earlier evidence ranked higher in search.
                let rank = 1.0 / (1.0 + RANK_DECAY * (u.unit.n as f64 - 1.0));
                let cov = score::coverage(u, &self.q).max(near[i]) * rank;
                if cov <= 0.0 {
                    return None;
                }
                let ctx = if self.ctx_q.terms.is_empty() { 0.0 } else { score::coverage(u, &self.ctx_q) * rank };
                Some(Scored { score: score::answer_score(u, &self.q, cov) + CONTEXT_WEIGHT * ctx, i, cov })
            })
            .collect();
        scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.i.cmp(&b.i)));
        scored
    }
}

/// A unit's word score, its index, and the share of the question it covers.
struct Scored {
    score: f64,
    i: usize,
    cov: f64,
}

/// Word scores blended with closeness in meaning, where the pipeline
/// measured it: each side scaled to its best (closeness between the least
/// and most close candidate), so neither one's units dominate.
fn blend(scored: &[Scored], closeness: &[(usize, f32)], indexed: &[Indexed]) -> Vec<(f64, usize)> {
    let best = scored.first().map_or(1.0, |s| s.score);
    let (lo, hi) = closeness.iter().fold((f32::MAX, f32::MIN), |(lo, hi), &(_, c)| (lo.min(c), hi.max(c)));
    let spread = f64::from(hi - lo).max(1e-6);
    let mut blended: Vec<(f64, usize)> = scored
        .iter()
        .map(|s| {
            let near = closeness.iter().find(|(j, _)| *j == s.i).map_or(0.0, |&(_, c)| f64::from(c - lo) / spread);
            // An announcement ("Let's look at how …") sits close in meaning to
            // what it announces, so closeness alone would quote it: it counts
            // less here too. Not one that names code ("Here's the countdown
            // using `rev`:"), which says something. (Sparing it on the word
            // side as well cost lexical answers one dev and one test item.)
            let u = &indexed[s.i];
            let form = if score::only_announces(u) && !u.unit.text.contains('`') { score::ANNOUNCE_FACTOR } else { 1.0 };
            (((1.0 - MEANING_WEIGHT) * s.score / best + MEANING_WEIGHT * near) * form, s.i)
        })
        .collect();
    blended.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    blended
}

/// What the model says when nothing answers: English, Korean.
pub const REFUSALS: [&str; 2] = ["The notes I was given do not answer this question.", "주어진 노트의 근거로는 이 질문에 답할 수 없습니다."];

/// The whole answer text for a grounded question, quoting at most
/// `max_quotes` units.
pub fn answer(g: &Grounding, max_quotes: usize) -> String {
    let refuse = REFUSALS[usize::from(g.korean)];
    let all = text::units(&g.evidence);
    // Whether anything answers is the words' call: the sentences' own, then
    // (when none answers and there are any) with the Markdown headings they
    // go on from.
    // Closeness in meaning, where measured, then chooses among every unit
    // the words touch (a paraphrase shares few of them with its answer).
    let answering = |with_sections| {
        let read = Reading::of(g, &all, with_sections)?;
        let touched = read.lexical();
        touched.iter().any(|s| s.cov >= MIN_COVERAGE).then_some((read, touched))
    };
    let sections = g.headings.iter().any(|h| !h.record);
    let Some((read, mut touched)) = answering(false).or_else(|| sections.then(|| answering(true)).flatten()) else {
        return refuse.to_string();
    };
    // A question that names the value it wants (a phone number, a time of
    // day) is answered only by what holds one: the rest is about the topic,
    // not the answer. And it must be in an entry as much about the
    // question's topic as any (the dentist's, not the plumber's number).
    let priced = || g.evidence.iter().any(|(_, text)| score::writes_prices(text));
    if let Some(value) = score::Value::asked(&g.question, priced) {
        read.keep_holding(g, &value, &mut touched);
        if !touched.iter().any(|s| s.cov >= MIN_COVERAGE) {
            return refuse.to_string();
        }
    }
    let scored: Vec<(f64, usize)> = if g.closeness.is_empty() {
        touched.iter().filter(|s| s.cov >= MIN_COVERAGE).map(|s| (s.score, s.i)).collect()
    } else {
        blend(&touched, &g.closeness, &read.indexed)
    };
    let chosen = choose(&scored, &read, max_quotes);
    let mut quotes = quote::gather(&read, &chosen);
    quote::add_code(&read, &chosen, &scored, &mut quotes);
    quotes.iter().map(|&i| quote::quote(&all[i])).collect::<Vec<_>>().join("\n")
}

/// The units to quote, best first: those scoring near the best, then, for
/// each question word none of them has (the second half of "the difference
/// between A and B"), the best unit that has it.
fn choose(scored: &[(f64, usize)], read: &Reading, max_quotes: usize) -> Vec<usize> {
    let (all, indexed, q) = (read.all, &read.indexed, &read.q);
    let best = scored[0].0;
    let mut chosen: Vec<usize> = Vec::new();
    let dup = |chosen: &[usize], i: usize| chosen.iter().any(|&c| all[c].text == all[i].text || all[c].follow.contains(&i));
    // A further unit must be on the question's topic. (A bare follow-up's
    // units are near what was said, not its words.)
    let topical = |i: usize| read.bare || read.on_topic(i);
    for &(s, i) in scored {
        if chosen.len() == max_quotes || s < best * FOLLOW_SHARE {
            break;
        }
        if !dup(&chosen, i) && (chosen.is_empty() || topical(i)) {
            chosen.push(i);
        }
    }
    // A definition question wants each asked term defined: as a subject.
    let covers = |i: usize, t: &str| {
        if q.kind == AskKind::Define && q.terms.len() > 1 {
            return indexed[i].subject_has(t);
        }
        read.has(i, t)
    };
    let mut order: Vec<usize> = (0..q.terms.len()).collect();
    order.sort_by(|&a, &b| q.weights[b].total_cmp(&q.weights[a]));
    for t in order.iter().map(|&k| q.terms[k].as_str()) {
        // A count ("two writers") is said of the topic, not a topic to find
        // a sentence for: "two" alone brought a line about two feeds.
        if chosen.len() == max_quotes || chosen.iter().any(|&c| covers(c, t)) || is_count(t) {
            continue;
        }
        if let Some(&(_, i)) = scored.iter().find(|(s, i)| *s >= best * MISSING_SHARE && covers(*i, t) && !dup(&chosen, *i)) {
            chosen.push(i);
        }
    }
    chosen
}

/// Whether a (stemmed) question word is a count: a number, or one of the
/// words for the small ones.
fn is_count(term: &str) -> bool {
    term.chars().all(|c| c.is_ascii_digit()) || words::COUNTS.iter().any(|c| *c == term || score::stem(c) == term)
}

/// For a bare follow-up: how close each unit sits after one the previous
/// turn quoted (in the same entry), as a stand-in for coverage.
fn after_said(all: &[Unit], said: &str) -> Vec<f64> {
    let mut near = vec![0.0; all.len()];
    for (i, u) in all.iter().enumerate().filter(|(_, u)| already_said(said, &u.text)) {
        for (d, j) in (i + 1..all.len().min(i + 4)).enumerate() {
            if all[j].n == u.n {
                near[j] = f64::max(near[j], 0.8 - 0.1 * d as f64);
            }
        }
    }
    near
}

/// Whether the previous turn already quoted this (its opening is in what
/// it said, `said`, normalised).
fn already_said(said: &str, text: &str) -> bool {
    if said.is_empty() {
        return false;
    }
    let t = markup::normalise(text);
    let head: String = t.chars().take(60).collect();
    head.chars().count() >= 20 && said.contains(&head)
}

#[cfg(test)]
mod tests;
