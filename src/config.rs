//! Configuration: the TOML file (XDG paths), its defaults, overrides from flags
//! and environment, and the commented default that `kebab init` writes.
//!
//! A missing file means defaults; an unknown key is an error that names the key
//! and the file, so a typo never silently does nothing.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::error::UserError;

/// Everything kebab reads from `config.toml`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub workspace: WorkspaceConfig,
    pub search: SearchConfig,
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
}

impl Default for WorkspaceConfig {
    fn default() -> Self {
        WorkspaceConfig {
            roots: Vec::new(),
            exclude: vec!["**/.git/**".into(), "**/node_modules/**".into(), "**/target/**".into()],
            max_file_bytes: 10_000_000,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SearchConfig {
    /// Hits returned when `-k` is not given.
    pub default_k: usize,
    /// BM25 weight of the words in a chunk's document title and headings,
    /// relative to its body (1.0). Tuned on SciFact's train queries.
    pub heading_weight: f64,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig { default_k: 8, heading_weight: DEFAULT_HEADING_WEIGHT }
    }
}

/// See README "Evaluation": the best of 0.5–7 on SciFact train (nDCG@10 0.7074).
pub const DEFAULT_HEADING_WEIGHT: f64 = 3.0;

impl Config {
    /// Reads `path`; a missing file gives the defaults.
    pub fn load(path: &Path) -> Result<Config> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
            Err(e) => {
                return Err(UserError::new(
                    "config",
                    format!("cannot read config file {}: {e}", path.display()),
                )
                .into());
            }
        };
        Config::parse(&text, path)
    }

    /// Parses config text; `path` only names the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Config> {
        let cfg: Config = toml::from_str(text).map_err(|e| {
            UserError::new("config", format!("config file {}: {}", path.display(), e.message()))
                .with_hint(match e.span() {
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
        if !(1..=10_000).contains(&self.search.default_k) {
            return Err(bad("search.default_k", "must be between 1 and 10000"));
        }
        if !(self.search.heading_weight.is_finite() && self.search.heading_weight >= 0.0) {
            return Err(bad("search.heading_weight", "must be a number ≥ 0"));
        }
        for pattern in &self.workspace.exclude {
            globset::Glob::new(pattern)
                .map_err(|e| bad("workspace.exclude", &format!("has a bad pattern {pattern:?}: {e}")))?;
        }
        Ok(())
    }
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
}

/// The file `kebab init` writes: every key, its default, and what it does.
pub fn default_config_text() -> String {
    let d = Config::default();
    format!(
        r#"# kebab configuration. Every key is optional; shown here with its default.
# An unknown key is an error, so a typo never goes unnoticed.

[workspace]
# Folders `kebab ingest` walks when it is given no PATH, e.g. ["~/notes"].
roots = []
# Glob patterns, matched against paths relative to the ingested folder, to leave out.
exclude = {exclude}
# Files larger than this many bytes are reported and skipped.
max_file_bytes = {max}

[search]
# Hits returned when -k is not given.
default_k = {k}
# BM25 weight of title and heading words relative to body words (tuned on SciFact train).
heading_weight = {hw:.1}
"#,
        exclude = toml::Value::Array(d.workspace.exclude.iter().map(|s| toml::Value::String(s.clone())).collect()),
        max = d.workspace.max_file_bytes,
        k = d.search.default_k,
        hw = d.search.heading_weight,
    )
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
    }

    #[test]
    fn missing_file_means_defaults() {
        let cfg = Config::load(Path::new("/nonexistent/kebab/config.toml")).unwrap();
        assert_eq!(cfg, Config::default());
    }
}
