//! Text cut into tokens by the full-text indexes' own tokenizers, called
//! through SQLite's FTS5 C interface.
//!
//! The postings kebab keeps beside FTS5 (`postings`) must hold exactly the
//! tokens FTS5 indexes, or their BM25 would not be FTS5's: Porter stemming
//! over `unicode61 remove_diacritics 2` for the word index, trigrams for the
//! other. Reproducing those in Rust would drift with every SQLite release;
//! asking SQLite's own tokenizers cannot.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::ptr;

use anyhow::{Result, bail};
use rusqlite::{Connection, ffi};

use super::FtsIndex;

/// FTS5's longest token: longer ones are cut to this many bytes when indexed.
const MAX_TOKEN_BYTES: usize = 32_768;

/// Why text is tokenized: as a row's content or as a query's phrase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Document,
    /// A query phrase; `prefix` when it ends with `*`.
    Query { prefix: bool },
}

/// The tokens of one text, in order, copied out of the tokenizer.
#[derive(Debug, Default)]
pub struct Tokens {
    bytes: Vec<u8>,
    /// End of each token in `bytes`.
    ends: Vec<usize>,
    /// Tokens FTS5 counts in a row's size (not colocated with the one before).
    pub counted: u32,
}

impl Tokens {
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(&self.ends).map(|(s, &e)| &self.bytes[s..e])
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
        self.counted = 0;
    }
}

/// One index's tokenizer, created on a connection and deleted on drop.
pub struct Tokenizer {
    instance: *mut ffi::Fts5Tokenizer,
    methods: ffi::fts5_tokenizer,
}

impl Tokenizer {
    /// The tokenizer `index`'s table was created with (migration 0001).
    pub fn new(conn: &Connection, index: FtsIndex) -> Result<Tokenizer> {
        let (name, args): (&CStr, &[&CStr]) = match index {
            FtsIndex::Words => (c"porter", &[c"unicode61", c"remove_diacritics", c"2"]),
            FtsIndex::Trigrams => (c"trigram", &[]),
        };
        let api = fts5_api(conn)?;
        let mut user_data: *mut c_void = ptr::null_mut();
        // SAFETY: all zeroes is a valid value of this struct of optional
        // function pointers; xFindTokenizer fills it in.
        let mut methods: ffi::fts5_tokenizer = unsafe { std::mem::zeroed() };
        // SAFETY: `api` came from this open connection and stays valid while
        // it is open; the out-pointers point to locals.
        let rc = unsafe {
            let find = (*api).xFindTokenizer.expect("FTS5 always provides xFindTokenizer");
            find(api, name.as_ptr(), &mut user_data, &mut methods)
        };
        let (Some(create), true) = (methods.xCreate, rc == ffi::SQLITE_OK) else {
            bail!("SQLite has no FTS5 tokenizer {name:?} (code {rc})");
        };
        let mut argv: Vec<*const c_char> = args.iter().map(|a| a.as_ptr()).collect();
        let mut instance = ptr::null_mut();
        // SAFETY: the arguments are NUL-terminated strings that outlive the call.
        let rc = unsafe { create(user_data, argv.as_mut_ptr(), argv.len() as c_int, &mut instance) };
        if rc != ffi::SQLITE_OK || instance.is_null() {
            bail!("creating the FTS5 tokenizer {name:?} failed (code {rc})");
        }
        Ok(Tokenizer { instance, methods })
    }

    /// Cuts `text` into `out` (cleared first).
    pub fn tokenize(&self, text: &str, purpose: Purpose, out: &mut Tokens) -> Result<()> {
        out.clear();
        let flags = match purpose {
            Purpose::Document => ffi::FTS5_TOKENIZE_DOCUMENT,
            Purpose::Query { prefix: false } => ffi::FTS5_TOKENIZE_QUERY,
            Purpose::Query { prefix: true } => ffi::FTS5_TOKENIZE_QUERY | ffi::FTS5_TOKENIZE_PREFIX,
        };
        let Ok(len) = c_int::try_from(text.len()) else { bail!("a text of {} bytes is too long to tokenize", text.len()) };
        let tokenize = self.methods.xTokenize.expect("an FTS5 tokenizer always has xTokenize");
        // SAFETY: `instance` is live until drop; `out` outlives the call and
        // is only touched by `on_token` during it; `text` is valid for `len` bytes.
        let rc = unsafe {
            tokenize(self.instance, (out as *mut Tokens).cast(), flags as c_int, text.as_ptr().cast(), len, Some(on_token))
        };
        if rc != ffi::SQLITE_OK {
            bail!("the FTS5 tokenizer failed (code {rc})");
        }
        Ok(())
    }
}

impl Drop for Tokenizer {
    fn drop(&mut self) {
        if let Some(delete) = self.methods.xDelete {
            // SAFETY: created by xCreate of the same methods, deleted once.
            unsafe { delete(self.instance) }
        }
    }
}

/// FTS5's per-token callback: copies the token. Nothing here can panic but
/// an allocation failure, which aborts anyway.
unsafe extern "C" fn on_token(ctx: *mut c_void, flags: c_int, token: *const c_char, n: c_int, _start: c_int, _end: c_int) -> c_int {
    // SAFETY: `ctx` is the `&mut Tokens` passed to xTokenize, and `token`
    // points to `n` bytes for the duration of this call.
    let (out, token) = unsafe { (&mut *ctx.cast::<Tokens>(), std::slice::from_raw_parts(token.cast::<u8>(), n.max(0) as usize)) };
    out.bytes.extend_from_slice(&token[..token.len().min(MAX_TOKEN_BYTES)]);
    out.ends.push(out.bytes.len());
    if flags & ffi::FTS5_TOKEN_COLOCATED == 0 {
        out.counted += 1;
    }
    ffi::SQLITE_OK
}

/// The connection's FTS5 interface: `SELECT fts5(?1)` with a pointer bound
/// under the type name "fts5_api_ptr", as FTS5's documentation prescribes.
fn fts5_api(conn: &Connection) -> Result<*mut ffi::fts5_api> {
    let mut api: *mut ffi::fts5_api = ptr::null_mut();
    let mut stmt = ptr::null_mut();
    // SAFETY: the handle belongs to `conn`, which outlives these calls; the
    // statement is finalized before returning; `api` outlives the step that writes it.
    unsafe {
        let db = conn.handle();
        let rc = ffi::sqlite3_prepare_v2(db, c"SELECT fts5(?1)".as_ptr(), -1, &mut stmt, ptr::null_mut());
        if rc != ffi::SQLITE_OK {
            bail!("SQLite has no FTS5 (code {rc})");
        }
        ffi::sqlite3_bind_pointer(stmt, 1, (&mut api as *mut *mut ffi::fts5_api).cast(), c"fts5_api_ptr".as_ptr(), None);
        ffi::sqlite3_step(stmt);
        ffi::sqlite3_finalize(stmt);
    }
    if api.is_null() {
        bail!("SQLite did not hand out its FTS5 interface");
    }
    Ok(api)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(index: FtsIndex, text: &str, purpose: Purpose) -> Vec<String> {
        let conn = Connection::open_in_memory().unwrap();
        let tok = Tokenizer::new(&conn, index).unwrap();
        let mut out = Tokens::default();
        tok.tokenize(text, purpose, &mut out).unwrap();
        out.iter().map(|t| String::from_utf8(t.to_vec()).unwrap()).collect()
    }

    #[test]
    fn words_are_folded_and_stemmed_as_the_word_index_does() {
        assert_eq!(tokens(FtsIndex::Words, "Running crates, Café 검색은", Purpose::Document), ["run", "crate", "cafe", "검색은"]);
        assert_eq!(tokens(FtsIndex::Words, "borrowing", Purpose::Query { prefix: true }), ["borrow"]);
    }

    #[test]
    fn the_trigram_index_cuts_every_three_characters() {
        assert_eq!(tokens(FtsIndex::Trigrams, "소유권은", Purpose::Document), ["소유권", "유권은"]);
    }
}
