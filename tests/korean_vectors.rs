//! Korean questions with a multilingual embedder. Hybrid fusion of Hangul/CJK
//! questions: the lexical top hit stays first when its BM25 is far enough
//! ahead (`search.cjk_lexical_lead`) and the vector channel ranks it among its
//! best (`search.cjk_lead_within`); questions in other scripts fuse as plain
//! reciprocal rank whatever those keys say. The gate weighs a Korean question
//! that ran hybrid with the `hybrid-ko` model. A fake multilingual embedding
//! server makes the vector ranking known in advance.

mod common;

use common::Env;
use serde_json::json;

/// An OpenAI-compatible embedding server: every query points at [1, 0, 0];
/// a passage's direction comes from its marker word, so the vector channel
/// ranks the `star` note first, the `moon` note second, everything else last.
fn server() -> String {
    common::fake_openai_embeddings(|t, query| match () {
        _ if query || t.contains("star") => json!([1.0, 0.0, 0.0]),
        _ if t.contains("moon") => json!([0.8, 0.6, 0.0]),
        _ => json!([0.0, 0.0, 1.0]),
    })
}

/// Three notes per language: `kettle` matches the question's word many
/// times (lexical first, vector third), `steep` once (lexical second, vector
/// first), `cup` not at all (vector second). Plain RRF puts `steep` first.
fn notes(env: &Env, word: &str) {
    let w = word;
    env.write("notes/kettle.md", format!("# {w}\n\n{w} {w} {w}, {w} {w}.\n"));
    env.write("notes/steep.md", format!("# leaves\n\nwarm leaves in water with one {w} nearby, star, slowly steeping for minutes.\n"));
    env.write("notes/cup.md", "# cup\n\npour into a cup, moon.\n");
}

fn env_with(search: &str, word: &str) -> Env {
    let env = Env::new();
    let url = server();
    env.write(
        "config/kebab/config.toml",
        format!(
            "[llm]\nprovider = \"extractive\"\n\n[search]\ndefault_mode = \"hybrid\"\n{search}\n[embedding]\nprovider = \"openai\"\nmodel = \"multilingual-e5-small-q4\"\nbase_url = \"{url}\"\ninput_type = true\n"
        ),
    );
    notes(&env, word);
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    env
}

/// The file names of the hybrid hits for `query`, best first, and the top hit's score.
fn ranked(env: &Env, query: &str) -> (Vec<String>, f64) {
    let doc = env.json(&["search", "--mode", "hybrid", query]);
    assert_eq!(doc["mode"], "hybrid", "{doc}");
    let hits = doc["hits"].as_array().unwrap();
    let names = hits.iter().map(|h| h["doc_path"].as_str().unwrap().rsplit('/').next().unwrap().to_string()).collect();
    (names, hits[0]["score"].as_f64().unwrap())
}

const HANGUL: &str = "주전자";

#[test]
fn a_korean_question_keeps_a_far_ahead_lexical_top_hit_first() {
    let env = env_with("cjk_lexical_lead = 1.2\ncjk_lead_within = 20", HANGUL);
    let (names, score) = ranked(&env, HANGUL);
    assert_eq!(names[..2], ["kettle.md", "steep.md"]);
    // The kept hit takes the best fused score: scores still fall with rank.
    let doc = env.json(&["search", "--mode", "hybrid", HANGUL]);
    let scores: Vec<f64> = doc["hits"].as_array().unwrap().iter().map(|h| h["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|p| p[0] >= p[1]), "{scores:?}");
    assert!(score > 0.0 && score <= 1.0, "{score}");
}

#[test]
fn without_a_lead_a_korean_question_fuses_as_plain_reciprocal_rank() {
    let env = env_with("cjk_lexical_lead = 0", HANGUL);
    assert_eq!(ranked(&env, HANGUL).0[..2], ["steep.md", "kettle.md"]);
}

#[test]
fn a_lexical_top_hit_the_vectors_rank_low_is_not_kept_first() {
    // The vector channel ranks `kettle` third: outside its 2 best.
    let env = env_with("cjk_lexical_lead = 1.2\ncjk_lead_within = 2", HANGUL);
    assert_eq!(ranked(&env, HANGUL).0[..2], ["steep.md", "kettle.md"]);
}

#[test]
fn an_english_question_ignores_the_cjk_fusion_keys() {
    let env = env_with("cjk_lexical_lead = 1.2\ncjk_lead_within = 20", "kettle");
    let (names, score) = ranked(&env, "kettle");
    assert_eq!(names[..2], ["steep.md", "kettle.md"]);
    // Plain RRF: a hit first in one channel and second in the other scores (1/61 + 1/62) ÷ (2/61).
    assert!((score - (1.0 / 61.0 + 1.0 / 62.0) / (2.0 / 61.0)).abs() < 1e-9, "{score}");
}

#[test]
fn the_trace_names_the_lead_a_korean_question_ran_with() {
    let env = env_with("cjk_lexical_lead = 1.5\ncjk_lead_within = 7", HANGUL);
    let doc = env.json(&["search", "--mode", "hybrid", "--trace", HANGUL]);
    assert_eq!(doc["trace"]["fusion"]["lead"], json!({"ratio": 1.5, "within": 7}), "{doc}");
    let english = env.json(&["search", "--mode", "hybrid", "--trace", "cup"]);
    assert!(english["trace"]["fusion"].get("lead").is_none(), "{english}");
}

#[test]
fn a_lead_below_one_is_refused_naming_the_key() {
    let env = Env::new();
    env.write("config/kebab/config.toml", "[search]\ncjk_lexical_lead = 0.5\n");
    let out = env.run(&["search", "--mode", "lexical", "kettle"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(common::stderr(&out).contains("search.cjk_lexical_lead"), "{}", common::stderr(&out));
}

#[test]
fn a_korean_question_that_ran_hybrid_is_gated_by_the_hybrid_korean_model() {
    let env = env_with("", HANGUL);
    let hybrid = env.ok(&["ask", "--explain", "--mode", "hybrid", &format!("{HANGUL}는 언제 휘파람을 부나요?")]);
    assert!(hybrid.contains("gate: hybrid-ko p(answerable)"), "{hybrid}");
    let lexical = env.ok(&["ask", "--explain", "--mode", "lexical", &format!("{HANGUL}는 언제 휘파람을 부나요?")]);
    assert!(lexical.contains("gate: lexical-ko p(answerable)"), "{lexical}");
}
