//! kebab: a local-first knowledge base you talk to. The binary (`main.rs`)
//! only parses and runs `cli`; every stage of the work lives in a module
//! named for its job.

pub mod cli;
pub mod config;
pub mod embed;
pub mod error;
pub mod eval;
pub mod ingest;
pub mod llm;
pub mod rag;
pub mod render;
pub mod repl;
pub mod script;
pub mod search;
pub mod session;
pub mod store;
