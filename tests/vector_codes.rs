//! Vector search over int8 codes with an exact re-score: the hits and their
//! scores are those of an exact f32 scan, and a database written before the
//! codes existed (schema level 5) is converted when it is opened and answers
//! vector searches exactly as before, without `ingest --force`. A fake
//! embedding server gives every text a fixed vector derived from its words.

mod common;

use common::Env;
use serde_json::json;

const DIM: usize = 24;

/// A text's vector: the sum of one pseudo-random direction per word (FNV-1a
/// of the word seeds it), normalised. Texts sharing words are close.
fn vector(text: &str) -> Vec<f32> {
    let mut v = [0.0f64; DIM];
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in word.to_lowercase().bytes() {
            h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
        for x in v.iter_mut() {
            h ^= h << 13;
            h ^= h >> 7;
            h ^= h << 17;
            *x += (h % 2001) as f64 / 1000.0 - 1.0;
        }
    }
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-9);
    v.iter().map(|x| (x / norm) as f32).collect()
}

/// An OpenAI-compatible embedding server answering with [`vector`].
fn server() -> String {
    common::fake_openai_embeddings(|t, _| json!(vector(t)))
}

const WORDS: &[&str] = &[
    "heron", "willow", "granite", "lantern", "orchard", "copper", "meadow", "harbor", "thistle", "ember", "glacier",
    "saddle", "quarry", "violet", "anchor", "bramble",
];

/// 150 notes of four words each (more than the scan re-scores for a top 8), drawn from [`WORDS`] so that many are near one another.
fn env() -> Env {
    let env = Env::new();
    let url = server();
    env.write(
        "config/kebab/config.toml",
        format!("[llm]\nprovider = \"extractive\"\n\n[embedding]\nprovider = \"openai\"\nmodel = \"words\"\nbase_url = \"{url}\"\n"),
    );
    for i in 0..150usize {
        let words: Vec<&str> = (0..4).map(|j| WORDS[(i * 7 + j * j * 3 + i / 5) % WORDS.len()]).collect();
        env.write(&format!("notes/n{i:02}.md"), format!("# note {i}\n\n{}.\n", words.join(" ")));
    }
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    env
}

const QUERIES: &[&str] = &["heron willow", "copper lantern orchard", "glacier", "anchor bramble violet saddle"];

/// Each query's vector hits: (chunk id, score), best first.
fn hits(env: &Env, k: &str) -> Vec<Vec<(i64, f64)>> {
    QUERIES
        .iter()
        .map(|q| {
            let doc = env.json(&["search", "--mode", "vector", "-k", k, q]);
            let hits = doc["hits"].as_array().unwrap();
            hits.iter().map(|h| (h["chunk_id"].as_i64().unwrap(), h["score"].as_f64().unwrap())).collect()
        })
        .collect()
}

/// The exact f32 answer, computed here from the stored vectors.
fn brute_force(env: &Env, query: &str, k: usize) -> Vec<(i64, f64)> {
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    let mut stmt = conn.prepare("SELECT chunk_id, vector FROM embeddings WHERE dim > 0").unwrap();
    let q = vector(query);
    let mut all: Vec<(i64, f64)> = stmt
        .query_map([], |r| {
            let blob: Vec<u8> = r.get(1)?;
            let v = blob.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            Ok((r.get(0)?, v.zip(&q).map(|(a, b)| a as f64 * *b as f64).sum()))
        })
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    all.truncate(k);
    all
}

fn count(env: &Env, sql: &str) -> i64 {
    rusqlite::Connection::open(env.database()).unwrap().query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn vector_hits_are_those_of_an_exact_f32_scan() {
    let env = env();
    assert_eq!(count(&env, "SELECT count(*) FROM embedding_codes"), count(&env, "SELECT count(*) FROM chunks"));
    assert_eq!(count(&env, &format!("SELECT count(*) FROM embedding_codes WHERE length(code) <> {DIM}")), 0);
    for (q, got) in QUERIES.iter().zip(hits(&env, "8")) {
        let want = brute_force(&env, q, 8);
        assert_eq!(got.iter().map(|h| h.0).collect::<Vec<_>>(), want.iter().map(|h| h.0).collect::<Vec<_>>(), "{q}");
        for ((_, g), (_, w)) in got.iter().zip(&want) {
            assert!((g - w).abs() < 1e-5, "{q}: score {g}, exact {w}");
        }
    }
}

#[test]
fn a_database_from_before_the_codes_is_converted_and_answers_the_same() {
    let env = env();
    let before = hits(&env, "8");
    let vectors = count(&env, "SELECT count(*) FROM embeddings WHERE dim > 0");
    // Back to what kebab wrote at schema level 6: no codes table, no triggers,
    // (level 8) no CJK words beside the chunks, (levels 9 and 11) no postings and (level 13) no
    // whole_folder on roots. These notes have no
    // Hangul, so the level-6 chunk triggers are written here for the word
    // index only; migration 0008 replaces them when the database reopens.
    rusqlite::Connection::open(env.database())
        .unwrap()
        .execute_batch(
            "ALTER TABLE roots DROP COLUMN whole_folder;
             DROP TRIGGER embedding_codes_follow_delete; DROP TRIGGER embedding_codes_follow_model;
             DROP TABLE embedding_codes;
             DROP TRIGGER chunks_postings_ad; DROP TRIGGER chunks_postings_au;
             DROP TABLE postings; DROP TABLE postings_stale; DROP TABLE postings_rebuild;
             DROP TRIGGER chunks_ad; DROP TRIGGER chunks_au; DROP VIEW cjk_chunks;
             ALTER TABLE chunks DROP COLUMN cjk_context; ALTER TABLE chunks DROP COLUMN cjk_text;
             CREATE VIEW cjk_chunks AS SELECT id, context, text FROM chunks WHERE has_cjk;
             CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
                 INSERT INTO chunks_fts(chunks_fts, rowid, context, text) VALUES ('delete', old.id, old.context, old.text);
             END;
             CREATE TRIGGER chunks_au AFTER UPDATE ON chunks BEGIN
                 INSERT INTO chunks_fts(chunks_fts, rowid, context, text) VALUES ('delete', old.id, old.context, old.text);
                 INSERT INTO chunks_fts(rowid, context, text) VALUES (new.id, new.context, new.text);
             END;
             PRAGMA user_version = 6;",
        )
        .unwrap();

    assert_eq!(hits(&env, "8"), before, "the same hits and scores after the conversion");
    assert_eq!(count(&env, "PRAGMA user_version"), kebab::store::SCHEMA_LEVEL);
    assert_eq!(count(&env, "SELECT count(*) FROM embedding_codes"), vectors, "every stored vector has its code");
    // Nothing was embedded again: a second ingest finds every vector in place.
    let doc = env.json(&["ingest", env.notes().to_str().unwrap()]);
    assert_eq!(doc["embedding"]["embedded"], 0, "{doc}");
}
