-- kebab schema level 6: the writer indexes a new chunk itself.
--
-- An INSERT that fires a trigger runs as a statement inside the writer's
-- transaction, and SQLite opens a savepoint for it; FTS5 writes its pending
-- terms out as a new segment at every savepoint, so the insert trigger made
-- one tiny segment per chunk and merging them was most of an ingest's time.
-- `store::write` now inserts each chunk's rows into chunks_fts (and, for a
-- chunk with Hangul/CJK, chunks_trigram) right after the chunk, in the same
-- transaction. Deletes and updates are rare and keep their triggers.
DROP TRIGGER chunks_ai;
