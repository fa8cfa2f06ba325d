//! The `conversations` and `turns` tables: named research conversations and
//! their turns, each turn pointing at its `answers` row so its evidence
//! survives restarts. This file is the only place that knows their columns.

use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, Row, Transaction, TransactionBehavior, named_params, params};
use serde::Serialize;

use super::answers::{self, AnswerRow, NewTurn};
use super::{Store, now_rfc3339};

/// The columns of `conversations`, in the order `Conversation::from_row` reads them.
const CONVERSATION_COLUMNS: &str = "id, name, title, created_at, updated_at";

/// A `conversations` row, as `session.v1` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Conversation {
    #[serde(skip)]
    pub id: i64,
    pub name: String,
    /// The first question, shortened.
    pub title: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl Conversation {
    fn from_row(r: &Row) -> rusqlite::Result<Conversation> {
        Ok(Conversation {
            id: r.get("id")?,
            name: r.get("name")?,
            title: r.get("title")?,
            created_at: r.get("created_at")?,
            updated_at: r.get("updated_at")?,
        })
    }
}

/// A `turns` row: the question as asked, and the answer it got.
#[derive(Debug, Clone)]
pub struct TurnRow {
    pub turn_index: i64,
    pub question: String,
    pub retrieval_query: String,
    pub created_at: String,
    pub answer_id: i64,
    /// Set on a turn taken over by `fork_conversation`.
    pub forked_from: Option<ForkRow>,
}

/// Where a forked turn came from: the source conversation's name (none once
/// it was removed) and the turn's index there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForkRow {
    pub conversation: Option<String>,
    pub turn_index: i64,
}

/// The columns of `turns` read back, aliased so they cannot be mistaken for
/// the `answers` columns of the same name in a join.
const TURN_COLUMNS: &str = "t.turn_index AS t_turn_index, t.question AS t_question, \
     t.retrieval_query AS t_retrieval_query, t.created_at AS t_created_at, t.answer_id AS t_answer_id, \
     t.forked_from_turn AS t_forked_from_turn, \
     (SELECT fc.name FROM conversations fc WHERE fc.id = t.forked_from_conversation_id) AS t_forked_from_name";

impl TurnRow {
    fn from_row(r: &Row) -> rusqlite::Result<TurnRow> {
        Ok(TurnRow {
            turn_index: r.get("t_turn_index")?,
            question: r.get("t_question")?,
            retrieval_query: r.get("t_retrieval_query")?,
            created_at: r.get("t_created_at")?,
            answer_id: r.get("t_answer_id")?,
            forked_from: match r.get::<_, Option<i64>>("t_forked_from_turn")? {
                Some(turn_index) => Some(ForkRow { conversation: r.get("t_forked_from_name")?, turn_index }),
                None => None,
            },
        })
    }
}

/// A turn found by `search_turns`.
#[derive(Debug, Clone)]
pub struct TurnHitRow {
    pub conversation: String,
    pub turn_index: i64,
    pub question: String,
    /// The best-matching stretch of the question or answer, matches in «».
    pub snippet: String,
    pub forked: bool,
}

/// What the next turn needs of an earlier one.
pub struct PriorRow {
    pub question: String,
    pub answer: String,
    pub grounded: bool,
}

/// Refuses a turn for a conversation another process removed while the
/// question was answered; the insert failed with "FOREIGN KEY constraint
/// failed" (exit 2), naming neither the session nor what to do.
pub(super) fn still_there(conn: &Connection, conversation_id: i64) -> Result<()> {
    let there: bool =
        conn.query_row("SELECT EXISTS(SELECT 1 FROM conversations WHERE id = ?1)", [conversation_id], |r| r.get(0))?;
    if there {
        return Ok(());
    }
    Err(crate::error::UserError::new(
        "not_found",
        "the session was removed by another process while this question was answered, so the answer was not saved",
    )
    .with_hint("ask again: the question starts the session anew")
    .into())
}

/// The next free turn index of a conversation (read under the write lock).
pub(super) fn next_turn_index(conn: &Connection, conversation_id: i64) -> Result<i64> {
    Ok(conn.query_row(
        "SELECT coalesce(max(turn_index) + 1, 0) FROM turns WHERE conversation_id = ?1",
        [conversation_id],
        |r| r.get(0),
    )?)
}

/// Writes the turn for a saved answer (its `id` and `turn_index` set) and
/// touches its conversation.
pub(super) fn insert_turn(tx: &Connection, answer: &AnswerRow, turn: &NewTurn, now: &str) -> Result<()> {
    tx.execute(
        "INSERT INTO turns(conversation_id, turn_index, question, retrieval_query, answer_id, created_at)
         VALUES (:conversation_id, :turn_index, :question, :retrieval_query, :answer_id, :created_at)",
        named_params! {
            ":conversation_id": turn.conversation_id,
            ":turn_index": answer.turn_index,
            ":question": answer.question,
            ":retrieval_query": answer.retrieval_query,
            ":answer_id": answer.id,
            ":created_at": now,
        },
    )?;
    tx.execute(
        "UPDATE conversations SET updated_at = ?2, title = coalesce(title, ?3) WHERE id = ?1",
        params![turn.conversation_id, now, turn.title],
    )?;
    Ok(())
}

impl Store {
    pub fn find_conversation(&self, name: &str) -> Result<Option<Conversation>> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE name = ?1"),
                [name],
                Conversation::from_row,
            )
            .optional()?)
    }

    /// Creates the conversation `name` unless it exists (another process may
    /// create the same name at the same moment: that is not an error).
    /// Returns whether this call made it, so a caller after a name of its own
    /// can tell it from one another process made since it looked.
    pub fn create_conversation(&self, name: &str) -> Result<bool> {
        self.ensure_writable()?;
        let made = self
            .conn
            .execute(
                "INSERT OR IGNORE INTO conversations(name, created_at, updated_at) VALUES (?1, ?2, ?2)",
                params![name, now_rfc3339()],
            )
            .with_context(|| format!("creating session {name:?}"))?;
        Ok(made == 1)
    }

    /// Every conversation with its number of turns, most recently used first.
    pub fn conversations(&self) -> Result<Vec<(Conversation, i64)>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {CONVERSATION_COLUMNS}, (SELECT count(*) FROM turns t WHERE t.conversation_id = c.id) AS turns
             FROM conversations c ORDER BY c.updated_at DESC, c.id DESC"
        ))?;
        let rows = stmt.query_map([], |r| Ok((Conversation::from_row(r)?, r.get("turns")?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Renames conversation `id` to `new`; `false` when nothing was renamed:
    /// `new` was taken, or `id` removed, by another process since the caller
    /// looked (the rename failed with "UNIQUE constraint failed", exit 2).
    pub fn rename_conversation(&self, id: i64, new: &str) -> Result<bool> {
        self.ensure_writable()?;
        Ok(self.conn.execute("UPDATE OR IGNORE conversations SET name = ?2 WHERE id = ?1", params![id, new])? == 1)
    }

    /// Deletes a conversation with its turns and their answers, in one
    /// transaction; returns how many turns went. An answer a fork's turn
    /// still points at stays, for that turn.
    pub fn remove_conversation(&self, id: i64) -> Result<i64> {
        self.ensure_writable()?;
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        let answers: Vec<i64> = {
            let mut stmt = tx.prepare(
                "SELECT answer_id FROM turns WHERE conversation_id = ?1 UNION SELECT id FROM answers WHERE conversation_id = ?1",
            )?;
            stmt.query_map([id], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?
        };
        let turns = tx.execute("DELETE FROM turns WHERE conversation_id = ?1", [id])? as i64;
        for answer in answers {
            tx.execute("DELETE FROM answers WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM turns WHERE answer_id = ?1)", [answer])?;
        }
        tx.execute("DELETE FROM conversations WHERE id = ?1", [id])?;
        tx.commit()?;
        Ok(turns)
    }

    /// A new conversation `name` holding the turns of `from` up to
    /// `upto_turn_index` (inclusive), each pointing at the same answer as the
    /// turn it was taken from and marked as forked from it; in one
    /// transaction. Returns how many turns it holds; `None`, with nothing
    /// written, when `name` was taken, or `from` removed, by another process
    /// since the caller looked (the fork failed with "UNIQUE constraint failed", exit 2).
    pub fn fork_conversation(&self, from: i64, name: &str, upto_turn_index: i64) -> Result<Option<i64>> {
        self.ensure_writable()?;
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate).context("forking the session")?;
        let now = now_rfc3339();
        let made = tx
            .execute(
                "INSERT OR IGNORE INTO conversations(name, created_at, updated_at, title)
                 SELECT ?2, ?3, ?3, title FROM conversations WHERE id = ?1",
                params![from, name, now],
            )
            .with_context(|| format!("creating session {name:?}"))?;
        if made == 0 {
            return Ok(None);
        }
        let id = tx.last_insert_rowid();
        let turns = tx.execute(
            "INSERT INTO turns(conversation_id, turn_index, question, retrieval_query, answer_id, created_at,
                               forked_from_conversation_id, forked_from_turn)
             SELECT ?1, turn_index, question, retrieval_query, answer_id, created_at, conversation_id, turn_index
             FROM turns WHERE conversation_id = ?2 AND turn_index <= ?3 ORDER BY turn_index",
            params![id, from, upto_turn_index],
        )? as i64;
        tx.commit().context("forking the session")?;
        Ok(Some(turns))
    }

    /// Turns whose question or answer match the FTS5 expression `expr`
    /// (built by the caller from user text, never raw), best first.
    pub fn search_turns(&self, expr: &str, limit: usize) -> Result<Vec<TurnHitRow>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT c.name, t.turn_index, t.question,
                    snippet(turns_fts, -1, '«', '»', '…', 16), t.forked_from_turn IS NOT NULL
             FROM turns_fts JOIN turns t ON t.id = turns_fts.rowid JOIN conversations c ON c.id = t.conversation_id
             WHERE turns_fts MATCH ?1 ORDER BY bm25(turns_fts), t.id LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![expr, limit as i64], |r| {
            Ok(TurnHitRow { conversation: r.get(0)?, turn_index: r.get(1)?, question: r.get(2)?, snippet: r.get(3)?, forked: r.get(4)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    pub fn turn_count(&self, conversation_id: i64) -> Result<i64> {
        Ok(self.conn.query_row("SELECT count(*) FROM turns WHERE conversation_id = ?1", [conversation_id], |r| r.get(0))?)
    }

    /// Questions, answers and verdicts of a conversation's turns, oldest first.
    pub fn prior_turns(&self, conversation_id: i64) -> Result<Vec<PriorRow>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT t.question, a.answer, a.grounded FROM turns t JOIN answers a ON a.id = t.answer_id
             WHERE t.conversation_id = ?1 ORDER BY t.turn_index",
        )?;
        let rows = stmt.query_map([conversation_id], |r| {
            Ok(PriorRow { question: r.get(0)?, answer: r.get(1)?, grounded: r.get(2)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// A conversation's turns with their answers, oldest first; `newest` keeps
    /// only that many of the latest.
    pub fn turns(&self, conversation_id: i64, newest: Option<i64>) -> Result<Vec<(TurnRow, AnswerRow)>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {TURN_COLUMNS}, {} FROM turns t JOIN answers a ON a.id = t.answer_id
             WHERE t.conversation_id = ?1 ORDER BY t.turn_index DESC LIMIT ?2",
            answers::select_list("a")
        ))?;
        let rows = stmt.query_map(params![conversation_id, newest.unwrap_or(-1)], |r| {
            Ok((TurnRow::from_row(r)?, AnswerRow::from_row(r)?))
        })?;
        let mut out: Vec<_> = rows.collect::<rusqlite::Result<_>>()?;
        out.reverse();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{MIGRATIONS, Store};

    #[test]
    fn turns_saved_before_the_search_index_are_found_after_the_upgrade() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.db");
        // A level-4 database with one turn, as the kebab before forks wrote it.
        let conn = rusqlite::Connection::open(&path).unwrap();
        for m in &MIGRATIONS[..4] {
            conn.execute_batch(m.sql).unwrap();
        }
        conn.execute_batch(
            "PRAGMA user_version = 4;
             INSERT INTO conversations(id, name, created_at, updated_at) VALUES (1, 'old', 't', 't');
             INSERT INTO answers(id, created_at, question, retrieval_query, answer, grounded, model, template, mode, k,
                                 score_gate, chunks_returned, chunks_used, citations_json, packed_chunks_json, latency_ms,
                                 conversation_id, turn_index)
             VALUES (7, 't', 'Where do the swifts nest?', 'q', 'Under the eaves of the mill.', 1, 'm', 'rag-v2', 'lexical', 8,
                     0.7, 1, 1, '[]', '[]', 1, 1, 0);
             INSERT INTO turns(conversation_id, turn_index, question, retrieval_query, answer_id, created_at)
             VALUES (1, 0, 'Where do the swifts nest?', 'q', 7, 't');",
        )
        .unwrap();
        drop(conn);
        let store = Store::open(&path, false).unwrap();
        let by_question = store.search_turns("\"swifts\"", 10).unwrap();
        assert_eq!(by_question.len(), 1);
        assert_eq!((by_question[0].conversation.as_str(), by_question[0].turn_index), ("old", 0));
        let by_answer = store.search_turns("\"eaves\"", 10).unwrap();
        assert_eq!(by_answer.len(), 1);
        assert!(by_answer[0].snippet.contains("\u{ab}eaves\u{bb}"), "{}", by_answer[0].snippet);
        assert!(!by_answer[0].forked);
    }
}
