//! Multi-hop asks against a scripted model (DESIGN §4 "Multi-hop"): when the
//! rounds stop, what each step adds to the pool, the caps, and what happens
//! to replies that cannot be read. Every path leaves one `answers` row with
//! its steps.

use std::sync::atomic::AtomicBool;

use kebab::config::Config;
use kebab::error::UserError;
use kebab::ingest::{self, IngestOptions};
use kebab::llm::extractive::Extractive;
use kebab::llm::ChatModel;
use kebab::rag::multihop::{HopKind, HopRecord};
use kebab::rag::{self, AskOptions, AskOutcome};
use kebab::search::engine::Engine;
use kebab::store::Store;

#[path = "common/scripted.rs"]
mod scripted;
use scripted::Scripted;

/// Notes ingested into a database of their own.
struct Notes {
    _dir: tempfile::TempDir,
    db: std::path::PathBuf,
    cfg: Config,
}

impl Notes {
    /// The database as SQLite sees it, to check what was saved.
    fn sql(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(&self.db).unwrap()
    }
}

const KEEPER_Q: &str = "Who keeps the Gull Rock lighthouse?";
const FERRY_Q: &str = "Where does the Heron ferry leave from?";
const QUESTION: &str = "From which harbour does the ferry of the Gull Rock lighthouse keeper leave?";

/// `fixtures/multihop/` (written for these tests): the answer needs the
/// keeper's note (which ferry) and the ferries note (where it leaves from).
fn kb() -> Notes {
    let dir = tempfile::tempdir().unwrap();
    let notes = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/multihop");
    let mut store = Store::open(&dir.path().join("k.db"), false).unwrap();
    let cfg = Config::default();
    let opts = IngestOptions::of(vec![notes]);
    ingest::run(&mut store, &cfg, dir.path(), &opts, &mut |_| {}).unwrap();
    Notes { db: dir.path().join("k.db"), _dir: dir, cfg }
}

fn multi_hop<M: ChatModel + Clone + 'static>(kb: &Notes, model: &M) -> anyhow::Result<AskOutcome> {
    let opts = AskOptions { multi_hop: true, ..AskOptions::new(QUESTION) };
    let store = Store::open(&kb.db, false)?;
    let kb = rag::Kb { cfg: kb.cfg.clone(), store, engine: Engine::lexical(&kb.cfg), model: Box::new(model.clone()) };
    kb.ask(&opts, &mut |_| true, &AtomicBool::new(false))
}

fn strict_multi_hop<M: ChatModel + Clone + 'static>(kb: &Notes, model: &M) -> anyhow::Result<AskOutcome> {
    let opts = AskOptions { multi_hop: true, strict_multi_hop: true, ..AskOptions::new(QUESTION) };
    let store = Store::open(&kb.db, false)?;
    let kb = rag::Kb { cfg: kb.cfg.clone(), store, engine: Engine::lexical(&kb.cfg), model: Box::new(model.clone()) };
    kb.ask(&opts, &mut |_| true, &AtomicBool::new(false))
}

fn list(questions: &[&str]) -> String {
    serde_json::to_string(questions).unwrap()
}

fn kinds(hops: &[HopRecord]) -> Vec<HopKind> {
    hops.iter().map(|h| h.kind).collect()
}

fn hops(out: &AskOutcome) -> &[HopRecord] {
    out.answer.hops.as_deref().expect("a multi-hop answer carries its hops")
}

/// The steps saved with the only `answers` row.
fn saved_hops(kb: &Notes) -> Vec<HopRecord> {
    let (n, json): (i64, Option<String>) = kb
        .sql()
        .query_row("SELECT count(*), max(hops_json) FROM answers", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    assert_eq!(n, 1, "one row per ask");
    serde_json::from_str(&json.expect("hops_json is saved")).unwrap()
}

const ANSWER: &str = "She takes the \"Heron ferry\" [#1], which \"leaves from Saltmarsh harbour\" [#2].";

#[test]
fn an_empty_decide_reply_stops_at_the_first_decide() {
    let kb = kb();
    let model = Scripted::new([list(&[KEEPER_Q]), "[]".into(), "The keeper is \"Marta Vells\" [#1].".to_string()]);
    let out = multi_hop(&kb, &model).unwrap();
    assert_eq!(kinds(hops(&out)), [HopKind::Decompose, HopKind::Decide, HopKind::Synthesize]);
    assert_eq!(model.requests().len(), 3);
    let decide = &hops(&out)[1];
    assert!(decide.sub_queries.is_empty() && decide.context_chunks_added == 0 && !decide.forced_stop);
    assert!(!hops(&out)[2].forced_stop);
    assert!(out.answer.grounded, "{:?}", out.answer);
    assert_eq!(saved_hops(&kb), hops(&out));
}

#[test]
fn a_decide_that_asks_for_more_adds_its_chunks_to_the_pool() {
    let kb = kb();
    let model = Scripted::new([list(&[KEEPER_Q]), list(&[FERRY_Q]), "[]".into(), ANSWER.to_string()]);
    let out = multi_hop(&kb, &model).unwrap();
    let h = hops(&out);
    assert_eq!(kinds(h), [HopKind::Decompose, HopKind::Decide, HopKind::Decide, HopKind::Synthesize]);
    assert_eq!(h[0].sub_queries, [KEEPER_Q]);
    assert_eq!(h[1].sub_queries, [FERRY_Q]);
    assert!(h[1].context_chunks_added >= 1, "{h:?}");
    let pooled: Vec<&str> = out.explain.hits.iter().map(|h| h.doc_path.as_str()).collect();
    assert_eq!(pooled.len(), h[0].context_chunks_added + h[1].context_chunks_added);
    assert!(pooled.iter().any(|p| p.ends_with("ferries.md")), "{pooled:?}");
    // The second decide saw the ferry evidence found by the first.
    let second_decide = &model.requests()[2];
    assert!(second_decide.messages[1].content.contains("Saltmarsh harbour"));
    assert!(out.answer.grounded, "{:?}", out.answer);
    let cited: Vec<&str> = out.answer.citations.iter().map(|c| c.citation.path.as_str()).collect();
    assert!(cited.iter().any(|p| p.ends_with("keeper.md")) && cited.iter().any(|p| p.ends_with("ferries.md")), "{cited:?}");
    assert_eq!(saved_hops(&kb), h);
}

#[test]
fn the_depth_cap_forces_a_stop_without_a_decide_call() {
    let mut kb = kb();
    kb.cfg.rag.multi_hop_max_depth = 1;
    let model = Scripted::new([list(&[KEEPER_Q, FERRY_Q]), ANSWER.to_string()]);
    let out = multi_hop(&kb, &model).unwrap();
    let h = hops(&out);
    assert_eq!(kinds(h), [HopKind::Decompose, HopKind::Synthesize]);
    assert_eq!(model.requests().len(), 2, "no decide call");
    assert!(h[1].forced_stop);
    assert!(h[1].note.as_deref().unwrap().contains("rag.multi_hop_max_depth = 1"));
    assert!(out.answer.grounded);
}

#[test]
fn the_pool_holds_each_chunk_once() {
    let kb = kb();
    // Both sub-questions find the same chunks; the decide's question finds
    // nothing new.
    let model = Scripted::new([
        list(&[FERRY_Q, "Which boat is the Heron ferry?"]),
        list(&["When does the Heron ferry leave Saltmarsh harbour?"]),
        "[]".into(),
        ANSWER.to_string(),
    ]);
    let out = multi_hop(&kb, &model).unwrap();
    let ids: Vec<i64> = out.explain.hits.iter().map(|h| h.chunk_id).collect();
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(ids.len(), unique.len(), "{ids:?}");
    let h = hops(&out);
    assert_eq!(h[0].context_chunks_added, ids.len());
    assert_eq!(h[1].sub_queries.len(), 1);
    assert_eq!(h[1].context_chunks_added, 0);
    // Pool entries are numbered in the order they joined.
    assert_eq!(out.explain.hits.iter().map(|h| h.rank).collect::<Vec<_>>(), (1..=ids.len()).collect::<Vec<_>>());
}

#[test]
fn the_caps_cut_the_sub_questions_taken() {
    let mut kb = kb();
    kb.cfg.rag.multi_hop_max_sub_queries_per_iter = 1;
    kb.cfg.rag.multi_hop_max_total_sub_queries = 1;
    let model = Scripted::new([list(&[KEEPER_Q, FERRY_Q]), ANSWER.to_string()]);
    let out = multi_hop(&kb, &model).unwrap();
    let h = hops(&out);
    assert_eq!(h[0].sub_queries, [KEEPER_Q]);
    assert_eq!(kinds(h), [HopKind::Decompose, HopKind::Synthesize]);
    assert!(h[1].forced_stop && h[1].note.as_deref().unwrap().contains("multi_hop_max_total_sub_queries"));
    assert!(model.requests()[0].messages[0].content.contains("at most 1"));
}

#[test]
fn an_unreadable_decide_reply_answers_from_the_pool() {
    let kb = kb();
    let model = Scripted::new([list(&[KEEPER_Q, FERRY_Q]), "I think that covers it.".into(), ANSWER.to_string()]);
    let out = multi_hop(&kb, &model).unwrap();
    let h = hops(&out);
    assert_eq!(kinds(h), [HopKind::Decompose, HopKind::Decide, HopKind::Synthesize]);
    assert!(h[1].note.as_deref().unwrap().contains("unreadable reply"), "{:?}", h[1]);
    assert!(!h[2].forced_stop);
    assert_eq!(out.answer.refusal_reason, None);
    assert!(out.answer.grounded);
}

#[test]
fn an_unreadable_decomposition_falls_back_to_a_single_pass_answer_with_the_hop_recorded() {
    let kb = kb();
    let model = Scripted::new(["Sure! First we find the keeper, then the ferry.", ANSWER]);
    let out = multi_hop(&kb, &model).unwrap();
    assert_eq!(out.answer.refusal_reason, None, "{:?}", out.answer);
    assert!(out.answer.grounded);
    assert_eq!(model.requests().len(), 2, "the decomposition, then the answer: no decide round");
    let h = hops(&out);
    assert_eq!(kinds(h), [HopKind::Decompose, HopKind::Synthesize]);
    assert_eq!(h[0].sub_queries, [QUESTION], "the question is searched as asked");
    let note = h[0].note.as_deref().unwrap();
    assert!(note.contains("unreadable reply") && note.contains("Sure! First") && note.contains("single-pass"), "{note}");
    assert!(h[0].context_chunks_added > 0);
    assert_eq!(saved_hops(&kb), h);
}

#[test]
fn with_strict_multi_hop_an_unreadable_decomposition_refuses_and_keeps_its_hop() {
    let kb = kb();
    let model = Scripted::new(["Sure! First we find the keeper, then the ferry.", "never"]);
    let out = strict_multi_hop(&kb, &model).unwrap();
    assert_eq!(out.answer.refusal_reason, Some("multi_hop_decompose_failed"));
    assert!(!out.answer.grounded && out.answer.citations.is_empty());
    assert_eq!(model.requests().len(), 1, "nothing is answered after a failed decomposition");
    let h = hops(&out);
    assert_eq!(kinds(h), [HopKind::Decompose]);
    assert!(h[0].note.as_deref().unwrap().contains("Sure! First"));
    assert_eq!(saved_hops(&kb), h);
}

#[test]
fn sub_questions_the_notes_do_not_touch_refuse_with_the_hops_kept() {
    let kb = kb();
    // The decide step may rephrase what found nothing; here it gives up.
    let model = Scripted::new([list(&["Where is the xylophone zeppelin?"]), "[]".into(), "never".into()]);
    let out = multi_hop(&kb, &model).unwrap();
    assert_eq!(out.answer.refusal_reason, Some("no_chunks"));
    assert_eq!(kinds(hops(&out)), [HopKind::Decompose, HopKind::Decide]);
    assert_eq!(model.requests().len(), 2, "no answer is written over an empty pool");
    assert_eq!(saved_hops(&kb).len(), 2);
}

#[test]
fn planning_tokens_count_towards_the_answer() {
    let kb = kb();
    let model = Scripted::new([list(&[KEEPER_Q]), "[]".into(), "The keeper is \"Marta Vells\" [#1].".to_string()]);
    let out = multi_hop(&kb, &model).unwrap();
    // The scripted model counts one completion token per word: 6 + 1 + 6.
    assert_eq!(out.answer.usage.completion_tokens, Some(13));
}

#[test]
fn the_extractive_model_cannot_decompose_and_says_so() {
    let kb = kb();
    let err = multi_hop(&kb, &Extractive::default()).err().expect("an error");
    let user = err.downcast_ref::<UserError>().expect("a user error (exit 1)");
    assert!(user.message.contains("extractive"), "{}", user.message);
    assert!(user.hint.as_deref().unwrap().contains("llm.provider"));
    let n: i64 = kb.sql().query_row("SELECT count(*) FROM answers", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 0);
}

#[test]
fn fragment_and_copied_sub_questions_are_dropped_with_a_note() {
    let kb = kb();
    let header = "[#1] fixtures/multihop/keeper.md · The lighthouse keeper · lines 1–3";
    let model = Scripted::new([list(&["keeper", KEEPER_Q, header, "Heron ferry"]), list(&["ferry", FERRY_Q]), "[]".into(), ANSWER.to_string()]);
    let out = multi_hop(&kb, &model).unwrap();
    let h = hops(&out);
    assert_eq!(h[0].sub_queries, [KEEPER_Q]);
    let note = h[0].note.as_deref().unwrap();
    assert!(note.contains("not searches") && note.contains("\"keeper\"") && note.contains("Heron ferry") && note.contains("[#1] fixtures/multihop/keeper.md"), "{note}");
    assert_eq!(h[1].sub_queries, [FERRY_Q]);
    assert!(h[1].note.as_deref().unwrap().contains("\"ferry\""), "{:?}", h[1].note);
    assert!(out.answer.grounded, "{:?}", out.answer);
}

#[test]
fn a_decomposition_of_only_fragments_searches_the_question_as_asked() {
    let kb = kb();
    let model = Scripted::new([list(&["keeper", "ferry"]), "[]".into(), ANSWER.to_string()]);
    let out = multi_hop(&kb, &model).unwrap();
    let h = hops(&out);
    assert_eq!(h[0].sub_queries, [QUESTION]);
    let note = h[0].note.as_deref().unwrap();
    assert!(note.contains("not searches") && note.contains("searched it as asked"), "{note}");
}

#[test]
fn the_pool_is_sized_to_what_a_small_context_can_take() {
    let mut kb = kb();
    kb.cfg.llm.context_tokens = 1024;
    let model = Scripted::new([list(&[KEEPER_Q, FERRY_Q]), ANSWER.to_string()]);
    let out = multi_hop(&kb, &model).unwrap();
    // 1024 tokens leave room for about two chunks of evidence, not 24.
    assert_eq!(out.explain.hits.len(), 2, "{:?}", out.explain.hits.iter().map(|h| &h.doc_path).collect::<Vec<_>>());
    let h = hops(&out);
    assert_eq!(kinds(h), [HopKind::Decompose, HopKind::Synthesize], "the full pool stops the rounds");
    assert!(h[1].note.as_deref().unwrap().contains("what the model's context"), "{:?}", h[1].note);
    assert_eq!(model.requests().len(), 2);
}
