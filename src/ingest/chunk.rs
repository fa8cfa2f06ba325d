//! Types shared by the chunkers: what a chunk looks like before it is stored,
//! and the size limits every chunker honours.

/// A piece of a document ready to be stored: its text, where it sits in the
/// source (1-based, inclusive line span) and the headings above it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkDraft {
    /// Headings from the outermost to the innermost, without `#` marks.
    pub heading_path: Vec<String>,
    /// The chunk's text exactly as it stands in the source lines it spans.
    pub text: String,
    /// First line of the chunk in the source file, 1-based.
    pub line_start: u32,
    /// Last line of the chunk in the source file, 1-based, inclusive.
    pub line_end: u32,
}

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
