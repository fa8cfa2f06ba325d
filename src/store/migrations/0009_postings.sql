-- kebab schema level 9: each token's chunks, kept beside the two FTS5
-- indexes so that a common word is ranked without FTS5 scoring each of its
-- rows (store/postings.rs says how; docs/performance.md, issue 20, why).
--
-- One row per (index, block of 4,096 chunk ids, token). `data` lists the
-- block's chunks holding the token, each as LEB128 numbers: its id's
-- distance from the one before (the first from the block's first id),
-- doubled, plus one when the heading context holds the token; the token's
-- count in the text; its count in the heading context when not zero. The
-- empty token's row lists the block's chunks that index holds with their
-- sizes in tokens: the distance, then the size. `term` is the token's bytes
-- as FTS5 indexes it.
CREATE TABLE postings (
    idx   INTEGER NOT NULL,   -- 0: chunks_fts (words); 1: chunks_trigram
    term  BLOB NOT NULL,
    block INTEGER NOT NULL,   -- chunk id >> 12
    data  BLOB NOT NULL,
    PRIMARY KEY (idx, block, term)
) WITHOUT ROWID;

-- Blocks whose chunks changed since their postings were built. Whoever
-- writes chunks rebuilds these before committing; a reader that finds any
-- asks FTS5 instead. The writer marks the blocks of the chunks it inserts
-- itself (`store::write`), as it indexes them (no insert trigger: see 0006);
-- deletes and updates have triggers.
CREATE TABLE postings_stale (block INTEGER PRIMARY KEY);

CREATE TRIGGER chunks_postings_ad AFTER DELETE ON chunks BEGIN
    INSERT OR IGNORE INTO postings_stale(block) VALUES (old.id >> 12);
END;
CREATE TRIGGER chunks_postings_au AFTER UPDATE OF context, text, has_cjk, cjk_context, cjk_text ON chunks BEGIN
    INSERT OR IGNORE INTO postings_stale(block) VALUES (old.id >> 12), (new.id >> 12);
END;

-- Existing chunks: built by migration 0011's step (postings::settle).
INSERT INTO postings_stale(block) SELECT DISTINCT id >> 12 FROM chunks;

-- FTS5 now ranks only what the postings cannot answer: it may merge its
-- segments less often while an ingest writes (default 4 at a level).
INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('automerge', 16);
INSERT INTO chunks_trigram(chunks_trigram, rank) VALUES ('automerge', 16);
