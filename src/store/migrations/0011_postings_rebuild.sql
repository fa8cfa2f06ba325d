-- kebab schema level 11: blocks whose chunks were updated in place.
-- A stale block that only lost chunks (a file changed or left: its chunks
-- are deleted, a changed file's new ones take new ids in the newest block)
-- is settled by taking their entries out of its lists, without tokenizing
-- the chunks it keeps (store/postings/prune.rs). A chunk updated in place
-- changes what its own entries say, so its block is rebuilt whole: the
-- update trigger now says so here.
CREATE TABLE postings_rebuild (block INTEGER PRIMARY KEY);

DROP TRIGGER chunks_postings_au;
CREATE TRIGGER chunks_postings_au AFTER UPDATE OF context, text, has_cjk, cjk_context, cjk_text ON chunks BEGIN
    INSERT OR IGNORE INTO postings_stale(block) VALUES (old.id >> 12), (new.id >> 12);
    INSERT OR IGNORE INTO postings_rebuild(block) VALUES (old.id >> 12), (new.id >> 12);
END;

-- Blocks already stale may have been updated under the old trigger.
INSERT OR IGNORE INTO postings_rebuild(block) SELECT block FROM postings_stale;
