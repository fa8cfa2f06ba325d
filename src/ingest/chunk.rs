//! Types shared by the chunkers: what a chunk looks like before it is stored,
//! and the size limits every chunker honours.

/// What a chunker produces is what the store takes: `store::ChunkDraft`.
pub use crate::store::ChunkDraft;

/// Size limits, in characters (not bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkLimits {
    /// Small neighbouring pieces are merged until a chunk reaches about this size.
    pub target_chars: usize,
    /// A chunk longer than this is split on paragraph boundaries (then line
    /// boundaries, then characters) — except a fenced code block, which is never split.
    pub max_chars: usize,
}

impl Default for ChunkLimits {
    fn default() -> Self {
        ChunkLimits { target_chars: 800, max_chars: 1600 }
    }
}
