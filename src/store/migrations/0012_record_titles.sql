-- kebab schema level 12: a JSONL record's title heads its chunks.
--
-- A record's text goes on from its title without repeating it ("BM25" over
-- "A ranking function that …"), as a Markdown section goes on from its
-- heading. The title was already searched with the chunk (its `context`);
-- now it is also the chunk's heading path, so citations, the evidence
-- headers a model reads and the built-in answerer see it. Ingest writes it
-- for new records; this fills it in for those indexed before. `context` is
-- unchanged (title and headings, each once), so search and the postings are
-- too.
UPDATE chunks
SET heading_path_json = (SELECT json_array(d.title) FROM documents d WHERE d.id = chunks.doc_id)
WHERE heading_path_json = '[]'
  AND doc_id IN (SELECT id FROM documents WHERE media = 'application/jsonl' AND title IS NOT NULL);
