//! A question's misspelt words, read as the notes spell them. "whats the
//! diffrence between Vec and array" was refused: `diffrence` is in no note,
//! so the gate counted it as a rare topic the notes lack, and the search
//! lost the word. A typo is one edit from the word meant, and the notes
//! hold that word; a name the notes lack (a crate, a tool) seldom is
//! (`store::spelling` says which edits).
//!
//! Only words of five letters or more typed in lower case, that no chunk
//! holds, are looked up: a shorter word is a letter short of another word
//! by chance ("form", "forum"), and a capitalised one is more likely a name
//! than a typo.
//!
//! Before a typo, such a word is tried in the other ways notes write it
//! (`other_spellings`): a month or weekday shortened ("august" for notes
//! that say "Aug 21"), the British or American spelling ("initialise" for
//! notes that say "initialize"), a word made with re- as the word it is made from
//! ("redeclaring" → "declaring"), and a word written closed up that the notes
//! hyphenate ("pihole", "wifi" for notes that say "Pi-hole", "Wi-Fi"). That
//! one is tried from four letters: it is two words the notes hold side by
//! side, not a guess.
//!
//! A Korean word the notes hold no word starting with is read as the notes
//! write it: a loanword in the spelling they use (`메소드` → `메서드`,
//! `쓰레드` → `스레드`; `loanword_spellings`), or a compound as the two
//! nouns they hold (`필기시험` → `필기 시험`): `korean_reading`.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::store::{FtsIndex, Store};

/// The shortest word respelt as a typo.
const MIN_LETTERS: usize = 5;

/// The shortest word read as two the notes hyphenate, and the shortest part.
const MIN_SPLIT_LETTERS: usize = 4;
const MIN_PART_LETTERS: usize = 2;

/// The shortest Korean noun read as two written closed up, in syllables,
/// and the shortest part (`필기시험` for notes that write `필기` and `시험`).
const MIN_COMPOUND_SYLLABLES: usize = 4;
const MIN_PART_SYLLABLES: usize = 2;

/// The shortest Korean word read in another loanword spelling, in
/// syllables: a shorter one reaches another word by chance (`고리`, `거리`).
/// Except one spelt by ear (`plain_after_palatal`), which is no Korean word.
const MIN_LOANWORD_SYLLABLES: usize = 3;

/// After ㅈ ㅉ ㅊ, Korean spelling writes no y-vowel: ㅑ ㅕ ㅛ ㅠ there are
/// ㅏ ㅓ ㅗ ㅜ (`jamo` numbers, the leads, then the vowels as (y, plain)).
const PALATAL_LEADS: &[u32] = &[12, 13, 14];
const Y_VOWELS: &[(u32, u32)] = &[(2, 0), (6, 4), (12, 8), (17, 13)];

/// Vowels a loanword is spelt with either way, as (typed, read) in `jamo`'s
/// numbers: ㅓ/ㅗ (`메소드`, `메서드`), ㅓ/ㅔ (`제너릭`, `제네릭`), ㅏ/ㅓ
/// (`데이타`, `데이터`), ㅔ/ㅣ (`메세지`, `메시지`), ㅔ/ㅐ (`레퍼런스`,
/// `래퍼런스`); and ones written plainer: ㅕ → ㅓ (`클로져` → `클로저`), ㅟ → ㅣ
/// (`해쉬` → `해시`), ㅠ → ㅜ (`쥬스` → `주스`).
const LOANWORD_VOWELS: &[(u32, u32)] =
    &[(4, 8), (8, 4), (4, 5), (5, 4), (0, 4), (4, 0), (5, 20), (20, 5), (5, 1), (1, 5), (6, 4), (16, 20), (17, 13)];

/// Lead consonants written plain or tense (`스레드`, `쓰레드`): ㄱ ㄷ ㅂ ㅅ ㅈ,
/// each numbered one before its tense twin.
const PLAIN_LEADS: &[u32] = &[0, 3, 7, 9, 12];

/// A final consonant written as a syllable of its own with ㅡ (`트레잇`,
/// `트레이트`; `케익`, `케이크`): the finals ㅅ ㄱ ㅂ and the leads ㅌ ㅋ ㅍ.
const FINAL_SYLLABLES: &[(u32, u32)] = &[(19, 16), (1, 15), (17, 17)];
const EU: u32 = 18;

/// The longest word respelt: each letter adds 26 candidates to look up,
/// and a word this long is a pasted name or code, not a typo.
const MAX_LETTERS: usize = 24;

/// The most words of one question looked up (about 250 index seeks each):
/// a pasted paragraph about something else stays as fast to refuse.
const MAX_LOOKUPS: usize = 3;

/// One word read as another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Respelling {
    pub typed: String,
    pub read: String,
}

/// `question` with each misspelt word replaced by the word the notes hold,
/// and the words replaced (none for most questions: then the text is
/// `question` itself).
pub fn respell(store: &Store, question: &str) -> Result<(String, Vec<Respelling>)> {
    let mut text = String::with_capacity(question.len());
    let mut done: Vec<Respelling> = Vec::new();
    let mut lookups = 0;
    let mut rest = question;
    while !rest.is_empty() {
        // Runs of letters, digits and `_` are read whole, so an identifier
        // such as `read_to_strng` is left as typed.
        let end = rest.find(|c: char| !c.is_alphanumeric() && c != '_').unwrap_or(rest.len());
        let (word, after) = if end == 0 {
            let c = rest.chars().next().map_or(1, char::len_utf8);
            (&rest[..c], &rest[c..])
        } else {
            (&rest[..end], &rest[end..])
        };
        match respelt(store, word, &done, &mut lookups)? {
            Some(read) => {
                text.push_str(&read);
                if !done.iter().any(|r| r.typed == word) {
                    done.push(Respelling { typed: word.to_string(), read });
                }
            }
            None => text.push_str(word),
        }
        rest = after;
    }
    Ok((text, done))
}

/// What `word` reads as, when it is a typo of a word the notes hold;
/// `lookups` counts the words looked up so far.
fn respelt(store: &Store, word: &str, done: &[Respelling], lookups: &mut usize) -> Result<Option<String>> {
    if let Some(r) = done.iter().find(|r| r.typed == word) {
        return Ok(Some(r.read.clone()));
    }
    if word.chars().all(crate::script::is_hangul) {
        return korean_reading(store, word, lookups);
    }
    if !(MIN_SPLIT_LETTERS..=MAX_LETTERS).contains(&word.len()) || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return Ok(None);
    }
    if *lookups == MAX_LOOKUPS || store.docs_matching(FtsIndex::Words, &format!("\"{word}\""))? > 0 {
        return Ok(None);
    }
    *lookups += 1;
    // A phrase in quotes is read by the index's own tokenizer: "pi-hole"
    // looks for `pi` then `hole`.
    for other in other_spellings(word) {
        if store.docs_matching(FtsIndex::Words, &format!("\"{other}\""))? > 0 {
            return Ok(Some(other));
        }
    }
    if word.len() < MIN_LETTERS {
        return Ok(None);
    }
    store.nearest_spelling(word)
}

/// A Korean word the notes hold no word starting with, read as they write
/// it, its particle kept: a loanword in the notes' spelling (`메소드를` asks
/// of notes that write `메서드`), the one the most chunks hold; else a
/// compound as the two nouns the notes hold (`필기시험 점수` asks of notes
/// that write `학과시험 (필기)`). Both are written as the asker is used to,
/// not as the notes are. Not a verb in the past or a "must" (`올라갔었지`,
/// `넣어야지`), which is neither, nor a question's own word (`어떻게`,
/// `하려면`) in another spelling.
fn korean_reading(store: &Store, word: &str, lookups: &mut usize) -> Result<Option<String>> {
    let stem = crate::words::strip_particle(word);
    let syllables: Vec<char> = stem.chars().collect();
    let by_ear = plain_after_palatal(&syllables);
    let short = syllables.len() < MIN_LOANWORD_SYLLABLES;
    if short && by_ear.is_none() || crate::script::is_verb_form(word) || *lookups == MAX_LOOKUPS {
        return Ok(None);
    }
    let chunks_with = |part: &str| store.docs_matching(FtsIndex::Words, &format!("\"{part}\"*"));
    if chunks_with(stem)? > 0 {
        return Ok(None);
    }
    *lookups += 1;
    let particle = &word[stem.len()..];
    let mut best: Option<(String, i64)> = None;
    let asks = crate::words::is_question_word(word) || crate::words::is_filler(word);
    let others = if short { Vec::new() } else { loanword_spellings(&syllables) };
    for other in by_ear.into_iter().chain(others).filter(|_| !asks) {
        let n = chunks_with(&other)?;
        if n > best.as_ref().map_or(0, |b| b.1) {
            best = Some((other, n));
        }
    }
    if let Some((other, _)) = best {
        let particle = particle_after(&other, particle);
        return Ok(Some(format!("{other}{particle}")));
    }
    if syllables.len() < MIN_COMPOUND_SYLLABLES {
        return Ok(None);
    }
    for at in MIN_PART_SYLLABLES..=syllables.len() - MIN_PART_SYLLABLES {
        let (head, tail): (String, String) = (syllables[..at].iter().collect(), syllables[at..].iter().collect());
        if chunks_with(&head)? > 0 && chunks_with(&tail)? > 0 {
            return Ok(Some(format!("{head} {tail}{particle}")));
        }
    }
    Ok(None)
}

/// A loanword's other spellings, one change each: a vowel of
/// `LOANWORD_VOWELS`, a lead consonant plain or tense, a final written as
/// a syllable of its own or such a syllable as a final.
fn loanword_spellings(syllables: &[char]) -> Vec<String> {
    use crate::script::{jamo, syllable};
    let with = |at: usize, len: usize, new: &[char]| -> String {
        syllables[..at].iter().chain(new).chain(&syllables[at + len..]).collect()
    };
    let mut out: Vec<String> = Vec::new();
    for (i, &c) in syllables.iter().enumerate() {
        let Some((lead, vowel, tail)) = jamo(c) else { continue };
        for &(_, read) in LOANWORD_VOWELS.iter().filter(|(typed, _)| *typed == vowel) {
            out.push(with(i, 1, &[syllable(lead, read, tail)]));
        }
        for &plain in PLAIN_LEADS {
            if lead == plain || lead == plain + 1 {
                out.push(with(i, 1, &[syllable(if lead == plain { plain + 1 } else { plain }, vowel, tail)]));
            }
        }
        for &(fin, next) in FINAL_SYLLABLES {
            if tail == fin {
                out.push(with(i, 1, &[syllable(lead, vowel, 0), syllable(next, EU, 0)]));
            }
            if tail == 0 && syllables.get(i + 1).and_then(|&d| jamo(d)) == Some((next, EU, 0)) {
                out.push(with(i, 2, &[syllable(lead, vowel, fin)]));
            }
        }
    }
    out
}

/// The word with each y-vowel after ㅈ ㅉ ㅊ written plain (`버젼` → `버전`,
/// `쥬스` → `주스`), as Korean spelling writes it; `None` when it has none.
fn plain_after_palatal(syllables: &[char]) -> Option<String> {
    use crate::script::{jamo, syllable};
    let plain = |c: char| {
        let (lead, vowel, tail) = jamo(c)?;
        let &(_, to) = Y_VOWELS.iter().find(|(y, _)| *y == vowel).filter(|_| PALATAL_LEADS.contains(&lead))?;
        Some(syllable(lead, to, tail))
    };
    syllables.iter().any(|&c| plain(c).is_some()).then(|| syllables.iter().map(|&c| plain(c).unwrap_or(c)).collect())
}

/// Particles written one way after a final consonant and another after a
/// vowel: (after a consonant, after a vowel).
const PARTICLE_FORMS: &[(&str, &str)] = &[("이", "가"), ("을", "를"), ("은", "는"), ("과", "와"), ("이랑", "랑"), ("이란", "란"), ("이야", "야")];

/// `particle` in the form `word`'s last syllable takes: a loanword read
/// with a final of its own or without one (`트레잇이` → `트레이트가`) takes
/// the other form, as the notes would write it.
fn particle_after<'a>(word: &str, particle: &'a str) -> &'a str {
    let closed = word.chars().last().and_then(crate::script::jamo).is_some_and(|(_, _, tail)| tail != 0);
    let other = PARTICLE_FORMS.iter().find_map(|&(after_consonant, after_vowel)| match closed {
        true if particle == after_vowel => Some(after_consonant),
        false if particle == after_consonant => Some(after_vowel),
        _ => None,
    });
    other.unwrap_or(particle)
}

/// Parts of a word spelt one way in British English and another in
/// American: "colour" / "color", "initialise" / "initialize", "analyse",
/// "centre", "catalogue", "licence". ("travelled" and "traveled" need none:
/// the index stems both to `travel`.)
const REGIONAL: &[(&str, &str)] = &[
    ("our", "or"), ("ise", "ize"), ("isi", "izi"), ("isa", "iza"), ("yse", "yze"), ("ysi", "yzi"), ("tre", "ter"), ("ogue", "og"),
    ("ence", "ense"),
];

/// Other spellings of a word the notes lack, to read it as: a month or
/// weekday in full or shortened ("august" for notes that write "Aug 21"),
/// the British or American spelling ("behaviour" for notes that write
/// "behavior", and the other way), a word made with "re-" as the word it is
/// made from ("redeclaring" → "declaring"), and the word cut in two with a
/// hyphen ("pi-hole").
fn other_spellings(word: &str) -> Vec<String> {
    let mut out: Vec<String> = crate::words::CALENDAR
        .iter()
        .filter_map(|&(full, short)| if word == full { Some(short) } else if word == short { Some(full) } else { None })
        .map(String::from)
        .collect();
    for &(british, american) in REGIONAL {
        for (from, to) in [(british, american), (american, british)] {
            out.extend(word.match_indices(from).map(|(at, _)| format!("{}{to}{}", &word[..at], &word[at + from.len()..])));
        }
    }
    out.extend(word.strip_prefix("re").filter(|b| b.len() >= 5).map(String::from));
    out.extend(
        (MIN_PART_LETTERS..=word.len().saturating_sub(MIN_PART_LETTERS)).map(|at| format!("{}-{}", &word[..at], &word[at..])),
    );
    out
}
