//! Sessions: named conversations and their turns, stored next to the notes.
//! Each turn points at its `answers` row, so the evidence of every turn — its
//! citations, the packed chunks, the retrieval query — survives restarts and
//! `:cite` / `:explain` work on old turns. Sessions are addressed by name and
//! created on first use. The tables belong to `store`; this module maps their
//! rows to what `session.v1` shows. A name is taken in Unicode NFC
//! (`canonical_name`) wherever it is checked, looked up or stored, so two
//! spellings of one name on screen are one session.

pub mod export;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::error::UserError;
use crate::rag::{PriorTurn, TurnOf};
use crate::rag::answer::Answer;
use crate::rag::explain::ExplainRecord;
use crate::rag::pack::Packed;
use crate::rag::persist;
use crate::store::Store;
pub use crate::store::Conversation;

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
    /// Set on a turn this session took over from another by a fork: the
    /// same answer, not asked again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<ForkedFrom>,
    /// Chunk ids of the stale citations whose note is no longer indexed at
    /// all (its file deleted, then pruned): shown as deleted, not changed.
    #[serde(skip)]
    pub deleted: Vec<i64>,
}

/// Where a forked turn came from (`session.v1` turns' `forked_from`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ForkedFrom {
    /// The session it was forked from; `null` once that session was removed.
    pub session: Option<String>,
    /// Its index there (0-based, as `turn_index`).
    pub turn_index: i64,
}

/// What `fork` made.
pub struct Forked {
    pub conversation: Conversation,
    /// How many turns the new session holds.
    pub turns: i64,
}

/// A past turn that matches a `sessions search` (`session_search.v1` hits).
#[derive(Debug, Clone, Serialize)]
pub struct TurnHit {
    pub session: String,
    pub turn_index: i64,
    pub question: String,
    /// The best-matching stretch of the question or answer, matches in «».
    pub snippet: String,
    /// The turn was taken over from another session by a fork.
    pub forked: bool,
}

/// `session_list.v1`: what `kebab sessions list --json` and the MCP
/// `sessions_list` tool return.
#[derive(Debug, Serialize)]
pub struct ListDoc {
    pub schema_version: &'static str,
    pub sessions: Vec<Summary>,
}

impl ListDoc {
    pub fn new(sessions: Vec<Summary>) -> ListDoc {
        ListDoc { schema_version: "session_list.v1", sessions }
    }
}

/// `session.v1`: a conversation with its turns and each turn's answer.
#[derive(Debug, Serialize)]
pub struct SessionDoc {
    pub schema_version: &'static str,
    #[serde(flatten)]
    pub conversation: Conversation,
    pub turns: Vec<Turn>,
}

/// What a saved turn shows where its answer would be when the model wrote
/// none (its server failed, or Ctrl-C stopped it, before any text): the
/// answer is saved empty, and a blank line read as if the output were cut off.
pub const UNANSWERED: &str = "(unanswered: the model wrote nothing before it failed or was stopped; ask the question again)";

/// "1 turn", "3 turns": how many turns a message counts.
pub fn turns_phrase(n: i64) -> String {
    crate::script::count(n, "turn")
}

/// `name` in Unicode NFC. `café` arrives as `e` + U+0301 from a macOS file
/// name pasted or some input methods, and as the one character `é` from
/// most keyboards: the mark alone is no letter, so the first was refused
/// while the second was taken, and Hangul typed as its jamo was another
/// session than the same word typed as syllables.
pub fn canonical_name(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    name.nfc().collect()
}

/// Session names are short words: letters, digits, `-`, `_` and `.`, so they
/// fit a prompt, a file name and a command line without quoting; not first
/// `-` (a flag) or `.` (a hidden file, `..`), which the hint says, since those
/// names are made of allowed characters. The name is judged in NFC
/// (`canonical_name`), the form it is stored in.
pub fn check_name(name: &str) -> Result<(), UserError> {
    let canonical = canonical_name(name);
    let ok = !canonical.is_empty()
        && canonical.chars().count() <= 64
        && !canonical.starts_with(['-', '.'])
        && canonical.chars().all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(UserError::new("bad_input", format!("{:?} is not a usable session name", name))
            .with_hint("use up to 64 letters, digits, '-', '_' or '.', starting with a letter, digit or '_', \
                        e.g. `work` or `thesis-ch2`"))
    }
}

/// The words the REPL's `:session` takes as its subcommands (`:session
/// list`): a session so named could not be switched to by `:session NAME`, so
/// none is given one anew (`check_new_name`); one an older kebab let through
/// is reached with `:session use NAME`.
pub const COMMAND_WORDS: [&str; 5] = ["list", "new", "rm", "export", "use"];

/// `check_name`, for a name a session is to be given (made, renamed or
/// forked to): not one of `COMMAND_WORDS` either.
pub fn check_new_name(name: &str) -> Result<(), UserError> {
    check_name(name)?;
    if !COMMAND_WORDS.contains(&canonical_name(name).as_str()) {
        return Ok(());
    }
    let (last, rest) = COMMAND_WORDS.split_last().expect("words");
    let words = format!("{} and {last}", rest.join(", "));
    Err(UserError::new("bad_input", format!("{name:?} cannot name a session: {words} are :session commands in the REPL"))
        .with_hint(format!("pick another name, e.g. `{name}-1`")))
}

/// The session called `name`, or none yet when `name` is fit to make one
/// (`check_new_name`): a session is made with its first turn.
pub fn find_or_check_new(store: &Store, name: &str) -> Result<Option<Conversation>> {
    check_name(name)?;
    let found = find(store, name)?;
    if found.is_none() {
        check_new_name(name)?;
    }
    Ok(found)
}

fn no_such(name: &str) -> UserError {
    UserError::new("not_found", format!("there is no session named {name:?}"))
        .with_hint("`kebab sessions list` shows the sessions there are")
}

/// The session called `name` in any spelling of it: its NFC form is the one
/// stored; a name an older kebab stored as typed, not in NFC (Hangul typed
/// as jamo), is reached by either spelling too, not shadowed by a new one.
pub fn find(store: &Store, name: &str) -> Result<Option<Conversation>> {
    let canonical = canonical_name(name);
    if let Some(c) = store.find_conversation(&canonical)? {
        return Ok(Some(c));
    }
    // ASCII is NFC whatever the spelling, so no stored name is its twin.
    if canonical.is_ascii() {
        return Ok(None);
    }
    Ok(store.conversations()?.into_iter().map(|(c, _)| c).find(|c| canonical_name(&c.name) == canonical))
}

/// The session called `name`, or an error naming it.
pub fn get(store: &Store, name: &str) -> Result<Conversation> {
    find(store, name)?.ok_or_else(|| no_such(name).into())
}

/// The session called `name`, created if it does not exist yet.
pub fn open_or_create(store: &Store, name: &str) -> Result<Conversation> {
    if let Some(c) = find_or_check_new(store, name)? {
        return Ok(c);
    }
    store.writable_for("creating a session")?;
    let name = &canonical_name(name);
    store.create_conversation(name)?;
    get(store, name)
}

/// A new, empty session: `name`, or the first free `session-N`. Whether
/// the name is free is the store's answer when it writes the row (another
/// process may take it after any look), for `create`, `rename` and `fork` alike.
pub fn create(store: &Store, name: Option<&str>) -> Result<Conversation> {
    store.writable_for("creating a session")?;
    let Some(n) = name else {
        return create_fresh(store, &create_name(store)?);
    };
    check_new_name(n)?;
    let n = &canonical_name(n);
    if !store.create_conversation(n)? {
        return Err(taken(n, format!("switch to it with `:session {n}`, or pick another name")));
    }
    get(store, n)
}

/// The error for a new name another session holds.
fn taken(name: &str, hint: String) -> anyhow::Error {
    UserError::new("exists", format!("a session named {name:?} already exists")).with_hint(hint).into()
}

/// A session made by this call: `name` (a `session-N` picked as free), or,
/// when another process made that one since it was picked, the next free
/// `session-N`. Two REPLs started without `--session` both pick `session-1`
/// before either asks; joining whichever made it first mixed their turns,
/// each follow-up searched with the other's answer.
pub fn create_fresh(store: &Store, name: &str) -> Result<Conversation> {
    store.writable_for("creating a session")?;
    let mut name = name.to_string();
    while !store.create_conversation(&name)? {
        name = create_name(store)?;
    }
    get(store, &name)
}

pub fn list(store: &Store) -> Result<Vec<Summary>> {
    Ok(store.conversations()?.into_iter().map(|(conversation, turns)| Summary { conversation, turns }).collect())
}

pub fn rename(store: &Store, old: &str, new: &str) -> Result<()> {
    check_new_name(new)?;
    let new = &canonical_name(new);
    let c = get(store, old)?;
    // Else "already exists", with a hint to remove the very session being renamed.
    if canonical_name(&c.name) == *new {
        return Err(UserError::new("bad_input", format!("session {old:?} is already called {new:?}"))
            .with_hint(format!("give the new name second: `kebab sessions rename {old} NEW`"))
            .into());
    }
    if store.rename_conversation(c.id, new)? {
        return Ok(());
    }
    // The name is taken, or the session was removed since it was read (`get` says so).
    get(store, old)?;
    Err(taken(new, format!("pick another name, or remove that session first (`kebab sessions rm {new}`)")))
}

/// Deletes a session with its turns and their answers; returns how many turns went.
pub fn remove(store: &Store, name: &str) -> Result<i64> {
    let c = get(store, name)?;
    store.remove_conversation(c.id).with_context(|| format!("removing session {name:?}"))
}

/// Forks `from` into a new session: `new`, or the first free `FROM-fork`
/// (`FROM-fork-2`, …), holding its turns up to `at` (1-based, as shown; all
/// of them when `None`) by reference to the same answers.
pub fn fork(store: &Store, from: &str, new: Option<&str>, at: Option<i64>) -> Result<Forked> {
    store.writable_for("forking a session")?;
    let source = get(store, from)?;
    let count = store.turn_count(source.id)?;
    if count == 0 {
        return Err(UserError::new("bad_input", format!("session {from:?} has no turns to fork"))
            .with_hint("ask a question in it first")
            .into());
    }
    let upto = at.unwrap_or(count);
    if !(1..=count).contains(&upto) {
        return Err(UserError::new("bad_input", format!("session {from:?} has no turn {upto}"))
            .with_hint(format!("give a turn from 1 to {count} (`:history` or `kebab sessions show {from}` numbers them)"))
            .into());
    }
    if let Some(n) = new {
        check_new_name(n)?;
    }
    loop {
        let name = match new {
            Some(n) => canonical_name(n),
            None => fork_name(store, from)?,
        };
        if let Some(turns) = store.fork_conversation(source.id, &name, upto - 1)? {
            return Ok(Forked { conversation: get(store, &name)?, turns });
        }
        // The name is taken, or the source was removed since it was read: a
        // name given is refused, one picked (free when looked at) is picked again.
        get(store, from)?;
        if new.is_some() {
            return Err(taken(&name, "pick another name for the fork".to_string()));
        }
    }
}

/// The first free `FROM-fork`, `FROM-fork-2`, …; a `session-N` when those
/// would be too long a name.
fn fork_name(store: &Store, from: &str) -> Result<String> {
    let mut i = 1;
    loop {
        let name = if i == 1 { format!("{from}-fork") } else { format!("{from}-fork-{i}") };
        if check_name(&name).is_err() {
            return create_name(store);
        }
        if find(store, &name)?.is_none() {
            return Ok(name);
        }
        i += 1;
    }
}

/// The first free `session-N`.
pub fn create_name(store: &Store) -> Result<String> {
    let mut i = 1;
    while find(store, &format!("session-{i}"))?.is_some() {
        i += 1;
    }
    Ok(format!("session-{i}"))
}

/// Past turns of every session whose question or answer match `query`, best
/// first. The query goes to FTS5 as quoted words (as `kebab search` does),
/// so no user text is read as FTS5 syntax.
pub fn search(store: &Store, query: &str, limit: usize) -> Result<Vec<TurnHit>> {
    let Some(expr) = crate::search::query::build(query).expr(crate::store::FtsIndex::Words) else {
        return Err(UserError::new("bad_input", format!("nothing to search for in {query:?}"))
            .with_hint("give a word or two that the questions or answers hold")
            .into());
    };
    Ok(store
        .search_turns(&expr, limit)?
        .into_iter()
        .map(|h| TurnHit { session: h.conversation, turn_index: h.turn_index, question: h.question, snippet: h.snippet, forked: h.forked })
        .collect())
}

pub fn turn_count(store: &Store, conversation_id: i64) -> Result<i64> {
    store.turn_count(conversation_id)
}

/// What the next turn needs of the earlier ones: questions, answers, verdicts.
pub fn prior_turns(store: &Store, conversation_id: i64) -> Result<Vec<PriorTurn>> {
    Ok(store
        .prior_turns(conversation_id)?
        .into_iter()
        .map(|p| PriorTurn { question: p.question, answer: p.answer, grounded: p.grounded })
        .collect())
}

/// What an ask needs to continue `conversation`: its earlier turns, and —
/// with `save` — the conversation to save the new turn in.
pub fn turn_of(store: &Store, conversation: &Conversation, save: bool) -> Result<TurnOf> {
    Ok(TurnOf { history: prior_turns(store, conversation.id)?, save_to: save.then_some(conversation.id) })
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
    let mut out = Vec::new();
    for (t, mut row) in store.turns(conversation_id, newest)? {
        // An unreadable explain record only costs `:explain` its details.
        let explain = row.explain_json.take().and_then(|e| serde_json::from_str(&e).ok());
        let packed: Vec<Packed> = serde_json::from_str(&row.packed_chunks_json)
            .with_context(|| format!("reading the evidence of answer {}", t.answer_id))?;
        // The turn is the conversation's view of the ask: its numbering and query win.
        row.retrieval_query = t.retrieval_query.clone();
        row.conversation_id = Some(conversation_id);
        row.turn_index = Some(t.turn_index);
        let mut answer = persist::from_row(row, &packed)?;
        let deleted = mark_stale(store, &mut answer)?;
        out.push(Turn {
            turn_index: t.turn_index,
            question: t.question,
            retrieval_query: t.retrieval_query,
            created_at: t.created_at,
            answer,
            packed,
            answer_id: t.answer_id,
            explain,
            forked_from: t.forked_from.map(|f| ForkedFrom { session: f.conversation, turn_index: f.turn_index }),
            deleted,
        });
    }
    Ok(out)
}

/// Citations whose chunk has since been re-chunked or deleted are stale.
/// Returns the chunk ids of those whose document is gone from the index too.
fn mark_stale(store: &Store, a: &mut Answer) -> Result<Vec<i64>> {
    let ids: Vec<i64> = a.citations.iter().map(|c| c.chunk_id).collect();
    let present: Vec<i64> = store.chunks_by_ids(&ids)?.iter().map(|r| r.chunk_id).collect();
    let mut deleted = Vec::new();
    for c in &mut a.citations {
        c.stale = !present.contains(&c.chunk_id);
        if c.stale && !store.document_indexed(&c.citation.path)? {
            deleted.push(c.chunk_id);
        }
    }
    Ok(deleted)
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

    #[test]
    fn a_name_is_judged_and_kept_in_nfc() {
        // `e` + U+0301 is `é` once composed; 64 such pairs are 64 letters, not 128 characters.
        assert!(check_name("cafe\u{301}").is_ok());
        assert_eq!(canonical_name("cafe\u{301}"), "caf\u{e9}");
        assert!(check_name(&"e\u{301}".repeat(64)).is_ok());
        // A mark with no letter to compose with is still no letter.
        assert!(check_name("\u{301}x").is_err());
    }

    #[test]
    fn a_name_refused_for_its_first_character_is_told_how_a_name_may_start() {
        // `.notes` and `--x` are made of allowed characters; the hint listed
        // only those, so it did not say what was wrong with them.
        for bad in [".notes", "..", "-x"] {
            let hint = check_name(bad).unwrap_err().hint.unwrap();
            assert!(hint.contains("starting with a letter, digit or '_'"), "{bad}: {hint}");
        }
    }
}
