//! The one SQLite file: opening it with the right pragmas, applying the
//! numbered migrations, and the reads and writes the rest of kebab needs.
//!
//! Migrations live in `migrations/NNNN_name.sql`, are applied in order inside
//! one transaction at open, and `PRAGMA user_version` records the level. A
//! database from a newer kebab is refused before anything touches it.

mod answers;
mod batch;
mod conversations;
mod derived;
mod moves;
mod names;
mod postings;
mod read;
mod spelling;
mod terms;
mod tokens;
mod vectors;
mod write;

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use crate::error::UserError;

pub use answers::{AnswerRow, NewTurn, Saved};
pub use conversations::{Conversation, ForkRow, PriorRow, TurnHitRow, TurnRow};
pub use derived::SourceRows;
pub use read::{ChunkRow, DocRow, RootRow, Stats};
pub use terms::{FtsIndex, Scored};
pub use vectors::{VectorSet, quantize};
/// A one-document Markdown source of the given chunk texts, for tests elsewhere in the crate.
#[cfg(test)]
pub(crate) use write::tests::source as test_source;
pub use moves::{InnerRoot, SourcePlace};
pub use names::{dir_in_index, dir_on_disk, name_in_index, name_on_disk};
pub use write::{ChunkDraft, DocumentInput, SourceInput, SourceOutcome, SourceRow};

/// A numbered migration: its SQL, then, if it has one, a step in Rust that
/// converts existing rows (same transaction).
struct Migration {
    name: &'static str,
    sql: &'static str,
    then: Option<fn(&Connection) -> Result<()>>,
}

const fn sql(name: &'static str, sql: &'static str) -> Migration {
    Migration { name, sql, then: None }
}

/// Numbered migrations; the position in this list + 1 is the schema level.
const MIGRATIONS: &[Migration] = &[
    sql("0001_init", include_str!("migrations/0001_init.sql")),
    sql("0002_answers", include_str!("migrations/0002_answers.sql")),
    sql("0003_conversations", include_str!("migrations/0003_conversations.sql")),
    sql("0004_embeddings", include_str!("migrations/0004_embeddings.sql")),
    sql("0005_sessions_fork_search", include_str!("migrations/0005_sessions_fork_search.sql")),
    sql("0006_explicit_fts_insert", include_str!("migrations/0006_explicit_fts_insert.sql")),
    Migration {
        name: "0007_embedding_codes",
        sql: include_str!("migrations/0007_embedding_codes.sql"),
        then: Some(vectors::encode_existing),
    },
    Migration {
        name: "0008_cjk_trigram_text",
        sql: include_str!("migrations/0008_cjk_trigram_text.sql"),
        then: Some(derived::fill_cjk_words),
    },
    // The postings of existing chunks are built at 0011's step, once the
    // table settling reads exists.
    sql("0009_postings", include_str!("migrations/0009_postings.sql")),
    sql("0010_fts_hashsize", include_str!("migrations/0010_fts_hashsize.sql")),
    Migration {
        name: "0011_postings_blocks",
        sql: include_str!("migrations/0011_postings_blocks.sql"),
        then: Some(postings::settle_all),
    },
    sql("0012_record_titles", include_str!("migrations/0012_record_titles.sql")),
    sql("0013_root_files", include_str!("migrations/0013_root_files.sql")),
];

/// The schema level this build writes.
pub const SCHEMA_LEVEL: i64 = MIGRATIONS.len() as i64;

/// Why a store refuses writes: what to do about it differs, so the refusal says which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOnly {
    /// `--readonly` (or `KEBAB_READONLY`) asked for it.
    Asked,
    /// This process may not write the database file or its folder (see `not_writable`).
    NotWritable,
}

impl ReadOnly {
    /// The error refusing `what` ("`kebab ingest`") a write to the database at `db`.
    pub fn refusal(self, what: &str, db: &Path) -> UserError {
        match self {
            ReadOnly::Asked => UserError::readonly(what),
            ReadOnly::NotWritable => UserError::new(
                "readonly",
                format!("{what} writes to the database, and {} (or its folder) is not writable here", db.display()),
            )
            .with_hint(
                "fix the permissions of the file and its folder (or run as a user who may write them); pass --readonly to only read",
            ),
        }
    }
}

/// An open database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// Why writes are refused, when they are.
    readonly: Option<ReadOnly>,
    /// Document counts and postings of terms (see `terms`).
    terms: RefCell<terms::TermCache>,
    /// Postings built beside a bulk ingest's batches (see `postings::Builder`).
    building: Option<postings::Builder>,
    /// The identity of the file opened (see `replaced`).
    file: Option<(u64, u64)>,
}

/// The identity (device, inode) of what is at `path` now: a file removed
/// and made again, or a folder, has a new one.
pub fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

impl Store {
    /// Opens (creating if needed) the database at `path` and brings its schema
    /// up to date. With `readonly`, the file must already exist and is never
    /// written: no journal-mode switch, no migration.
    pub fn open(path: &Path, readonly: bool) -> Result<Store> {
        Store::open_as(path, readonly.then_some(ReadOnly::Asked))
    }

    /// `open`, read-only for the reason given (which a refused write names).
    pub fn open_as(path: &Path, readonly: Option<ReadOnly>) -> Result<Store> {
        if let Some(why) = readonly {
            return Store::open_readonly(path, why);
        }
        if let Some(dir) = path.parent() {
            // The user's to fix (permissions, a path that is wrong): exit 1 with what to do.
            std::fs::create_dir_all(dir).map_err(|e| {
                UserError::new("bad_input", format!("cannot create the data directory {}: {e}", dir.display())).with_hint(
                    "let this user write in the folder above it, or point --data-dir (or KEBAB_DATA_DIR) at a folder it may write",
                )
            })?;
        }
        let conn = Connection::open(path).with_context(|| format!("cannot open database {}", path.display()))?;
        // Another process (a REPL, an ingest) may hold the write lock for a while.
        conn.busy_timeout(Duration::from_secs(10))?;
        let file = file_id(path);
        let mut store = Store { conn, path: path.to_path_buf(), readonly: None, terms: RefCell::default(), building: None, file };
        // Read the level before anything writes: switching a newer kebab's
        // database to WAL would already rewrite its header.
        store.check_level()?;
        store.conn.pragma_update(None, "journal_mode", "WAL").map_err(|e| store.unusable(e))?;
        store.conn.pragma_update(None, "synchronous", "NORMAL")?;
        store.conn.pragma_update(None, "foreign_keys", "ON")?;
        store.migrate()?;
        Ok(store)
    }

    /// Opens an existing database without writing anything. A WAL database
    /// needs its `-shm` file, which SQLite cannot create in a folder this
    /// process may not write: then the file is opened as immutable (nobody is
    /// writing it, or we could not read it consistently anyway).
    fn open_readonly(path: &Path, why: ReadOnly) -> Result<Store> {
        if let Some(none) = no_database(path) {
            return Err(UserError::new("no_index", format!("nothing is indexed yet: {none}"))
                .with_hint("run `kebab ingest PATH` (without --readonly) to index a folder of notes")
                .into());
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
        let open = |immutable: bool| -> Result<Store> {
            let uri = sqlite_uri(path, immutable);
            let conn = Connection::open_with_flags(&uri, flags).with_context(|| format!("cannot open database {}", path.display()))?;
            conn.busy_timeout(Duration::from_secs(10))?;
            let file = file_id(path);
            let store = Store { conn, path: path.to_path_buf(), readonly: Some(why), terms: RefCell::default(), building: None, file };
            store.check_level()?;
            Ok(store)
        };
        // Data nobody may write, with no pending WAL: immutable from the start,
        // so not even a user the kernel lets write (root) leaves a -shm behind.
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        let settled = std::fs::metadata(&wal).map_or(true, |m| m.len() == 0);
        let mut store = match open(settled && not_writable(path)) {
            Ok(s) => s,
            // Not a database at all: the same error either way.
            Err(e) if e.downcast_ref::<UserError>().is_some() || !looks_like_sqlite(path) => return Err(e),
            // A WAL database whose -shm cannot be created here: read it as it is on disk.
            Err(_) => open(true)?,
        };
        store.conn.pragma_update(None, "foreign_keys", "ON")?;
        store.migrate()?;
        Ok(store)
    }

    /// The error for a file SQLite cannot read as a database.
    fn unusable(&self, e: rusqlite::Error) -> anyhow::Error {
        anyhow::Error::new(e).context(format!("{} is not a usable SQLite database", self.path.display()))
    }

    /// Refuses a database from a newer kebab, before anything touches it.
    fn check_level(&self) -> Result<i64> {
        let level = self.schema_level().map_err(|e| match e.downcast::<rusqlite::Error>() {
            Ok(e) => self.unusable(e),
            Err(e) => e,
        })?;
        if level > SCHEMA_LEVEL {
            return Err(UserError::new(
                "schema_too_new",
                format!(
                    "database {} has schema level {level}, newer than this kebab understands ({SCHEMA_LEVEL})",
                    self.path.display()
                ),
            )
            .with_hint("upgrade kebab; the database was left untouched")
            .into());
        }
        Ok(level)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the database file was removed, or replaced by a new index,
    /// since this store opened it: the open file is then one no other kebab
    /// sees, and what a long-running command (watch, mcp) writes to it is lost.
    pub fn replaced(&self) -> bool {
        file_id(&self.path) != self.file
    }

    pub fn is_readonly(&self) -> bool {
        self.readonly.is_some()
    }

    /// Ok when this store may write; otherwise the refusal of `what`
    /// ("`kebab watch`"), saying why it may not.
    pub fn writable_for(&self, what: &str) -> Result<()> {
        match self.readonly {
            None => Ok(()),
            Some(why) => Err(why.refusal(what, &self.path).into()),
        }
    }

    /// `PRAGMA quick_check`'s verdict: `ok`, or what is wrong.
    pub fn quick_check(&self) -> rusqlite::Result<String> {
        self.conn.query_row("PRAGMA quick_check", [], |r| r.get(0))
    }

    /// FTS5's own check that each full-text index matches the chunks: the
    /// index's table name and what is wrong with it, if anything. It writes
    /// (FTS5 runs it as a command), so a read-only store skips it.
    pub fn check_fts(&self) -> Result<Vec<(&'static str, Result<()>)>> {
        self.ensure_writable()?;
        Ok([FtsIndex::Words, FtsIndex::Trigrams]
            .into_iter()
            .map(|index| {
                let table = index.table();
                let sql = format!("INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)");
                (table, self.conn.execute(&sql, []).map(|_| ()).map_err(Into::into))
            })
            .collect())
    }

    /// How many documents are indexed.
    pub fn document_count(&self) -> Result<i64> {
        Ok(self.conn.query_row("SELECT count(*) FROM documents", [], |r| r.get(0))?)
    }

    pub fn schema_level(&self) -> Result<i64> {
        Ok(self.conn.pragma_query_value(None, "user_version", |r| r.get(0))?)
    }

    fn migrate(&mut self) -> Result<()> {
        let level = self.check_level()?;
        if level == SCHEMA_LEVEL {
            return Ok(());
        }
        if self.readonly.is_some() {
            return Err(UserError::new(
                "readonly",
                format!(
                    "database {} has schema level {level} and needs an upgrade to {SCHEMA_LEVEL}, which a read-only open cannot do",
                    self.path.display()
                ),
            )
            .with_hint("run any kebab command once without --readonly, as a user who may write the database")
            .into());
        }
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Re-read under the write lock: another process may have migrated meanwhile.
        let level: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        for (i, m) in MIGRATIONS.iter().enumerate().skip(level.max(0) as usize) {
            tx.execute_batch(m.sql).with_context(|| format!("applying migration {}", m.name))?;
            if let Some(step) = m.then {
                step(&tx).with_context(|| format!("applying migration {}", m.name))?;
            }
            tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Closes the database and deletes its files: for one this process
    /// created and indexed nothing in, so a run that did nothing leaves none.
    pub fn discard(self) -> std::io::Result<()> {
        let files = database_files(&self.path);
        drop(self);
        for file in files {
            match std::fs::remove_file(&file) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        Ok(())
    }

    /// Refuses a write when the store was opened read-only.
    fn ensure_writable(&self) -> Result<()> {
        self.writable_for("this command")
    }
}

/// Why there is no database to read at `path`, if there is none: no file
/// there, or an empty one (0 bytes, as `touch` or a create cut short leaves
/// it), which SQLite would take for a new database and a writable open would
/// migrate. Reading commands say this rather than create or change a file.
pub fn no_database(path: &Path) -> Option<String> {
    match std::fs::metadata(path) {
        Err(_) => Some(format!("no database at {}", path.display())),
        Ok(m) if m.is_file() && m.len() == 0 => Some(format!("the database {} is empty (0 bytes)", path.display())),
        Ok(_) => None,
    }
}

/// The database file at `path` and the files SQLite keeps beside it.
pub fn database_files(path: &Path) -> [PathBuf; 4] {
    ["", "-wal", "-shm", "-journal"].map(|suffix| {
        let mut name = path.as_os_str().to_os_string();
        name.push(suffix);
        PathBuf::from(name)
    })
}

/// True when this process may not write the database file or its folder
/// (SQLite keeps its journal beside the file): such data is opened read-only.
/// Permission bits are checked as well as an open for writing, so data made
/// read-only stays read-only even for a user (root) the kernel would let write.
pub fn not_writable(path: &Path) -> bool {
    let denied = |e: std::io::Error| matches!(e.kind(), std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem);
    let file = std::fs::OpenOptions::new().write(true).open(path).err().is_some_and(denied);
    let no_write_bits = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.permissions().readonly());
    file || no_write_bits(path) || path.parent().is_some_and(no_write_bits)
}

/// Whether the file starts with SQLite's header: a file that does is a
/// database, however unreadable it is right now, and is never advised away.
pub fn looks_like_sqlite(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 16];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok() && &head == b"SQLite format 3\0"
}

/// A `file:` URI for `path` (every byte outside the unreserved set escaped,
/// so any file name works), optionally with `immutable=1`.
fn sqlite_uri(path: &Path, immutable: bool) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = String::from("file:");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str(if immutable { "?mode=ro&immutable=1" } else { "?mode=ro" });
    uri
}

/// Current UTC time as RFC 3339, the format of every `*_at` column.
pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .ok()
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database as kebab left it at schema `level` (its SQL only), holding
    /// one document whose one chunk row is `chunk` (the VALUES of an insert),
    /// then `more` run on it.
    fn old_database(path: &Path, level: usize, chunk: &str, more: &str) -> Connection {
        let conn = Connection::open(path).unwrap();
        for m in &MIGRATIONS[..level] {
            conn.execute_batch(m.sql).unwrap();
        }
        conn.execute_batch(&format!(
            "PRAGMA user_version = {level};
             INSERT INTO roots(id, name, abs_path, created_at) VALUES (1, 'notes', '/notes', 't');
             INSERT INTO sources(id, root_id, rel_path, format, content_hash, bytes, indexed_at) VALUES (1, 1, 'old.md', 'md', 'h', 1, 't');
             INSERT INTO documents(id, source_id, path, external_id, media, lang, content_hash, bytes, indexed_at, updated_at)
             VALUES (1, 1, 'notes/old.md', 'notes/old.md', 'text/markdown', 'ko', 'h', 1, 't', 't');
             INSERT INTO chunks(id, doc_id, ordinal, heading_path_json, context, text, line_start, line_end, token_estimate, content_hash, has_cjk)
             {chunk};
             {more}"
        ))
        .unwrap();
        conn
    }

    #[test]
    fn a_level_11_jsonl_records_title_becomes_its_chunks_heading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.db");
        drop(old_database(
            &path,
            11,
            "VALUES (1, 1, 0, '[]', '', 'A Markdown chunk.', 1, 1, 3, 'h', 0)",
            "INSERT INTO documents(id, source_id, path, external_id, title, media, lang, content_hash, bytes, indexed_at, updated_at)
             VALUES (2, 1, 'notes/g.jsonl#b', 'b', 'BM25', 'application/jsonl', 'en', 'h', 1, 't', 't'),
                    (3, 1, 'notes/g.jsonl#x', 'x', NULL, 'application/jsonl', 'en', 'h', 1, 't', 't');
             INSERT INTO chunks(id, doc_id, ordinal, heading_path_json, context, text, line_start, line_end, token_estimate, content_hash, has_cjk)
             VALUES (2, 2, 0, '[]', 'BM25', 'A ranking function.', 1, 1, 3, 'h', 0),
                    (3, 3, 0, '[]', '', 'Untitled.', 2, 2, 2, 'h', 0);",
        ));
        let store = Store::open(&path, false).unwrap();
        let mut q = store.conn.prepare("SELECT heading_path_json FROM chunks ORDER BY id").unwrap();
        let headings: Vec<String> = q.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
        assert_eq!(headings, ["[]", "[\"BM25\"]", "[]"]);
    }

    #[test]
    fn open_applies_migrations_and_records_the_level() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("k.db"), false).unwrap();
        assert_eq!(store.schema_level().unwrap(), SCHEMA_LEVEL);
        let mode: String = store.conn.pragma_query_value(None, "journal_mode", |r| r.get(0)).unwrap();
        assert_eq!(mode, "wal");
        // A second open is a no-op.
        drop(store);
        assert_eq!(Store::open(&dir.path().join("k.db"), false).unwrap().schema_level().unwrap(), SCHEMA_LEVEL);
    }

    #[test]
    fn chunks_written_before_level_6_stay_indexed_and_new_ones_are_indexed_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.db");
        // A level-5 database whose insert trigger indexed one chunk.
        drop(old_database(&path, 5, "VALUES (1, 1, 0, '[]', '', '오래된 소유권 메모', 1, 1, 5, 'h', 1)", ""));
        let mut store = Store::open(&path, false).unwrap();
        let (root, _) = store.ensure_root(dir.path()).unwrap();
        store.apply_source(&write::tests::source(root, "new.md", &["새 소유권 메모"]), false).unwrap();
        for (table, expr) in [("chunks_fts", "\"메모\""), ("chunks_trigram", "\"소유권\"")] {
            let sql = format!("SELECT count(*) FROM {table} WHERE {table} MATCH ?1");
            let n: i64 = store.conn.query_row(&sql, [expr], |r| r.get(0)).unwrap();
            assert_eq!(n, 2, "{table}: the old chunk and the new one, each once");
        }
        write::tests::assert_indexes_sound(&store);
    }

    #[test]
    fn a_level_7_trigram_index_of_whole_texts_is_rebuilt_from_the_hangul_words() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.db");
        // A level-7 database: its trigram index holds a Korean chunk's whole text.
        let conn = old_database(
            &path,
            7,
            "VALUES (1, 1, 0, '[]', 'Cargo 노트', '오래된 소유권 메모: `cargo build`', 1, 1, 9, 'h', 1)",
            "INSERT INTO chunks_fts(rowid, context, text) SELECT id, context, text FROM chunks;
             INSERT INTO chunks_trigram(rowid, context, text) SELECT id, context, text FROM chunks;",
        );
        let trigram = |conn: &Connection, expr: &str| -> i64 {
            conn.query_row("SELECT count(*) FROM chunks_trigram WHERE chunks_trigram MATCH ?1", [expr], |r| r.get(0)).unwrap()
        };
        assert_eq!(trigram(&conn, "\"bui\""), 1);
        drop(conn);

        let store = Store::open(&path, false).unwrap();
        let (context, text): (String, String) =
            store.conn.query_row("SELECT cjk_context, cjk_text FROM chunks WHERE id = 1", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        assert_eq!((context.as_str(), text.as_str()), ("노트", "오래된 소유권 메모"));
        assert_eq!(trigram(&store.conn, "\"소유권\""), 1);
        assert_eq!(trigram(&store.conn, "\"bui\""), 0, "the English words left the trigram index");
        write::tests::assert_indexes_sound(&store);
        // The delete trigger takes the chunk out with the words the index holds.
        store.conn.execute("DELETE FROM chunks WHERE id = 1", []).unwrap();
        assert_eq!(trigram(&store.conn, "\"소유권\""), 0);
        write::tests::assert_indexes_sound(&store);
    }

    #[test]
    fn a_level_8_database_gets_the_postings_of_its_chunks_on_upgrade() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.db");
        drop(old_database(
            &path,
            8,
            "VALUES (1, 1, 0, '[]', 'Cargo 노트', '오래된 소유권 메모: `cargo build`', 1, 1, 9, 'h', 1)",
            "UPDATE chunks SET cjk_context = '노트', cjk_text = '오래된 소유권 메모';
             INSERT INTO chunks_fts(rowid, context, text) SELECT id, context, text FROM chunks;
             INSERT INTO chunks_trigram(rowid, context, text) SELECT id, cjk_context, cjk_text FROM chunks;",
        ));
        let store = Store::open(&path, false).unwrap();
        for (index, phrase) in [(FtsIndex::Words, "\"cargo\""), (FtsIndex::Words, "\"소유\"*"), (FtsIndex::Trigrams, "\"소유권\"")] {
            let got = store.phrase_scores(index, phrase, 2.0).unwrap().expect("built by the migration");
            let want = store.bm25(index, phrase, 2.0, None).unwrap();
            assert_eq!(got.ids, [1], "{phrase}");
            assert!((got.scores[0] - want[0].1).abs() < 1e-12, "{phrase}: {got:?} against {want:?}");
        }
    }

    #[test]
    fn newer_schema_is_refused_without_damage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.db");
        drop(Store::open(&path, false).unwrap());
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", SCHEMA_LEVEL + 5).unwrap();
        drop(conn);
        let err = Store::open(&path, false).err().unwrap();
        assert_eq!(err.downcast_ref::<UserError>().unwrap().code, "schema_too_new");
        let conn = Connection::open(&path).unwrap();
        let v: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(v, SCHEMA_LEVEL + 5);
        let ok: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(ok, "ok");
    }

    #[test]
    fn readonly_open_of_a_missing_database_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = Store::open(&dir.path().join("none.db"), true).err().unwrap();
        assert_eq!(err.downcast_ref::<UserError>().unwrap().code, "no_index");
        assert!(!dir.path().join("none.db").exists());
    }

    #[test]
    fn a_file_that_is_not_sqlite_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("junk.db");
        std::fs::write(&path, vec![0x42u8; 4096]).unwrap();
        assert!(Store::open(&path, false).is_err());
    }
}
