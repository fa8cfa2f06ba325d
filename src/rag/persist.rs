//! Persist: one `answers` row for every ask — answered, refused or aborted —
//! with the packed evidence, so any turn can be explained and cited later.
//! This stage maps an `Answer` to the row `store` owns; a turn of a
//! conversation is saved with its answer in one transaction.

use anyhow::Result;

use super::answer::{self, Answer, ModelInfo, RetrievalInfo, UsageInfo};
use super::extract;
use super::pack::Packed;
use crate::store::{AnswerRow, NewTurn, Saved, Store};

/// What is saved beside the answer itself.
pub struct Record<'a> {
    pub question: &'a str,
    pub packed: &'a [Packed],
    /// The `--explain` record and the multi-hop steps, as JSON.
    pub explain_json: String,
    pub hops_json: Option<String>,
    /// The conversation this ask is the next turn of.
    pub conversation_id: Option<i64>,
}

pub fn persist(store: &Store, a: &Answer, record: Record) -> Result<Saved> {
    let r = &a.retrieval;
    let row = AnswerRow {
        id: 0,
        created_at: a.created_at.clone(),
        question: record.question.to_string(),
        retrieval_query: r.retrieval_query.clone(),
        answer: a.answer.clone(),
        grounded: a.grounded,
        refusal_reason: a.refusal_reason.map(str::to_string),
        model: format!("{}/{}", a.model.provider, a.model.id),
        embedding_model: a.embedding.clone(),
        template: a.prompt_template_version.clone(),
        mode: r.mode.clone(),
        k: r.k as i64,
        score_gate: r.score_gate,
        top_score: r.top_score,
        chunks_returned: r.chunks_returned as i64,
        chunks_used: r.chunks_used as i64,
        citations_json: serde_json::to_string(&a.citations)?,
        packed_chunks_json: serde_json::to_string(record.packed)?,
        prompt_tokens: a.usage.prompt_tokens,
        completion_tokens: a.usage.completion_tokens,
        usage_estimated: a.usage.estimated,
        latency_ms: a.usage.latency_ms as i64,
        conversation_id: None,
        turn_index: None,
        hops_json: record.hops_json,
        verification_json: a.verification.as_ref().map(serde_json::to_string).transpose()?,
        explain_json: Some(record.explain_json),
    };
    let title = title_of(record.question);
    let turn = record.conversation_id.map(|conversation_id| NewTurn { conversation_id, title: &title });
    store.save_answer(&row, turn)
}

/// The `Answer` a saved row holds, over the evidence it saved (`packed`,
/// read from `packed_chunks_json`).
pub fn from_row(row: AnswerRow, packed: &[Packed]) -> Result<Answer> {
    // Citations are the valid markers of the answer over the saved evidence,
    // exactly as when the answer was built.
    let valid: Vec<usize> =
        extract::markers(&row.answer).iter().map(|m| m.n).filter(|&n| n >= 1 && n <= packed.len()).collect();
    let mut citations = answer::citations(&valid, packed);
    answer::add_citations(&mut citations, attributed(&row.citations_json), packed);
    let (provider, model_id) = row.model.split_once('/').unwrap_or(("", &row.model));
    let verification = row.verification_json.as_deref().map(serde_json::from_str).transpose()?;
    // Like the explain record, unreadable steps only cost `:explain` its hops.
    let hops = row.hops_json.as_deref().and_then(|h| serde_json::from_str(h).ok());
    Ok(Answer {
        schema_version: "answer.v1",
        citations,
        grounded: row.grounded,
        refusal_reason: row.refusal_reason.as_deref().map(answer::refusal_reason),
        model: ModelInfo { id: model_id.to_string(), provider: provider.to_string() },
        embedding: row.embedding_model,
        prompt_template_version: row.template,
        retrieval: RetrievalInfo {
            trace_id: format!("ans-{}", row.id),
            mode: row.mode,
            k: row.k as usize,
            score_gate: row.score_gate,
            top_score: row.top_score,
            chunks_returned: row.chunks_returned as usize,
            chunks_used: row.chunks_used as usize,
            retrieval_query: row.retrieval_query,
            respelled: Vec::new(),
        },
        usage: UsageInfo {
            prompt_tokens: row.prompt_tokens,
            completion_tokens: row.completion_tokens,
            latency_ms: row.latency_ms as u64,
            estimated: row.usage_estimated,
        },
        created_at: row.created_at,
        candidates: Vec::new(),
        verification,
        // The sentence-level judgement is not stored; the citations keep
        // their origin and support.
        attribution: None,
        conversation_id: row.conversation_id,
        turn_index: row.turn_index,
        hops,
        // Not stored: the cut is marked on the answer as it is given.
        finish: None,
        answer: row.answer,
    })
}

/// The attributed citations a row saved (`origin: "attributed"` in its
/// `citations_json`), as `(n, origin, support)`; rows from before attribution
/// have none.
fn attributed(citations_json: &str) -> Vec<(usize, answer::Origin, Option<f64>)> {
    let Ok(rows) = serde_json::from_str::<Vec<serde_json::Value>>(citations_json) else { return Vec::new() };
    rows.iter()
        .filter(|c| c.get("origin").and_then(|o| o.as_str()) == Some("attributed"))
        .filter_map(|c| {
            let marker = c.get("marker")?.as_str()?;
            let n = marker.trim_start_matches('[').trim_end_matches(']').parse().ok()?;
            Some((n, answer::Origin::Attributed, c.get("support").and_then(|s| s.as_f64())))
        })
        .collect()
}

/// A conversation's title: its first question, shortened to one line.
fn title_of(question: &str) -> String {
    crate::script::shorten(question, 80)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributed_citations_are_read_back_from_the_saved_json() {
        let json = r#"[{"marker":"[1]","origin":"model"},{"marker":"[3]","origin":"attributed","support":0.9},{"marker":"[2]"}]"#;
        assert_eq!(attributed(json), [(3, answer::Origin::Attributed, Some(0.9))]);
        assert!(attributed("not json").is_empty());
    }

    #[test]
    fn titles_are_one_shortened_line() {
        assert_eq!(title_of("What is\nownership?"), "What is ownership?");
        assert_eq!(title_of(&"x".repeat(100)).chars().count(), 81);
    }
}
