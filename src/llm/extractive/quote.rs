//! What the answer quotes for the units chosen: each with what it brings
//! (the next sentence of its paragraph, the list or code it introduces, the
//! sentence saying what a code block showed, a title's lines), then the code
//! a "how do I" or an example question wants, each quote written with its
//! `[#n]` marker.

use super::score::{self, AskKind, Indexed};
use super::text::{Unit, UnitKind};
use super::{MISSING_SHARE, Reading, already_said};

/// Most words of a sentence a quote brings along as the end of its own.
const FRAGMENT_WORDS: usize = 4;
/// Most words of a title line, and how many units under it one brings.
const TITLE_WORDS: usize = 6;
const TITLE_BRINGS: usize = 3;
/// How many of the best units bring a next sentence that stays on the
/// question's topic: later ones are side facts, and bringing theirs made
/// answers a fifth longer for one more dev answer (docs/gate-log.md).
const LEADING: usize = 3;

/// The units to quote, in order, for the units chosen (best first).
pub(super) fn gather(read: &Reading, chosen: &[usize]) -> Vec<usize> {
    let (all, indexed, said) = (read.all, &read.indexed, &read.said);
    let mut quotes: Vec<usize> = Vec::new();
    for (k, &c) in chosen.iter().enumerate() {
        // A question the notes ask ("So how do you know which type to use?")
        // answers nothing itself: the sentence after it does.
        let Some(c) = past_questions(all, c) else { continue };
        // One an earlier quote brought (the sentence saying what its code
        // showed) is quoted already, and does not bring more of its own:
        // the announcement after it is of another block.
        if quotes.contains(&c) {
            continue;
        }
        // The best sentence brings the one after it, which often says the
        // rest (a definition's second half, the command); so does an
        // announcement ("First, let's take a look at the ownership rules."),
        // which says nothing itself: what it announces comes next. Any quoted
        // sentence brings a next one that introduces a list or code ("You can
        // take five actions …", then "Those superpowers include:" and the five).
        // So does any sentence whose next one goes on from it ("Because of
        // this, Rust has a shorthand …"), and one of the best few whose next
        // one stays on the topic ("A package is a bundle of crates." "A
        // package contains a Cargo.toml file …"): the paragraph often says
        // the fact a sentence later (docs/gate-log.md, session 63).
        let leads = k == 0 || score::only_announces(&indexed[c]);
        let goes_on = |x: usize| score::continues(&indexed[x]) || (k < LEADING && read.on_topic(x));
        let next = all[c]
            .next
            .filter(|&x| (leads || !all[x].follow.is_empty() || goes_on(x)) && all[c].follow.is_empty() && !already_said(said, &all[x].text));
        // A next sentence that introduces a command or list ("Take a look at
        // the following example:") brings it too: it is what the best one said.
        let brought = next.into_iter().flat_map(|x| all[x].follow.iter().copied());
        let titled = if k == 0 { under_title(all, c) } else { Vec::new() };
        // What ends in a code block brings the sentence after the block,
        // which says what the code shows ("The type of `s` here is
        // `&str`"), unless that sentence announces what comes next; so does
        // an announcement whose block is not in the notes (an included
        // file, a picture): the sentence after it says what it showed.
        // A list item of a list as long as the question asks for ("the three
        // Fn traits") brings the others: the list is the answer, even when the
        // sentence introducing it is in another passage.
        let siblings = read.q.listed.and_then(|n| Some(list_of(all, c)).filter(|l| all[c].kind == UnitKind::Item && l.len() == n));
        let group: Vec<usize> = all[c].quoted_with(c).chain(next).chain(brought).chain(siblings.into_iter().flatten()).collect();
        let announces_nothing =
            |l: usize| all[l].kind == UnitKind::Sentence && all[l].text.trim_end().ends_with(':') && all[l].follow.is_empty();
        let explained = group.last().filter(|&&l| all[l].kind == UnitKind::Code || announces_nothing(l)).map(|&l| l + 1).filter(|&x| {
            all.get(x).is_some_and(|u| {
                u.n == all[c].n && u.kind == UnitKind::Sentence && !u.text.trim_end().ends_with(':') && !already_said(said, &u.text)
            })
        });
        for i in group.into_iter().chain(explained).chain(titled) {
            if !quotes.contains(&i) {
                quotes.push(i);
            }
            let ends_it = |x: &usize| fragment(&indexed[*x]) && !quotes.contains(x) && !already_said(said, &all[*x].text);
            if let Some(x) = all[i].next.filter(ends_it) {
                quotes.push(x);
            }
        }
    }
    if quotes.is_empty() {
        // Only questions of the notes' own matched: quote the best as it is.
        quotes.push(chosen[0]);
    }
    quotes
}

/// The code an example or "how do I" question wants, when the quotes hold
/// none: `scored` is every candidate, best first.
pub(super) fn add_code(read: &Reading, chosen: &[usize], scored: &[(f64, usize)], quotes: &mut Vec<usize>) {
    let (all, kind) = (read.all, read.q.kind);
    // An example question wants code, and so does a "how do I" whose best
    // sentence names none (the command is in the block under it): the block
    // nearest the best sentence, in its entry, or else in the entry of the
    // next chosen sentence that has one (the passage that says what to do
    // may be split from the one saying why: "run the tests one at a time",
    // then the command in the next chunk).
    let best_names_code = all[chosen[0]].quoted_with(chosen[0]).any(|i| all[i].kind == UnitKind::Code || all[i].text.contains('`'));
    let wants_code = kind == AskKind::Example || (kind == AskKind::HowTo && !best_names_code);
    if wants_code
        && !quotes.iter().any(|&i| all[i].kind == UnitKind::Code)
        && let Some(code) = chosen.iter().find_map(|&c| nearest_code(all, c))
    {
        quotes.push(code);
    }
    // A "how do I" answer names what to call or run: when no quoted
    // sentence does (a code block, often the program's run, does not say
    // it), the best sentence that names code, from any entry, is quoted too.
    let names_code = |i: usize| all[i].kind != UnitKind::Code && all[i].text.contains('`');
    if kind == AskKind::HowTo
        && !quotes.iter().any(|&i| names_code(i))
        && let Some(&(_, i)) = scored.iter().find(|(s, i)| *s >= scored[0].0 * MISSING_SHARE && names_code(*i))
    {
        quotes.extend(all[i].quoted_with(i).filter(|j| !quotes.contains(j)).collect::<Vec<_>>());
    }
}

/// The items of the list item `at` is one of: the run of items around it in its entry.
fn list_of(all: &[Unit], at: usize) -> std::ops::Range<usize> {
    let item = |i: usize| all[i].kind == UnitKind::Item && all[i].n == all[at].n;
    let start = (0..at).rev().take_while(|&i| item(i)).last().unwrap_or(at);
    let end = (at + 1..all.len()).take_while(|&i| item(i)).last().map_or(at + 1, |i| i + 1);
    start..end
}

/// A sentence short enough to be the end of the one before it ("Cold pulls
/// fixed it.", "1차 수확량은 124 kg이었다."): a quote brings it along. Not a
/// question, a cheer ("Keep at it!") or an announcement, which go on to
/// something else.
fn fragment(u: &Indexed) -> bool {
    let words = u.unit.text.split_whitespace().count();
    let end = u.unit.text.trim_end().chars().last();
    u.unit.kind == UnitKind::Sentence
        && u.unit.follow.is_empty()
        && words <= FRAGMENT_WORDS
        && !matches!(end, Some(':' | '?' | '!'))
        && !score::only_announces(u)
}

/// Unit `at`, or when it is a sentence asking a question, the first one
/// after it in its paragraph that does not. A sentence that states
/// something before its question ("… more display possibilities: Do you
/// want commas or not?") is not skipped.
fn past_questions(all: &[Unit], at: usize) -> Option<usize> {
    let asks = |u: &Unit| u.kind == UnitKind::Sentence && u.text.trim_end().ends_with(['?', '？']) && !u.text.contains([':', ';']);
    std::iter::successors(Some(at), |&i| all[i].next).find(|&i| !asks(&all[i]))
}

/// The units a note's title line brings when it is what answers ("what's
/// in my reading list?" → "Reading list, autumn"): a label says nothing
/// itself, the sentences under it do. A title is the entry's first unit, a
/// few words with no sentence ending.
fn under_title(all: &[Unit], at: usize) -> Vec<usize> {
    let u = &all[at];
    let first = all.iter().position(|x| x.n == u.n) == Some(at);
    let label = u.kind == UnitKind::Sentence
        && u.text.split_whitespace().count() <= TITLE_WORDS
        && !u.text.trim_end().ends_with(['.', '!', '?', ':', ';', '。', '다', '요']);
    if !(first && label) {
        return Vec::new();
    }
    (at + 1..all.len()).filter(|&i| all[i].n == u.n && all[i].kind.is_scored()).take(TITLE_BRINGS).collect()
}

/// The code block closest to unit `at` within the same evidence entry.
fn nearest_code(all: &[Unit], at: usize) -> Option<usize> {
    let n = all[at].n;
    (0..all.len())
        .filter(|&i| all[i].n == n && all[i].kind == UnitKind::Code)
        .min_by_key(|&i| (i.abs_diff(at), i < at))
}

/// A unit quoted with its marker, between delimiters its text does not hold.
pub(super) fn quote(u: &Unit) -> String {
    if u.text.contains('"') || u.kind == UnitKind::Code {
        format!("\u{201C}{}\u{201D} [#{}]", u.text, u.n)
    } else {
        format!("\"{}\" [#{}]", u.text, u.n)
    }
}
