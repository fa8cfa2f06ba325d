-- kebab schema level 13: a root remembers whether its whole folder was named.
--
-- `kebab ingest ~/todo.md` makes the file's folder a root, so that its
-- documents have a name (`me/todo.md`), but only that file was asked for: a
-- bare `kebab ingest` (or `kebab watch`) then reads the files named there
-- again, not every file beside them (the whole home folder). A root whose
-- folder is named later becomes a whole folder. Roots from before were walked
-- whole by every bare run, so they stay whole folders.
ALTER TABLE roots ADD COLUMN whole_folder INTEGER NOT NULL DEFAULT 1;
