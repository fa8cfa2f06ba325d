//! The `answers` table: one row per ask — answered, refused or aborted — with
//! the evidence the model saw, so any answer can be explained and cited later.
//!
//! This file is the only place that knows the table's columns: `COLUMNS`
//! lists them once, and the insert and `from_row` sit side by side. Adding a
//! field means a migration, a field here, and its mapping in `rag`/`session`.

use anyhow::{Context, Result};
use rusqlite::{Connection, Row, Transaction, TransactionBehavior, named_params};

use super::{Store, now_rfc3339};

/// The columns of `answers`, in the order `from_row` reads them.
const COLUMNS: &str = "id, created_at, question, retrieval_query, answer, grounded, refusal_reason, model, \
     embedding_model, template, mode, k, score_gate, top_score, chunks_returned, chunks_used, citations_json, \
     packed_chunks_json, prompt_tokens, completion_tokens, usage_estimated, latency_ms, conversation_id, \
     turn_index, hops_json, verification_json, explain_json";

/// One `answers` row. JSON columns hold the serialised forms `rag` writes.
#[derive(Debug, Clone, Default)]
pub struct AnswerRow {
    /// 0 until saved.
    pub id: i64,
    pub created_at: String,
    pub question: String,
    pub retrieval_query: String,
    pub answer: String,
    pub grounded: bool,
    pub refusal_reason: Option<String>,
    /// `provider/model id` of the model that really answered.
    pub model: String,
    pub embedding_model: Option<String>,
    pub template: String,
    pub mode: String,
    pub k: i64,
    pub score_gate: f64,
    pub top_score: Option<f64>,
    pub chunks_returned: i64,
    pub chunks_used: i64,
    pub citations_json: String,
    /// What the model saw: ids, paths, lines, text.
    pub packed_chunks_json: String,
    pub prompt_tokens: Option<u32>,
    pub completion_tokens: Option<u32>,
    /// The provider reported no counts; these are kebab's estimates.
    pub usage_estimated: bool,
    pub latency_ms: i64,
    pub conversation_id: Option<i64>,
    pub turn_index: Option<i64>,
    pub hops_json: Option<String>,
    pub verification_json: Option<String>,
    pub explain_json: Option<String>,
}

impl AnswerRow {
    fn insert(&self, conn: &Connection) -> rusqlite::Result<i64> {
        let sql = format!(
            "INSERT INTO answers({}) VALUES ({})",
            COLUMNS.trim_start_matches("id, "),
            COLUMNS.trim_start_matches("id, ").split(", ").map(|c| format!(":{c}")).collect::<Vec<_>>().join(", ")
        );
        conn.prepare_cached(&sql)?.execute(named_params! {
            ":created_at": self.created_at,
            ":question": self.question,
            ":retrieval_query": self.retrieval_query,
            ":answer": self.answer,
            ":grounded": self.grounded,
            ":refusal_reason": self.refusal_reason,
            ":model": self.model,
            ":embedding_model": self.embedding_model,
            ":template": self.template,
            ":mode": self.mode,
            ":k": self.k,
            ":score_gate": self.score_gate,
            ":top_score": self.top_score,
            ":chunks_returned": self.chunks_returned,
            ":chunks_used": self.chunks_used,
            ":citations_json": self.citations_json,
            ":packed_chunks_json": self.packed_chunks_json,
            ":prompt_tokens": self.prompt_tokens,
            ":completion_tokens": self.completion_tokens,
            ":usage_estimated": self.usage_estimated,
            ":latency_ms": self.latency_ms,
            ":conversation_id": self.conversation_id,
            ":turn_index": self.turn_index,
            ":hops_json": self.hops_json,
            ":verification_json": self.verification_json,
            ":explain_json": self.explain_json,
        })?;
        Ok(conn.last_insert_rowid())
    }

    pub(super) fn from_row(r: &Row) -> rusqlite::Result<AnswerRow> {
        Ok(AnswerRow {
            id: r.get("id")?,
            created_at: r.get("created_at")?,
            question: r.get("question")?,
            retrieval_query: r.get("retrieval_query")?,
            answer: r.get("answer")?,
            grounded: r.get("grounded")?,
            refusal_reason: r.get("refusal_reason")?,
            model: r.get("model")?,
            embedding_model: r.get("embedding_model")?,
            template: r.get("template")?,
            mode: r.get("mode")?,
            k: r.get("k")?,
            score_gate: r.get("score_gate")?,
            top_score: r.get("top_score")?,
            chunks_returned: r.get("chunks_returned")?,
            chunks_used: r.get("chunks_used")?,
            citations_json: r.get("citations_json")?,
            packed_chunks_json: r.get("packed_chunks_json")?,
            prompt_tokens: r.get("prompt_tokens")?,
            completion_tokens: r.get("completion_tokens")?,
            usage_estimated: r.get("usage_estimated")?,
            latency_ms: r.get("latency_ms")?,
            conversation_id: r.get("conversation_id")?,
            turn_index: r.get("turn_index")?,
            hops_json: r.get("hops_json")?,
            verification_json: r.get("verification_json")?,
            explain_json: r.get("explain_json")?,
        })
    }
}

/// The turn an answer is saved as, when the ask is part of a conversation.
pub struct NewTurn<'a> {
    pub conversation_id: i64,
    /// The conversation's title if it has none yet (its first question, shortened).
    pub title: &'a str,
}

/// Where a saved answer went.
pub struct Saved {
    pub answer_id: i64,
    /// The turn's index in its conversation, when it is a turn.
    pub turn_index: Option<i64>,
}

impl Store {
    /// Saves `row` — and, for a turn, the turn pointing at it — in one
    /// transaction: a crash leaves both or neither, never half a turn.
    pub fn save_answer(&self, row: &AnswerRow, turn: Option<NewTurn>) -> Result<Saved> {
        self.ensure_writable()?;
        // IMMEDIATE: take the write lock before reading the next turn index, so two
        // processes appending to one conversation cannot pick the same index.
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate).context("saving the answer")?;
        let mut row = row.clone();
        let turn_index = match &turn {
            Some(t) => {
                super::conversations::still_there(&tx, t.conversation_id)?;
                Some(super::conversations::next_turn_index(&tx, t.conversation_id)?)
            }
            None => None,
        };
        row.conversation_id = turn.as_ref().map(|t| t.conversation_id);
        row.turn_index = turn_index;
        row.id = row.insert(&tx).context("saving the answer")?;
        if let Some(t) = &turn {
            super::conversations::insert_turn(&tx, &row, t, &now_rfc3339()).context("saving the turn")?;
        }
        tx.commit().context("saving the answer")?;
        Ok(Saved { answer_id: row.id, turn_index })
    }
}

/// The columns for a SELECT that reads `AnswerRow`s from `answers` aliased as `alias`.
pub(super) fn select_list(alias: &str) -> String {
    COLUMNS.split(", ").map(|c| format!("{alias}.{c}")).collect::<Vec<_>>().join(", ")
}
