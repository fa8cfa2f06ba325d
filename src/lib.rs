//! kebab: a local-first knowledge base you talk to. The binary (`main.rs`)
//! only parses and runs `cli`; every stage of the work lives in a module
//! named for its job.
//!
//! Layers: script, words, markup, config, error, http → store → embed, llm → search, ingest → rag → session, eval → render → repl, mcp → cli
//!
//! Each module imports only from layers before it (left of its arrow), never
//! from its own layer's neighbours or later ones; `scripts/layers.py` checks
//! this for shipped code (a unit-test module may check a stage against a
//! later one, e.g. the extractive answer against rag-v2 verification). `store` owns every table; `rag::Kb` is the one way to ask.

pub mod cli;
pub mod config;
pub mod embed;
pub mod error;
pub mod eval;
pub mod http;
pub mod ingest;
pub mod llm;
pub mod markup;
pub mod mcp;
pub mod rag;
pub mod render;
pub mod repl;
pub mod script;
pub mod search;
pub mod session;
pub mod store;
pub mod words;
