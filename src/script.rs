//! Script-aware text helpers: which characters are Hangul/CJK, a document's
//! rough language, token estimates, and making untrusted text safe to print.

/// The encoding a UTF-16 or UTF-32 byte-order mark at the start names (how
/// Windows editors save "Unicode"), for an error that says which `iconv -f`
/// converts the file: notes and the config file alike.
pub fn utf16_or_32(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0xFF, 0xFE, 0, 0, ..] | [0, 0, 0xFE, 0xFF, ..] => Some("UTF-32"),
        [0xFF, 0xFE, ..] | [0xFE, 0xFF, ..] => Some("UTF-16"),
        _ => None,
    }
}

/// `text` without the UTF-8 byte-order mark a Windows editor or a
/// spreadsheet export writes at the start, which would otherwise be read as
/// the first line's first character.
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Hangul syllables and jamo, CJK ideographs, kana: scripts written without
/// spaces between words (or, for Hangul, with particles glued to words), which
/// the word tokenizer cannot split and the trigram index covers.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF     // Hangul jamo
        | 0x3040..=0x30FF   // Hiragana, Katakana
        | 0x3130..=0x318F   // Hangul compatibility jamo
        | 0x3400..=0x4DBF   // CJK extension A
        | 0x4E00..=0x9FFF   // CJK unified ideographs
        | 0xA960..=0xA97F   // Hangul jamo extended A
        | 0xAC00..=0xD7AF   // Hangul syllables
        | 0xD7B0..=0xD7FF   // Hangul jamo extended B
        | 0xF900..=0xFAFF   // CJK compatibility ideographs
        | 0x20000..=0x2FFFF // CJK extensions B..
    )
}

pub fn is_hangul(c: char) -> bool {
    matches!(c as u32, 0x1100..=0x11FF | 0x3130..=0x318F | 0xA960..=0xA97F | 0xAC00..=0xD7FF)
}

/// The first and last composed Hangul syllables (`가`, `힣`); each holds a
/// lead consonant, a vowel and a final (0: none) as `(lead * 21 + vowel) *
/// 28 + final`.
const HANGUL: std::ops::RangeInclusive<u32> = 0xAC00..=0xD7A3;

/// A composed Hangul syllable's lead consonant, vowel and final (0: none),
/// numbered as Unicode orders them; `None` for any other character.
pub fn jamo(c: char) -> Option<(u32, u32, u32)> {
    let at = (c as u32).checked_sub(*HANGUL.start()).filter(|_| HANGUL.contains(&(c as u32)))?;
    Some((at / 28 / 21, at / 28 % 21, at % 28))
}

/// The syllable of a lead consonant, vowel and final, as `jamo` numbers them.
pub fn syllable(lead: u32, vowel: u32, tail: u32) -> char {
    char::from_u32(HANGUL.start() + (lead * 21 + vowel) * 28 + tail).unwrap_or_default()
}

/// Every stem a two-syllable Korean verb form may be written from, the
/// likeliest first. The notes write the same verb in other forms (`헹구고`,
/// `올리려면`, `빌려서`); a word of two syllables is all the gate matches by
/// prefix, so the inflected one misses them:
/// - the ending `ㄴ`/`ㄹ` of `헹군`, `올린`, `빌릴` taken off (`헹구`, `올리`,
///   `빌리`);
/// - the contracted vowel of `빌려`, `배워`, `봐`, `돼` opened again (`빌리`,
///   `배우`, `보`, `되`), and, past tense (`빌렸`), also kept without its `ㅆ`
///   (`빌려`);
/// - when the second syllable is an ending of its own (`넣어`, `먹었`,
///   `읽은`), the one-syllable stem before it (`넣`), if that ends in a
///   consonant, as a stem before an ending syllable does.
///
/// Empty when the word is not of such a shape.
pub fn hangul_stems(word: &str) -> Vec<String> {
    let base = *HANGUL.start();
    let syllables: Vec<u32> = word.chars().map(|c| c as u32).collect();
    let [first, second] = syllables[..] else { return Vec::new() };
    if !HANGUL.contains(&first) || !HANGUL.contains(&second) {
        return Vec::new();
    }
    let (lead_vowel, tail) = ((second - base) / 28, (second - base) % 28);
    let (lead, vowel) = (lead_vowel / 21, lead_vowel % 21);
    let first_char = char::from_u32(first).unwrap_or_default();
    let with = |lead_vowel: u32| char::from_u32(base + lead_vowel * 28).map(|c| [first_char, c].iter().collect::<String>());
    // Vowels a verb stem's final vowel contracts into before `-어`: ㅕ (ㅣ),
    // ㅝ (ㅜ), ㅘ (ㅗ), ㅙ (ㅚ).
    let opened = match vowel {
        6 => Some(20),
        14 => Some(13),
        9 => Some(8),
        10 => Some(11),
        _ => None,
    };
    // ㅇ + ㅏ/ㅓ/ㅡ: `아`, `어`, `은`, `을`, `었` … are endings of their own.
    let ending_syllable = lead == 11 && matches!(vowel, 0 | 4 | 18);
    let mut out: Vec<String> = Vec::new();
    match (tail, opened) {
        (0 | 20, Some(v)) => out.extend(with(lead * 21 + v)),
        (4 | 8, None) if !ending_syllable => out.extend(with(lead_vowel)),
        _ => {}
    }
    if tail == 20 && opened.is_some() {
        out.extend(with(lead_vowel));
    }
    if ending_syllable && matches!(tail, 0 | 4 | 8 | 20) && !(first - base).is_multiple_of(28) {
        out.push(first_char.to_string());
    }
    out
}

/// Whether a Korean word is a verb in the past tense (`바꿨어요`, `나왔어`,
/// `넣었더라`, `샀었지`): one of its syllables ends in `ㅆ`, the past
/// tense's mark, which no noun ends in.
pub fn is_past_tense(word: &str) -> bool {
    word.chars().any(|c| HANGUL.contains(&(c as u32)) && (c as u32 - HANGUL.start()) % 28 == 20)
}

/// Whether a Korean word is a verb in a form the notes seldom share with a
/// question: the past tense, or "must" (`내야 돼`, `넣어야`, `써야지`: a stem
/// with `-아야`/`-어야`). A noun ending in `야` (`분야`) reads so too; the
/// gate asks this only of words the notes never write.
pub fn is_verb_form(word: &str) -> bool {
    let must = word.strip_suffix('지').unwrap_or(word);
    is_past_tense(word) || must.chars().count() >= 2 && must.ends_with('야')
}

/// `n` things, in the singular for one ("1 chunk", "2 chunks"), for any
/// integer type the caller counts in.
pub fn count(n: impl std::fmt::Display, thing: &str) -> String {
    let n = n.to_string();
    if n == "1" { format!("1 {thing}") } else { format!("{n} {thing}s") }
}

/// A Hangul syllable without its final consonant (`린` → `리`); any other
/// character as it is.
pub fn without_final(c: char) -> char {
    let u = c as u32;
    if HANGUL.contains(&u) { char::from_u32(u - (u - HANGUL.start()) % 28).unwrap_or(c) } else { c }
}

pub fn has_cjk(text: &str) -> bool {
    text.chars().any(is_cjk)
}

/// A rough language tag from the script mix: good enough to pick prompt
/// wording and to show in `kebab docs`, not a language identifier.
pub fn detect_lang(text: &str) -> &'static str {
    let (mut hangul, mut kana, mut han, mut latin, mut letters) = (0usize, 0usize, 0usize, 0usize, 0usize);
    for c in text.chars().take(20_000) {
        if is_hangul(c) {
            hangul += 1;
        } else if matches!(c as u32, 0x3040..=0x30FF) {
            kana += 1;
        } else if is_cjk(c) {
            han += 1;
        } else if c.is_ascii_alphabetic() {
            latin += 1;
        } else if !c.is_alphabetic() {
            continue;
        }
        letters += 1;
    }
    if letters == 0 {
        "und"
    } else if hangul * 10 >= letters {
        "ko"
    } else if kana * 10 >= letters {
        "ja"
    } else if han * 10 >= letters {
        "zh"
    } else if latin * 2 >= letters {
        "en"
    } else {
        "und"
    }
}

/// Estimated model tokens: about four ASCII characters per token, about one
/// token per Hangul/CJK character, about two per other non-ASCII character.
pub fn estimate_tokens(text: &str) -> usize {
    let (mut ascii, mut cjk, mut other) = (0usize, 0usize, 0usize);
    for c in text.chars() {
        if c.is_ascii() {
            ascii += 1;
        } else if is_cjk(c) {
            cjk += 1;
        } else {
            other += 1;
        }
    }
    ascii.div_ceil(4) + cjk + other.div_ceil(2)
}

/// Replaces control characters (ANSI/OSC escape introducers, NUL, bell, …)
/// so that text taken from notes can never drive the terminal. Newlines and
/// tabs are kept.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| is_terminal_control(c) && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(text.chars().map(|c| if unsafe_char(c) { char::REPLACEMENT_CHARACTER } else { c }).collect())
}

/// The one test of terminal safety every output path shares: characters a
/// terminal would obey rather than show — C0 and C1 controls (ESC, the
/// one-byte CSI and OSC), DEL — and bidi overrides, which can make
/// `evil\u{202e}dm.exe` read as `evilexe.md`.
pub fn is_terminal_control(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// A question typed or pasted over several lines, as one: its words
/// joined by single spaces (`kebab ask -`, a paste into the REPL).
pub fn one_question(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first three of `names`, each on one line, and "…" when there are more.
pub fn first_few(names: impl ExactSizeIterator<Item = String>) -> String {
    const SHOWN: usize = 3;
    let more = names.len() > SHOWN;
    let mut shown: Vec<String> = names.take(SHOWN).map(|name| one_line(&name)).collect();
    if more {
        shown.push("…".into());
    }
    shown.join(", ")
}

/// A path or name from the index, made safe for one terminal line: control
/// characters (newlines in file names, escape sequences) and bidi overrides
/// (which can make `evil\u{202e}dm.exe` read as `evilexe.md`) are shown escaped.
pub fn one_line(text: &str) -> String {
    if !text.chars().any(is_terminal_control) {
        return text.to_string();
    }
    text.chars().map(|c| if is_terminal_control(c) { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// JSON text with the control characters serde leaves raw (DEL, the C1
/// range with its one-byte CSI and OSC, bidi overrides) written as `\uXXXX`:
/// the same strings to a JSON reader, nothing a terminal would obey.
/// Outside strings JSON holds none of these, so every occurrence is in one.
pub fn json_escaped(text: String) -> String {
    // serde already escapes the C0 controls; `\n` here is layout.
    let unsafe_char = |c: char| is_terminal_control(c) && c != '\n';
    if !text.chars().any(unsafe_char) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_char(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` on one line (whitespace runs made one space), cut to `max_chars`
/// with `…` when longer.
pub fn shorten(text: &str, max_chars: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(max_chars) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line,
    }
}


/// `word` as a POSIX shell reads it back: as it is when it holds nothing the
/// shell would split or expand, else in single quotes (a `'` inside written `'\''`).
pub fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:@%+=,".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hangul_syllable_loses_only_its_final_consonant() {
        assert_eq!(without_final('린'), '리');
        assert_eq!(without_final('렸'), '려');
        assert_eq!(without_final('리'), '리');
        assert_eq!(without_final('a'), 'a');
    }

    #[test]
    fn a_korean_past_tense_verb_is_told_from_a_noun_by_its_final() {
        for verb in ["바꿨어요", "나왔어", "넣었더라", "샀었지", "방전됐던"] {
            assert!(is_past_tense(verb), "{verb}");
        }
        for other in ["브레이크", "계약금", "바꾸는", "인바디", ""] {
            assert!(!is_past_tense(other), "{other}");
        }
    }

    #[test]
    fn a_korean_must_form_is_a_verb_form_as_the_past_is() {
        for verb in ["내야", "넣어야", "써야지", "바꿨어요"] {
            assert!(is_verb_form(verb), "{verb}");
        }
        for other in ["관리비", "야", "계약금", "바꾸는"] {
            assert!(!is_verb_form(other), "{other}");
        }
    }

    #[test]
    fn a_korean_verb_form_gives_every_stem_the_notes_may_write_it_from() {
        assert_eq!(hangul_stems("빌렸"), ["빌리", "빌려"]);
        for (form, stem) in [("헹군", "헹구"), ("올린", "올리"), ("빌릴", "빌리"), ("절여", "절이"), ("배워", "배우")] {
            assert_eq!(hangul_stems(form), [stem], "{form}");
        }
        for (form, stem) in [("넣어", "넣"), ("먹었", "먹"), ("읽은", "읽"), ("찾아", "찾")] {
            assert_eq!(hangul_stems(form), [stem], "{form}");
        }
        // A stem without a final consonant does not stand before an ending
        // syllable (`가아` is written `가`), and most words are no verb form.
        for word in ["가을", "배추", "김치", "군", "헹구고", "돼요", "rc"] {
            assert!(hangul_stems(word).is_empty(), "{word}");
        }
    }

    #[test]
    fn one_line_escapes_newlines_and_escapes() {
        assert_eq!(one_line("a\nb\u{1b}[2J"), "a\\nb\\u{1b}[2J");
        assert_eq!(one_line("plain/path.md"), "plain/path.md");
        assert_eq!(one_line("evil\u{202e}dm.txt"), "evil\\u{202e}dm.txt");
    }

    #[test]
    fn json_escaping_keeps_the_value_and_hides_c1_controls() {
        let value = serde_json::json!({"t": "a\u{9b}31m\u{1b}]0;x\u{7}\u{202e}b\nc"});
        let text = json_escaped(serde_json::to_string_pretty(&value).unwrap());
        assert!(!text.contains(['\u{9b}', '\u{1b}', '\u{7}', '\u{202e}']), "{text}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), value);
    }


    #[test]
    fn hangul_is_cjk_and_latin_is_not() {
        assert!(is_cjk('분') && is_hangul('분'));
        assert!(is_cjk('漢') && !is_hangul('漢'));
        assert!(!is_cjk('a') && !is_cjk('é'));
    }

    #[test]
    fn language_follows_the_script_mix() {
        assert_eq!(detect_lang("소유권은 러스트의 핵심 개념입니다. Rust"), "ko");
        assert_eq!(detect_lang("Ownership is Rust's most unique feature."), "en");
        assert_eq!(detect_lang("12345 !!!"), "und");
    }

    #[test]
    fn token_estimate_counts_cjk_per_character() {
        assert_eq!(estimate_tokens("abcdefgh"), 2);
        assert_eq!(estimate_tokens("소유권"), 3);
        assert_eq!(estimate_tokens(""), 0);
    }

    #[test]
    fn escape_sequences_never_survive_printable() {
        let s = printable("a\u{1b}[31mred\u{1b}]0;title\u{7}\nb\tc\u{0}");
        assert!(!s.contains('\u{1b}') && !s.contains('\u{7}') && !s.contains('\u{0}'));
        assert!(s.contains("\nb\tc"));
        assert!(matches!(printable("plain"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn a_word_the_shell_would_split_or_expand_is_single_quoted() {
        assert_eq!(shell_word("/tmp/kb/other.toml"), "/tmp/kb/other.toml");
        assert_eq!(shell_word("/tmp/my notes/c.toml"), "'/tmp/my notes/c.toml'");
        assert_eq!(shell_word("it's.toml"), r"'it'\''s.toml'");
        assert_eq!(shell_word("~x"), "'~x'");
        assert_eq!(shell_word(""), "''");
    }
}
