//! Crash safety through the real binary: `kebab ingest` and `kebab ask
//! --session` are killed with SIGKILL at staggered moments. Wherever the kill
//! lands (even after the process has finished on its own), SQLite's integrity
//! check must say `ok`, the next ingest must bring the database to exactly the
//! state of one uninterrupted run, and a conversation never holds half a turn.
//! `scripts/crash-test.sh` does the same with 50 random kills on a bigger corpus.

mod common;

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::{Env, model_dir};
use rusqlite::{Connection, OpenFlags, OptionalExtension};

/// A home whose config points at the test model.
fn embedding_env() -> Env {
    let env = Env::new();
    env.write(
        "config/kebab/config.toml",
        format!("[llm]\nprovider = \"extractive\"\n\n[embedding]\nmodel_dir = {:?}\n", model_dir().display().to_string()),
    );
    env
}

/// 260 one-line notes (a sixth in Korean), written for this test: one short
/// chunk each, so the vectors take two rounds (256 are committed per round)
/// and a kill can land between them, yet a whole ingest takes a few seconds.
fn write_notes(env: &Env) -> PathBuf {
    let things = ["kettle", "bicycle", "glacier", "violin", "beehive", "lantern", "compass", "teapot", "harbour"];
    let acts = ["was cleaned", "was repaired", "was measured", "was painted", "was moved", "was weighed"];
    let korean = ["김치를 담갔다", "지붕을 고쳤다", "바다를 걸었다", "붓글씨를 썼다", "차를 우렸다"];
    for i in 0..NOTES {
        let body = if i % 6 == 0 {
            format!("# 노트 {i}\n\n{}.\n", korean[i % korean.len()])
        } else {
            format!("# N{i}\n\nThe {} {}.\n", things[i % things.len()], acts[i % acts.len()])
        };
        env.write(&format!("notes/shelf{:02}/note{i:03}.md", i % 9), body);
    }
    env.notes()
}

const NOTES: usize = 260;

/// What an uninterrupted run leaves, keyed so two databases compare even if
/// their row ids differ: documents (path → content hash), chunks (path,
/// ordinal → content hash, text), vectors (path, ordinal → model, dim, bytes).
#[derive(PartialEq)]
struct State {
    documents: BTreeMap<String, String>,
    chunks: BTreeMap<(String, i64), (String, String)>,
    vectors: BTreeMap<(String, i64), (String, i64, Vec<u8>)>,
}

fn state(db: &Path) -> State {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let documents = collect(&conn, "SELECT path, content_hash FROM documents", |r| Ok((r.get(0)?, r.get(1)?)));
    let chunks = collect(
        &conn,
        "SELECT d.path, c.ordinal, c.content_hash, c.text FROM chunks c JOIN documents d ON d.id = c.doc_id",
        |r| Ok(((r.get(0)?, r.get(1)?), (r.get(2)?, r.get(3)?))),
    );
    let vectors = collect(
        &conn,
        "SELECT d.path, c.ordinal, e.model, e.dim, e.vector FROM embeddings e
         JOIN chunks c ON c.id = e.chunk_id JOIN documents d ON d.id = c.doc_id",
        |r| Ok(((r.get(0)?, r.get(1)?), (r.get(2)?, r.get(3)?, r.get(4)?))),
    );
    State { documents, chunks, vectors }
}

fn collect<K: Ord, V>(conn: &Connection, sql: &str, f: impl Fn(&rusqlite::Row) -> rusqlite::Result<(K, V)>) -> BTreeMap<K, V> {
    let mut stmt = conn.prepare(sql).unwrap();
    stmt.query_map([], f).unwrap().collect::<rusqlite::Result<_>>().unwrap()
}

/// Why `got` is not `want`, section by section (the vectors are too big to print).
fn difference(want: &State, got: &State) -> Option<String> {
    let mut why = Vec::new();
    if want.documents != got.documents {
        why.push(format!("documents: {} vs {} expected", got.documents.len(), want.documents.len()));
    }
    if want.chunks != got.chunks {
        why.push(format!("chunks: {} vs {} expected", got.chunks.len(), want.chunks.len()));
    }
    if want.vectors != got.vectors {
        let differing = want.vectors.iter().filter(|(k, v)| got.vectors.get(*k) != Some(v)).count();
        why.push(format!("vectors: {} vs {} expected, {differing} missing or different", got.vectors.len(), want.vectors.len()));
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// `PRAGMA integrity_check` and FTS5's own check of both indexes against the
/// chunks they index. A database the kill left unborn (or without its
/// schema yet) is fine: the next run creates it. The check runs on a copy of
/// the file and its WAL: closing a connection to the original would
/// checkpoint it, and the next kebab must recover the crashed WAL itself.
fn assert_sound(db: &Path, when: &str) {
    if !db.exists() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("check.db");
    std::fs::copy(db, &copy).unwrap();
    let wal = db.with_extension("db-wal");
    if wal.exists() {
        std::fs::copy(&wal, copy.with_extension("db-wal")).unwrap();
    }
    let conn = Connection::open(&copy).unwrap();
    let result: Vec<String> =
        conn.prepare("PRAGMA integrity_check").unwrap().query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
    assert_eq!(result, ["ok"], "integrity check {when}");
    for fts in ["chunks_fts", "chunks_trigram"] {
        let exists: Option<i64> =
            conn.query_row("SELECT 1 FROM sqlite_master WHERE name = ?1", [fts], |r| r.get(0)).optional().unwrap();
        if exists.is_some() {
            conn.execute(&format!("INSERT INTO {fts}({fts}) VALUES ('integrity-check')"), [])
                .unwrap_or_else(|e| panic!("{fts} integrity check {when}: {e}"));
        }
    }
}

/// When to kill: after a fraction of the uninterrupted run's time, or as soon
/// as the first round of vectors is committed (the process is then embedding
/// the second), whichever the process reaches before it ends on its own.
#[derive(Debug, Clone, Copy)]
enum Kill {
    After(f64),
    OnceVectorsCommitted,
}

/// Runs `child` until the kill point, kills it (if it is still running) and
/// reaps it. A process that ended on its own must have succeeded.
fn kill_at(mut child: Child, at: Kill, reference: Duration, db: &Path) {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            assert!(status.success(), "the run ended on its own with {status}: {err}");
            return;
        }
        let due = match at {
            Kill::After(f) => started.elapsed() >= reference.mul_f64(f),
            Kill::OnceVectorsCommitted => vectors_committed(db),
        };
        if due {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // It may have finished between the last look and the kill.
    let _ = child.kill();
    let status = child.wait().unwrap();
    assert!(status.success() || status.signal() == Some(9), "{status}");
}

/// Whether any vector is committed yet, read without taking a lock the
/// writer needs (a reader never blocks a WAL writer).
fn vectors_committed(db: &Path) -> bool {
    let Ok(conn) = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY) else { return false };
    conn.query_row("SELECT EXISTS (SELECT 1 FROM embeddings)", [], |r| r.get::<_, bool>(0)).unwrap_or(false)
}

fn spawn(env: &Env, args: &[&str]) -> Child {
    env.cmd(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("spawn kebab")
}

#[test]
fn ingest_killed_at_any_moment_leaves_a_sound_database_that_the_next_run_completes_exactly() {
    let reference = embedding_env();
    let notes = write_notes(&reference);
    let notes = notes.to_str().unwrap();
    let started = Instant::now();
    reference.ok(&["--quiet", "ingest", notes]);
    let took = started.elapsed();
    let want = state(&reference.database());
    assert_eq!(want.documents.len(), NOTES);
    assert!(want.chunks.len() > 256 && want.vectors.len() == want.chunks.len());

    // Staggered over the run: before the database exists then early on,
    // between two committed rounds of vectors, and twice mid-run (the second
    // time well into what the restart resumed). Each scenario costs about one
    // whole ingest, so there are three, with five kills.
    let scenarios: &[&[Kill]] = &[
        &[Kill::After(0.0), Kill::After(0.1)],
        &[Kill::OnceVectorsCommitted],
        &[Kill::After(0.45), Kill::After(0.35)],
    ];
    for kills in scenarios {
        // The same notes folder, so document paths match the reference's.
        let env = embedding_env();
        for (i, &at) in kills.iter().enumerate() {
            kill_at(spawn(&env, &["--quiet", "ingest", notes]), at, took, &env.database());
            assert_sound(&env.database(), &format!("after kill {} of {kills:?}", i + 1));
        }
        env.ok(&["--quiet", "ingest", notes]);
        assert_sound(&env.database(), &format!("after the run that followed {kills:?}"));
        if let Some(why) = difference(&want, &state(&env.database())) {
            panic!("after {kills:?}, the next ingest did not converge to the uninterrupted run: {why}");
        }
    }
}

#[test]
fn ask_killed_while_saving_a_turn_never_leaves_half_a_turn() {
    let env = common::research_env();
    let questions = ["How many hives were inspected?", "What did the log record?", "양봉 기록에는 무엇이 있나요?"];
    let started = Instant::now();
    env.ok(&["--quiet", "ask", "--session", "crash", questions[0]]);
    let took = started.elapsed();
    let mut finished = 1;
    for (i, f) in [0.2, 0.4, 0.6, 0.8, 0.95, 1.1].into_iter().enumerate() {
        let mut child = spawn(&env, &["--quiet", "ask", "--session", "crash", questions[i % questions.len()]]);
        let deadline = Instant::now() + took.mul_f64(f);
        while Instant::now() < deadline && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(2));
        }
        let _ = child.kill();
        let status = child.wait().unwrap();
        if status.signal() != Some(9) {
            finished += 1;
        }
        assert_sound(&env.database(), &format!("after the ask killed at {f} of its time"));
        let turns = assert_whole_turns(&env.database(), "crash");
        assert!(turns >= finished, "{finished} asks finished but only {turns} turns were saved");
    }
}

/// Every turn of the conversation has its answers row (pointing back at the
/// same turn) and every answers row of it has its turn; turn_index runs
/// 0..n-1. Returns n.
fn assert_whole_turns(db: &Path, name: &str) -> usize {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let Some(id) = conn.query_row("SELECT id FROM conversations WHERE name = ?1", [name], |r| r.get::<_, i64>(0)).optional().unwrap()
    else {
        return 0;
    };
    let indexes: Vec<i64> = conn
        .prepare("SELECT turn_index FROM turns WHERE conversation_id = ?1 ORDER BY turn_index")
        .unwrap()
        .query_map([id], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(indexes, (0..indexes.len() as i64).collect::<Vec<_>>(), "turn_index must run 0..n-1");
    let count = |sql: &str| conn.query_row(sql, [id], |r| r.get::<_, i64>(0)).unwrap();
    let turns_without_answer = count(
        "SELECT count(*) FROM turns t LEFT JOIN answers a ON a.id = t.answer_id
           AND a.conversation_id = t.conversation_id AND a.turn_index = t.turn_index
         WHERE t.conversation_id = ?1 AND a.id IS NULL",
    );
    let answers_without_turn = count(
        "SELECT count(*) FROM answers a WHERE a.conversation_id = ?1
           AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.answer_id = a.id)",
    );
    assert_eq!((turns_without_answer, answers_without_turn), (0, 0), "half turns");
    indexes.len()
}
