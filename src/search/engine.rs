//! The search engine every caller uses: one entry point for the three modes.
//! The embedder's weights and the stored vectors are loaded lazily, on the
//! first vector or hybrid query, so lexical-only work and start-up never pay
//! for them; the vectors are reloaded when another process has changed the
//! database since (a REPL left open during an ingest).

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Instant;

use anyhow::{Result, anyhow};
use serde::Serialize;

use super::{Mode, SearchHit, hybrid, lexical, vector};
use crate::config::Config;
use crate::embed::Embedder;
use crate::error::UserError;
use crate::store::{Store, VectorSet};

/// Candidates each channel contributes to a fusion.
pub const POOL: usize = 100;

pub struct Engine {
    embedder: Option<Box<dyn Embedder>>,
    /// `embedding.provider = "none"`: no embedder by choice, so the fix is
    /// the config, not installing the model.
    switched_off: bool,
    /// The vectors with the database's `data_version` they were read at.
    vectors: RefCell<Option<(i64, Rc<VectorSet>)>>,
    /// The last text embedded and its vector: an ask embeds its question for
    /// retrieval, then the gate reads the same question's cosines.
    last_query: RefCell<Option<(String, Rc<Vec<f32>>)>>,
    heading_weight: f64,
    rrf_k: f64,
    /// The fusion of queries in a Hangul/CJK script (see `hybrid`).
    cjk_fusion: hybrid::Fusion,
}

/// What `--trace` shows: the lexical channel's queries (flattened, as a
/// lexical search has always shown them), the vector channel, the fusion.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Trace {
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub lexical: Option<lexical::Trace>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector: Option<VectorTrace>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fusion: Option<FusionTrace>,
    pub total_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct VectorTrace {
    pub model: String,
    /// Vectors scanned.
    pub vectors: usize,
    /// (chunk id, cosine), best first.
    pub candidates: Vec<(i64, f32)>,
    /// Loading the model's weights: the first query only.
    pub model_load_ms: f64,
    pub embed_ms: f64,
    /// Reading the vectors from the database; zero when already in memory.
    pub load_ms: f64,
    pub scan_ms: f64,
}

/// What a vector scan found and what it took.
struct Found {
    candidates: Vec<(i64, f32)>,
    load_ms: f64,
    scan_ms: f64,
}

impl VectorTrace {
    fn new(model: &dyn Embedder, set: &VectorSet, q: &QueryVector, found: Found) -> VectorTrace {
        VectorTrace {
            model: model.model_id().to_string(),
            vectors: set.ids.len(),
            candidates: found.candidates,
            model_load_ms: q.model_load_ms,
            embed_ms: q.embed_ms,
            load_ms: found.load_ms,
            scan_ms: found.scan_ms,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct FusionTrace {
    pub rrf_k: f64,
    /// When this query's lexical top hit stays first (Hangul/CJK queries).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lead: Option<hybrid::Lead>,
    /// The lexical channel's candidates: (chunk id, BM25), best first.
    pub lexical_candidates: Vec<(i64, f64)>,
    pub fuse_ms: f64,
}

impl Engine {
    /// An engine searching as `search` configures (heading weight, fusion).
    pub fn new(embedder: Option<Box<dyn Embedder>>, search: &crate::config::SearchConfig) -> Engine {
        Engine {
            embedder,
            switched_off: false,
            vectors: RefCell::new(None),
            last_query: RefCell::new(None),
            heading_weight: search.heading_weight,
            rrf_k: search.rrf_k,
            cjk_fusion: cjk_fusion(search),
        }
    }

    /// The configured engine, and a one-line notice when the embedder is
    /// configured but cannot be used (searches then run lexical).
    pub fn from_config(cfg: &Config, paths: &crate::config::Paths) -> (Engine, Option<String>) {
        let (embedder, notice) = crate::embed::select(&cfg.embedding, paths);
        let mut engine = Engine::new(embedder, &cfg.search);
        engine.switched_off = cfg.embedding.provider == crate::config::EmbeddingProvider::None;
        (engine, notice)
    }

    /// How `text`'s channels are fused: the CJK fusion for a question in a
    /// Hangul/CJK script, plain reciprocal rank otherwise.
    pub fn fusion_for(&self, text: &str) -> hybrid::Fusion {
        if crate::script::has_cjk(text) { self.cjk_fusion } else { hybrid::Fusion::plain(self.rrf_k) }
    }

    /// Lexical only (tests, evaluation of the lexical channel).
    pub fn lexical(cfg: &Config) -> Engine {
        Engine::new(None, &cfg.search)
    }

    pub fn embedder(&self) -> Option<&dyn Embedder> {
        self.embedder.as_deref()
    }

    /// The mode a search really runs in. A mode the user asked for by name
    /// that cannot run is an error; the configured default falls back to
    /// lexical, with the reason as a notice.
    pub fn resolve(&self, store: &Store, requested: Mode, explicit: bool) -> Result<(Mode, Option<String>)> {
        if requested == Mode::Lexical {
            return Ok((requested, None));
        }
        let why = match &self.embedder {
            None if self.switched_off => Some(
                UserError::new("no_embedder", format!("{} search needs an embedding model, and embedding.provider is \"none\"", requested.as_str()))
                    .with_hint("set embedding.provider (e.g. \"local\") in the config, then run `kebab ingest`"),
            ),
            None => Some(UserError::new("no_embedder", format!("{} search needs an embedding model", requested.as_str()))
                .with_hint("run `kebab models install`, then `kebab ingest` to embed the notes")),
            Some(m) if store.chunk_count()? > 0 && !store.has_vectors(m.model_id())? => {
                Some(no_vectors(store, m.model_id(), explicit)?)
            }
            Some(m) if store.newest_chunk_lacks_vector()? => {
                // Searchable as it is, but the vectors see only part of the notes: say so.
                return Ok((requested, Some(vectors_incomplete(store, m.model_id(), requested)?)));
            }
            Some(_) => None,
        };
        match why {
            None => Ok((requested, None)),
            Some(e) if explicit => Err(e.into()),
            Some(e) => Ok((Mode::Lexical, Some(format!("{}: lexical search only ({})", e.message, e.hint.unwrap_or_default())))),
        }
    }

    /// The vectors of `model` of `dim` floats (`None`: of the dimension the
    /// database holds), kept while the index does not change.
    fn vectors(&self, store: &Store, model: &dyn Embedder, dim: Option<usize>) -> Result<(Rc<VectorSet>, f64)> {
        let version = store.data_version()?;
        if let Some((v, set)) = &*self.vectors.borrow()
            && *v == version
            && dim.is_none_or(|d| set.dim == d)
        {
            return Ok((set.clone(), 0.0));
        }
        let dim = match dim {
            Some(d) => d,
            None => store.embedding_model()?.map_or(0, |(_, d)| d),
        };
        let t = Instant::now();
        let set = Rc::new(store.load_vectors(model.model_id(), dim)?);
        *self.vectors.borrow_mut() = Some((version, set.clone()));
        Ok((set, ms(t)))
    }

    fn model(&self) -> Result<&dyn Embedder> {
        self.embedder.as_deref().ok_or_else(|| {
            anyhow!(UserError::new("no_embedder", "vector and hybrid search need the embedding model")
                .with_hint("run `kebab models install`, then `kebab ingest` to embed the notes"))
        })
    }

    fn nearest(&self, store: &Store, text: &str, k: usize) -> Result<VectorTrace> {
        let model = self.model()?;
        let q = self.query_vector(model, text)?;
        self.scan(store, model, q, k)
    }

    /// The `k` stored vectors nearest `q`.
    fn scan(&self, store: &Store, model: &dyn Embedder, q: QueryVector, k: usize) -> Result<VectorTrace> {
        let (set, load_ms) = self.vectors(store, model, Some(q.v.len()))?;
        let t = Instant::now();
        let candidates = vector::top_k(store, &set, &q.v, k)?;
        Ok(VectorTrace::new(model, &set, &q, Found { candidates, load_ms, scan_ms: ms(t) }))
    }

    /// `text`'s vector, embedded once for as long as it is the latest query.
    fn query_vector(&self, model: &dyn Embedder, text: &str) -> Result<QueryVector> {
        match self.cached_query(text) {
            Some(v) => Ok(QueryVector::cached(v)),
            None => Ok(self.remember(text, embed_query(model, text)?)),
        }
    }

    /// Runs `work` (the lexical channel) on this thread while another
    /// embeds `text` and scans the vectors' codes for its candidates, on one
    /// core: SQLite's search and the vector channel then share the two cores
    /// instead of taking turns (docs/performance.md). Only the exact re-score
    /// of the `k` best, which reads the store, waits for `work`.
    fn near_beside<T>(&self, store: &Store, text: &str, k: usize, work: impl FnOnce() -> T) -> Result<(T, VectorTrace)> {
        let model = self.model()?;
        let (set, load_ms) = self.vectors(store, model, None)?;
        let cached = self.cached_query(text);
        let pool = vector::rescore_pool(k);
        let (out, (embedded, candidates, scan_ms)) = std::thread::scope(|s| {
            let (set, cached) = (&*set, cached.as_deref());
            let near = s.spawn(move || {
                let embedded = match cached {
                    Some(_) => None,
                    None => Some(embed_query(model, text)),
                };
                let q = match (&embedded, cached) {
                    (Some(Ok((v, ..))), _) => v.as_slice(),
                    (None, Some(v)) => v.as_slice(),
                    _ => &[],
                };
                let t = Instant::now();
                let candidates = vector::candidates_on(set, q, pool, 1);
                (embedded, candidates, ms(t))
            });
            let out = work();
            let stopped = || (Some(Err(anyhow!("embedding the query stopped unexpectedly"))), Vec::new(), 0.0);
            (out, near.join().unwrap_or_else(|_| stopped()))
        });
        let q = match (cached, embedded) {
            (Some(v), _) => QueryVector::cached(v),
            (None, Some(e)) => self.remember(text, e?),
            (None, None) => return Err(anyhow!("the query was not embedded")),
        };
        if q.v.len() != set.dim {
            // Vectors of another dimension than the model's (none yet, or
            // another model's): the scan takes the query's, as alone.
            return Ok((out, self.scan(store, model, q, k)?));
        }
        let t = Instant::now();
        let candidates = vector::exact_top(store, set.dim, &candidates, &q.v, k)?;
        Ok((out, VectorTrace::new(model, &set, &q, Found { candidates, load_ms, scan_ms: scan_ms + ms(t) })))
    }

    fn cached_query(&self, text: &str) -> Option<Rc<Vec<f32>>> {
        self.last_query.borrow().as_ref().filter(|(last, _)| last == text).map(|(_, v)| v.clone())
    }

    fn remember(&self, text: &str, (v, model_load_ms, embed_ms): (Vec<f32>, f64, f64)) -> QueryVector {
        let v = Rc::new(v);
        *self.last_query.borrow_mut() = Some((text.to_string(), v.clone()));
        QueryVector { v, model_load_ms, embed_ms }
    }

    /// The cosines of `text`, read as a query, and each of `passages`, read
    /// as documents: how close in meaning each passage is to the question.
    pub fn closeness(&self, text: &str, passages: &[&str]) -> Result<Vec<f32>> {
        let model = self.embedder.as_deref().ok_or_else(|| anyhow!("closeness needs the embedding model"))?;
        let q = self.query_vector(model, text)?.v;
        let vs = model.embed(passages, crate::embed::Role::Document)?;
        Ok(vs.iter().map(|v| vector::dot(&q, v)).collect())
    }

    /// The mode a query really runs in: lexical when the embedder cannot read
    /// the query (Korean with the English-only built-in model).
    pub fn mode_for(&self, text: &str, mode: Mode) -> Mode {
        match &self.embedder {
            Some(m) if mode != Mode::Lexical && !m.reads(text) => Mode::Lexical,
            _ => mode,
        }
    }

    /// The cosine of `text` and its nearest chunk (the gate's vector evidence).
    pub fn best_cosine(&self, store: &Store, text: &str) -> Result<Option<f64>> {
        Ok(self.nearest(store, text, 1)?.candidates.first().map(|c| c.1 as f64))
    }

    /// The cosines of `text` and its `k` nearest chunks, nearest first (the
    /// gate's vector signals: the best one and its margin over the k-th).
    pub fn top_cosines(&self, store: &Store, text: &str, k: usize) -> Result<Vec<f64>> {
        Ok(self.nearest(store, text, k)?.candidates.iter().map(|c| c.1 as f64).collect())
    }

    pub fn search(&self, store: &Store, text: &str, mode: Mode, k: usize) -> Result<Vec<SearchHit>> {
        Ok(self.search_traced(store, text, mode, k, false)?.0)
    }

    /// The `k` best hits in `mode`, with what each channel did.
    pub fn search_traced(&self, store: &Store, text: &str, mode: Mode, k: usize, snippets: bool) -> Result<(Vec<SearchHit>, Trace)> {
        let started = Instant::now();
        let lexical = |k, snippets| lexical::search(store, text, lexical::Options { k, heading_weight: self.heading_weight, snippets });
        let mut trace = Trace::default();
        let mode = self.mode_for(text, mode);
        let mut hits = match mode {
            Mode::Lexical => {
                let (hits, t) = lexical(k, snippets)?;
                trace.lexical = Some(t);
                hits
            }
            Mode::Vector => {
                let near = self.nearest(store, text, k)?;
                let mut hits = hybrid::fuse(store, Vec::new(), &near.candidates, hybrid::Fusion::plain(self.rrf_k), k)?;
                for h in &mut hits {
                    h.score = h.retrieval.vector_score.unwrap_or(0.0);
                    h.score_kind = "cosine";
                    h.retrieval.method = "vector";
                    h.retrieval.fusion_score = None;
                }
                trace.vector = Some(near);
                hits
            }
            Mode::Hybrid => {
                let pool = POOL.max(k);
                let (lex, near) = self.near_beside(store, text, pool, || lexical(pool, false))?;
                let (lex, t) = lex?;
                let f = Instant::now();
                let lexical_candidates = lex.iter().map(|h| (h.chunk_id, h.score)).collect();
                let fusion = self.fusion_for(text);
                let hits = hybrid::fuse(store, lex, &near.candidates, fusion, k)?;
                trace.lexical = Some(t);
                trace.vector = Some(near);
                trace.fusion = Some(FusionTrace {
                    rrf_k: fusion.rrf_k,
                    lead: fusion.lead,
                    lexical_candidates,
                    fuse_ms: ms(f),
                });
                hits
            }
        };
        if snippets && mode != Mode::Lexical {
            lexical::fill_snippets(store, text, &mut hits)?;
        }
        trace.total_ms = ms(started);
        Ok((hits, trace))
    }
}

/// The CJK fusion `search` configures (a lead ratio of 0 is none).
fn cjk_fusion(search: &crate::config::SearchConfig) -> hybrid::Fusion {
    let lead = (search.cjk_lexical_lead > 0.0).then_some(hybrid::Lead { ratio: search.cjk_lexical_lead, within: search.cjk_lead_within });
    hybrid::Fusion { rrf_k: search.rrf_k, lead }
}

/// A query's vector and what getting it took (zero when it was cached).
struct QueryVector {
    v: Rc<Vec<f32>>,
    model_load_ms: f64,
    embed_ms: f64,
}

impl QueryVector {
    fn cached(v: Rc<Vec<f32>>) -> QueryVector {
        QueryVector { v, model_load_ms: 0.0, embed_ms: 0.0 }
    }
}

/// Embeds `text` as a query, loading the weights first if need be: the
/// vector, the load's and the embedding's milliseconds.
fn embed_query(model: &dyn Embedder, text: &str) -> Result<(Vec<f32>, f64, f64)> {
    let t = Instant::now();
    model.load()?;
    let load_ms = ms(t);
    let t = Instant::now();
    let v = model.embed(&[text], crate::embed::Role::Query)?.pop().unwrap_or_default();
    Ok((v, load_ms, ms(t)))
}

/// Why notes that are indexed have no vectors of `model` to search. Without
/// another model's vectors, an ingest is embedding them now, or one stopped
/// (or ran without the model) before it wrote any: which, the database does
/// not say, and "run `kebab ingest`" alone read as if nothing were indexed.
/// Lexical mode is named only to a search that asked for another by name:
/// the default one falls back to it by itself.
fn no_vectors(store: &Store, model: &str, explicit: bool) -> Result<UserError> {
    if let Some((have, _)) = store.embedding_model()?.filter(|(have, _)| have != model) {
        return Ok(UserError::new("no_vectors", format!("the index holds vectors of {have}, not of the configured {model}"))
            .with_hint("run `kebab ingest --force` to re-embed every chunk with the configured model"));
    }
    let message = match store.chunk_count()? {
        1 => format!("the indexed chunk has no vector of {model} yet"),
        n => format!("the {n} indexed chunks have no vectors of {model} yet"),
    };
    let meanwhile = if explicit { "; `--mode lexical` searches by words meanwhile" } else { "" };
    Ok(UserError::new("no_vectors", message)
        .with_hint(format!("wait for the ingest embedding them to finish, or run `kebab ingest` if none is running{meanwhile}")))
}

/// The notice for notes only some of which have vectors yet: the others are
/// found by their words alone (hybrid) or not at all (vector) until they do.
fn vectors_incomplete(store: &Store, model: &str, mode: Mode) -> Result<String> {
    let (missing, chunks) = (store.count_without_vectors()?, store.chunk_count()?);
    let reach = match mode {
        Mode::Vector => "vector search cannot find them",
        _ => "hybrid search finds them by their words only",
    };
    Ok(format!(
        "{missing} of {chunks} indexed chunks have no vector of {model} yet, so {reach}: wait for the ingest embedding them \
         to finish, or run `kebab ingest` if none is running"
    ))
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::thread::ThreadId;

    use super::*;
    use crate::config::SearchConfig;
    use crate::embed::{EmbedError, Role};

    /// Embeds every text as one direction and notes the thread it ran on;
    /// `down` fails as an unreachable server would.
    struct Recording {
        threads: Arc<Mutex<Vec<ThreadId>>>,
        down: bool,
    }

    impl Embedder for Recording {
        fn model_id(&self) -> &str {
            "recording"
        }
        fn reads(&self, _: &str) -> bool {
            true
        }
        fn embed(&self, texts: &[&str], _: Role) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.threads.lock().unwrap().push(std::thread::current().id());
            if self.down {
                return Err(EmbedError::Model("the embedding server is down".into()));
            }
            Ok(texts.iter().map(|_| vec![1.0, 0.0]).collect())
        }
    }

    fn notes(dir: &std::path::Path) -> Store {
        let mut store = Store::open(&dir.join("k.db"), false).unwrap();
        let (root, _) = store.ensure_root(dir).unwrap();
        let texts = ["Bees fan the hive to cool it.", "Queens lay eggs in spring."];
        store.apply_source(&crate::store::test_source(root, "bees.md", &texts), false).unwrap();
        let ids: Vec<i64> = store.chunks_by_ids(&[1, 2]).unwrap().iter().map(|c| c.chunk_id).collect();
        store.put_vectors("recording", &ids.iter().map(|id| (*id, vec![1.0, 0.0])).collect::<Vec<_>>()).unwrap();
        store
    }

    fn engine(down: bool) -> (Engine, Arc<Mutex<Vec<ThreadId>>>) {
        let threads = Arc::new(Mutex::new(Vec::new()));
        let embedder = Recording { threads: threads.clone(), down };
        (Engine::new(Some(Box::new(embedder)), &SearchConfig::default()), threads)
    }

    #[test]
    fn a_hybrid_search_embeds_its_question_on_another_thread_than_the_lexical_search_and_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = notes(dir.path());
        let (engine, threads) = engine(false);
        let hits = engine.search(&store, "how do bees cool the hive", Mode::Hybrid, 2).unwrap();
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].retrieval.lexical_rank, Some(1), "the lexical channel ran and found the bee chunk");
        assert!(hits[0].retrieval.vector_rank.is_some(), "the vector channel ran");
        let ran_on = threads.lock().unwrap().clone();
        assert_eq!(ran_on.len(), 1);
        assert_ne!(ran_on[0], std::thread::current().id());
        // The gate then reads the same question's cosines: no second embedding.
        engine.best_cosine(&store, "how do bees cool the hive").unwrap();
        assert_eq!(threads.lock().unwrap().len(), 1);
    }

    #[test]
    fn a_hybrid_search_whose_embedder_fails_reports_the_embedder_error() {
        let dir = tempfile::tempdir().unwrap();
        let store = notes(dir.path());
        let (engine, _) = engine(true);
        let err = engine.search(&store, "how do bees cool the hive", Mode::Hybrid, 2).unwrap_err();
        assert!(format!("{err:#}").contains("the embedding server is down"), "{err:#}");
    }
}
