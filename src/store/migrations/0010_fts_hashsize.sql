-- FTS5 keeps a write's new terms in memory and writes them out as a new
-- segment whenever they pass `hashsize` bytes (1 MB by default), and merges
-- those segments later. 8 MB per index makes a bulk ingest's batch write a
-- few large segments rather than many small ones: a 100k-chunk ingest about
-- an eighth faster, for up to 16 MB more memory while it writes
-- (docs/performance.md, issue 20).
INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('hashsize', 8388608);
INSERT INTO chunks_trigram(chunks_trigram, rank) VALUES ('hashsize', 8388608);
