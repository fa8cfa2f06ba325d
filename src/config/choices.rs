//! The config's typed choices: a provider, a retrieval mode or a prompt
//! template is one of a fixed set, so a new one cannot compile with a place
//! forgotten, and an unknown value in the file is refused naming the key and
//! the allowed values.

use serde::{Deserialize, Serialize};

/// Which retrieval channels a search uses (`search.default_mode`, `--mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// BM25 over the word and trigram indexes.
    Lexical,
    /// Cosine similarity of embeddings (exact scan).
    Vector,
    /// Both, fused by reciprocal rank.
    Hybrid,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Lexical => "lexical",
            Mode::Vector => "vector",
            Mode::Hybrid => "hybrid",
        }
    }
}

/// The prompt an answer is asked with (`rag.prompt_template_version`, `--template`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum Template {
    /// Answer only from the evidence and cite `[#n]`.
    #[value(name = "rag-v1")]
    #[serde(rename = "rag-v1")]
    V1,
    /// Also quote the exact evidence words before each citation.
    #[value(name = "rag-v2")]
    #[serde(rename = "rag-v2")]
    V2,
    /// Short rules and one worked example with `[#1]` markers: what small
    /// local models follow best.
    #[value(name = "compact")]
    #[serde(rename = "compact")]
    Compact,
}

impl Template {
    pub fn as_str(self) -> &'static str {
        match self {
            Template::V1 => "rag-v1",
            Template::V2 => "rag-v2",
            Template::Compact => "compact",
        }
    }
}

/// `rag.attribution`: what happens to answer sentences the model did not cite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Attribution {
    /// kebab aligns each uncited sentence with the evidence and marks it
    /// `[n*]` when supported; any unsupported sentence refuses the answer.
    Auto,
    /// Strict: an answer without the model's own `[#n]` markers is refused.
    Off,
}

/// `rag.evidence`: what each packed evidence entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum EvidenceMode {
    /// The whole chunk.
    Chunks,
    /// The chunk's best window of sentences (around the question's words),
    /// with its heading: a prompt several times smaller, for CPU models.
    Passages,
}

impl EvidenceMode {
    pub fn as_str(self) -> &'static str {
        match self {
            EvidenceMode::Chunks => "chunks",
            EvidenceMode::Passages => "passages",
        }
    }
}

/// `llm.provider`: who answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LlmProvider {
    /// Ollama when its server has the model, else the built-in extractive model.
    Auto,
    Ollama,
    /// Any OpenAI-compatible server (llama.cpp, vLLM, LM Studio, OpenAI).
    Openai,
    /// The built-in extractive model: quotes the evidence, no server.
    Extractive,
}

impl LlmProvider {
    pub fn as_str(self) -> &'static str {
        match self {
            LlmProvider::Auto => "auto",
            LlmProvider::Ollama => "ollama",
            LlmProvider::Openai => "openai",
            LlmProvider::Extractive => "extractive",
        }
    }
}

/// `embedding.provider`: who turns text into vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbeddingProvider {
    /// The built-in all-MiniLM-L6-v2, run in-process.
    Local,
    Ollama,
    Openai,
    /// No vectors: lexical search only.
    None,
}

impl EmbeddingProvider {
    pub fn as_str(self) -> &'static str {
        match self {
            EmbeddingProvider::Local => "local",
            EmbeddingProvider::Ollama => "ollama",
            EmbeddingProvider::Openai => "openai",
            EmbeddingProvider::None => "none",
        }
    }

    /// Served by a model server (`ollama`, `openai`).
    pub fn is_server(self) -> bool {
        matches!(self, EmbeddingProvider::Ollama | EmbeddingProvider::Openai)
    }
}
