//! The command line: flags shared by every command, the subcommands (one file
//! each), and turning an outcome into an exit code. `main.rs` calls `main`.

mod ask;
mod completions;
mod config_cmd;
mod docs;
mod doctor;
mod eval;
mod ingest;
mod init;
mod mcp;
mod models;
pub mod progress;
mod repl;
mod search;
mod sessions;
mod stats;
mod watch;

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::{Parser, Subcommand};

use crate::config::{Config, Paths};
use crate::error::{self, ErrorDoc};
use crate::rag::{Kb, Open, Opener};
use crate::render::{ColorChoice, Output};
use crate::search::Mode;
use crate::search::engine::Engine;
use crate::store::{ReadOnly, Store};

#[derive(Debug, Parser)]
#[command(name = "kebab", version, about = "A local-first knowledge base you talk to: index your notes, search them.")]
pub struct Cli {
    /// Config file [default: $XDG_CONFIG_HOME/kebab/config.toml]
    #[arg(long, global = true, env = "KEBAB_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
    /// Where the database lives [default: $XDG_DATA_HOME/kebab]
    #[arg(long, global = true, env = "KEBAB_DATA_DIR", value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Print one JSON document on stdout; human text goes to stderr
    #[arg(long, global = true)]
    json: bool,
    /// No progress, hints or notices
    #[arg(long, short, global = true)]
    quiet: bool,
    /// When to use colours
    #[arg(long, global = true, value_enum, default_value = "auto")]
    color: ColorChoice,
    /// Refuse every write to the database
    #[arg(long, global = true, env = "KEBAB_READONLY", value_parser = clap::builder::BoolishValueParser::new())]
    readonly: bool,
    /// Start the interactive shell (same as `kebab repl`)
    #[arg(long)]
    repl: bool,
    /// With --repl: the session to open (created on first use)
    #[arg(long, value_name = "NAME", requires = "repl")]
    session: Option<String>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Write a commented default config and create the database
    Init,
    /// Index notes: Markdown, plain text, HTML, PDF, JSONL (BEIR form)
    Ingest(ingest::Args),
    /// Search the indexed notes
    Search(search::Args),
    /// Ask a question answered only from the notes, with checked citations
    Ask(ask::Args),
    /// Hold a research conversation: questions, follow-ups and :commands
    Repl(repl::Args),
    /// List, show, export, remove, rename, fork or search saved conversations
    #[command(subcommand)]
    Sessions(sessions::Command),
    /// List indexed documents
    Docs(docs::Args),
    /// Counts, sizes and index versions
    Stats,
    /// Check config and database, with a fix for each problem
    Doctor,
    /// Keep the index in step with the notes as they change, until Ctrl-C
    Watch(watch::Args),
    /// Measure quality: retrieval (BEIR-style sets), answers, the gate, dialogues
    #[command(subcommand)]
    Eval(eval::Command),
    /// Install the built-in embedding model, or say where it is
    #[command(subcommand)]
    Models(models::Command),
    /// Show the effective config or where it lives
    #[command(subcommand)]
    Config(config_cmd::Command),
    /// Serve the notes to an MCP client (an editor, a coding agent) over stdio
    Mcp,
    /// Print a shell completion script: bash, zsh, fish, powershell or elvish
    Completions(completions::Args),
}

/// What every command gets: resolved paths, flags, and how to print.
pub struct Ctx {
    pub paths: Paths,
    pub out: Output,
    pub readonly: bool,
    /// The config, read once (see `config`).
    cfg: std::cell::OnceCell<Config>,
}

impl Ctx {
    pub fn new(paths: Paths, out: Output, readonly: bool) -> Ctx {
        Ctx { paths, out, readonly, cfg: Default::default() }
    }

    /// The config file as parsed (defaults when there is none). `run` reads
    /// it before any command that may not ignore it (see `reads_config`), so
    /// one that does not parse is the same error for all of them.
    pub fn config(&self) -> Result<Config> {
        if let Some(cfg) = self.cfg.get() {
            return Ok(cfg.clone());
        }
        let cfg = Config::load(&self.paths.config_file)?;
        Ok(self.cfg.get_or_init(|| cfg).clone())
    }

    /// Opens the database a command reads (and may add to, as a session's
    /// turns): it must exist and not be empty, since a read must not leave an
    /// empty database behind (nor migrate a 0-byte file into one). Data this
    /// process may not write is opened read-only, with a notice.
    pub fn store(&self) -> Result<Store> {
        let db = &self.paths.database;
        if let Some(none) = crate::store::no_database(db) {
            return Err(crate::error::UserError::new("no_index", format!("nothing is indexed yet: {none}"))
                .with_hint("run `kebab ingest PATH` to index a folder of notes (`kebab init` first writes a config to edit)")
                .into());
        }
        self.create_store()
    }

    /// Opens the database, creating it unless read-only: for commands that write.
    pub fn create_store(&self) -> Result<Store> {
        let db = &self.paths.database;
        let readonly = self.read_only();
        if readonly == Some(ReadOnly::NotWritable) {
            self.out.notice_once(format!("{} is read-only here: opened read-only, nothing will be saved", db.display()));
        }
        let store = Store::open_as(db, readonly)?;
        if self.out.hyperlinks() {
            self.out.roots.remember(&store);
        }
        Ok(store)
    }

    /// Why the database is to be opened read-only, if it is: `--readonly`, or
    /// data this process may not write.
    pub fn read_only(&self) -> Option<ReadOnly> {
        let db = &self.paths.database;
        if self.readonly {
            Some(ReadOnly::Asked)
        } else if db.exists() && crate::store::not_writable(db) {
            Some(ReadOnly::NotWritable)
        } else {
            None
        }
    }

    /// Refuses a command that must write (`what`: "`kebab ingest`") before
    /// it reads or creates anything, saying why it may not.
    pub fn writable_for(&self, what: &str) -> Result<()> {
        match self.read_only() {
            None => Ok(()),
            Some(why) => Err(why.refusal(what, &self.paths.database).into()),
        }
    }

    /// The search engine and the mode to run in: `requested` (a `--mode`
    /// flag) or the configured default. A default that cannot run falls back
    /// to lexical with a one-line notice; a flag that cannot run is an error.
    pub fn engine(&self, cfg: &Config, store: &Store, requested: Option<Mode>) -> Result<(Engine, Mode)> {
        let (engine, note) = Engine::from_config(cfg, &self.paths);
        let want = requested.unwrap_or(cfg.search.default_mode);
        let (mode, fallback) = engine.resolve(store, want, requested.is_some())?;
        // The embedder's own notice (model files missing) says more than the fallback's.
        if let Some(n) = note.filter(|_| want != Mode::Lexical).or(fallback) {
            self.out.notice_once(n);
        }
        Ok((engine, mode))
    }

    /// The knowledge base a command asks, over `store`, with the mode to ask
    /// in (as `engine` resolves it) and the model selection's notice, if any.
    pub fn kb(&self, cfg: Config, store: Store, requested: Option<Mode>) -> Result<(Kb, Mode, Option<String>)> {
        let (engine, mode) = self.engine(&cfg, &store, requested)?;
        let selected = crate::llm::auto::select(&cfg.llm);
        Ok((Kb { cfg, store, engine, model: selected.model }, mode, selected.note))
    }

    /// Opens the knowledge base as `kb` does, its notices said (`notice_once`:
    /// opened again, it says only what is new), for a front end that keeps
    /// one open and may open it again (`kebab mcp`, the REPL).
    pub fn opener(&self) -> Opener {
        let (paths, out, readonly) = (self.paths.clone(), self.out.clone(), self.readonly);
        Box::new(move |how: Open| {
            let ctx = Ctx::new(paths.clone(), out.clone(), readonly);
            let cfg = ctx.config()?;
            let store = match how {
                Open::Existing => ctx.store()?,
                Open::Create => ctx.create_store()?,
            };
            let (kb, _, note) = ctx.kb(cfg, store, None)?;
            if let Some(n) = note {
                ctx.out.notice_once(n);
            }
            Ok(kb)
        })
    }

    /// Progress of a counted run (`what`: "chunks embedded").
    pub fn counter(&self, what: &'static str) -> progress::Counter {
        progress::Counter::new(&self.out, what)
    }

    /// The folder relative `workspace.roots` are resolved against.
    pub fn config_dir(&self) -> PathBuf {
        self.paths.config_dir()
    }
}

/// Parses the command line, runs the command, and returns the exit code.
pub fn main() -> i32 {
    // The PDF helper kebab runs as a child of its own ingest (see ingest::pdf).
    if std::env::args_os().nth(1).is_some_and(|a| a == crate::ingest::pdf::HELPER_ARG) {
        return crate::ingest::pdf::helper_main();
    }
    unset_empty_env();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 1 } else { 0 };
            // `args_os`: `args` itself panics on an argument that is not UTF-8.
            let json = std::env::args_os().any(|a| a == "--json");
            if e.kind() == clap::error::ErrorKind::InvalidUtf8 {
                let out = Output::new(json, true, ColorChoice::Never);
                return report(out, &not_utf8_argument());
            }
            if code != 0 && json {
                let _ = Output::new(true, true, ColorChoice::Never).json(&usage_error(&e));
            }
            let _ = e.print();
            return code;
        }
    };
    let kebab = crate::render::hint::kebab_as_run(cli.config.as_deref(), cli.data_dir.as_deref());
    let out = Output::new(cli.json, cli.quiet, cli.color).run_as(kebab);
    match run(cli, out.clone()) {
        Ok(code) => code,
        Err(err) if error::is_broken_pipe(&err) => 0,
        Err(err) => report(out, &err),
    }
}

/// The variables that stand for global flags, set but empty (`KEBAB_CONFIG=`,
/// `export KEBAB_DATA_DIR=$UNSET`), count as unset: clap would refuse them as
/// `a value is required for '--config <FILE>'`, naming a flag nobody typed.
fn unset_empty_env() {
    for name in ["KEBAB_CONFIG", "KEBAB_DATA_DIR", "KEBAB_READONLY"] {
        if std::env::var_os(name).is_some_and(|v| v.is_empty()) {
            // SAFETY: the first thing `main` does, before any thread is started.
            unsafe { std::env::remove_var(name) };
        }
    }
}

/// `error.v1` for a command line clap refused: its message names the argument
/// and the value (`invalid value 'abc' for '-k <N>': …`), as the text does;
/// clap's tip (`a similar subcommand exists: 'search'`) leads the hint, which
/// points at the help of the command refused (`kebab ask --help`).
fn usage_error(e: &clap::Error) -> ErrorDoc {
    let text = e.render().to_string();
    let mut blocks = text.split("\n\n");
    let head = blocks.next().unwrap_or_default();
    let message: Vec<&str> = head.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let message = message.join(" ");
    let message = message.strip_prefix("error: ").unwrap_or(&message).to_string();
    let tip = blocks.flat_map(str::lines).find_map(|l| l.trim().strip_prefix("tip: "));
    let help = help_for();
    let hint = match tip {
        Some(tip) => format!("{tip}; run `{help}`"),
        None => format!("run `{help}`"),
    };
    let message = if message.is_empty() { e.kind().to_string() } else { message };
    ErrorDoc { schema_version: "error.v1", code: "usage".into(), message, hint: Some(hint) }
}

/// `kebab ask --help` for an error in `kebab ask …`: the commands named,
/// as clap reads the command line when told to read past its errors (its
/// error holds no command path, and a bad value's no usage line to take it from).
fn help_for() -> String {
    use clap::CommandFactory;
    let mut path = vec!["kebab".to_string()];
    if let Ok(mut matches) = Cli::command().ignore_errors(true).try_get_matches_from(std::env::args_os()) {
        while let Some((name, sub)) = matches.remove_subcommand() {
            path.push(name);
            matches = sub;
        }
    }
    format!("{} --help", path.join(" "))
}

/// Prints a failed command's `error:` and `hint:` lines (and `error.v1` with
/// `--json`) and returns its exit code.
fn report(out: Output, err: &anyhow::Error) -> i32 {
    let mut failure = crate::render::failure::classify(err);
    failure.doc.hint = failure.doc.hint.map(|h| out.as_run(&h));
    if out.json {
        let _ = out.json(&failure.doc);
    }
    // Messages can quote paths, notes and servers: no raw control characters.
    let printable = crate::script::printable;
    eprintln!("{} {}", out.paint_err("error:", owo_colors::Style::new().red().bold()), printable(&failure.doc.message));
    if let Some(hint) = &failure.doc.hint {
        eprintln!("{} {}", out.paint_err("hint:", owo_colors::Style::new().cyan()), printable(hint));
    }
    failure.exit_code
}

/// clap's own message for an argument that is not UTF-8 does not say which:
/// this one names it (shown lossily); it is bad input, exit 1.
fn not_utf8_argument() -> anyhow::Error {
    let bad = std::env::args_os().skip(1).find(|a| a.to_str().is_none()).unwrap_or_default();
    crate::error::UserError::new("bad_input", format!("the argument {:?} is not valid UTF-8", bad.to_string_lossy()))
        .with_hint("names, queries and options must be UTF-8 text; file and folder paths may be any bytes")
        .into()
}

/// An argument that must be text (a query, a question): not UTF-8 is bad
/// input naming the argument, never a panic.
pub fn text_arg(name: &str, parts: &[std::ffi::OsString]) -> Result<String> {
    let mut words = Vec::with_capacity(parts.len());
    for p in parts {
        match p.to_str() {
            Some(w) => words.push(w),
            None => {
                return Err(crate::error::UserError::new(
                    "bad_input",
                    format!("the {name} {:?} is not valid UTF-8", p.to_string_lossy()),
                )
                .with_hint(format!("give the {name} as UTF-8 text (check the terminal's or the script's encoding)"))
                .into());
            }
        }
    }
    Ok(words.join(" "))
}

/// A count option (`-k`, `-n`, `--limit`) checked: below 1 is bad input with `hint`.
/// The option is read as a signed number (`allow_negative_numbers`), so
/// `-k -1` gets this message too, not clap's "unexpected argument '-1'".
pub fn at_least_one(flag: &str, n: i64, hint: &str) -> Result<usize> {
    if n < 1 {
        return Err(crate::error::UserError::new("bad_input", format!("{flag} must be at least 1")).with_hint(hint).into());
    }
    Ok(usize::try_from(n)?)
}

/// `-k` checked (`config::checked_k`): a ranking holds room for k hits, and
/// a k in the billions aborted the process for want of memory.
pub fn k_flag(n: i128, hint: &str) -> Result<usize> {
    crate::config::checked_k(n).map_err(|why| crate::error::UserError::new("bad_input", format!("-k {why}")).with_hint(hint).into())
}

/// The nearest existing folder above a path not there yet, when it is a file
/// instead: nothing could ever be made below it.
pub(crate) fn file_in_the_way(path: &Path) -> Option<&Path> {
    if path.exists() {
        return None;
    }
    path.ancestors().skip(1).find(|a| a.exists()).filter(|a| !a.is_dir())
}

/// Checks the paths before any command runs: a config named explicitly must
/// exist (only the default one may be absent) and be a file, the data dir
/// is a folder or could be made one, and its kebab.db is not a folder, nor a
/// named pipe, socket or device, nor a symlink to nothing.
fn check_paths(paths: &Paths, config_named: bool, command: &Command) -> Result<()> {
    use crate::error::UserError;
    let config = &paths.config_file;
    // `config path` only names the files; doctor reports them as checks of its own.
    let naming_only = matches!(command, Command::Config(config_cmd::Command::Path) | Command::Doctor);
    // Read as "no config" it would be ignored by some commands and fail others as "Is a directory".
    if config.is_dir() && !naming_only {
        return Err(UserError::new("config", format!("config file {} is a folder, not a file", config.display()))
            .with_hint("point --config (or KEBAB_CONFIG) at a TOML file, or at a file name `kebab --config FILE init` may write")
            .into());
    }
    if let Some(file) = file_in_the_way(config).filter(|_| matches!(command, Command::Init)) {
        return Err(UserError::new(
            "config",
            format!("config file {} cannot be written: {} is a file, not a folder", config.display(), file.display()),
        )
        .with_hint("point --config (or KEBAB_CONFIG) at a file name in a folder")
        .into());
    }
    // `kebab init` writes the config it is pointed at; `config path` only names it.
    let may_be_absent = matches!(command, Command::Init | Command::Config(config_cmd::Command::Path));
    if config_named && !may_be_absent && !config.exists() {
        return Err(UserError::new("config", format!("config file {} does not exist", config.display()))
            .with_hint("fix the --config path (or KEBAB_CONFIG), or run `kebab --config FILE init` to write one there")
            .into());
    }
    let data_dir_hint = "point --data-dir (or KEBAB_DATA_DIR) at a folder; kebab creates it if it is missing";
    // Doctor reports it as a failed check beside the others.
    if paths.data_dir.exists() && !paths.data_dir.is_dir() && !naming_only {
        return Err(UserError::new("bad_input", format!("the data dir {} is a file, not a folder", paths.data_dir.display()))
            .with_hint(data_dir_hint)
            .into());
    }
    const NOT_A_FILE: &str = "kebab keeps its index in the file kebab.db of the data dir: move what is there aside, \
                              or point --data-dir (or KEBAB_DATA_DIR) at another folder";
    // SQLite would say only "unable to open database file" (exit 2, no hint), naming no folder.
    if paths.database.is_dir() && !naming_only {
        return Err(UserError::new("bad_input", format!("the database {} is a folder, not a file", paths.database.display()))
            .with_hint(NOT_A_FILE)
            .into());
    }
    // Doctor is not spared the next two: opening a named pipe, socket or
    // device waits for a writer for ever, and for a symlink to nothing it
    // would advise `init`.
    let prints_paths = matches!(command, Command::Config(config_cmd::Command::Path));
    let special = std::fs::metadata(&paths.database).is_ok_and(|m| !m.is_dir() && !m.is_file());
    if special && !prints_paths {
        let message = format!("the database {} is not a regular file (a named pipe, socket or device)", paths.database.display());
        return Err(UserError::new("bad_input", message).with_hint(NOT_A_FILE).into());
    }
    // A symlink to nothing: reading commands said "nothing is indexed yet",
    // and ingest then failed with "unable to open database file", no hint.
    let dangling = std::fs::symlink_metadata(&paths.database).is_ok_and(|m| m.file_type().is_symlink()) && !paths.database.exists();
    if dangling && !prints_paths {
        let to = std::fs::read_link(&paths.database).unwrap_or_default();
        return Err(UserError::new(
            "bad_input",
            format!("the database {} is a symlink to {}, which is not there", paths.database.display(), to.display()),
        )
        .with_hint(
            "mount or restore what it points to, remove the symlink (kebab then makes a new database), \
             or point --data-dir (or KEBAB_DATA_DIR) at another folder",
        )
        .into());
    }
    // A reading command would say "nothing is indexed yet, run kebab ingest",
    // and ingest would then fail to make the folder.
    if let Some(file) = file_in_the_way(&paths.data_dir).filter(|_| !naming_only) {
        return Err(UserError::new(
            "bad_input",
            format!("the data dir {} cannot be created: {} is a file, not a folder", paths.data_dir.display(), file.display()),
        )
        .with_hint(data_dir_hint)
        .into());
    }
    Ok(())
}

/// Whether a config that does not parse stops `command` before it runs.
/// Every command but these: `doctor` reports it as one of its checks,
/// `config path` only names the file (so its user can find it to fix it),
/// a completion script does not depend on it (and runs at each shell start),
/// and `mcp` reads it (by `Ctx::config`) at each call that opens the
/// knowledge base, so the client gets the error as `error.v1` and a fixed
/// file works without a restart. Left to each command, those that had no
/// setting to read (stats, docs, sessions) ran on, and the user learnt of
/// the broken file only later.
fn reads_config(command: &Command) -> bool {
    !matches!(command, Command::Doctor | Command::Config(config_cmd::Command::Path) | Command::Completions(_) | Command::Mcp)
}

fn run(cli: Cli, out: Output) -> Result<i32> {
    let paths = Paths::resolve(cli.config.as_deref(), cli.data_dir.as_deref())?;
    let ctx = Ctx::new(paths, out, cli.readonly);
    let command = match (cli.command, cli.repl) {
        (Some(_), true) => {
            return Err(crate::error::UserError::new("usage", "--repl cannot be combined with a command")
                .with_hint("run `kebab --repl [--session NAME]` or `kebab repl [--session NAME]`")
                .into());
        }
        (Some(c), false) => c,
        (None, true) => Command::Repl(repl::Args { session: cli.session }),
        (None, false) => {
            return Err(crate::error::UserError::new("usage", "no command given")
                .with_hint("run `kebab --help`, or `kebab --repl` to start a conversation")
                .into());
        }
    };
    check_paths(&ctx.paths, cli.config.is_some(), &command)?;
    if reads_config(&command) {
        ctx.config()?;
    }
    match command {
        Command::Init => init::run(&ctx),
        Command::Ingest(args) => ingest::run(&ctx, args),
        Command::Search(args) => search::run(&ctx, args),
        Command::Ask(args) => ask::run(&ctx, args),
        Command::Repl(args) => repl::run(&ctx, args),
        Command::Sessions(cmd) => sessions::run(&ctx, cmd),
        Command::Docs(args) => docs::run(&ctx, args),
        Command::Stats => stats::run(&ctx),
        Command::Doctor => doctor::run(&ctx),
        Command::Watch(args) => watch::run(&ctx, args),
        Command::Eval(cmd) => eval::run(&ctx, cmd),
        Command::Config(cmd) => config_cmd::run(&ctx, cmd),
        Command::Models(cmd) => models::run(&ctx, cmd),
        Command::Mcp => mcp::run(&ctx),
        Command::Completions(args) => completions::run(&ctx, args),
    }
}
