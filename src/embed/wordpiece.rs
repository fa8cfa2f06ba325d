//! The built-in model's tokenizer: BERT's uncased WordPiece, as the model's
//! `tokenizer.json` describes it and as Hugging Face `tokenizers` runs it
//! (checked against its output in the tests, on texts of every script).
//!
//! 1. Clean: drop NUL, U+FFFD and control/format/unassigned characters;
//!    every whitespace character becomes a space.
//! 2. Put spaces around CJK ideographs, so each is a word.
//! 3. Decompose (NFD) and drop non-spacing marks (accents), then lowercase.
//! 4. Split at whitespace; each punctuation character is a word of its own.
//! 5. Each word: the longest vocabulary entry from its start, then from
//!    where that ends (`##`-prefixed), and so on; a word that cannot be
//!    covered so, or of more than 100 characters, is one `[UNK]`.
//! 6. `[CLS]` … `[SEP]`, the whole cut to the model's length.
//!
//! Why our own: the `tokenizers` crate and the 46 others it brought were a
//! tenth of a clean build, for these few steps (docs/performance.md).

use std::collections::HashMap;
use std::path::Path;

use unicode_categories::UnicodeCategories;
use unicode_normalization::UnicodeNormalization;

pub struct WordPiece {
    vocab: HashMap<String, u32>,
    unk: u32,
    cls: u32,
    sep: u32,
    max_chars: usize,
}

/// The parts of `tokenizer.json` this tokenizer follows; anything else in
/// them is refused rather than tokenised differently.
#[derive(serde::Deserialize)]
struct File {
    normalizer: Normalizer,
    pre_tokenizer: Kind,
    model: Model,
}

#[derive(serde::Deserialize)]
struct Kind {
    #[serde(rename = "type")]
    kind: String,
}

#[derive(serde::Deserialize)]
struct Normalizer {
    #[serde(rename = "type")]
    kind: String,
    clean_text: bool,
    handle_chinese_chars: bool,
    strip_accents: Option<bool>,
    lowercase: bool,
}

#[derive(serde::Deserialize)]
struct Model {
    #[serde(rename = "type")]
    kind: String,
    unk_token: String,
    continuing_subword_prefix: String,
    max_input_chars_per_word: usize,
    vocab: HashMap<String, u32>,
}

impl WordPiece {
    pub fn from_file(path: &Path) -> Result<WordPiece, String> {
        let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        let file: File = serde_json::from_str(&text).map_err(|e| format!("not a BERT WordPiece tokenizer: {e}"))?;
        let n = &file.normalizer;
        let uncased = n.kind == "BertNormalizer" && n.clean_text && n.handle_chinese_chars && n.lowercase && n.strip_accents != Some(false);
        if !uncased || file.pre_tokenizer.kind != "BertPreTokenizer" || file.model.kind != "WordPiece" || file.model.continuing_subword_prefix != "##" {
            return Err("kebab reads uncased BERT WordPiece tokenizers (BertNormalizer, BertPreTokenizer, WordPiece with ##); this is another kind".into());
        }
        let id = |token: &str| file.model.vocab.get(token).copied().ok_or_else(|| format!("the vocabulary has no {token}"));
        Ok(WordPiece { unk: id(&file.model.unk_token)?, cls: id("[CLS]")?, sep: id("[SEP]")?, max_chars: file.model.max_input_chars_per_word, vocab: file.model.vocab })
    }

    /// The token ids of `text`: `[CLS]`, its word pieces, `[SEP]`, at most
    /// `max_len` in all.
    pub fn encode(&self, text: &str, max_len: usize) -> Vec<u32> {
        let mut ids = vec![self.cls];
        let room = max_len.saturating_sub(1);
        let normal = normalize(text);
        'words: for word in words(&normal) {
            for id in self.pieces(word) {
                if ids.len() == room {
                    break 'words;
                }
                ids.push(id);
            }
        }
        ids.push(self.sep);
        ids
    }

    /// One word's pieces: longest vocabulary entries first.
    fn pieces(&self, word: &str) -> Vec<u32> {
        if word.chars().count() > self.max_chars {
            return vec![self.unk];
        }
        let mut out = Vec::new();
        let mut start = 0;
        let mut key = String::new();
        while start < word.len() {
            let mut end = word.len();
            let found = loop {
                key.clear();
                if start > 0 {
                    key.push_str("##");
                }
                key.push_str(&word[start..end]);
                if let Some(&id) = self.vocab.get(&key) {
                    break Some(id);
                }
                match word[start..end].char_indices().last() {
                    Some((last, _)) if last > 0 => end = start + last,
                    _ => break None,
                }
            };
            match found {
                Some(id) => out.push(id),
                None => return vec![self.unk],
            }
            start = end;
        }
        out
    }
}

/// Steps 1–3: cleaned, ideographs spaced, accents stripped, lowercased.
fn normalize(text: &str) -> String {
    let mut spaced = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\0' || c == '\u{FFFD}' || (c.is_other() && !matches!(c, '\t' | '\n' | '\r')) {
            continue;
        }
        if c.is_whitespace() {
            spaced.push(' ');
        } else if is_ideograph(c) {
            spaced.extend([' ', c, ' ']);
        } else {
            spaced.push(c);
        }
    }
    spaced.nfd().filter(|c| !c.is_mark_nonspacing()).flat_map(char::to_lowercase).collect()
}

/// Step 4: words split at whitespace, punctuation isolated.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(char::is_whitespace).flat_map(|chunk| {
        let mut parts = Vec::new();
        let mut from = 0;
        for (i, c) in chunk.char_indices() {
            if c.is_ascii_punctuation() || c.is_punctuation() {
                parts.extend([&chunk[from..i], &chunk[i..i + c.len_utf8()]]);
                from = i + c.len_utf8();
            }
        }
        parts.push(&chunk[from..]);
        parts.into_iter().filter(|p| !p.is_empty())
    })
}

/// The CJK ideograph blocks BERT writes as words of their own (Hangul and
/// kana are not among them).
fn is_ideograph(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B920..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_at_spaces_and_around_each_punctuation_mark() {
        let got: Vec<&str> = words("hey friend!   how are you?!? “quoted”—dash").collect();
        assert_eq!(got, ["hey", "friend", "!", "how", "are", "you", "?", "!", "?", "“", "quoted", "”", "—", "dash"]);
    }

    #[test]
    fn normalising_strips_accents_lowercases_and_spaces_ideographs() {
        assert_eq!(normalize("Café NAÏVE\tÅngström"), "cafe naive angstrom");
        assert_eq!(normalize("漢字ok"), " 漢  字 ok");
        assert_eq!(normalize("a\u{0}b\u{200B}c\u{FFFD}"), "abc", "NUL, a format character and U+FFFD go");
    }
}
