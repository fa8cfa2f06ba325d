//! Embedders are served as their models expect: queries and chunks marked
//! with the model's prefixes (or `input_type`), chunks in a script the model
//! does not read left to lexical search, and a change of roles treated as a
//! change of model. A fake embedding server records every text it receives.

mod common;

use std::io::Write;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use common::{Env, read_request};
use serde_json::{Value, json};

/// A fake embedding server for both APIs (`/api/embed`, `/v1/embeddings`):
/// keeps each request body and answers one small vector per input, its
/// direction taken from the text so that search has something to rank.
fn server() -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let (first, body) = read_request(&conn);
            let req: Value = serde_json::from_slice(&body).unwrap_or_default();
            let inputs: Vec<String> = req["input"].as_array().into_iter().flatten().filter_map(|v| v.as_str().map(String::from)).collect();
            kept.lock().unwrap().push(req);
            let vector = |t: &str| json!([1.0, t.len() as f32 / 100.0, t.matches('e').count() as f32 / 10.0]);
            let answer = if first.contains("/api/embed") {
                json!({"embeddings": inputs.iter().map(|t| vector(t)).collect::<Vec<_>>()})
            } else {
                json!({"data": inputs.iter().enumerate().map(|(i, t)| json!({"index": i, "embedding": vector(t)})).collect::<Vec<_>>()})
            };
            let text = answer.to_string();
            let _ = write!(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}", text.len());
        }
    });
    (url, seen)
}

fn configure(env: &Env, embedding: &str) {
    env.write("config/kebab/config.toml", format!("[search]\ndefault_mode = \"hybrid\"\n\n[embedding]\n{embedding}"));
}

/// Every text sent in requests `from..`, with the request's `input_type`.
fn sent(seen: &Arc<Mutex<Vec<Value>>>, from: usize) -> Vec<(String, Option<String>)> {
    let seen = seen.lock().unwrap();
    seen[from..]
        .iter()
        .flat_map(|req| {
            let kind = req["input_type"].as_str().map(String::from);
            req["input"].as_array().cloned().unwrap_or_default().into_iter().map(move |t| (t.as_str().unwrap_or_default().to_string(), kind.clone()))
        })
        .collect()
}

fn notes(env: &Env) {
    env.write("notes/kettle.md", "# Kettle\n\nThe kettle whistles when the water boils.\n");
}

#[test]
fn nomic_over_ollama_marks_chunks_and_queries_with_its_prefixes() {
    let (url, seen) = server();
    let env = Env::new();
    configure(&env, &format!("provider = \"ollama\"\nmodel = \"nomic-embed-text\"\nbase_url = \"{url}\"\n"));
    notes(&env);
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let documents = sent(&seen, 0);
    assert!(!documents.is_empty());
    assert!(documents.iter().all(|(t, kind)| t.starts_with("search_document: ") && kind.is_none()), "{documents:?}");
    let before = seen.lock().unwrap().len();
    env.ok(&["search", "--mode", "vector", "when does it whistle"]);
    assert_eq!(sent(&seen, before), [("search_query: when does it whistle".to_string(), None)]);
}

#[test]
fn e5_over_openai_marks_passages_and_queries() {
    let (url, seen) = server();
    let env = Env::new();
    configure(&env, &format!("provider = \"openai\"\nmodel = \"intfloat/multilingual-e5-small\"\nbase_url = \"{url}\"\n"));
    notes(&env);
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let documents = sent(&seen, 0);
    assert!(documents.iter().all(|(t, kind)| t.starts_with("passage: ") && kind.is_none()), "{documents:?}");
    let before = seen.lock().unwrap().len();
    env.ok(&["search", "--mode", "vector", "kettle"]);
    assert_eq!(sent(&seen, before), [("query: kettle".to_string(), None)]);
}

#[test]
fn input_type_is_sent_instead_of_prefixes_when_configured() {
    let (url, seen) = server();
    let env = Env::new();
    let cfg = format!("provider = \"openai\"\nmodel = \"multilingual-e5-small-q4\"\nbase_url = \"{url}\"\ninput_type = true\n");
    configure(&env, &cfg);
    notes(&env);
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let documents = sent(&seen, 0);
    assert!(documents.iter().all(|(t, kind)| !t.starts_with("passage: ") && kind.as_deref() == Some("passage")), "{documents:?}");
    let before = seen.lock().unwrap().len();
    env.ok(&["search", "--mode", "vector", "kettle"]);
    assert_eq!(sent(&seen, before), [("kettle".to_string(), Some("query".to_string()))]);
}

#[test]
fn changing_the_roles_demands_a_forced_reingest() {
    let (url, _seen) = server();
    let env = Env::new();
    let base = format!("provider = \"ollama\"\nmodel = \"nomic-embed-text\"\nbase_url = \"{url}\"\n");
    configure(&env, &base);
    notes(&env);
    let notes_dir = env.notes();
    let notes_dir = notes_dir.to_str().unwrap();
    env.ok(&["ingest", notes_dir]);
    configure(&env, &format!("{base}query_prefix = \"\"\ndocument_prefix = \"\"\n"));
    env.write("notes/tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n");
    let out = env.run(&["ingest", notes_dir]);
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("the index holds vectors of ollama/nomic-embed-text query="), "{err}");
    assert!(err.contains("kebab ingest --force"), "{err}");
    // A search in vector mode names the missing vectors rather than mixing roles.
    let out = env.run(&["search", "--mode", "vector", "tea"]);
    assert_eq!(out.status.code(), Some(1), "{}", common::stderr(&out));
    env.ok(&["ingest", "--force", notes_dir]);
    env.ok(&["search", "--mode", "vector", "tea"]);
}

#[test]
fn korean_chunks_are_left_to_lexical_search_by_an_english_model() {
    let (url, seen) = server();
    let env = Env::new();
    configure(&env, &format!("provider = \"ollama\"\nmodel = \"nomic-embed-text\"\nbase_url = \"{url}\"\n"));
    notes(&env);
    env.write("notes/ownership-ko.md", "# 소유권\n\n소유권은 러스트가 메모리를 관리하는 규칙의 모음입니다. 각 값에는 소유자가 하나 있습니다.\n");
    let doc = env.json(&["ingest", env.notes().to_str().unwrap()]);
    assert_eq!(doc["embedding"]["unread"], 1, "{doc}");
    assert_eq!(doc["embedding"]["embedded"], 1, "{doc}");
    let texts = sent(&seen, 0);
    assert!(texts.iter().all(|(t, _)| !t.contains("소유권")), "the Korean chunk was sent: {texts:?}");
    // The human summary says so, and nothing is left waiting for a vector.
    let out = env.run(&["ingest", env.notes().to_str().unwrap()]);
    assert!(out.status.success());
    let again = sent(&seen, 0).len();
    assert_eq!(again, texts.len(), "a second ingest re-sent chunks the model does not read");
    // A Korean question still finds its note, lexically.
    let hits = env.json(&["search", "소유권"]);
    assert_eq!(hits["hits"][0]["citation"]["path"].as_str().map(|p| p.ends_with("ownership-ko.md")), Some(true), "{hits}");
    // Told to read Korean, the model gets the chunk after a forced re-ingest.
    configure(&env, &format!("provider = \"ollama\"\nmodel = \"nomic-embed-text\"\nbase_url = \"{url}\"\nreads_cjk = true\n"));
    let doc = env.json(&["ingest", "--force", env.notes().to_str().unwrap()]);
    assert_eq!(doc["embedding"]["unread"], 0, "{doc}");
    assert!(sent(&seen, 0).iter().any(|(t, _)| t.contains("소유권")));
}

#[test]
fn an_english_model_says_how_many_chunks_it_left_to_lexical_search() {
    let (url, _seen) = server();
    let env = Env::new();
    configure(&env, &format!("provider = \"ollama\"\nmodel = \"nomic-embed-text\"\nbase_url = \"{url}\"\n"));
    env.write("notes/ko.md", "# 벡터\n\n벡터는 같은 타입의 값을 여러 개 저장합니다.\n");
    let out = env.run(&["ingest", env.notes().to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &common::stderr(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("left 1 chunk to lexical search"), "{text}");
    let doctor = env.run(&["doctor"]);
    let report = String::from_utf8_lossy(&doctor.stdout).into_owned() + &common::stderr(&doctor);
    assert!(report.contains("queries prefix \"search_query: \", documents prefix \"search_document: \""), "{report}");
    assert!(report.contains("; 1 in a script it does not read is searched lexically"), "{report}");
}

#[test]
fn doctor_says_chunks_in_a_script_the_model_does_not_read_are_searched_lexically_not_that_they_have_vectors() {
    // It said "every chunk has a vector (2 in a script the model does not
    // read: lexical)": those 2 have none.
    let (url, _seen) = server();
    let env = Env::new();
    configure(&env, &format!("provider = \"ollama\"\nmodel = \"nomic-embed-text\"\nbase_url = \"{url}\"\n"));
    notes(&env);
    env.write("notes/ko.md", "# 벡터\n\n벡터는 같은 타입의 값을 여러 개 저장합니다.\n");
    env.write("notes/ko2.md", "# 소유권\n\n소유권은 값마다 주인이 하나라는 규칙입니다.\n");
    let doc = env.json(&["ingest", env.notes().to_str().unwrap()]);
    assert_eq!(doc["embedding"]["unread"], 2, "{doc}");
    let doctor = env.run(&["doctor"]);
    let report = String::from_utf8_lossy(&doctor.stdout).into_owned();
    let vectors = report.lines().find(|l| l.contains("vectors")).unwrap_or_else(|| panic!("{report}"));
    let says = "every chunk the model reads has a vector; 2 in a script it does not read are searched lexically";
    assert_eq!(vectors.split_whitespace().collect::<Vec<_>>().join(" "), format!("ok vectors {says}"), "{report}");
}

#[test]
fn embedding_progress_counts_only_the_chunks_given_a_vector_not_those_left_to_lexical_search() {
    // With a Korean note among English ones the progress line said "2/2
    // chunks embedded" where the summary said 1 was, and 1 left to lexical search.
    let (url, _seen) = server();
    let env = Env::new();
    configure(&env, &format!("provider = \"ollama\"\nmodel = \"nomic-embed-text\"\nbase_url = \"{url}\"\n"));
    notes(&env);
    env.write("notes/ko.md", "# 벡터\n\n벡터는 같은 타입의 값을 여러 개 저장합니다.\n");
    let out = env.run(&["--json", "ingest", env.notes().to_str().unwrap()]);
    let err = common::stderr(&out);
    assert!(out.status.success(), "{err}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (embedded, unread) = (doc["embedding"]["embedded"].as_u64().unwrap(), doc["embedding"]["unread"].as_u64().unwrap());
    assert_eq!((embedded, unread), (1, 1), "{doc}");
    // Off a terminal the last progress line is the count at the end.
    let last = err.lines().rfind(|l| l.contains(" chunks embedded")).unwrap_or_else(|| panic!("{err}"));
    assert!(last.starts_with(&format!("{embedded}/{embedded} chunks embedded")), "{last:?} in\n{err}");
}
