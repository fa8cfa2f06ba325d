-- kebab schema level 2: every ask, answered or refused, with its evidence.
CREATE TABLE answers (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at          TEXT NOT NULL,
    question            TEXT NOT NULL,
    retrieval_query     TEXT NOT NULL,
    answer              TEXT NOT NULL,
    grounded            INTEGER NOT NULL,
    refusal_reason      TEXT,
    model               TEXT NOT NULL,          -- provider/model id that really answered
    embedding_model     TEXT,
    template            TEXT NOT NULL,
    mode                TEXT NOT NULL,
    k                   INTEGER NOT NULL,
    score_gate          REAL NOT NULL,
    top_score           REAL,
    chunks_returned     INTEGER NOT NULL,
    chunks_used         INTEGER NOT NULL,
    citations_json      TEXT NOT NULL,
    packed_chunks_json  TEXT NOT NULL,          -- what the model saw: ids, paths, lines, text
    prompt_tokens       INTEGER,
    completion_tokens   INTEGER,
    usage_estimated     INTEGER NOT NULL DEFAULT 0,   -- 1: the provider reported no counts; these are kebab's estimates
    latency_ms          INTEGER NOT NULL,
    conversation_id     INTEGER,
    turn_index          INTEGER,
    hops_json           TEXT,
    verification_json   TEXT
);
CREATE INDEX answers_created ON answers(created_at);
