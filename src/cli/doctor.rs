//! `kebab doctor`: checks the config, the data directory and the database,
//! and prints a fix for each problem. Exits 2 when a check fails.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use owo_colors::Style;
use serde::Serialize;

use crate::config::{EmbeddingProvider, LlmProvider};

use super::Ctx;
use crate::config::Config;
use crate::render::count;
use crate::render::failure::message;
use crate::script::one_line;
use crate::store::{SCHEMA_LEVEL, Store};

#[derive(Serialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Status {
    Ok,
    Warn,
    Fail,
}

#[derive(Serialize)]
struct Check {
    name: &'static str,
    status: Status,
    detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<String>,
}

#[derive(Serialize)]
struct DoctorDoc {
    schema_version: &'static str,
    ok: bool,
    checks: Vec<Check>,
}

fn check(name: &'static str, status: Status, detail: impl Into<String>, fix: Option<String>) -> Check {
    Check { name, status, detail: detail.into(), fix }
}

pub fn run(ctx: &Ctx) -> Result<i32> {
    let mut checks = Vec::new();
    let data_dir = data_dir_check(&ctx.paths.data_dir, ctx.read_only().is_some());
    // A data dir that failed its check takes no database nor model, and stops
    // `kebab init`: advice to run them is what to do once it is fixed.
    let failed = data_dir.status == Status::Fail;
    let then = |fix: &str| if failed { format!("once the data dir is fixed, {fix}") } else { fix.into() };
    let cfg_path = &ctx.paths.config_file;
    let cfg = Config::load(cfg_path);
    match &cfg {
        Ok(_) if cfg_path.exists() => checks.push(check("config", Status::Ok, format!("{} parses", cfg_path.display()), None)),
        Ok(_) => checks.push(check(
            "config",
            Status::Ok,
            format!("{} not present: using defaults", cfg_path.display()),
            Some(then("`kebab init` writes a commented config to edit")),
        )),
        Err(e) => {
            let hint = e.downcast_ref::<crate::error::UserError>().and_then(|u| u.hint.clone());
            checks.push(check("config", Status::Fail, message(e), Some(hint.unwrap_or_else(|| format!("fix or remove {}", cfg_path.display())))))
        }
    }
    checks.push(data_dir);
    database_checks(ctx, &then, &mut checks);
    if let Ok(cfg) = &cfg {
        checks.push(llm_check(&cfg.llm));
        embedding_checks(ctx, cfg, &then, &mut checks);
    }

    let ok = checks.iter().all(|c| c.status != Status::Fail);
    for c in &mut checks {
        c.fix = c.fix.as_deref().map(|fix| ctx.out.as_run(fix));
    }
    if ctx.out.json {
        ctx.out.json(&DoctorDoc { schema_version: "doctor.v1", ok, checks })?;
    } else {
        for c in &checks {
            let (label, style) = match c.status {
                Status::Ok => ("ok  ", Style::new().green()),
                Status::Warn => ("warn", Style::new().yellow()),
                Status::Fail => ("FAIL", Style::new().red().bold()),
            };
            ctx.out.line(format!("{} {:<9} {}", ctx.out.paint(label, style), c.name, one_line(&c.detail)))?;
            if let Some(fix) = &c.fix {
                let label = if c.status == Status::Ok { "tip" } else { "fix" };
                ctx.out.line(format!("     {:<9} {label}: {fix}", ""))?;
            }
        }
    }
    Ok(if ok { 0 } else { 2 })
}

/// Whether the configured model can answer.
fn llm_check(llm: &crate::config::LlmConfig) -> Check {
    use crate::http;
    use crate::llm::ollama;
    let probe = Duration::from_secs(2);
    let pull = format!("`ollama serve`, then `ollama pull {}`", llm.model);
    let auto = llm.provider == LlmProvider::Auto;
    // A server that answered amiss (an https address for plain HTTP, a redirect) gets the advice `ask` gives.
    let fix = |e: &http::ServerError, otherwise: String| Some(crate::llm::auto::answered_amiss(e).unwrap_or(otherwise));
    match llm.provider {
        LlmProvider::Extractive => check("llm", Status::Ok, "built-in extractive model (no server needed)", None),
        LlmProvider::Openai => {
            let url = http::openai_url(&llm.base_url, "models");
            let key = http::api_key(&llm.api_key_env);
            match http::get_with(&url, probe, key.as_deref()) {
                Ok(r) if r.status().is_success() => {
                    check("llm", Status::Ok, format!("{url} answers; {}", context_note(llm, None)), None)
                }
                Ok(r) => {
                    let e = http::status_error(&url, r, key.as_deref());
                    let otherwise = format!("check llm.base_url and the key in ${}", llm.api_key_env);
                    check("llm", Status::Fail, e.to_string(), fix(&e, otherwise))
                }
                Err(e) => check("llm", Status::Fail, e.to_string(), fix(&e, "start the server or fix llm.base_url".into())),
            }
        }
        LlmProvider::Ollama | LlmProvider::Auto => match ollama::probe(&llm.base_url, &llm.model, probe) {
            Ok(true) => {
                let reported = crate::llm::ChatModel::context_window(&ollama::Ollama::from_config(llm));
                let detail = format!("Ollama at {} has {}; {}", llm.base_url, llm.model, context_note(llm, reported));
                check("llm", Status::Ok, detail, None)
            }
            Ok(false) => check(
                "llm",
                if auto { Status::Warn } else { Status::Fail },
                format!("Ollama at {} does not have {}", llm.base_url, llm.model),
                Some(format!("`ollama pull {}`", llm.model)),
            ),
            Err(e) if auto => check(
                "llm",
                Status::Warn,
                format!("{e}; answers use the built-in extractive model"),
                fix(&e, format!("for a generative model: {pull}; or set llm.provider = \"extractive\"")),
            ),
            Err(e) => check("llm", Status::Fail, e.to_string(), fix(&e, pull)),
        },
    }
}

/// Which context kebab plans with (and sends Ollama as `num_ctx`): the
/// configured one, or the model's maximum when the server reports a smaller one.
fn context_note(llm: &crate::config::LlmConfig, reported: Option<usize>) -> String {
    let configured = llm.context_tokens;
    match reported {
        Some(max) if max < configured => {
            format!("context {max} tokens (the model's maximum, below llm.context_tokens = {configured})")
        }
        Some(max) => format!("context {configured} tokens (llm.context_tokens; the model takes up to {max})"),
        None => format!("context {configured} tokens (llm.context_tokens; the server reports no maximum)"),
    }
}

fn data_dir_check(dir: &Path, readonly: bool) -> Check {
    if dir.exists() && !dir.is_dir() {
        return check(
            "data dir",
            Status::Fail,
            format!("{} is a file, not a folder", dir.display()),
            Some("point --data-dir / KEBAB_DATA_DIR at a folder; kebab creates it if it is missing".into()),
        );
    }
    if readonly {
        return check(
            "data dir",
            Status::Ok,
            format!("{} (read-only: searched and asked, not written)", dir.display()),
            Some("`kebab ingest` needs write access to the database and its folder".into()),
        );
    }
    // Diagnosed, never created: the first `kebab ingest` makes the folder.
    if !dir.exists() {
        return match super::file_in_the_way(dir) {
            Some(a) => check(
                "data dir",
                Status::Fail,
                format!("{} cannot be created: {} is a file, not a folder", dir.display(), a.display()),
                Some("point --data-dir / KEBAB_DATA_DIR elsewhere".into()),
            ),
            _ => check(
                "data dir",
                Status::Warn,
                format!("{} does not exist yet", dir.display()),
                Some("`kebab init` or `kebab ingest PATH` creates it".into()),
            ),
        };
    }
    let probe = dir.join(".kebab-doctor-probe");
    let result = std::fs::write(&probe, b"ok").and_then(|_| std::fs::remove_file(&probe));
    match result {
        Ok(()) => check("data dir", Status::Ok, format!("{} is writable", dir.display()), None),
        Err(e) => check(
            "data dir",
            Status::Fail,
            format!("{} is not writable: {e}", dir.display()),
            Some("fix its permissions, or point --data-dir / KEBAB_DATA_DIR elsewhere".into()),
        ),
    }
}

/// Whether the configured embedder runs, and whether the stored vectors are
/// its own and complete.
fn embedding_checks(ctx: &Ctx, cfg: &Config, then: &dyn Fn(&str) -> String, checks: &mut Vec<Check>) {
    if cfg.embedding.provider == EmbeddingProvider::None {
        checks.push(check("embedding", Status::Ok, "none: lexical search only", None));
        return;
    }
    let (model, note) = crate::embed::select(&cfg.embedding, &ctx.paths);
    let Some(model) = model else {
        let fix = Some(then("`kebab models install`, then `kebab ingest` to embed the notes"));
        checks.push(check("embedding", Status::Warn, note.unwrap_or_default(), fix));
        return;
    };
    // One real call: a model that loads and answers is the only proof it works.
    match model.embed(&["kebab doctor"], crate::embed::Role::Query) {
        Ok(v) => checks.push(check("embedding", Status::Ok, format!("{} answers ({} dimensions)", model.model_id(), v[0].len()), None)),
        Err(e) => {
            checks.push(check("embedding", Status::Fail, e.to_string(), e.hint()));
            return;
        }
    }
    let profile = crate::embed::Profile::from_config(&cfg.embedding);
    let scripts = if profile.reads_cjk { "reads every script" } else { "Hangul/CJK left to lexical search" };
    let roles = format!("{}; {scripts}", profile.roles.describe(cfg.embedding.provider));
    checks.push(check("embedding roles", Status::Ok, roles, None));
    let Ok(store) = Store::open(&ctx.paths.database, true) else { return };
    let stored = store.embedding_model();
    let missing = store.count_without_vectors();
    match (stored, missing) {
        (Ok(Some((have, _))), _) if have != model.model_id() => checks.push(check(
            "vectors",
            Status::Fail,
            format!("the index holds vectors of {have}, not of {}", model.model_id()),
            Some("`kebab ingest --force` re-embeds every chunk with the configured model".into()),
        )),
        (Ok(_), Ok(0)) => {
            let unread = store.count_unread().unwrap_or(0);
            // Those chunks have no vector: "every chunk has a vector" beside them said otherwise.
            let what = match unread {
                0 => "every chunk has a vector".to_string(),
                1 => "every chunk the model reads has a vector; 1 in a script it does not read is searched lexically".to_string(),
                n => format!("every chunk the model reads has a vector; {n} in a script it does not read are searched lexically"),
            };
            checks.push(check("vectors", Status::Ok, what, None))
        }
        (Ok(_), Ok(n)) => checks.push(check(
            "vectors",
            Status::Warn,
            if n == 1 {
                "1 chunk has no vector yet: semantic search misses it".to_string()
            } else {
                format!("{n} chunks have no vector yet: semantic search misses them")
            },
            Some("`kebab ingest` embeds them (an interrupted run resumes where it stopped)".into()),
        )),
        (Err(e), _) | (_, Err(e)) => checks.push(check("vectors", Status::Fail, message(&e), None)),
    }
}

/// `then` turns advice that makes something in the data dir into what to do once it is usable.
fn database_checks(ctx: &Ctx, then: &dyn Fn(&str) -> String, checks: &mut Vec<Check>) {
    let db = &ctx.paths.database;
    if !db.exists() {
        checks.push(check(
            "database",
            Status::Warn,
            format!("{} does not exist yet", db.display()),
            Some(then("`kebab init` or `kebab ingest PATH` creates it")),
        ));
        return;
    }
    // A 0-byte file: opening it to check would migrate it into an empty database.
    if let Some(empty) = crate::store::no_database(db) {
        checks.push(check("database", Status::Warn, empty, Some("`kebab ingest PATH` indexes notes into it".into())));
        return;
    }
    // Data this process may not write is read, never advised away.
    let store = match Store::open_as(db, ctx.read_only()) {
        Ok(s) => s,
        Err(e) => {
            let hint = e.downcast_ref::<crate::error::UserError>().and_then(|u| u.hint.clone());
            // Rebuilding is advice only for a file that is not a database at
            // all, or one SQLite itself reads as damaged (as `stats` and
            // `search` say); a sound one that cannot be opened is kept and its access checked.
            let fallback = if let Some(damaged) = crate::render::failure::damaged_database_hint(&e) {
                damaged
            } else if crate::store::looks_like_sqlite(db) {
                format!("{} is a SQLite database: check its and its folder's permissions, and that no other program holds it", db.display())
            } else {
                format!("move {} aside and run `kebab ingest` to rebuild it", db.display())
            };
            checks.push(check("database", Status::Fail, message(&e), Some(hint.unwrap_or(fallback))));
            return;
        }
    };
    checks.push(check("schema", Status::Ok, format!("level {SCHEMA_LEVEL}"), None));
    match store.quick_check() {
        Ok(s) if s == "ok" => checks.push(check("integrity", Status::Ok, "quick_check ok", None)),
        Ok(s) => checks.push(check(
            "integrity",
            Status::Fail,
            s,
            Some(format!("move {} aside and run `kebab ingest` to rebuild it", db.display())),
        )),
        Err(e) => checks.push(check("integrity", Status::Fail, e.to_string(), None)),
    }
    // FTS5's own check compares each index with the chunks table; it writes, so not read-only.
    let fts = if store.is_readonly() { Vec::new() } else { store.check_fts().unwrap_or_default() };
    for (table, result) in fts {
        match result {
            Ok(()) => checks.push(check("index", Status::Ok, format!("{table} matches the chunks"), None)),
            Err(e) => checks.push(check(
                "index",
                Status::Fail,
                format!("{table}: {}", message(&e)),
                Some(format!("run: sqlite3 {} \"INSERT INTO {table}({table}) VALUES('rebuild')\"", db.display())),
            )),
        }
    }
    match store.stale_postings() {
        Ok(0) => {}
        Ok(n) => checks.push(check(
            "postings",
            Status::Warn,
            format!("{n} blocks of chunks wait for their postings (an ingest stopped halfway): searches are slower until then"),
            Some("run `kebab ingest` on your notes again: unchanged files are skipped and the postings rebuilt".into()),
        )),
        Err(e) => checks.push(check("postings", Status::Fail, message(&e), None)),
    }
    match store.stats() {
        Ok(s) if s.chunks == 0 => checks.push(check(
            "content",
            Status::Warn,
            "the index is empty",
            Some("`kebab ingest PATH` indexes a folder of notes".into()),
        )),
        Ok(s) => {
            checks.push(check("content", Status::Ok, format!("{}, {}", count(s.documents, "document"), count(s.chunks, "chunk")), None));
            for r in s.roots.iter().filter(|r| !r.dir().exists()) {
                checks.push(check(
                    "roots",
                    Status::Warn,
                    format!("{} ({}) no longer exists; its {} stale", r.name, r.path, if r.documents == 1 { "1 document is".to_string() } else { format!("{} documents are", r.documents) }),
                    Some(
                        "restore the folder (or mount its disk), or run `kebab ingest --prune` to forget it and its notes".into(),
                    ),
                ));
            }
        }
        Err(e) => checks.push(check("content", Status::Fail, message(&e), None)),
    }
}
