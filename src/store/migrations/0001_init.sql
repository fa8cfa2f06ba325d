-- kebab schema level 1: the index of notes.
--
-- A root is a folder that was ingested; a source is one file under it; a
-- document is one logical note (a whole Markdown/text file, or one JSONL
-- record); a chunk is the unit that is searched and cited.

CREATE TABLE roots (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,      -- first component of every documents.path under it
    abs_path    TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL
);

CREATE TABLE sources (
    id           INTEGER PRIMARY KEY,
    root_id      INTEGER NOT NULL REFERENCES roots(id),
    rel_path     TEXT NOT NULL,             -- relative to the root, '/' separated
    format       TEXT NOT NULL,             -- md | txt | jsonl
    content_hash TEXT NOT NULL,             -- blake3 of the file's bytes
    bytes        INTEGER NOT NULL,
    indexed_at   TEXT NOT NULL,
    UNIQUE (root_id, rel_path)
);

-- AUTOINCREMENT: ids are never reused, so a stored citation of a deleted
-- document or chunk can never point at a different one later.
CREATE TABLE documents (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    source_id     INTEGER NOT NULL REFERENCES sources(id),
    path          TEXT NOT NULL UNIQUE,     -- ROOT/rel/path.md, or ROOT/file.jsonl#ID
    external_id   TEXT NOT NULL,            -- JSONL _id, or the path; what qrels match
    title         TEXT,
    media         TEXT NOT NULL,            -- text/markdown | text/plain | application/jsonl
    lang          TEXT NOT NULL,
    tags_json     TEXT NOT NULL DEFAULT '[]',
    content_hash  TEXT NOT NULL,            -- blake3 of the document's own text
    bytes         INTEGER NOT NULL,
    indexed_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE INDEX documents_source ON documents(source_id);
CREATE INDEX documents_external_id ON documents(external_id);

CREATE TABLE chunks (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    doc_id            INTEGER NOT NULL REFERENCES documents(id),
    ordinal           INTEGER NOT NULL,
    heading_path_json TEXT NOT NULL,
    context           TEXT NOT NULL,        -- title and headings, searched with their own weight
    text              TEXT NOT NULL,
    line_start        INTEGER NOT NULL,
    line_end          INTEGER NOT NULL,
    token_estimate    INTEGER NOT NULL,
    content_hash      TEXT NOT NULL,
    has_cjk           INTEGER NOT NULL,     -- 1 when the trigram index holds this chunk
    UNIQUE (doc_id, ordinal)
);

-- Word index (English stemming) and trigram index (Hangul/CJK substrings) over
-- the same rows. External content: the text is stored once, in chunks.
CREATE VIRTUAL TABLE chunks_fts USING fts5(
    context, text, content='chunks', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);
-- The trigram index covers only chunks with Hangul/CJK (it would triple the
-- size of an English-only index); its content is a view of exactly those rows,
-- so FTS5's integrity check compares like with like.
CREATE VIEW cjk_chunks AS SELECT id, context, text FROM chunks WHERE has_cjk;
CREATE VIRTUAL TABLE chunks_trigram USING fts5(
    context, text, content='cjk_chunks', content_rowid='id', tokenize='trigram'
);

-- Triggers keep both indexes in step with chunks inside the writer's
-- transaction, whatever code path writes.
CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, context, text) VALUES (new.id, new.context, new.text);
    INSERT INTO chunks_trigram(rowid, context, text)
        SELECT new.id, new.context, new.text WHERE new.has_cjk;
END;
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, context, text) VALUES ('delete', old.id, old.context, old.text);
    INSERT INTO chunks_trigram(chunks_trigram, rowid, context, text)
        SELECT 'delete', old.id, old.context, old.text WHERE old.has_cjk;
END;
CREATE TRIGGER chunks_au AFTER UPDATE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, context, text) VALUES ('delete', old.id, old.context, old.text);
    INSERT INTO chunks_trigram(chunks_trigram, rowid, context, text)
        SELECT 'delete', old.id, old.context, old.text WHERE old.has_cjk;
    INSERT INTO chunks_fts(rowid, context, text) VALUES (new.id, new.context, new.text);
    INSERT INTO chunks_trigram(rowid, context, text)
        SELECT new.id, new.context, new.text WHERE new.has_cjk;
END;
