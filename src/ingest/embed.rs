//! The embedding stage of ingest: every chunk without a vector gets one, in
//! batches committed as they finish, so an interrupted run picks up where it
//! stopped. A chunk the model does not read (Korean for an English model) is
//! recorded as such and left to lexical search. A database holds one model's
//! vectors: a different configured model (or roles) is refused unless
//! `--force` re-embeds everything.

use std::time::Instant;

use anyhow::Result;
use serde::Serialize;

use crate::embed::{EmbedError, Embedder, Role};
use crate::error::UserError;
use crate::store::Store;

/// Chunks read and committed per round.
const ROUND: usize = 256;
/// Texts per model call; sorted by length so padding stays small.
const BATCH: usize = 32;

#[derive(Debug, Default, Serialize)]
pub struct EmbedSummary {
    pub model: String,
    pub embedded: usize,
    /// Chunks in a script the model does not read: searched lexically.
    pub unread: usize,
    pub elapsed_ms: u64,
}

/// `on(done, total)` after each batch, counting the chunks given a vector:
/// those in a script the model does not read are left out of both (found
/// per round, so `total` shrinks as they are), or the bar said "24/24 chunks
/// embedded" where the summary said 17 were. Vectors are committed once per round.
pub fn embed_missing(store: &Store, model: &dyn Embedder, force: bool, on: &mut dyn FnMut(usize, usize)) -> Result<EmbedSummary> {
    let started = Instant::now();
    let mut dim = None;
    if let Some((have, have_dim)) = store.embedding_model()? {
        dim = (have_dim > 0).then_some(have_dim);
        if have != model.model_id() {
            if !force {
                return Err(UserError::new(
                    "model_mismatch",
                    format!("the index holds vectors of {have}, but the configured embedder is {}", model.model_id()),
                )
                .with_hint("run `kebab ingest --force` to re-embed every chunk with the configured model")
                .into());
            }
            store.clear_vectors()?;
            dim = None;
        }
    }
    let total = store.count_without_vectors()? as usize;
    let (mut done, mut unread) = (0, 0);
    loop {
        let round = store.chunks_without_vectors(ROUND)?;
        if round.is_empty() {
            break;
        }
        let (mut round, passed): (Vec<_>, Vec<_>) = round.into_iter().partition(|(_, t)| model.reads(t));
        round.sort_by_key(|(_, t)| t.len());
        unread += passed.len();
        let mut vectors: Vec<(i64, Vec<f32>)> = passed.into_iter().map(|(id, _)| (id, Vec::new())).collect();
        for batch in round.chunks(BATCH) {
            let texts: Vec<&str> = batch.iter().map(|(_, t)| t.as_str()).collect();
            let out = model.embed(&texts, Role::Document)?;
            check_shape(&out, texts.len(), &mut dim, model.model_id())?;
            vectors.extend(batch.iter().map(|(id, _)| *id).zip(out));
            // Progress per batch: a round of long chunks takes a minute on a laptop.
            let embedded = done + vectors.len() - unread;
            // Another ingest may add chunks meanwhile: more than `total` counted at the start.
            on(embedded, total.saturating_sub(unread).max(embedded));
        }
        store.put_vectors(model.model_id(), &vectors)?;
        done += vectors.len();
    }
    let elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(EmbedSummary { model: model.model_id().to_string(), embedded: done - unread, unread, elapsed_ms })
}

/// One vector per text, every one of the same length as the stored ones: a
/// server that answers short or changes dimension must not leave a mixed index.
fn check_shape(out: &[Vec<f32>], texts: usize, dim: &mut Option<usize>, model: &str) -> Result<()> {
    if out.len() != texts {
        return Err(EmbedError::Model(format!("{model} returned {} vectors for {texts} texts", out.len())).into());
    }
    for v in out {
        let want = *dim.get_or_insert(v.len());
        if v.len() != want || want == 0 {
            return Err(EmbedError::Model(format!("{model} returned a vector of {} numbers where the index holds {want}", v.len()))
                .into());
        }
    }
    Ok(())
}
