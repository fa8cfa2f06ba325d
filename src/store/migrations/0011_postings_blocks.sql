-- kebab schema level 11: postings blocks of 16,384 chunk ids (were 4,096),
-- and blocks whose chunks were updated in place.
--
-- A stale block that lost chunks or gained newer ones (a file changed or
-- left: its chunks are deleted, a changed file's new ones take the newest
-- ids) is patched from its stored lists, without tokenizing the chunks it
-- kept (store/postings/patch.rs). That makes a block's size cheap to edit,
-- and a phrase's lists take one index seek per block: larger blocks, a
-- quarter of the seeks (docs/performance.md, issue 20). A chunk updated in
-- place changes what its own entries say, so its block is rebuilt whole:
-- the update trigger says so in `postings_rebuild`.
CREATE TABLE postings_rebuild (block INTEGER PRIMARY KEY);

DROP TRIGGER chunks_postings_ad;
DROP TRIGGER chunks_postings_au;
CREATE TRIGGER chunks_postings_ad AFTER DELETE ON chunks BEGIN
    INSERT OR IGNORE INTO postings_stale(block) VALUES (old.id >> 14);
END;
CREATE TRIGGER chunks_postings_au AFTER UPDATE OF context, text, has_cjk, cjk_context, cjk_text ON chunks BEGIN
    INSERT OR IGNORE INTO postings_stale(block) VALUES (old.id >> 14), (new.id >> 14);
    INSERT OR IGNORE INTO postings_rebuild(block) VALUES (old.id >> 14), (new.id >> 14);
END;

-- Existing chunks, in the new blocks: built by this migration's step (postings::settle).
DELETE FROM postings;
DELETE FROM postings_stale;
INSERT INTO postings_stale(block) SELECT DISTINCT id >> 14 FROM chunks;
INSERT INTO postings_rebuild(block) SELECT block FROM postings_stale;
