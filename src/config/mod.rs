//! Configuration: the TOML file (XDG paths), its defaults, overrides from flags
//! and environment, and the commented default that `kebab init` writes.
//!
//! A missing file means defaults; an unknown key is an error that names the key
//! and the file, so a typo never silently does nothing.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::error::UserError;

mod choices;
mod init_text;

pub use choices::{Attribution, EmbeddingProvider, EvidenceMode, LlmProvider, Mode, Template};
pub use init_text::default_config_text;

/// Everything kebab reads from `config.toml`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub workspace: WorkspaceConfig,
    pub search: SearchConfig,
    pub rag: RagConfig,
    pub llm: LlmConfig,
    pub embedding: EmbeddingConfig,
}

/// `[embedding]`: the model that turns chunks and queries into vectors.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct EmbeddingConfig {
    pub provider: EmbeddingProvider,
    /// Where the local model's files live (`~/…`, or relative to the config file's folder, as
    /// `workspace.roots`); empty = `DATA_DIR/models/all-MiniLM-L6-v2`.
    pub model_dir: String,
    /// The server's embedding model (`ollama` / `openai`).
    pub model: String,
    /// The server (`ollama` / `openai`), without `/api` or `/v1`.
    pub base_url: String,
    /// For `openai`: the environment variable holding the API key.
    pub api_key_env: String,
    /// Longest wait for a server's answer to one batch, in seconds.
    pub timeout_secs: u64,
    /// Prepended to every query; unset = the model's own (`embed::roles`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_prefix: Option<String>,
    /// Prepended to every chunk; unset = the model's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document_prefix: Option<String>,
    /// Send `input_type: "query" | "passage"` (OpenAI-compatible servers that take it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_type: Option<bool>,
    /// Whether the model reads Hangul/CJK text; unset = from the model name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reads_cjk: Option<bool>,
}

impl Default for EmbeddingConfig {
    fn default() -> Self {
        EmbeddingConfig {
            provider: EmbeddingProvider::Local,
            model_dir: String::new(),
            model: "nomic-embed-text".into(),
            base_url: "http://127.0.0.1:11434".into(),
            api_key_env: "OPENAI_API_KEY".into(),
            timeout_secs: 120,
            query_prefix: None,
            document_prefix: None,
            input_type: None,
            reads_cjk: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct WorkspaceConfig {
    /// Folders `kebab ingest` walks when it is given no PATH.
    pub roots: Vec<PathBuf>,
    /// Glob patterns (matched against paths relative to the ingested folder) to leave out.
    pub exclude: Vec<String>,
    /// Files larger than this are reported and skipped.
    pub max_file_bytes: u64,
    /// Seconds the PDF reader may spend on one file before it is stopped and
    /// the file reported and skipped.
    pub pdf_timeout_secs: u64,
}

impl Default for WorkspaceConfig {
    fn default() -> Self {
        WorkspaceConfig {
            roots: Vec::new(),
            exclude: vec!["**/.git/**".into(), "**/node_modules/**".into(), "**/target/**".into()],
            max_file_bytes: 10_000_000,
            pdf_timeout_secs: 60,
        }
    }
}

/// The most hits a search or an answer may ask for: `search.default_k`, `-k`
/// and an MCP call's `k` (a ranking holds room for k hits).
pub const MAX_K: usize = 10_000;

/// `k` hits asked for (`-k`, an MCP call's `k`), or what is wrong with it
/// ("must be at least 1"), for the caller to say under the name it was given
/// by. Read signed and wide, so -1 gets the same words as 0, and 2^64 the
/// same as 10001.
pub fn checked_k(k: i128) -> Result<usize, String> {
    match usize::try_from(k) {
        Ok(k) if (1..=MAX_K).contains(&k) => Ok(k),
        _ if k < 1 => Err("must be at least 1".to_string()),
        _ => Err(format!("must be at most {MAX_K}")),
    }
}

/// A path from the config with `~/` read as the home folder, as a shell
/// reads it (`workspace.roots`, `embedding.model_dir`).
pub fn under_home(p: &Path) -> Option<PathBuf> {
    let rest = p.strip_prefix("~").ok()?;
    Some(etcetera::home_dir().ok()?.join(rest))
}

/// A folder named in the config file (`workspace.roots`, `embedding.model_dir`):
/// `~/…` under the home folder, a relative path from `config_dir`, the config
/// file's folder. The working directory kebab happens to run in plays no part,
/// so the same config finds the same folders from anywhere.
pub fn from_config_dir(p: &Path, config_dir: &Path) -> PathBuf {
    if let Some(home) = under_home(p) {
        return home;
    }
    if p.is_relative() { config_dir.join(p) } else { p.to_path_buf() }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SearchConfig {
    /// Hits returned when `-k` is not given.
    pub default_k: usize,
    /// BM25 weight of the words in a chunk's document title and headings,
    /// relative to its body (1.0). Tuned on SciFact's train queries.
    pub heading_weight: f64,
    /// Vector and hybrid fall back to lexical, with a one-line notice, when
    /// no embedder is available.
    pub default_mode: Mode,
    /// The k of reciprocal rank fusion: larger flattens the rank differences.
    pub rrf_k: f64,
    /// A Hangul/CJK question's lexical top hit stays first in hybrid when its
    /// BM25 is at least this many times the second hit's (0: never) …
    pub cjk_lexical_lead: f64,
    /// … and the vector channel ranks it within this many of its best.
    pub cjk_lead_within: usize,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig { default_k: 8, heading_weight: DEFAULT_HEADING_WEIGHT, default_mode: Mode::Hybrid, rrf_k: 60.0, cjk_lexical_lead: CJK_LEXICAL_LEAD, cjk_lead_within: CJK_LEAD_WITHIN }
    }
}

/// `[rag]`: how answers are built from evidence.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RagConfig {
    pub prompt_template_version: Template,
    /// Token budget for the evidence block (not for the completion).
    pub max_context_tokens: usize,
    /// Per-mode refusal thresholds; see README "The gate".
    pub score_gate: ScoreGate,
    /// Most earlier turns of a conversation put into the prompt (newest first).
    pub history_max_turns: usize,
    /// How much of the previous answer (in characters) joins a follow-up's
    /// retrieval query; 0 turns expansion off.
    pub expansion_chars: usize,
    /// Multi-hop asks (`--multi-hop`): most retrieval rounds (the
    /// decomposition's, then one per decide step that asks for more).
    pub multi_hop_max_depth: usize,
    /// Most sub-questions taken from one decompose or decide reply.
    pub multi_hop_max_sub_queries_per_iter: usize,
    /// Most sub-questions searched in one multi-hop ask.
    pub multi_hop_max_total_sub_queries: usize,
    /// Most distinct chunks pooled for the synthesis.
    pub multi_hop_max_pool_chunks: usize,
    /// Uncited answer sentences: `auto` checks them against the evidence
    /// and marks the supported ones `[n*]`; `off` refuses any uncited answer.
    pub attribution: Attribution,
    /// `chunks` (whole chunks) or `passages` (each chunk's best window of
    /// sentences, with its heading).
    pub evidence: EvidenceMode,
}

impl Default for RagConfig {
    fn default() -> Self {
        RagConfig {
            prompt_template_version: Template::V2,
            max_context_tokens: 6000,
            score_gate: ScoreGate::default(),
            history_max_turns: 8,
            expansion_chars: 200,
            multi_hop_max_depth: 3,
            multi_hop_max_sub_queries_per_iter: 5,
            multi_hop_max_total_sub_queries: 10,
            multi_hop_max_pool_chunks: 24,
            attribution: Attribution::Auto,
            evidence: EvidenceMode::Chunks,
        }
    }
}

/// The gate's cut-offs, per retrieval mode: a question passes when the
/// fitted probability that the notes answer it (src/rag/gate/model.rs) is at
/// least this. Lower answers more and refuses less.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ScoreGate {
    /// Lexical mode, questions in Latin script (model `lexical-en`), in [0, 1].
    pub lexical: f64,
    /// Questions written in Hangul/CJK, in any mode (models `lexical-ko`, `hybrid-ko`).
    pub lexical_cjk: f64,
    /// Vector and hybrid mode (model `hybrid-en`), in [0, 1].
    pub vector: f64,
    pub hybrid: f64,
}

impl Default for ScoreGate {
    fn default() -> Self {
        // Read from the dev-split ROC (docs/gate.md).
        ScoreGate { lexical: 0.70, lexical_cjk: 0.65, vector: 0.65, hybrid: 0.65 }
    }
}

impl ScoreGate {
    /// The lexical threshold for a question.
    pub fn lexical_for(&self, korean: bool) -> f64 {
        if korean { self.lexical_cjk } else { self.lexical }
    }

    /// The cut-off of a mode's model (Korean questions: `lexical_cjk` in every mode).
    pub fn for_mode(&self, mode: Mode, korean: bool) -> f64 {
        match mode {
            _ if korean => self.lexical_cjk,
            Mode::Lexical => self.lexical,
            Mode::Vector => self.vector,
            Mode::Hybrid => self.hybrid,
        }
    }
}

/// `[llm]`: which model answers.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct LlmConfig {
    pub provider: LlmProvider,
    pub model: String,
    pub base_url: String,
    /// Name of the environment variable holding the API key; the key itself is never stored.
    pub api_key_env: String,
    pub temperature: f32,
    pub seed: u64,
    /// The model's context window, in tokens.
    pub context_tokens: usize,
    /// The longest answer asked of the model, in tokens (sent as Ollama's
    /// `num_predict`, OpenAI's `max_tokens`); capped at a quarter of the
    /// context so the prompt keeps most of it.
    pub max_answer_tokens: usize,
    /// Idle timeout: the longest wait for the next piece of a response.
    pub timeout_secs: u64,
    /// The most sentences, list items or code blocks the built-in extractive
    /// model quotes in one answer (what each brings along comes with it).
    pub extractive_quotes: usize,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            provider: LlmProvider::Auto,
            model: "qwen2.5:7b-instruct".into(),
            base_url: "http://127.0.0.1:11434".into(),
            api_key_env: "OPENAI_API_KEY".into(),
            temperature: 0.0,
            seed: 0,
            context_tokens: 8192,
            max_answer_tokens: 1024,
            timeout_secs: 300,
            extractive_quotes: DEFAULT_EXTRACTIVE_QUOTES,
        }
    }
}

/// The most units the built-in extractive model quotes (`llm.extractive_quotes`;
/// why eight: `src/llm/extractive/mod.rs`, `FOLLOW_SHARE`).
pub const DEFAULT_EXTRACTIVE_QUOTES: usize = 8;

/// See README "Evaluation": the best of 0.5–7 on SciFact train (nDCG@10 0.7074).
pub const DEFAULT_HEADING_WEIGHT: f64 = 3.0;

/// Fitted on the KorQuAD dev queries and the Korean Rust Book dev split with
/// multilingual-e5-small (docs/evaluation.md, "Korean with multilingual vectors").
pub const CJK_LEXICAL_LEAD: f64 = 1.2;
/// Fitted with `CJK_LEXICAL_LEAD`, on the same data.
pub const CJK_LEAD_WITHIN: usize = 100;

impl Config {
    /// Reads `path`; a missing file gives the defaults.
    pub fn load(path: &Path) -> Result<Config> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
            Err(e) => {
                return Err(UserError::new(
                    "config",
                    format!("cannot read config file {}: {e}", path.display()),
                )
                .with_hint("let this user read it (chmod u+r), or point --config (or KEBAB_CONFIG) at another file")
                .into());
            }
        };
        if let Some(form) = crate::script::utf16_or_32(&bytes) {
            return Err(UserError::new("config", format!("config file {} is {form} text, not UTF-8", path.display()))
                .with_hint(format!("convert it: `iconv -f {} -t utf-8`", form.to_lowercase()))
                .into());
        }
        // Saved by an editor set to Latin-1, say: name the line and the fix.
        let text = String::from_utf8(bytes).map_err(|e| {
            let line = e.as_bytes()[..e.utf8_error().valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1;
            UserError::new("config", format!("config file {} is not UTF-8 text (line {line})", path.display()))
                .with_hint(format!("save it as UTF-8 (e.g. `iconv -f latin1 -t utf-8`), or fix line {line}"))
        })?;
        Config::parse(&text, path)
    }

    /// Parses config text; `path` only names the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Config> {
        let cfg: Config = toml::from_str(text).map_err(|e| {
            // The parser's message names the value, not always the key: add it.
            let key = e.span().and_then(|span| key_at(text, span.start));
            let message = match &key {
                Some(key) if !e.message().contains(&format!("`{}`", key.rsplit('.').next().unwrap_or(key))) => {
                    format!("config file {}: `{key}`: {}", path.display(), e.message())
                }
                _ => format!("config file {}: {}", path.display(), e.message()),
            };
            let secret = key.as_deref().is_some_and(|k| k == "api_key" || k.ends_with(".api_key"));
            UserError::new("config", message).with_hint(match e.span() {
                // Never echo the value: it is a secret.
                Some(_) if secret => format!(
                    "remove the key from {}: put it in the environment variable named by llm.api_key_env or embedding.api_key_env (default OPENAI_API_KEY)",
                    path.display()
                ),
                Some(span) => format!(
                    "fix line {} of {} (`kebab init` shows every key with its default)",
                    line_of(text, span.start),
                    path.display()
                ),
                None => format!("fix {}", path.display()),
            })
        })?;
        cfg.validate(path)?;
        Ok(cfg)
    }

    fn validate(&self, path: &Path) -> Result<()> {
        let bad = |key: &str, why: &str| -> anyhow::Error {
            UserError::new("config", format!("config file {}: `{key}` {why}", path.display())).into()
        };
        if self.workspace.max_file_bytes == 0 {
            return Err(bad("workspace.max_file_bytes", "must be greater than 0"));
        }
        if !(1..=86_400).contains(&self.workspace.pdf_timeout_secs) {
            return Err(bad("workspace.pdf_timeout_secs", "must be between 1 and 86400"));
        }
        if !(1..=MAX_K).contains(&self.search.default_k) {
            return Err(bad("search.default_k", &format!("must be between 1 and {MAX_K}")));
        }
        if !(self.search.heading_weight.is_finite() && self.search.heading_weight >= 0.0) {
            return Err(bad("search.heading_weight", "must be a number ≥ 0"));
        }
        for pattern in &self.workspace.exclude {
            globset::Glob::new(pattern)
                .map_err(|e| bad("workspace.exclude", &format!("has a bad pattern {pattern:?}: {e}")))?;
        }
        if self.rag.max_context_tokens < 100 {
            return Err(bad("rag.max_context_tokens", "must be at least 100"));
        }
        if !(0.0..=1.0).contains(&self.rag.score_gate.lexical) {
            return Err(bad("rag.score_gate.lexical", "must be between 0 and 1"));
        }
        if !(0.0..=1.0).contains(&self.rag.score_gate.lexical_cjk) {
            return Err(bad("rag.score_gate.lexical_cjk", "must be between 0 and 1"));
        }
        if !(0.0..=1.0).contains(&self.rag.score_gate.vector) {
            return Err(bad("rag.score_gate.vector", "must be between 0 and 1"));
        }
        if !(0.0..=1.0).contains(&self.rag.score_gate.hybrid) {
            return Err(bad("rag.score_gate.hybrid", "must be between 0 and 1"));
        }
        if self.rag.history_max_turns > 100 {
            return Err(bad("rag.history_max_turns", "must be at most 100"));
        }
        if self.rag.expansion_chars > 10_000 {
            return Err(bad("rag.expansion_chars", "must be at most 10000"));
        }
        let limits = [
            ("rag.multi_hop_max_depth", self.rag.multi_hop_max_depth, 10),
            ("rag.multi_hop_max_sub_queries_per_iter", self.rag.multi_hop_max_sub_queries_per_iter, 20),
            ("rag.multi_hop_max_total_sub_queries", self.rag.multi_hop_max_total_sub_queries, 100),
            ("rag.multi_hop_max_pool_chunks", self.rag.multi_hop_max_pool_chunks, 200),
        ];
        for (key, value, max) in limits {
            if !(1..=max).contains(&value) {
                return Err(bad(key, &format!("must be between 1 and {max}")));
            }
        }
        if self.llm.provider != LlmProvider::Extractive && self.llm.model.trim().is_empty() {
            return Err(bad("llm.model", "must name the server's model"));
        }
        // A key pasted where the variable's name goes must not end up in
        // `config show` or an error message: the value is never echoed.
        for (key, name) in [("llm.api_key_env", &self.llm.api_key_env), ("embedding.api_key_env", &self.embedding.api_key_env)] {
            let valid = name.is_empty()
                || (name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !name.starts_with(|c: char| c.is_ascii_digit()));
            if !valid {
                return Err(bad(
                    key,
                    "must be the name of an environment variable (letters, digits and _), not the API key itself; \
                     put the key in that environment variable",
                ));
            }
        }
        if let Some(problem) = base_url_problem(&self.llm.base_url) {
            return Err(bad("llm.base_url", problem));
        }
        if !(0.0..=2.0).contains(&self.llm.temperature) {
            return Err(bad("llm.temperature", "must be between 0 and 2"));
        }
        if self.llm.context_tokens < 512 {
            return Err(bad("llm.context_tokens", "must be at least 512"));
        }
        if !(16..=32768).contains(&self.llm.max_answer_tokens) {
            return Err(bad("llm.max_answer_tokens", "must be between 16 and 32768"));
        }
        if !(1..=20).contains(&self.llm.extractive_quotes) {
            return Err(bad("llm.extractive_quotes", "must be between 1 and 20"));
        }
        if let Some(problem) = base_url_problem(&self.embedding.base_url) {
            return Err(bad("embedding.base_url", problem));
        }
        if self.embedding.provider.is_server() && self.embedding.model.trim().is_empty() {
            return Err(bad("embedding.model", "must name the server's embedding model"));
        }
        if self.embedding.timeout_secs == 0 {
            return Err(bad("embedding.timeout_secs", "must be at least 1"));
        }
        if !(self.search.rrf_k >= 1.0 && self.search.rrf_k <= 10_000.0) {
            return Err(bad("search.rrf_k", "must be between 1 and 10000"));
        }
        if !(1..=1000).contains(&self.search.cjk_lead_within) {
            return Err(bad("search.cjk_lead_within", "must be between 1 and 1000"));
        }
        let lead = self.search.cjk_lexical_lead;
        if !(lead == 0.0 || (1.0..=1000.0).contains(&lead)) {
            return Err(bad("search.cjk_lexical_lead", "must be 0 (never) or between 1 and 1000"));
        }
        if self.llm.timeout_secs == 0 {
            return Err(bad("llm.timeout_secs", "must be at least 1"));
        }
        Ok(())
    }
}

/// What is wrong with a model server's address, if anything: it is an
/// http(s) URL naming a host. `http://` alone passed and every call failed
/// with "http: invalid format" and a hint to start a server at "http:".
fn base_url_problem(url: &str) -> Option<&'static str> {
    let Some(rest) = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://")) else {
        return Some("must start with http:// or https://");
    };
    // After any `user@`, before any `:port`.
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    (host.is_empty() || host.starts_with(':'))
        .then_some("must name the server's host after http:// or https:// (e.g. \"http://127.0.0.1:11434\")")
}

/// The dotted key (`search.default_k`) on the line holding `byte`: the key
/// before its `=`, under the last `[table]` header above it.
fn key_at(text: &str, byte: usize) -> Option<String> {
    let start = text.get(..byte.min(text.len()))?.rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next().unwrap_or("").trim();
    let (key, _) = line.split_once('=')?;
    let key = key.trim().trim_matches('"');
    if key.is_empty() || key.starts_with('[') {
        return None;
    }
    let table = text[..start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('[') && l.ends_with(']'))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string());
    Some(match table {
        Some(t) if !t.is_empty() => format!("{t}.{key}"),
        _ => key.to_string(),
    })
}

fn line_of(text: &str, byte: usize) -> usize {
    text.as_bytes()[..byte.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// Where the config file, the data directory and the database live.
#[derive(Debug, Clone, Serialize)]
pub struct Paths {
    pub config_file: PathBuf,
    pub data_dir: PathBuf,
    pub database: PathBuf,
}

impl Paths {
    /// Flags win over environment (clap folds `KEBAB_CONFIG` / `KEBAB_DATA_DIR`
    /// into the flags), which win over the XDG defaults.
    pub fn resolve(config_flag: Option<&Path>, data_dir_flag: Option<&Path>) -> Result<Paths> {
        let base = || {
            etcetera::choose_base_strategy()
                .context("cannot find the home directory; set --config and --data-dir (or KEBAB_CONFIG and KEBAB_DATA_DIR)")
        };
        use etcetera::BaseStrategy;
        let config_file = match config_flag {
            Some(p) => p.to_path_buf(),
            None => base()?.config_dir().join("kebab").join("config.toml"),
        };
        let data_dir = match data_dir_flag {
            Some(p) => p.to_path_buf(),
            None => base()?.data_dir().join("kebab"),
        };
        let database = data_dir.join("kebab.db");
        Ok(Paths { config_file, data_dir, database })
    }

    /// The config file's folder, which relative paths in it are resolved against.
    pub fn config_dir(&self) -> PathBuf {
        self.config_file.parent().map(PathBuf::from).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_config_text_parses_back_to_the_defaults() {
        let cfg = Config::parse(&default_config_text(), Path::new("x.toml")).unwrap();
        assert_eq!(cfg, Config::default());
    }

    #[test]
    fn unknown_key_is_an_error_naming_key_and_file() {
        let err = Config::parse("[search]\ndefualt_k = 3\n", Path::new("/tmp/my.toml")).unwrap_err();
        let msg = format!("{err:#}");
        assert!(msg.contains("defualt_k"), "{msg}");
        assert!(msg.contains("/tmp/my.toml"), "{msg}");
    }

    #[test]
    fn unknown_section_is_an_error() {
        let err = Config::parse("[serach]\n", Path::new("c.toml")).unwrap_err();
        assert!(format!("{err:#}").contains("serach"));
    }

    #[test]
    fn wrong_type_names_the_file_and_line() {
        let err = Config::parse("[search]\n\ndefault_k = \"eight\"\n", Path::new("c.toml")).unwrap_err();
        let user = err.downcast_ref::<UserError>().unwrap();
        assert!(user.message.contains("c.toml"));
        assert!(user.hint.as_deref().unwrap().contains("line 3"), "{:?}", user.hint);
    }

    #[test]
    fn out_of_range_values_are_rejected() {
        assert!(Config::parse("[search]\ndefault_k = 0\n", Path::new("c")).is_err());
        assert!(Config::parse("[workspace]\nmax_file_bytes = 0\n", Path::new("c")).is_err());
        assert!(Config::parse("[workspace]\nexclude = [\"a[\"]\n", Path::new("c")).is_err());
        assert!(Config::parse("[search]\nheading_weight = -1.0\n", Path::new("c")).is_err());
        let err = Config::parse("[rag]\nmulti_hop_max_depth = 0\n", Path::new("c")).unwrap_err();
        assert!(format!("{err:#}").contains("rag.multi_hop_max_depth"), "{err:#}");
        assert!(Config::parse("[rag]\nmulti_hop_max_pool_chunks = 201\n", Path::new("c")).is_err());
        let err = Config::parse("[llm]\nextractive_quotes = 0\n", Path::new("c")).unwrap_err();
        assert!(format!("{err:#}").contains("llm.extractive_quotes"), "{err:#}");
    }

    #[test]
    fn missing_file_means_defaults() {
        let cfg = Config::load(Path::new("/nonexistent/kebab/config.toml")).unwrap();
        assert_eq!(cfg, Config::default());
    }
}
