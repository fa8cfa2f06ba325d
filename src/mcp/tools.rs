//! What each MCP tool does, as plain synchronous calls on the knowledge base:
//! the arguments (with the JSON schemas the client sees) and the documents
//! that come back — the same ones the CLI prints with `--json`. Bad input is
//! a `UserError`, which the server turns into an `error.v1` tool error.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use anyhow::Result;
use rmcp::schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Open;
use super::worker::State;
use crate::config::Mode;
use crate::error::UserError;
use crate::ingest::{self, FormatChoice, IngestOptions};
use crate::rag::{AskOptions, Kb};
use crate::search::{Citation, CitationKind, SearchResponse, query};
use crate::session;

/// A tool's arguments, read by kebab rather than by the SDK, so arguments
/// that do not fit the schema (a missing `query`, `"k": "many"`, an unknown
/// field) are a tool error carrying `error.v1` like every other failure. The
/// schema the client sees is `T`'s.
#[derive(Debug)]
pub struct Checked<T>(Result<T, String>);

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Checked<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        Ok(Checked(serde_json::from_value(value.clone()).map_err(|e| misfit::<T>(&value, &e.to_string()))))
    }
}

/// serde's reason an object does not fit `T`, naming the argument and in
/// JSON's words. A wrong type says neither which argument it is nor, in Rust's
/// names (`usize`, `i64`, `a sequence`), what a client should send; the
/// argument is the one whose removal changes the error (serde stops at the
/// first bad value, and reports missing fields only after every value).
fn misfit<T: serde::de::DeserializeOwned>(value: &Value, error: &str) -> String {
    let named = error.starts_with("missing field") || error.starts_with("unknown field");
    let culprit = value.as_object().filter(|_| !named).and_then(|object| {
        object.keys().find(|key| {
            let mut without = object.clone();
            without.remove(key.as_str());
            serde_json::from_value::<T>(Value::Object(without)).map_err(|e| e.to_string()).err().as_deref() != Some(error)
        })
    });
    let plain = [
        ("expected usize", "expected a whole number, 0 or more"),
        ("expected u64", "expected a whole number, 0 or more"),
        ("expected i64", "expected a whole number"),
        ("expected i128", "expected a whole number"),
        ("expected a sequence", "expected an array"),
    ]
    .iter()
    .fold(error.to_string(), |text, (rust, json)| text.replace(rust, json));
    match culprit {
        Some(key) => format!("argument `{key}`: {plain}"),
        None => plain,
    }
}

impl<T: JsonSchema> JsonSchema for Checked<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }

    fn json_schema(generator: &mut rmcp::schemars::SchemaGenerator) -> rmcp::schemars::Schema {
        T::json_schema(generator)
    }
}

impl<T> Checked<T> {
    /// The arguments, or `bad_input` naming the tool and what did not fit.
    pub fn get(self, tool: &str) -> Result<T> {
        self.0.map_err(|e| {
            UserError::new("bad_input", format!("the arguments of {tool} do not fit its schema: {e}"))
                .with_hint(format!("see {tool}'s input schema in tools/list"))
                .into()
        })
    }
}

/// A retrieval mode, as the tools' schemas list it.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(rename_all = "lowercase")]
pub enum ModeArg {
    /// BM25 over the word and trigram indexes.
    Lexical,
    /// Cosine similarity of embeddings.
    Vector,
    /// Both, fused by reciprocal rank.
    Hybrid,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::Lexical => Mode::Lexical,
            ModeArg::Vector => Mode::Vector,
            ModeArg::Hybrid => Mode::Hybrid,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to look for: words or phrases from the notes.
    pub query: String,
    /// Number of hits (at least 1) [default: search.default_k from the config].
    // Read signed and wide, so -1 is refused as 0 is and 2^64 - 1 as 10001 is
    // (`check_k`); the schema says the whole numbers that check accepts.
    #[schemars(with = "Option<usize>", range(min = 1, max = crate::config::MAX_K))]
    pub k: Option<i128>,
    /// Retrieval mode [default: search.default_mode from the config].
    pub mode: Option<ModeArg>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct AskArgs {
    /// The question, answered only from the notes with `[#n]` citations, or refused.
    pub question: String,
    /// Ask as the next turn of this named session (created on first use), so
    /// follow-up questions read the earlier turns.
    pub session: Option<String>,
    /// Retrieval mode [default: search.default_mode from the config].
    pub mode: Option<ModeArg>,
    /// Chunks to retrieve and pack (at least 1) [default: search.default_k].
    #[schemars(with = "Option<usize>", range(min = 1, max = crate::config::MAX_K))]
    pub k: Option<i128>,
}

/// `cite`: a chunk by id, or the evidence `n` of a session's turn.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct CiteArgs {
    /// A chunk id, as in a search hit's `chunk_id` or a citation's `chunk_id`.
    // Ids start at 1 (SQLite's rowids): the schema says so, where i64's allows any whole number.
    #[schemars(range(min = 1))]
    pub chunk_id: Option<i64>,
    /// With `turn` and `n`: the session whose answer cited the evidence.
    pub session: Option<String>,
    /// The turn's number in the session, from 1 (session_show's
    /// `turn_index` + 1).
    // Numbered from 1: the schema says so, where usize's says "from 0".
    #[schemars(range(min = 1))]
    pub turn: Option<usize>,
    /// The evidence number, the `n` of the answer's `[#n]` marker.
    #[schemars(range(min = 1))]
    pub n: Option<usize>,
}

/// `sessions_list` takes no arguments: one given is an unknown field, as for
/// the other tools, not silently ignored.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct SessionArgs {
    /// The session's name, as `sessions_list` shows it.
    pub name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct IngestArgs {
    /// Files or folders to index (absolute paths; relative ones are read from
    /// the folder the server was started in).
    pub paths: Vec<String>,
    /// Remove documents whose files are gone.
    #[serde(default)]
    pub prune: bool,
    /// Re-chunk every file, changed or not.
    #[serde(default)]
    pub force: bool,
}

/// `evidence.v1`: the exact text a citation points at, where it is, and
/// whether the note changed since.
#[derive(Debug, Serialize)]
struct Evidence {
    schema_version: &'static str,
    chunk_id: i64,
    citation: Citation,
    heading_path: Vec<String>,
    text: String,
    /// The chunk is no longer in the index (the note was indexed again or
    /// removed), or the note's file is gone or differs from what was indexed.
    changed_since: bool,
    /// Session form only: whether the answer cited this evidence (it may
    /// have been shown to the model without being cited).
    #[serde(skip_serializing_if = "Option::is_none")]
    cited: Option<bool>,
}

fn bad(message: impl Into<String>, hint: &str) -> anyhow::Error {
    UserError::new("bad_input", message).with_hint(hint).into()
}

/// `k` checked as the command line checks `-k` (`config::checked_k`): -1 gets
/// the words 0 gets, where serde said "0 or more" and 0 was then refused.
fn check_k(k: Option<i128>) -> Result<Option<usize>> {
    let hint = "leave k out for the configured default (search.default_k)";
    k.map(|k| crate::config::checked_k(k).map_err(|why| bad(format!("k {why}"), hint))).transpose()
}

/// The mode a call runs in: the one asked for (an error when it cannot run)
/// or the configured default (falling back to lexical, as the CLI does). The
/// fallback's reason goes to the log when it is new, not with every call.
fn mode(state: &mut State, requested: Option<ModeArg>) -> Result<Mode> {
    let kb = state.kb(Open::Existing)?;
    let want = requested.map(Mode::from).unwrap_or(kb.cfg.search.default_mode);
    let (mode, note) = kb.engine.resolve(&kb.store, want, requested.is_some())?;
    if requested.is_none() && note != state.fallback_said {
        if let Some(n) = &note {
            eprintln!("kebab mcp: {n}");
        }
        state.fallback_said = note;
    }
    Ok(mode)
}

pub fn search(state: &mut State, args: SearchArgs) -> Result<Value> {
    if query::build(&args.query).is_empty() {
        return Err(bad(
            format!("the query {:?} has no words to search for", args.query),
            "search for words or numbers; punctuation alone matches nothing",
        ));
    }
    let k = check_k(args.k)?;
    let mode = mode(state, args.mode)?;
    let kb = state.kb(Open::Existing)?;
    let k = k.unwrap_or(kb.cfg.search.default_k);
    let mode = kb.engine.mode_for(&args.query, mode);
    let (reading, respelled) = crate::search::spelling::respell(&kb.store, &args.query)?;
    let (hits, _) = kb.engine.search_traced(&kb.store, &reading, mode, k, true)?;
    let response = SearchResponse { schema_version: "search_response.v1", query: args.query, mode, hits, respelled, trace: None };
    Ok(serde_json::to_value(&response)?)
}

pub fn ask(state: &mut State, args: AskArgs, cancel: &AtomicBool) -> Result<Value> {
    if args.question.trim().is_empty() {
        return Err(bad("the question is empty", "give the question as text"));
    }
    let k = check_k(args.k)?;
    if let Some(name) = &args.session {
        session::check_name(name)?;
    }
    let mode = mode(state, args.mode)?;
    let asked_readonly = state.setup.readonly;
    let kb = state.kb(Open::Existing)?;
    let turn = match &args.session {
        // Read-only: earlier turns still give context, but nothing is created.
        Some(name) if kb.store.is_readonly() => {
            session::find(&kb.store, name)?.map(|c| session::turn_of(&kb.store, &c, false)).transpose()?
        }
        Some(name) => Some(session::turn_of(&kb.store, &session::open_or_create(&kb.store, name)?, true)?),
        None => None,
    };
    let opts = AskOptions {
        question: args.question,
        mode,
        k,
        template: None,
        temperature: None,
        seed: None,
        // The client gets the final answer, not a stream.
        stream: false,
        turn,
        multi_hop: false,
        strict_multi_hop: false,
    };
    // Not streamed: the whole answer comes back in the outcome.
    let outcome = kb.ask(&opts, &mut |_| true, cancel)?;
    if let Some(err) = outcome.error {
        let lead = crate::rag::generate::failure_lead(&err, outcome.answer_id.is_some());
        return Err(anyhow::Error::new(err).context(lead));
    }
    let mut doc = serde_json::to_value(&outcome.answer)?;
    // The command line says this on stderr, which a client does not see:
    // without it the answer looks like a saved turn that later asks in the
    // session build on.
    if let Some(name) = args.session.as_deref().filter(|_| outcome.answer.conversation_id.is_none()) {
        let why = match asked_readonly {
            true => "the server runs with --readonly (or KEBAB_READONLY)",
            false => "this process may not write the database",
        };
        doc["not_saved"] = Value::String(format!(
            "this turn was not saved to session {name:?}: {why}, so later asks in the session do not see it"
        ));
    }
    Ok(doc)
}

pub fn cite(state: &mut State, args: CiteArgs) -> Result<Value> {
    let evidence = match args {
        CiteArgs { chunk_id: Some(id), session: None, turn: None, n: None } => chunk_evidence(state.kb(Open::Existing)?, id)?,
        CiteArgs { chunk_id: None, session: Some(name), turn: Some(turn), n: Some(n) } => {
            session::check_name(&name)?;
            turn_evidence(state.kb(Open::Existing)?, &name, turn, n)?
        }
        args => return Err(cite_misfit(&args)),
    };
    Ok(serde_json::to_value(&evidence)?)
}

/// Which argument of `cite` is missing or one too many, rather than the two
/// forms alone, so the client knows what to change.
fn cite_misfit(args: &CiteArgs) -> anyhow::Error {
    let hint = "pass {\"chunk_id\": 12} from a search hit, or {\"session\": \"work\", \"turn\": 2, \"n\": 1} for [#1] of turn 2";
    let given = [("session", args.session.is_some()), ("turn", args.turn.is_some()), ("n", args.n.is_some())];
    let named = |present: bool| given.iter().filter(|(_, p)| *p == present).map(|(name, _)| format!("`{name}`")).collect::<Vec<_>>();
    let message = match (args.chunk_id.is_some(), named(true)) {
        (true, extra) => format!("cite takes chunk_id or session with turn and n, not both: leave out {}", extra.join(" and ")),
        (false, given) if given.is_empty() => "cite takes either chunk_id, or session with turn and n".to_string(),
        (false, _) => {
            let missing = named(false);
            let verb = if missing.len() == 1 { "is" } else { "are" };
            format!("cite by session needs session, turn and n: {} {verb} missing", missing.join(" and "))
        }
    };
    bad(message, hint)
}

fn chunk_evidence(kb: &Kb, id: i64) -> Result<Evidence> {
    let Some(row) = kb.store.chunks_by_ids(&[id])?.pop() else {
        return Err(UserError::new("not_found", format!("there is no chunk {id} in the index"))
            .with_hint("chunk ids come from search hits and answer citations; a note indexed again gets new ids, so search again")
            .into());
    };
    let changed_since = note_changed(kb, &row.doc_path)?;
    Ok(Evidence {
        schema_version: "evidence.v1",
        chunk_id: row.chunk_id,
        citation: citation(&row.doc_path, row.line_start, row.line_end, &row.heading_path),
        heading_path: row.heading_path,
        text: row.text,
        changed_since,
        cited: None,
    })
}

fn turn_evidence(kb: &Kb, name: &str, turn: usize, n: usize) -> Result<Evidence> {
    let conversation = session::get(&kb.store, name)?;
    let turns = session::turns(&kb.store, conversation.id)?;
    let Some(t) = turns.iter().find(|t| usize::try_from(t.turn_index).is_ok_and(|i| i + 1 == turn)) else {
        return Err(UserError::new("not_found", format!("session {name:?} has no turn {turn}; it has {}", crate::session::turns_phrase(turns.len() as i64)))
            .with_hint("turns are numbered from 1, as :history and `kebab sessions show` print them: session_show's turn_index + 1")
            .into());
    };
    let Some(p) = t.packed.iter().find(|p| p.n == n) else {
        let msg = match t.packed.len() {
            0 => format!("turn {turn} of session {name:?} had no evidence"),
            len => format!("turn {turn} of session {name:?} has no evidence {n}; its evidence is numbered 1–{len}"),
        };
        return Err(UserError::new("not_found", msg).with_hint("n is the number in the answer's [#n] markers").into());
    };
    // The text the answer saw, even when the note has changed since.
    let current = kb.store.chunks_by_ids(&[p.chunk_id])?.pop();
    let changed_since = match &current {
        None => true,
        Some(row) => note_changed(kb, &row.doc_path)?,
    };
    Ok(Evidence {
        schema_version: "evidence.v1",
        chunk_id: p.chunk_id,
        citation: citation(&p.doc_path, p.line_start, p.line_end, &p.heading_path),
        heading_path: p.heading_path.clone(),
        text: p.text.clone(),
        changed_since,
        cited: Some(t.answer.citations.iter().any(|c| c.chunk_id == p.chunk_id)),
    })
}

/// A citation as search hits and answers carry it.
fn citation(path: &str, start: u32, end: u32, heading_path: &[String]) -> Citation {
    let section = if heading_path.is_empty() { None } else { Some(heading_path.join(" > ")) };
    Citation { kind: CitationKind::of_path(path), path: path.to_string(), start, end, section }
}

/// Whether the note behind `doc_path` changed since it was indexed: its
/// file is gone or its content hash differs from the indexed one. A path
/// under no known root cannot be checked: not changed.
fn note_changed(kb: &Kb, doc_path: &str) -> Result<bool> {
    let roots = crate::render::link::roots(&kb.store)?;
    let Some(file) = crate::render::link::file_of(doc_path, &roots) else { return Ok(false) };
    let Ok(bytes) = std::fs::read(&file) else { return Ok(true) };
    let Some((root_id, _, dir)) = kb.store.root_containing(&file)? else { return Ok(false) };
    if !file.starts_with(&dir) {
        return Ok(false);
    }
    // Spelled as ingest spells it (a stray byte as `\xNN`), or a note with
    // such a name would always read as changed.
    let indexed = kb.store.source_hash(root_id, &crate::ingest::relative(&file, &dir))?;
    Ok(indexed.is_none_or(|(hash, _)| hash != blake3::hash(&bytes).to_hex().as_str()))
}

pub fn sessions_list(state: &mut State, _: NoArgs) -> Result<Value> {
    let kb = state.kb(Open::Existing)?;
    // The document `kebab sessions list --json` prints.
    Ok(serde_json::to_value(session::ListDoc::new(session::list(&kb.store)?))?)
}

pub fn session_show(state: &mut State, args: SessionArgs) -> Result<Value> {
    // A name no session can have is bad input, with what a name may hold,
    // as on the command line; looked up, it was only "no session named".
    session::check_name(&args.name)?;
    let kb = state.kb(Open::Existing)?;
    let doc = session::document(&kb.store, session::get(&kb.store, &args.name)?)?;
    Ok(serde_json::to_value(&doc)?)
}

pub fn ingest(state: &mut State, args: IngestArgs) -> Result<Value> {
    // Refused up front, as `kebab ingest --readonly` is.
    if state.setup.readonly {
        return Err(UserError::readonly("the ingest tool").into());
    }
    if args.paths.is_empty() {
        return Err(bad("the ingest tool needs at least one path", "pass {\"paths\": [\"/home/me/notes\"]}"));
    }
    // A relative path is read from the server's working directory, which the
    // client neither chose nor sees: one not found there says where that is.
    for p in &args.paths {
        if let Err(e) = std::fs::metadata(p)
            && Path::new(p).is_relative()
        {
            let cwd = std::env::current_dir().map_or_else(|e| format!("which cannot be read ({e})"), |d| d.display().to_string());
            return Err(bad(
                format!("cannot ingest {p:?}: {e}; relative paths are read from the server's working directory, {cwd}"),
                "pass an absolute path, e.g. {\"paths\": [\"/home/me/notes\"]}",
            ));
        }
    }
    let config_dir = state.setup.config_dir.clone();
    let kb = state.kb(Open::Create)?;
    kb.store.writable_for("the ingest tool")?;
    let opts = IngestOptions {
        paths: args.paths.iter().map(PathBuf::from).collect(),
        format: FormatChoice::Auto,
        prune: args.prune,
        force: args.force,
        // Its schema has no format: the reasons say what a client can do instead.
        format_flag: false,
    };
    let summary = ingest::run(&mut kb.store, &kb.cfg, &config_dir, &opts, &mut |_| {})?;
    if let Some(e) = ingest::nothing_ingested(&summary) {
        // The command line printed each reason as it went; a client sees only
        // this error, so it names the files and why (the first few). One file
        // and its reason the error names already.
        const SHOWN: usize = 5;
        let skipped = &summary.skipped_files;
        let hint = skipped_hint(skipped);
        if skipped.len() == 1 {
            // The tool's hint is its own: what the reason says to do goes back into the message.
            let message = match e.hint {
                Some(fix) => format!("{}; {fix}", e.message),
                None => e.message,
            };
            return Err(UserError::new(e.code, message).with_hint(hint).into());
        }
        let mut reasons: Vec<String> = skipped.iter().take(SHOWN).map(|s| format!("{}: {}", s.path, s.reason)).collect();
        if skipped.len() > SHOWN {
            reasons.push(format!("and {} more (kebab ingest on the command line lists them all)", skipped.len() - SHOWN));
        }
        return Err(UserError::new(e.code, format!("{}: {}", e.message, reasons.join("; "))).with_hint(hint).into());
    }
    // The embedder the knowledge base already holds (loaded once), not a second one.
    let embedding = match kb.engine.embedder() {
        Some(model) => Some(ingest::embed::embed_missing(&kb.store, model, args.force, &mut |_, _| {})?),
        None => None,
    };
    Ok(serde_json::to_value(ingest::IngestDoc { summary: &summary, embedding: embedding.as_ref() })?)
}

/// What to do about the paths an ingest skipped: a file is fixed or
/// converted; a folder (one that could not be listed, or holds no file kebab
/// reads) has nothing to convert, and needs notes kebab can read.
fn skipped_hint(skipped: &[ingest::Skipped]) -> String {
    let folders = skipped.iter().filter(|s| s.folder).count();
    let files = skipped.len() - folders;
    let one = |n: usize, one: &'static str, many: &'static str| if n == 1 { one } else { many };
    let says = one(skipped.len(), "its reason says", "their reasons say");
    let fix = format!("fix or convert the {} named", one(files, "file", "files"));
    let give = format!("give the {} named notes kebab can read, as {says}", one(folders, "folder", "folders"));
    let what = match (files, folders) {
        (_, 0) => fix,
        (0, _) => give,
        _ => format!("{fix} and {give}"),
    };
    format!("{what} (or leave {} out), then call ingest again", one(skipped.len(), "it", "them"))
}
