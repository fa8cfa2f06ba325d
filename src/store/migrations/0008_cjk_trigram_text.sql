-- kebab schema level 8: the trigram index holds only a chunk's words with
-- Hangul/CJK in them, not its whole text.
--
-- A query sends the trigram index only the trigrams of its Hangul/CJK words
-- (search/query.rs), so the English words and code of a Korean chunk gave it
-- trigrams nothing searched for, one per letter: more than half of a bulk
-- ingest's time and a third of the database (docs/performance.md, issue 20).
-- The words kept (`words::cjk_words`) are stored beside the text, so the
-- index keeps external content that FTS5 can check ('integrity-check') and
-- rebuild ('rebuild') from; both stay NULL for a chunk without Hangul/CJK.
-- Existing chunks get theirs, and the index is rebuilt, when this migration
-- runs (store/derived.rs, `fill_cjk_words`).
DROP TRIGGER chunks_ad;
DROP TRIGGER chunks_au;
DROP VIEW cjk_chunks;
ALTER TABLE chunks ADD COLUMN cjk_context TEXT;
ALTER TABLE chunks ADD COLUMN cjk_text TEXT;
CREATE VIEW cjk_chunks AS SELECT id, cjk_context AS context, cjk_text AS text FROM chunks WHERE has_cjk;

CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, context, text) VALUES ('delete', old.id, old.context, old.text);
    INSERT INTO chunks_trigram(chunks_trigram, rowid, context, text)
        SELECT 'delete', old.id, old.cjk_context, old.cjk_text WHERE old.has_cjk;
END;
-- kebab never updates a chunk row (a changed file's chunks are deleted and
-- inserted again); this keeps the indexes right for anything else that does,
-- as long as it sets the CJK words with the text. Not fired by writes to the
-- CJK words alone, which this migration's own step makes.
CREATE TRIGGER chunks_au AFTER UPDATE OF context, text, has_cjk ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, context, text) VALUES ('delete', old.id, old.context, old.text);
    INSERT INTO chunks_trigram(chunks_trigram, rowid, context, text)
        SELECT 'delete', old.id, old.cjk_context, old.cjk_text WHERE old.has_cjk;
    INSERT INTO chunks_fts(rowid, context, text) VALUES (new.id, new.context, new.text);
    INSERT INTO chunks_trigram(rowid, context, text)
        SELECT new.id, new.cjk_context, new.cjk_text WHERE new.has_cjk;
END;
