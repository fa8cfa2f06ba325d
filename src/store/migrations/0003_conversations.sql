-- kebab schema level 3: named conversations and their turns. A turn points at
-- its `answers` row, so its citations and packed evidence survive restarts.
CREATE TABLE conversations (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    title       TEXT                    -- the first question, shortened
);

CREATE TABLE turns (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id  INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    turn_index       INTEGER NOT NULL,
    question         TEXT NOT NULL,
    retrieval_query  TEXT NOT NULL,
    answer_id        INTEGER NOT NULL REFERENCES answers(id),
    created_at       TEXT NOT NULL,
    UNIQUE(conversation_id, turn_index)
);
CREATE INDEX answers_conversation ON answers(conversation_id, turn_index);

-- What `:explain` shows (hits with their ranks and scores, gate, budget,
-- history kept, timings), saved so it works on old turns after a restart.
ALTER TABLE answers ADD COLUMN explain_json TEXT;
