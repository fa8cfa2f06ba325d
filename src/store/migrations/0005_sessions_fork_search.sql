-- kebab schema level 5: sessions you can branch and search.
--
-- A forked turn is a row of the new conversation that points at the SAME
-- `answers` row as the turn it was taken from (nothing is asked again or
-- copied); these columns say where it came from. The source conversation
-- may be removed later: its id then goes NULL, the turn number stays, so the
-- turn is still marked as forked.
ALTER TABLE turns ADD COLUMN forked_from_conversation_id INTEGER REFERENCES conversations(id) ON DELETE SET NULL;
ALTER TABLE turns ADD COLUMN forked_from_turn INTEGER;

-- Full-text search over past turns: the question and the answer's text, one
-- row per turn (rowid = turns.id). Triggers write it inside the transaction
-- that writes the turn, whatever code path does, so it never lags.
CREATE VIRTUAL TABLE turns_fts USING fts5(
    question, answer, tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER turns_fts_ai AFTER INSERT ON turns BEGIN
    INSERT INTO turns_fts(rowid, question, answer)
    VALUES (new.id, new.question, coalesce((SELECT answer FROM answers WHERE id = new.answer_id), ''));
END;
CREATE TRIGGER turns_fts_ad AFTER DELETE ON turns BEGIN
    DELETE FROM turns_fts WHERE rowid = old.id;
END;
-- The turns saved before this level.
INSERT INTO turns_fts(rowid, question, answer)
    SELECT t.id, t.question, a.answer FROM turns t JOIN answers a ON a.id = t.answer_id;
