//! Evaluation: measuring kebab on labelled data. `beir` reads BEIR-style
//! files, `metrics` scores rankings, `retrieval` runs the queries, `answers`
//! scores whole answers against gold strings.

pub mod answers;
pub mod beir;
pub mod dialogues;
pub mod labelled;
pub mod metrics;
pub mod retrieval;
pub mod split;
