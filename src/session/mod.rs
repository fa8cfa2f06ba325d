//! Sessions: named conversations and their turns, stored next to the notes.
//! Each turn points at its `answers` row, so the evidence of every turn — its
//! citations, the packed chunks, the retrieval query — survives restarts and
//! `:cite` / `:explain` work on old turns. Sessions are addressed by name and
//! created on first use.

pub mod export;

use anyhow::{Context, Result};
use rusqlite::{OptionalExtension, Row, Transaction, TransactionBehavior, params};
use serde::Serialize;

use crate::error::UserError;
use crate::config::Config;
use crate::llm::ChatModel;
use crate::rag::explain::ExplainRecord;
use crate::rag::{self, AskOptions, AskOutcome, PriorTurn, TurnOf};
use crate::rag::answer::{self, Answer, ModelInfo, RetrievalInfo, UsageInfo};
use crate::rag::extract;
use crate::rag::pack::Packed;
use crate::search::engine::Engine;
use crate::store::{Store, now_rfc3339};

#[derive(Debug, Clone, Serialize)]
pub struct Conversation {
    #[serde(skip)]
    pub id: i64,
    pub name: String,
    pub title: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// A conversation in `sessions list`.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    #[serde(flatten)]
    pub conversation: Conversation,
    pub turns: i64,
}

/// One saved turn with the answer it got.
#[derive(Debug, Clone, Serialize)]
pub struct Turn {
    pub turn_index: i64,
    pub question: String,
    pub retrieval_query: String,
    pub created_at: String,
    pub answer: Answer,
    /// The evidence the model saw, numbered as in the answer.
    #[serde(skip)]
    pub packed: Vec<Packed>,
    #[serde(skip)]
    pub answer_id: i64,
    /// What `:explain` shows, as saved with the answer.
    #[serde(skip)]
    pub explain: Option<ExplainRecord>,
}

/// `session.v1`: a conversation with its turns and each turn's answer.
#[derive(Debug, Serialize)]
pub struct SessionDoc {
    pub schema_version: &'static str,
    #[serde(flatten)]
    pub conversation: Conversation,
    pub turns: Vec<Turn>,
}

/// Session names are short words: letters, digits, `-`, `_` and `.`, so they
/// fit a prompt, a file name and a command line without quoting.
pub fn check_name(name: &str) -> Result<(), UserError> {
    let ok = !name.is_empty()
        && name.chars().count() <= 64
        && !name.starts_with(['-', '.'])
        && name.chars().all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(UserError::new("bad_input", format!("{:?} is not a usable session name", name))
            .with_hint("use up to 64 letters, digits, '-', '_' or '.', e.g. `work` or `thesis-ch2`"))
    }
}

fn no_such(name: &str) -> UserError {
    UserError::new("not_found", format!("there is no session named {name:?}"))
        .with_hint("`kebab sessions list` shows the sessions there are")
}

fn conversation_from(r: &Row) -> rusqlite::Result<Conversation> {
    Ok(Conversation { id: r.get(0)?, name: r.get(1)?, title: r.get(2)?, created_at: r.get(3)?, updated_at: r.get(4)? })
}

const CONVERSATION_COLUMNS: &str = "id, name, title, created_at, updated_at";

pub fn find(store: &Store, name: &str) -> Result<Option<Conversation>> {
    Ok(store
        .conn()
        .query_row(&format!("SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE name = ?1"), [name], conversation_from)
        .optional()?)
}

/// The session called `name`, or an error naming it.
pub fn get(store: &Store, name: &str) -> Result<Conversation> {
    find(store, name)?.ok_or_else(|| no_such(name).into())
}

/// The session called `name`, created if it does not exist yet.
pub fn open_or_create(store: &Store, name: &str) -> Result<Conversation> {
    check_name(name)?;
    if let Some(c) = find(store, name)? {
        return Ok(c);
    }
    if store.is_readonly() {
        return Err(UserError::readonly("creating a session").into());
    }
    let now = now_rfc3339();
    // OR IGNORE: another process may create the same name between the two statements.
    store
        .conn()
        .execute(
            "INSERT OR IGNORE INTO conversations(name, created_at, updated_at) VALUES (?1, ?2, ?2)",
            params![name, now],
        )
        .with_context(|| format!("creating session {name:?}"))?;
    get(store, name)
}

/// A new, empty session: `name`, or the first free `session-N`.
pub fn create(store: &Store, name: Option<&str>) -> Result<Conversation> {
    if store.is_readonly() {
        return Err(UserError::readonly("creating a session").into());
    }
    let name = match name {
        Some(n) => {
            check_name(n)?;
            if find(store, n)?.is_some() {
                return Err(UserError::new("exists", format!("a session named {n:?} already exists"))
                    .with_hint(format!("switch to it with `:session {n}`, or pick another name"))
                    .into());
            }
            n.to_string()
        }
        None => {
            let mut i = 1;
            while find(store, &format!("session-{i}"))?.is_some() {
                i += 1;
            }
            format!("session-{i}")
        }
    };
    open_or_create(store, &name)
}

pub fn list(store: &Store) -> Result<Vec<Summary>> {
    let mut stmt = store.conn().prepare(
        "SELECT c.id, c.name, c.title, c.created_at, c.updated_at,
                (SELECT count(*) FROM turns t WHERE t.conversation_id = c.id)
         FROM conversations c ORDER BY c.updated_at DESC, c.id DESC",
    )?;
    let rows = stmt.query_map([], |r| Ok(Summary { conversation: conversation_from(r)?, turns: r.get(5)? }))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub fn rename(store: &Store, old: &str, new: &str) -> Result<()> {
    check_name(new)?;
    let c = get(store, old)?;
    if find(store, new)?.is_some() {
        return Err(UserError::new("exists", format!("a session named {new:?} already exists")).into());
    }
    store.conn().execute("UPDATE conversations SET name = ?2 WHERE id = ?1", params![c.id, new])?;
    Ok(())
}

/// Deletes a session with its turns and their answers; returns how many turns went.
pub fn remove(store: &Store, name: &str) -> Result<i64> {
    let c = get(store, name)?;
    let tx = Transaction::new_unchecked(store.conn(), TransactionBehavior::Immediate)?;
    let turns: i64 = tx.query_row("SELECT count(*) FROM turns WHERE conversation_id = ?1", [c.id], |r| r.get(0))?;
    tx.execute("DELETE FROM turns WHERE conversation_id = ?1", [c.id])?;
    tx.execute("DELETE FROM answers WHERE conversation_id = ?1", [c.id])?;
    tx.execute("DELETE FROM conversations WHERE id = ?1", [c.id])?;
    tx.commit().with_context(|| format!("removing session {name:?}"))?;
    Ok(turns)
}

pub fn turn_count(store: &Store, conversation_id: i64) -> Result<i64> {
    Ok(store.conn().query_row("SELECT count(*) FROM turns WHERE conversation_id = ?1", [conversation_id], |r| r.get(0))?)
}

/// What the next turn needs of the earlier ones: questions, answers, verdicts.
pub fn prior_turns(store: &Store, conversation_id: i64) -> Result<Vec<PriorTurn>> {
    let mut stmt = store.conn().prepare_cached(
        "SELECT t.question, a.answer, a.grounded FROM turns t JOIN answers a ON a.id = t.answer_id
         WHERE t.conversation_id = ?1 ORDER BY t.turn_index",
    )?;
    let rows = stmt.query_map([conversation_id], |r| {
        Ok(PriorTurn { question: r.get(0)?, answer: r.get(1)?, grounded: r.get(2)? })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Asks `opts.question` as the next turn of `conversation`: the earlier turns
/// expand the retrieval query and go into the prompt; the turn is saved with
/// its answer (unless read-only).
#[allow(clippy::too_many_arguments)]
pub fn ask_turn(
    store: &Store,
    engine: &Engine,
    cfg: &Config,
    model: &dyn ChatModel,
    conversation: &Conversation,
    mut opts: AskOptions,
    sink: &mut dyn FnMut(&str) -> bool,
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<AskOutcome> {
    let history = prior_turns(store, conversation.id)?;
    opts.conversation = Some(TurnOf { conversation_id: conversation.id, history });
    rag::ask(store, engine, cfg, model, &opts, sink, cancel)
}

/// Every turn of a conversation with its answer, oldest first.
pub fn turns(store: &Store, conversation_id: i64) -> Result<Vec<Turn>> {
    load_turns(store, conversation_id, None)
}

/// The newest turn, if any.
pub fn last_turn(store: &Store, conversation_id: i64) -> Result<Option<Turn>> {
    Ok(load_turns(store, conversation_id, Some(1))?.pop())
}

pub fn document(store: &Store, conversation: Conversation) -> Result<SessionDoc> {
    let turns = turns(store, conversation.id)?;
    Ok(SessionDoc { schema_version: "session.v1", conversation, turns })
}

fn load_turns(store: &Store, conversation_id: i64, newest: Option<i64>) -> Result<Vec<Turn>> {
    let mut stmt = store.conn().prepare_cached(
        "SELECT t.turn_index, t.question, t.retrieval_query, t.created_at, a.id, a.answer, a.grounded,
                a.refusal_reason, a.model, a.template, a.mode, a.k, a.score_gate, a.top_score,
                a.chunks_returned, a.chunks_used, a.prompt_tokens, a.completion_tokens, a.usage_estimated,
                a.latency_ms, a.created_at, a.packed_chunks_json, a.verification_json, a.explain_json, a.embedding_model,
                a.hops_json
         FROM turns t JOIN answers a ON a.id = t.answer_id
         WHERE t.conversation_id = ?1 ORDER BY t.turn_index DESC LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![conversation_id, newest.unwrap_or(-1)], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, i64>(4)?,
            StoredAnswer {
                answer: r.get(5)?,
                grounded: r.get(6)?,
                refusal_reason: r.get(7)?,
                model: r.get(8)?,
                template: r.get(9)?,
                mode: r.get(10)?,
                k: r.get(11)?,
                score_gate: r.get(12)?,
                top_score: r.get(13)?,
                chunks_returned: r.get(14)?,
                chunks_used: r.get(15)?,
                prompt_tokens: r.get(16)?,
                completion_tokens: r.get(17)?,
                usage_estimated: r.get(18)?,
                latency_ms: r.get(19)?,
                created_at: r.get(20)?,
                packed_json: r.get(21)?,
                verification_json: r.get(22)?,
                embedding: r.get(24)?,
                hops_json: r.get(25)?,
            },
            r.get::<_, Option<String>>(23)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (turn_index, question, retrieval_query, created_at, answer_id, stored, explain) = row?;
        // An unreadable explain record only costs `:explain` its details.
        let explain = explain.and_then(|e| serde_json::from_str(&e).ok());
        let packed: Vec<Packed> = serde_json::from_str(&stored.packed_json)
            .with_context(|| format!("reading the evidence of answer {answer_id}"))?;
        let mut answer = stored.into_answer(&retrieval_query, &packed, conversation_id, turn_index, answer_id)?;
        mark_stale(store, &mut answer)?;
        out.push(Turn { turn_index, question, retrieval_query, created_at, answer, packed, answer_id, explain });
    }
    out.reverse();
    Ok(out)
}

/// Citations whose chunk has since been re-chunked or deleted are stale.
fn mark_stale(store: &Store, a: &mut Answer) -> Result<()> {
    let ids: Vec<i64> = a.citations.iter().map(|c| c.chunk_id).collect();
    let present: Vec<i64> = store.chunks_by_ids(&ids)?.iter().map(|r| r.chunk_id).collect();
    for c in &mut a.citations {
        c.stale = !present.contains(&c.chunk_id);
    }
    Ok(())
}

/// An `answers` row as read back.
struct StoredAnswer {
    answer: String,
    grounded: bool,
    refusal_reason: Option<String>,
    model: String,
    template: String,
    mode: String,
    k: i64,
    score_gate: f64,
    top_score: Option<f64>,
    chunks_returned: i64,
    chunks_used: i64,
    prompt_tokens: Option<u32>,
    completion_tokens: Option<u32>,
    usage_estimated: bool,
    latency_ms: i64,
    created_at: String,
    packed_json: String,
    verification_json: Option<String>,
    embedding: Option<String>,
    hops_json: Option<String>,
}

impl StoredAnswer {
    fn into_answer(self, retrieval_query: &str, packed: &[Packed], conversation_id: i64, turn_index: i64, id: i64) -> Result<Answer> {
        // Citations are the valid markers of the answer over the saved evidence,
        // exactly as when the answer was built.
        let valid: Vec<usize> =
            extract::markers(&self.answer).iter().map(|m| m.n).filter(|&n| n >= 1 && n <= packed.len()).collect();
        let (provider, model_id) = self.model.split_once('/').unwrap_or(("", &self.model));
        let verification = self.verification_json.as_deref().map(serde_json::from_str).transpose()?;
        // Like the explain record, unreadable steps only cost `:explain` its hops.
        let hops = self.hops_json.as_deref().and_then(|h| serde_json::from_str(h).ok());
        Ok(Answer {
            schema_version: "answer.v1",
            citations: answer::citations(&valid, packed),
            answer: self.answer,
            grounded: self.grounded,
            refusal_reason: self.refusal_reason.as_deref().map(answer::refusal_reason),
            model: ModelInfo { id: model_id.to_string(), provider: provider.to_string() },
            embedding: self.embedding,
            prompt_template_version: self.template,
            retrieval: RetrievalInfo {
                trace_id: format!("ans-{id}"),
                mode: self.mode,
                k: self.k as usize,
                score_gate: self.score_gate,
                top_score: self.top_score,
                chunks_returned: self.chunks_returned as usize,
                chunks_used: self.chunks_used as usize,
                retrieval_query: retrieval_query.to_string(),
            },
            usage: UsageInfo {
                prompt_tokens: self.prompt_tokens,
                completion_tokens: self.completion_tokens,
                latency_ms: self.latency_ms as u64,
                estimated: self.usage_estimated,
            },
            created_at: self.created_at,
            candidates: Vec::new(),
            verification,
            conversation_id: Some(conversation_id),
            turn_index: Some(turn_index),
            hops,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_names_are_short_plain_words() {
        for ok in ["work", "t1", "thesis-ch2", "a_b.c", "소유권"] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "two words", "-x", ".hidden", "a/b", "a\nb", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }
}
