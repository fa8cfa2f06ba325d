//! Evaluation: measuring kebab on labelled data. `beir` reads BEIR-style
//! files, `metrics` scores rankings, `retrieval` runs the queries, `answers`
//! scores whole answers against gold strings, `attribution` scores the
//! attribution of uncited answer sentences on a labelled set.

pub mod answers;
pub mod attribution;
pub mod beir;
pub mod dialogues;
pub mod labelled;
pub mod metrics;
pub mod retrieval;
pub mod split;

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::path::Path;

use anyhow::Result;
use serde::de::DeserializeOwned;

use crate::error::UserError;

/// The records of a JSONL file, each with its 1-based line number; blank
/// lines are skipped. A line that does not parse is bad input naming the file
/// and line, with `shape` as the hint. `what` names the file in a read error
/// (`--answers file`).
fn read_jsonl<T: DeserializeOwned>(path: &Path, what: &str, shape: &str) -> Result<Vec<(usize, T)>> {
    let text = std::fs::read_to_string(path)
        .map(|text| crate::script::without_bom(&text).to_owned())
        .map_err(|e| UserError::new("bad_input", format!("cannot read {what}{}: {e}", path.display())))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let record = serde_json::from_str(line).map_err(|e| {
            UserError::new("bad_input", format!("{}:{}: {e}", path.display(), i + 1)).with_hint(format!("each line is {shape}"))
        })?;
        out.push((i + 1, record));
    }
    Ok(out)
}

/// The line each id of one input file was first on. A repeated id is bad
/// input naming both lines: read on, one record silently replaced the other
/// (gold answers, evidence, a judgement) or one question was scored twice.
struct Ids<'a> {
    path: &'a Path,
    first: HashMap<String, usize>,
}

impl<'a> Ids<'a> {
    fn new(path: &'a Path) -> Ids<'a> {
        Ids { path, first: HashMap::new() }
    }

    /// Notes `id` on `line`; `what` names it in the error (`id "q1"`).
    fn add(&mut self, id: String, line: usize, what: impl FnOnce() -> String) -> Result<(), UserError> {
        match self.first.entry(id) {
            Entry::Vacant(v) => {
                v.insert(line);
                Ok(())
            }
            Entry::Occupied(o) => {
                let message = format!("{}:{line}: {} is repeated (first on line {})", self.path.display(), what(), o.get());
                Err(UserError::new("bad_input", message)
                    .with_hint("each may appear once in a file: remove one of the two lines, or give one its own id"))
            }
        }
    }

    /// `add` for a record's own id.
    fn id(&mut self, id: &str, line: usize) -> Result<(), UserError> {
        self.add(id.to_string(), line, || format!("id {id:?}"))
    }
}
