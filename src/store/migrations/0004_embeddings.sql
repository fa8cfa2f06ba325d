-- kebab schema level 4: one vector per chunk, for semantic search. Vectors
-- are little-endian f32, L2-normalised; one model per database at a time.
CREATE TABLE embeddings (
    chunk_id  INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    model     TEXT NOT NULL,
    dim       INTEGER NOT NULL,
    vector    BLOB NOT NULL
);
