//! Persist: one `answers` row for every ask — answered, refused or aborted —
//! with the packed evidence, so any turn can be explained and cited later.

use anyhow::{Context, Result};
use rusqlite::params;

use super::answer::Answer;
use super::pack::Packed;
use crate::store::Store;

pub fn persist(store: &Store, a: &Answer, question: &str, packed: &[Packed], hops_json: Option<&str>) -> Result<i64> {
    let r = &a.retrieval;
    store
        .conn()
        .execute(
            "INSERT INTO answers(created_at, question, retrieval_query, answer, grounded, refusal_reason, model,
               embedding_model, template, mode, k, score_gate, top_score, chunks_returned, chunks_used,
               citations_json, packed_chunks_json, prompt_tokens, completion_tokens, usage_estimated, latency_ms,
               conversation_id, turn_index, hops_json, verification_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, NULL, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?22, ?19,
               NULL, NULL, ?20, ?21)",
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
            ],
        )
        .context("saving the answer")?;
    Ok(store.conn().last_insert_rowid())
}
