//! Persist: one `answers` row for every ask — answered, refused or aborted —
//! with the packed evidence, so any turn can be explained and cited later.
//! A turn of a conversation is written with its answer in one transaction:
//! a crash leaves both or neither, never half a turn.

use anyhow::{Context, Result};
use rusqlite::{Connection, Transaction, TransactionBehavior, params};

use super::answer::Answer;
use super::pack::Packed;
use crate::store::{Store, now_rfc3339};

pub struct Saved {
    pub answer_id: i64,
    /// The turn's index in its conversation, when it is a turn.
    pub turn_index: Option<i64>,
}

pub fn persist(
    store: &Store,
    a: &Answer,
    question: &str,
    packed: &[Packed],
    explain_json: &str,
    hops_json: Option<&str>,
    conversation_id: Option<i64>,
) -> Result<Saved> {
    // IMMEDIATE: take the write lock before reading the next turn index, so two
    // processes appending to one conversation cannot pick the same index.
    let tx = Transaction::new_unchecked(store.conn(), TransactionBehavior::Immediate).context("saving the answer")?;
    let turn_index = match conversation_id {
        Some(id) => Some(next_turn_index(&tx, id)?),
        None => None,
    };
    let r = &a.retrieval;
    tx.execute(
        "INSERT INTO answers(created_at, question, retrieval_query, answer, grounded, refusal_reason, model,
           embedding_model, template, mode, k, score_gate, top_score, chunks_returned, chunks_used,
           citations_json, packed_chunks_json, prompt_tokens, completion_tokens, usage_estimated, latency_ms,
           conversation_id, turn_index, hops_json, verification_json, explain_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?26, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?22, ?19,
           ?23, ?24, ?20, ?21, ?25)",
        params![
            a.created_at,
            question,
            r.retrieval_query,
            a.answer,
            a.grounded,
            a.refusal_reason,
            format!("{}/{}", a.model.provider, a.model.id),
            a.prompt_template_version,
            r.mode,
            r.k as i64,
            r.score_gate,
            r.top_score,
            r.chunks_returned as i64,
            r.chunks_used as i64,
            serde_json::to_string(&a.citations)?,
            serde_json::to_string(packed)?,
            a.usage.prompt_tokens,
            a.usage.completion_tokens,
            a.usage.latency_ms as i64,
            hops_json,
            a.verification.as_ref().map(serde_json::to_string).transpose()?,
            a.usage.estimated,
            conversation_id,
            turn_index,
            explain_json,
            a.embedding,
        ],
    )
    .context("saving the answer")?;
    let answer_id = tx.last_insert_rowid();
    if let (Some(conversation), Some(index)) = (conversation_id, turn_index) {
        let now = now_rfc3339();
        tx.execute(
            "INSERT INTO turns(conversation_id, turn_index, question, retrieval_query, answer_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![conversation, index, question, a.retrieval.retrieval_query, answer_id, now],
        )
        .context("saving the turn")?;
        tx.execute(
            "UPDATE conversations SET updated_at = ?2, title = coalesce(title, ?3) WHERE id = ?1",
            params![conversation, now, title_of(question)],
        )?;
    }
    tx.commit().context("saving the answer")?;
    Ok(Saved { answer_id, turn_index })
}

fn next_turn_index(conn: &Connection, conversation_id: i64) -> Result<i64> {
    Ok(conn.query_row(
        "SELECT coalesce(max(turn_index) + 1, 0) FROM turns WHERE conversation_id = ?1",
        [conversation_id],
        |r| r.get(0),
    )?)
}

/// A conversation's title: its first question, shortened to one line.
fn title_of(question: &str) -> String {
    crate::render::shorten(question, 80)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_one_shortened_line() {
        assert_eq!(title_of("What is\nownership?"), "What is ownership?");
        assert_eq!(title_of(&"x".repeat(100)).chars().count(), 81);
    }
}
