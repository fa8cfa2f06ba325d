//! The spelling the notes use for a word they lack. A question that
//! misspells a word ("diffrence", "ownrship", "explian") finds nothing with
//! it: the search loses the word, and the ask gate counts it as a topic the
//! notes lack. The word meant is the typed one with a letter it lacks, with
//! two neighbours swapped, or with a letter typed twice typed once, that the
//! notes hold. Any other letter dropped, or one changed, is not tried: from
//! a real word the notes lack, those reach one they hold too often ("painted" → "printed", "rustls" → "rusts", which
//! the index stems to `rust`). Which words are worth the lookup is the
//! caller's call (`search::spelling`).

use anyhow::Result;

use super::Store;
use super::terms::FtsIndex;

/// How many of the chunks best matching a candidate are read for the
/// words they write: a common stem's best chunks may write only its other
/// forms ("different" for "difference").
const WRITTEN_IN: usize = 20;

impl Store {
    /// Of the words `word` may be a typo of (`word` in lowercase ASCII
    /// letters), the one the most chunks hold; `None` when none is held,
    /// or none is written as such in the notes.
    pub fn nearest_spelling(&self, word: &str) -> Result<Option<String>> {
        let near = one_edit(word);
        let mut held: Vec<(&String, i64)> = Vec::new();
        // Most candidates are no word at all: whether FTS5 finds any row
        // is one seek, where counting a word's chunks reads its postings.
        let sql = format!("SELECT 1 FROM {0} WHERE {0} MATCH ?1 LIMIT 1", FtsIndex::Words.table());
        let mut any = self.conn.prepare_cached(&sql)?;
        for candidate in &near {
            let phrase = format!("\"{candidate}\"");
            if any.exists([&phrase])? {
                held.push((candidate, self.docs_matching(FtsIndex::Words, &phrase)?));
            }
        }
        held.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
        let Some(&(best, _)) = held.first() else { return Ok(None) };
        // The index matches stems, so a candidate may be held only through
        // another word's stem ("bitting" through `bit`, "optimication"
        // through `optim`): the word meant is one the chunks holding it
        // write.
        let top = self.bm25(FtsIndex::Words, &format!("\"{best}\""), 1.0, Some(WRITTEN_IN))?;
        let ids: Vec<i64> = top.iter().map(|&(id, _)| id).collect();
        let mut written: Vec<String> = Vec::new();
        for chunk in self.chunks_by_ids(&ids)? {
            written.extend(crate::words::words(&chunk.text));
        }
        Ok(held.into_iter().find(|(c, _)| written.contains(c)).map(|(c, _)| c.clone()))
    }
}

/// Every word a letter longer than `word`, with two neighbours swapped, or
/// with a doubled letter single ("lifettime"), its first letter kept, each
/// once, `word` itself left out. A typo seldom touches the first letter,
/// and a real word seldom lacks it ("elected" is not a typo of "selected").
fn one_edit(word: &str) -> Vec<String> {
    let w = word.as_bytes();
    let mut out: Vec<Vec<u8>> = Vec::new();
    for i in 1..=w.len() {
        if i < w.len() && w[i] == w[i - 1] {
            out.push([&w[..i], &w[i + 1..]].concat());
        }
        if i + 1 < w.len() {
            let mut swapped = w.to_vec();
            swapped.swap(i, i + 1);
            out.push(swapped);
        }
        for c in b'a'..=b'z' {
            out.push([&w[..i], &[c], &w[i..]].concat());
        }
    }
    out.sort();
    out.dedup();
    out.into_iter().filter(|v| v != w).filter_map(|v| String::from_utf8(v).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_is_a_letter_short_two_letters_swapped_or_one_doubled() {
        let near = one_edit("diffrence");
        for w in ["difference", "dfifrence", "diffrecne", "diffrences", "difrence"] {
            assert!(near.contains(&w.to_string()), "{w}");
        }
        // A letter dropped (but for one of a double) or changed, or the
        // first letter touched, is not tried; the word itself is not a neighbour.
        for w in ["diffrence", "diffence", "diffrnce", "diffrance", "idffrence", "adiffrence"] {
            assert!(!near.contains(&w.to_string()), "{w}");
        }
        // 9 places × 26 letters, 7 swaps, one doubled letter, less the additions that repeat.
        assert!(near.len() <= 9 * 26 + 7 + 1 && near.len() > 200, "{}", near.len());
    }
}
