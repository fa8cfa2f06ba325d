-- kebab schema level 7: an int8 copy of every vector, the one the search
-- scans. A code is the vector divided by its own scale (its largest absolute
-- value / 127) and rounded: a quarter of the f32 vector's bytes, in a table
-- of its own so loading the codes never reads the f32 rows' pages. The f32
-- vectors stay in `embeddings`, read only for the scan's best candidates,
-- whose exact cosines decide the order. One row per `embeddings` row with a
-- vector (dim > 0); kebab writes both in one transaction, and the triggers
-- keep the codes in step with any other change to `embeddings`. Existing
-- vectors are encoded when this migration runs (store/vectors.rs).
CREATE TABLE embedding_codes (
    chunk_id  INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    model     TEXT NOT NULL,
    scale     REAL NOT NULL,
    code      BLOB NOT NULL
);
CREATE TRIGGER embedding_codes_follow_delete AFTER DELETE ON embeddings BEGIN
    DELETE FROM embedding_codes WHERE chunk_id = old.chunk_id;
END;
CREATE TRIGGER embedding_codes_follow_model AFTER UPDATE OF model ON embeddings BEGIN
    UPDATE embedding_codes SET model = new.model WHERE chunk_id = new.chunk_id;
END;
