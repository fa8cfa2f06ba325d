//! The REPL: one research conversation at a time. Each line is a question (a
//! turn of the current session, expanded with the previous answer, streamed
//! as it is written) or a `:command` from the table in `commands`.
//!
//! On a terminal it is a rustyline editor (Tab completion, history kept in the
//! data dir, bracketed paste so a multi-line paste is one question, Ctrl-C
//! clearing the line). With stdin not a terminal it reads one question or
//! command per line, echoes it after the prompt so the output reads as a
//! transcript, prints plain text and exits at end of input.

pub mod commands;
mod helper;
mod piped;

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;
use rustyline::error::ReadlineError;


use crate::rag::{AskOptions, Kb, Open, Opener};
use crate::render::answer::{Shown, Streamer, ctrl_c_flag, print_explain, print_outcome, print_saved_sources, session_line, turn_summary};
use crate::render::{ColorChoice, Output, human_bytes};
use crate::script::{one_line, printable};
use crate::search::Mode;
use crate::session::{self, Conversation, export};
use commands::{Parsed, SessionCmd};

/// The REPL's state: the knowledge base and the session being held.
pub struct Repl {
    out: Output,
    /// Its engine holds the loaded vectors from one question to the next.
    kb: Kb,
    /// The current session's name; the conversation row is created with its first turn.
    name: String,
    /// `name` is a `session-N` the REPL picked, not one the user gave: if
    /// another process takes it before the first question, another is picked.
    picked: bool,
    conversation: Option<Conversation>,
    mode: Mode,
    k: Option<usize>,
    /// Ask the next questions multi-hop (`:multihop on`).
    multi_hop: bool,
    /// The last answer when it was not saved (read-only data), so `:cite`
    /// and `:explain` show it rather than an older saved turn.
    unsaved: Option<session::Turn>,
    cancel: Arc<AtomicBool>,
    /// Opens the knowledge base again when its file is deleted or replaced.
    open: Opener,
}

enum Flow {
    Continue,
    Quit,
}

impl Repl {
    /// `session`: the one to open (created with its first turn); otherwise a new `session-N`.
    /// `open` opens the knowledge base as `kb` was opened.
    pub fn new(out: Output, kb: Kb, mode: Mode, session: Option<&str>, open: Opener) -> Result<Repl> {
        let (name, conversation) = match session {
            Some(n) => {
                let found = session::find_or_check_new(&kb.store, n)?;
                (session_name(n, found.as_ref()), found)
            }
            None => (session::create_name(&kb.store)?, None),
        };
        let cancel = ctrl_c_flag();
        let picked = session.is_none();
        Ok(Repl { out, kb, name, picked, conversation, mode, k: None, multi_hop: false, unsaved: None, cancel, open })
    }

    fn prompt(&self) -> String {
        format!("kebab[{}]> ", self.name)
    }

    /// One line: size of the notes, the model and the mode.
    fn banner(&self) -> Result<String> {
        let docs = self.kb.store.document_count()?;
        let chunks = self.kb.store.chunk_count()?;
        let bytes = std::fs::metadata(self.kb.store.path()).map(|m| m.len()).unwrap_or(0);
        Ok(format!(
            "kebab {} · {}, {} ({}) · model {}/{} · mode {} · :help for commands",
            env!("CARGO_PKG_VERSION"),
            crate::render::count(docs, "document"),
            crate::render::count(chunks, "chunk"),
            human_bytes(bytes),
            self.kb.model.provider(),
            self.kb.model.id(),
            self.mode.as_str()
        ))
    }

    /// Handles one line; errors are printed, never fatal.
    fn handle(&mut self, line: &str) -> Flow {
        // A multi-line paste is one question, joined as `kebab ask -` joins a
        // piped one, so the saved question (`:history`, `sessions list`)
        // reads as a line, not with `\n` inside.
        let joined;
        let line = if line.contains(['\n', '\r']) {
            joined = crate::script::one_question(line);
            joined.as_str()
        } else {
            line.trim()
        };
        if line.is_empty() {
            return Flow::Continue;
        }
        let result = self.follow_index().and_then(|()| {
            if line.starts_with(':') {
                match commands::parse(line) {
                    Ok(cmd) => self.follow_name("a question here starts it again").and_then(|()| self.command(cmd)),
                    Err(msg) => {
                        self.say_error(&msg, None);
                        Ok(Flow::Continue)
                    }
                }
            } else {
                self.ask(line).map(|_| Flow::Continue)
            }
        });
        result.unwrap_or_else(|err| {
            let failure = crate::render::failure::classify_for(&err, crate::render::hint::FrontEnd::Repl);
            self.say_error(&failure.doc.message, failure.doc.hint.as_deref());
            Flow::Continue
        })
    }

    fn say_error(&self, message: &str, hint: Option<&str>) {
        for line in self.error_lines(message, hint) {
            let _ = self.out.line(line);
        }
    }

    /// `error: …` and, when there is one, `hint: …`, painted.
    fn error_lines(&self, message: &str, hint: Option<&str>) -> Vec<String> {
        let s = owo_colors::Style::new();
        let mut lines = vec![format!("{} {}", self.out.paint("error:", s.red().bold()), printable(message))];
        if let Some(h) = hint {
            lines.push(format!("{} {}", self.out.paint("hint:", s.cyan()), printable(&self.out.as_run(h))));
        }
        lines
    }

    fn ask(&mut self, question: &str) -> Result<()> {
        let readonly = self.kb.store.is_readonly();
        // A question refused outright creates no session.
        self.kb.check_length(question)?;
        self.follow_name("this question starts it again")?;
        if self.conversation.is_none() && !readonly {
            let c = if self.picked {
                session::create_fresh(&self.kb.store, &self.name)?
            } else {
                session::open_or_create(&self.kb.store, &self.name)?
            };
            if c.name != self.name {
                self.out.notice(format!("{} was started by another process meanwhile: this conversation is {}", self.name, c.name));
                self.name = c.name.clone();
            }
            self.conversation = Some(c);
        }
        let turn = match &self.conversation {
            Some(c) => Some(session::turn_of(&self.kb.store, c, !readonly)?),
            None => None,
        };
        let opts = AskOptions { mode: self.mode, k: self.k, multi_hop: self.multi_hop, turn, ..AskOptions::new(question) };
        self.cancel.store(false, Ordering::SeqCst);
        let mut streamer = Streamer::new(true);
        let outcome = self.kb.ask(&opts, &mut |piece| streamer.piece(piece), &self.cancel);
        let outcome = streamer.finish(&self.out, outcome)?;
        self.unsaved = outcome.answer_id.is_none().then(|| session::Turn {
            turn_index: -1,
            question: question.to_string(),
            retrieval_query: outcome.answer.retrieval.retrieval_query.clone(),
            created_at: outcome.answer.created_at.clone(),
            answer: outcome.answer.clone(),
            packed: outcome.explain.packing.entries.clone(),
            answer_id: 0,
            explain: Some(outcome.explain.record()),
            forked_from: None,
            deleted: Vec::new(),
        });
        let mut notes = Vec::new();
        if let Some(err) = &outcome.error {
            let lead = crate::rag::generate::failure_lead(err, outcome.answer_id.is_some());
            notes.extend(self.error_lines(&format!("{lead}: {err}"), err.hint().as_deref()));
        } else if self.cancel.swap(false, Ordering::SeqCst) {
            // Saved as `llm_stream_aborted` with the text that came, which may be none at all.
            let note = match (streamer.streamed, outcome.answer_id.is_some()) {
                (false, true) => "stopped before the model wrote anything: the question is kept as this turn, unanswered",
                (false, false) => "stopped before the model wrote anything",
                (true, true) => "stopped: the partial answer is kept as this turn",
                (true, false) => "stopped: the partial answer is not saved (read-only)",
            };
            notes.push(format!("({note})"));
        }
        print_outcome(&self.out, &outcome, &Shown { streamed: streamer.streamed, explain: false, notes: &notes })
    }

    /// Another process may have deleted the database, or replaced it with a
    /// new index (`rm kebab.db`, an ingest into an emptied data dir): the
    /// open file is then one no other kebab sees, its answers stale and its
    /// turns lost. The one there now is opened, as a REPL started now would
    /// (a deleted one is made anew), and what became of the session is said.
    fn follow_index(&mut self) -> Result<()> {
        let path = self.kb.store.path().display().to_string();
        let lead = format!("{path} was deleted or replaced while the REPL ran");
        match self.kb.reopen_if_replaced(&self.open, Open::Create) {
            Ok(false) => return Ok(()),
            Ok(true) => {}
            Err(e) => {
                self.out.notice(format!("{lead}, and cannot be opened again:"));
                return Err(e);
            }
        }
        // The session held, and an unsaved answer, belong to the old file.
        self.unsaved = None;
        self.conversation = session::find(&self.kb.store, &self.name)?;
        let docs = self.kb.store.document_count()?;
        let holds = match docs {
            0 => "which indexes nothing yet (`kebab ingest PATH` indexes notes into it)".to_string(),
            n => format!("with {}", crate::render::count(n, "document")),
        };
        let held = match &self.conversation {
            Some(c) => format!("goes on there with {}", session::turns_phrase(session::turn_count(&self.kb.store, c.id)?)),
            None => "starts anew there".to_string(),
        };
        self.out.notice(format!("{lead}: it now reads the one there, {holds}; session {} {held}", self.name));
        Ok(())
    }

    /// Another process may have removed or renamed the session held: follow
    /// the name (commands too: `:session export` wrote "0 turns" of a removed
    /// session), and say what became of the one held.
    fn follow_name(&mut self, then: &str) -> Result<()> {
        let Some(held) = self.conversation.as_ref().map(|c| c.id) else {
            return Ok(());
        };
        let now = session::find(&self.kb.store, &self.name)?;
        if now.as_ref().map(|n| n.id) == Some(held) {
            return Ok(());
        }
        if now.is_none() {
            let renamed = session::list(&self.kb.store)?.into_iter().find(|s| s.conversation.id == held);
            let what = match renamed.map(|s| s.conversation.name) {
                Some(new) => format!("was renamed {new} by another process (`:session {new}` goes on in it)"),
                None => "was removed by another process".to_string(),
            };
            self.out.notice(format!("session {} {what}: {then}", self.name));
        }
        self.conversation = now;
        Ok(())
    }

    fn command(&mut self, cmd: Parsed) -> Result<Flow> {
        match cmd {
            Parsed::Help => self.out.line(commands::help())?,
            Parsed::Quit => return Ok(Flow::Quit),
            Parsed::Explain => match self.last_turn()? {
                Some(t) => match &t.explain {
                    Some(e) => print_explain(&self.out, &t.answer, e)?,
                    None => self.out.line("this answer was saved without explain details")?,
                },
                None => self.out.line("no answer yet in this session")?,
            },
            Parsed::Cite(n) => self.cite(n)?,
            Parsed::History => {
                let turns = match &self.conversation {
                    Some(c) => session::turns(&self.kb.store, c.id)?,
                    None => Vec::new(),
                };
                if turns.is_empty() {
                    self.out.line("no questions yet in this session")?;
                }
                for t in &turns {
                    self.out.line(turn_summary(t))?;
                }
            }
            // The mode questions are asked in: the one resolved (lexical when hybrid could not run), not the one asked for.
            Parsed::Mode(None) => self.out.line(format!("mode {}", self.mode.as_str()))?,
            Parsed::Mode(Some(m)) => {
                self.mode = self.kb.engine.resolve(&self.kb.store, m, true)?.0;
                self.out.line(format!("mode {}", m.as_str()))?;
            }
            // The k questions are asked with: the one set, else the config's (`search.default_k`).
            Parsed::K(None) => self.out.line(format!("k {}", self.k.unwrap_or(self.kb.cfg.search.default_k)))?,
            Parsed::K(Some(k)) => {
                self.k = Some(k);
                self.out.line(format!("k {k}"))?;
            }
            Parsed::Session(s) => self.session(s)?,
            Parsed::Fork { name, at } => self.fork(name.as_deref(), at)?,
            Parsed::Find(query) => {
                let hits = session::search(&self.kb.store, &query, 20)?;
                if hits.is_empty() {
                    self.out.line(format!("no past turn matches {:?}", one_line(&query)))?;
                }
                for hit in &hits {
                    for line in crate::render::sessions::hit_lines(hit) {
                        self.out.line(line)?;
                    }
                }
            }
            Parsed::MultiHop(None) => self.out.line(format!("multihop {}", if self.multi_hop { "on" } else { "off" }))?,
            Parsed::MultiHop(Some(on)) => {
                if on {
                    crate::rag::multihop::check_model(self.kb.model.as_ref())?;
                }
                self.multi_hop = on;
                let what = if on { "on: the next questions are split into sub-questions, searched in rounds, then answered" } else { "off" };
                self.out.line(format!("multihop {what}"))?;
            }
        }
        Ok(Flow::Continue)
    }

    fn last_turn(&self) -> Result<Option<session::Turn>> {
        if let Some(t) = &self.unsaved {
            return Ok(Some(t.clone()));
        }
        match &self.conversation {
            Some(c) => session::last_turn(&self.kb.store, c.id),
            None => Ok(None),
        }
    }

    fn cite(&self, n: Option<usize>) -> Result<()> {
        let Some(t) = self.last_turn()? else {
            return self.out.line("no answer yet in this session").map_err(Into::into);
        };
        let cited = |chunk_id: i64| t.answer.citations.iter().any(|c| c.chunk_id == chunk_id);
        let Some(n) = n else {
            // The cited sources first, then the rest of what the model was shown.
            if t.answer.citations.is_empty() {
                self.out.line("the last answer cites no sources")?;
            }
            print_saved_sources(&self.out, &t.answer, &t.deleted)?;
            let rest: Vec<_> = t.packed.iter().filter(|p| !cited(p.chunk_id)).collect();
            if !rest.is_empty() {
                self.out.line("also shown to the model, not cited:")?;
            }
            for p in rest {
                self.out.line(format!("  [#{}] {}", p.n, self.out.location(&p.doc_path, p.line_start, p.line_end)))?;
            }
            return Ok(());
        };
        let Some(p) = t.packed.iter().find(|p| p.n == n) else {
            let msg = match t.packed.len() {
                0 => "the last answer had no evidence".to_string(),
                len => format!("there is no source {n}; the last answer's evidence is numbered 1–{len}"),
            };
            return self.out.line(msg).map_err(Into::into);
        };
        let stale = self.kb.store.chunks_by_ids(&[p.chunk_id])?.is_empty();
        let mut head = format!("[{n}] {}", self.out.location(&p.doc_path, p.line_start, p.line_end));
        if !p.heading_path.is_empty() {
            head.push_str(&format!(" · {}", one_line(&p.heading_path.join(" > "))));
        }
        if stale && !self.kb.store.document_indexed(&p.doc_path)? {
            head.push_str(" (the note was deleted since; this is the text the answer saw)");
        } else if stale {
            head.push_str(" (the note changed since; this is the text the answer saw)");
        }
        let attributed = t.answer.citations.iter().any(|c| c.chunk_id == p.chunk_id && c.origin == crate::rag::answer::Origin::Attributed);
        if !cited(p.chunk_id) {
            self.out.line(format!("[#{n}] was shown to the model but not cited"))?;
        } else if attributed {
            self.out.line(format!("[{n}*] attributed by kebab: the model did not cite this source, kebab found its sentences there"))?;
        }
        self.out.line(head)?;
        self.out.line(printable(&p.text))?;
        Ok(())
    }

    fn session(&mut self, cmd: SessionCmd) -> Result<()> {
        match cmd {
            SessionCmd::Current => {
                let turns = match &self.conversation {
                    Some(c) => session::turn_count(&self.kb.store, c.id)?,
                    None => 0,
                };
                self.out.line(format!("session {} ({})", self.name, session::turns_phrase(turns)))?;
            }
            SessionCmd::Switch(name) => self.switch(name)?,
            SessionCmd::New(name) => {
                let c = session::create(&self.kb.store, name.as_deref())?;
                // The REPL starts in a `session-N` not made until its first
                // question: `:session new` there makes that very session, and
                // "new session session-1" under `kebab[session-1]>` read as a move.
                if self.conversation.is_none() && c.name == self.name {
                    self.out.line(format!("already in new session {} (0 turns)", c.name))?;
                } else {
                    self.out.line(format!("new session {}", c.name))?;
                }
                self.name = c.name.clone();
                self.picked = false;
                self.unsaved = None;
                self.conversation = Some(c);
            }
            SessionCmd::List => {
                let all = session::list(&self.kb.store)?;
                if all.is_empty() {
                    self.out.line("no saved sessions yet")?;
                }
                for s in &all {
                    let mark = if s.conversation.name == self.name { "*" } else { " " };
                    self.out.line(format!("{mark} {}", session_line(s)))?;
                }
            }
            SessionCmd::Rm(name) => {
                // Both in NFC: the current name may be one an older kebab stored as typed.
                if session::canonical_name(&name) == session::canonical_name(&self.name) {
                    return Err(crate::error::UserError::new("bad_input", "cannot remove the session you are in")
                        .with_hint("switch to another session first (`:session new`)")
                        .into());
                }
                let turns = session::remove(&self.kb.store, &name)?;
                self.out.line(format!("removed session {name} ({})", session::turns_phrase(turns)))?;
            }
            SessionCmd::Export(file) => {
                // `:session new` makes the session at once: one with no turns is as empty as one not made yet.
                let doc = self.conversation.clone().map(|c| session::document(&self.kb.store, c)).transpose()?;
                let Some(doc) = doc.filter(|d| !d.turns.is_empty()) else {
                    return self.out.line("nothing to export: this session has no turns yet").map_err(Into::into);
                };
                let file = match file {
                    Some(f) => f,
                    None => export::default_file(&self.name)?,
                };
                export::refuse_database(&self.kb.store, Path::new(&file), &self.name)?;
                std::fs::write(&file, export::markdown(&doc)).map_err(|e| {
                    crate::error::UserError::new("bad_input", format!("cannot write {file}: {e}"))
                        .with_hint("give :session export a file name in a folder that exists and that you may write")
                })?;
                self.out.line(format!("exported {} to {file}", session::turns_phrase(doc.turns.len() as i64)))?;
            }
        }
        Ok(())
    }

    /// Forks the current session and goes on in the fork.
    fn fork(&mut self, name: Option<&str>, at: Option<i64>) -> Result<()> {
        if self.conversation.is_none() {
            return self.out.line("no turns yet in this session to fork").map_err(Into::into);
        }
        let forked = session::fork(&self.kb.store, &self.name, name, at)?;
        let c = forked.conversation;
        let turns = session::turns_phrase(forked.turns);
        self.out.line(format!("forked {turns} of {} into {}; now in {}", self.name, c.name, c.name))?;
        self.name = c.name.clone();
        self.picked = false;
        self.unsaved = None;
        self.conversation = Some(c);
        Ok(())
    }

    fn switch(&mut self, name: String) -> Result<()> {
        let found = session::find_or_check_new(&self.kb.store, &name)?;
        let turns = match &found {
            Some(c) => session::turn_count(&self.kb.store, c.id)?,
            None => 0,
        };
        let what = if found.is_some() { "switched to" } else { "new" };
        self.name = session_name(&name, found.as_ref());
        self.out.line(format!("{what} session {} ({})", self.name, session::turns_phrase(turns)))?;
        self.picked = false;
        // The unsaved answer belongs to the session left.
        self.unsaved = None;
        self.conversation = found;
        Ok(())
    }
}

/// The name the REPL holds for session `typed`: the found session's own (an
/// older kebab may have stored it in another spelling than typed), else the
/// NFC form it will be made in, so the prompt and `:session list` agree.
fn session_name(typed: &str, found: Option<&session::Conversation>) -> String {
    found.map_or_else(|| session::canonical_name(typed), |c| c.name.clone())
}

/// Runs the REPL until `:quit`, Ctrl-D or end of input. Returns the exit code.
pub fn run(mut repl: Repl, note: Option<String>, history_file: &Path) -> Result<i32> {
    // Said piped too (on stderr, off the transcript): a script's turns are not saved either.
    let readonly = repl.kb.store.is_readonly().then_some("read-only: turns are not saved, so follow-ups do not see earlier answers");
    if !std::io::stdin().is_terminal() {
        if repl.out.color == ColorChoice::Auto {
            repl.out.color = ColorChoice::Never;
        }
        // Once: the database opened again (`follow_index`) says only what is new.
        for n in note.into_iter().chain(readonly.map(String::from)) {
            repl.out.notice_once(n);
        }
        return piped::piped(repl);
    }
    repl.out.notice(repl.banner()?);
    for n in note.into_iter().chain(readonly.map(String::from)) {
        repl.out.notice_once(n);
    }
    let config = rustyline::Config::builder()
        .max_history_size(5000)?
        .auto_add_history(false)
        .bracketed_paste(true)
        .completion_type(rustyline::CompletionType::List)
        .build();
    let mut editor: rustyline::Editor<helper::Helper, rustyline::history::DefaultHistory> =
        rustyline::Editor::with_config(config)?;
    editor.set_helper(Some(helper::Helper::new(repl.kb.store.path().to_path_buf())));
    // A missing history file is the first run, not an error.
    let _ = editor.load_history(history_file);
    loop {
        match editor.readline(&repl.prompt()) {
            Ok(line) => {
                if !line.trim().is_empty() {
                    let _ = editor.add_history_entry(line.trim());
                    if let Err(e) = editor.append_history(history_file) {
                        repl.out.warn(format!("cannot save input history to {}: {e}", history_file.display()));
                    }
                }
                if let Flow::Quit = repl.handle(&line) {
                    break;
                }
            }
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(0)
}
