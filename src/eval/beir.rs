//! BEIR files: `queries.jsonl` (`{"_id", "text"}` per line) and qrels TSV
//! (`query-id<TAB>corpus-id<TAB>score`, a header line, CRLF tolerated).

use std::collections::HashMap;
use std::path::Path;

use anyhow::Result;

use crate::error::UserError;

/// Query id → query text, in file order.
pub fn read_queries(path: &Path) -> Result<Vec<(String, String)>> {
    let text = read(path, "--queries")?;
    let mut out = Vec::new();
    let mut ids = super::Ids::new(path);
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let bad = |why: &str| UserError::new("bad_input", format!("{}:{}: {why}", path.display(), i + 1));
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| bad(&format!("not valid JSON: {e}")))?;
        let id = match v.get("_id") {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(serde_json::Value::Number(n)) => n.to_string(),
            _ => return Err(bad("missing \"_id\"").into()),
        };
        ids.id(&id, i + 1)?;
        let text = v.get("text").and_then(|t| t.as_str()).ok_or_else(|| bad("missing \"text\""))?;
        out.push((id, text.to_string()));
    }
    Ok(out)
}

/// Query id → (document id → graded relevance > 0).
pub type Qrels = HashMap<String, HashMap<String, u32>>;

pub fn read_qrels(path: &Path) -> Result<Qrels> {
    let text = read(path, "--qrels")?;
    let mut qrels: Qrels = HashMap::new();
    let mut pairs = super::Ids::new(path);
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        let cols: Vec<&str> = line.split('\t').map(str::trim).collect();
        if line.trim().is_empty() {
            continue;
        }
        let bad = || UserError::new("bad_input", format!("{}:{}: expected `query-id<TAB>corpus-id<TAB>score`", path.display(), i + 1));
        if cols.len() < 3 {
            return Err(bad().into());
        }
        // The last column is the score; TREC-style files have an extra "0" column.
        let score: i64 = match cols[cols.len() - 1].parse() {
            Ok(s) => s,
            Err(_) if i == 0 => continue, // header
            Err(_) => return Err(bad().into()),
        };
        let (q, d) = if cols.len() >= 4 { (cols[0], cols[2]) } else { (cols[0], cols[1]) };
        pairs.add(format!("{q}\t{d}"), i + 1, || format!("the judgement of {d:?} for query {q:?}"))?;
        if score > 0 {
            qrels.entry(q.to_string()).or_default().insert(d.to_string(), score as u32);
        }
    }
    Ok(qrels)
}

fn read(path: &Path, flag: &str) -> Result<String> {
    std::fs::read_to_string(path).map(|text| crate::script::without_bom(&text).to_owned()).map_err(|e| {
        UserError::new("bad_input", format!("cannot read {flag} file {}: {e}", path.display())).into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qrels_accept_header_crlf_and_trec_columns() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("q.tsv");
        std::fs::write(&p, "query-id\tcorpus-id\tscore\r\n1\td1\t1\r\n1\td2\t2\r\n2\td3\t0\r\n3\t0\td9\t1\n").unwrap();
        let q = read_qrels(&p).unwrap();
        assert_eq!(q["1"]["d1"], 1);
        assert_eq!(q["1"]["d2"], 2);
        assert!(!q.contains_key("2"), "zero grades are not relevant");
        assert_eq!(q["3"]["d9"], 1);
    }

    #[test]
    fn queries_name_the_bad_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("q.jsonl");
        std::fs::write(&p, "{\"_id\":\"1\",\"text\":\"a\"}\n{oops\n").unwrap();
        let err = read_queries(&p).unwrap_err();
        assert!(format!("{err}").contains("q.jsonl:2"), "{err}");
    }
}
