//! JSONL in BEIR form: one `{"_id", "title", "text"}` object per line, each
//! becoming a document of its own. A bad line is reported and skipped; the
//! rest of the file is still indexed.

use std::collections::HashSet;

use serde_json::Value;

use super::chunk::{ChunkDraft, ChunkLimits};
use super::text::{Lines, chunk_text};

/// One record of a JSONL file.
pub struct Record {
    pub id: String,
    pub title: Option<String>,
    pub text: String,
    /// 1-based line of the record in the file: every chunk of it cites this line.
    pub line: u32,
    pub chunks: Vec<ChunkDraft>,
}

/// A line that could not be used, and why.
pub struct BadLine {
    pub line: u32,
    pub reason: String,
}

pub fn parse_jsonl(src: &str, limits: &ChunkLimits) -> (Vec<Record>, Vec<BadLine>) {
    let mut records = Vec::new();
    let mut bad = Vec::new();
    let mut ids = HashSet::new();
    // Numbered as every other format's lines are (a lone `\r` ends one too).
    let lines = Lines::new(src);
    for line_no in 1..=lines.count() {
        let line = lines.line(line_no).trim();
        if line.is_empty() {
            continue;
        }
        match parse_record(line) {
            Ok((id, title, text)) => {
                if !ids.insert(id.clone()) {
                    bad.push(BadLine { line: line_no, reason: format!("duplicate _id {id:?} (the first one is kept)") });
                    continue;
                }
                // The title heads every chunk of the record, as a Markdown
                // heading heads its section: the text goes on from it.
                let heading_path: Vec<String> = title.iter().cloned().collect();
                let chunks = chunk_text(&text, limits)
                    .into_iter()
                    .map(|c| ChunkDraft { line_start: line_no, line_end: line_no, heading_path: heading_path.clone(), ..c })
                    .collect();
                records.push(Record { id, title, text, line: line_no, chunks });
            }
            Err(reason) => bad.push(BadLine { line: line_no, reason }),
        }
    }
    (records, bad)
}

fn parse_record(line: &str) -> Result<(String, Option<String>, String), String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not valid JSON: {e}"))?;
    let obj = value.as_object().ok_or("not a JSON object")?;
    let id = match obj.get("_id") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
        Some(Value::Number(n)) => n.to_string(),
        _ => return Err("missing \"_id\" (a non-empty string or number)".into()),
    };
    let text = match obj.get("text") {
        Some(Value::String(s)) => s.clone(),
        _ => return Err(format!("record {id:?} has no \"text\" string")),
    };
    let title = match obj.get("title") {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
        _ => None,
    };
    // A record of a title alone (BEIR corpora hold some) is found by its title; one with
    // neither would be a document no search can reach, counted "added" with 0 chunks.
    if text.trim().is_empty() {
        return match title {
            Some(title) => Ok((id, Some(title.clone()), title)),
            None => Err(format!("record {id:?} has no text to index (its \"text\" is blank and it has no \"title\")")),
        };
    }
    Ok((id, title, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_becomes_a_record_citing_its_line() {
        let src = "{\"_id\":\"a1\",\"title\":\"T\",\"text\":\"alpha beta\"}\n\n{\"_id\":7,\"text\":\"gamma\"}\n";
        let (recs, bad) = parse_jsonl(src, &ChunkLimits::default());
        assert!(bad.is_empty());
        assert_eq!(recs.len(), 2);
        assert_eq!((recs[0].id.as_str(), recs[0].title.as_deref(), recs[0].line), ("a1", Some("T"), 1));
        assert_eq!((recs[1].id.as_str(), recs[1].title.as_deref(), recs[1].line), ("7", None, 3));
        assert!(recs[1].chunks.iter().all(|c| c.line_start == 3 && c.line_end == 3));
    }

    #[test]
    fn a_records_title_heads_its_chunks() {
        let src = "{\"_id\":\"g1\",\"title\":\"BM25\",\"text\":\"A ranking function.\"}\n{\"_id\":\"g2\",\"text\":\"Untitled.\"}\n";
        let (recs, _) = parse_jsonl(src, &ChunkLimits::default());
        assert_eq!(recs[0].chunks[0].heading_path, ["BM25"]);
        assert!(recs[1].chunks[0].heading_path.is_empty());
    }

    #[test]
    fn bad_lines_are_reported_and_the_rest_kept() {
        let src = "{\"_id\":\"a\",\"text\":\"x\"}\nnot json\n[1]\n{\"title\":\"t\",\"text\":\"y\"}\n{\"_id\":\"b\"}\n{\"_id\":\"a\",\"text\":\"dup\"}\n{\"_id\":\"c\",\"text\":\"z\"}\r\n";
        let (recs, bad) = parse_jsonl(src, &ChunkLimits::default());
        assert_eq!(recs.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["a", "c"]);
        assert_eq!(bad.iter().map(|b| b.line).collect::<Vec<_>>(), [2, 3, 4, 5, 6]);
        assert!(bad[4].reason.contains("duplicate"));
    }

    #[test]
    fn a_record_of_a_title_alone_is_found_by_its_title_and_one_of_nothing_is_a_bad_line() {
        let src = "{\"_id\":\"t\",\"title\":\"Zebrafish\",\"text\":\"\"}\n{\"_id\":\"e\",\"text\":\"  \"}\n";
        let (recs, bad) = parse_jsonl(src, &ChunkLimits::default());
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].chunks.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(), ["Zebrafish"]);
        assert_eq!(bad.iter().map(|b| b.line).collect::<Vec<_>>(), [2]);
        assert!(bad[0].reason.contains("no text to index"), "{}", bad[0].reason);
    }

    #[test]
    fn records_on_cr_only_lines_cite_their_own_lines() {
        let src = "{\"_id\":\"a\",\"text\":\"x\"}\r\r{\"_id\":\"b\",\"text\":\"y\"}\r";
        let (recs, bad) = parse_jsonl(src, &ChunkLimits::default());
        assert!(bad.is_empty());
        assert_eq!(recs.iter().map(|r| (r.id.as_str(), r.line)).collect::<Vec<_>>(), [("a", 1), ("b", 3)]);
    }
}
