//! Settling a block from its stored lists rather than from its chunks'
//! texts: the entries of the chunks it lost are taken out, those of newer
//! chunks it gained are added after the others, and the chunks it kept are
//! not tokenized again.
//!
//! Changing or removing a file deletes its chunks; a changed file's new
//! chunks come with new ids, the highest yet. So the block that held the old
//! chunks only lost some, and the newest block only gained some, and
//! rebuilding either whole (reading and tokenizing its thousands of other
//! chunks) was most of what re-indexing one edited file cost. A chunk
//! updated in place is another matter: its entries would be stale, so its
//! block is rebuilt whole (migration 0011's trigger marks it in
//! `postings_rebuild`).

use std::collections::HashMap;

use anyhow::Result;
use rusqlite::{Connection, params};

use super::build::{self, Tokenizers};
use super::{BLOCK_BITS, FtsIndex, block_texts, decode, each_size, put_entry, put_size, size_row};

/// Brings block `b`'s lists to the chunks it holds now (`holds`, in id
/// order) when it lost chunks or gained ones newer than all it had. Returns
/// false, changing nothing, otherwise: the block gained an older chunk or
/// has no stored lists, and must be rebuilt.
pub(super) fn patch(conn: &Connection, b: i64, holds: &[i64]) -> Result<bool> {
    let base = b << BLOCK_BITS;
    // Every chunk is in the word index: its size list names the block's chunks.
    let Some(sizes) = size_row(conn, FtsIndex::Words, b)? else { return Ok(false) };
    let mut stored = Vec::new();
    each_size(&sizes, |place, _| {
        stored.push(base + place as i64);
        Ok(())
    })?;
    let newest_stored = stored.last().copied().unwrap_or(base - 1);
    // Both in id order: every chunk held up to the newest stored one must be one the lists have.
    let (older, newer) = holds.split_at(holds.partition_point(|&id| id <= newest_stored));
    let mut have = stored.iter().peekable();
    for id in older {
        while have.next_if(|&&s| s < *id).is_some() {}
        if have.next_if(|&&s| s == *id).is_none() {
            return Ok(false);
        }
    }
    if stored.len() == older.len() && newer.is_empty() {
        return Ok(true);
    }
    let keeps = |id: i64| id > newest_stored || older.binary_search(&id).is_ok();
    // The newer chunks' lists, each from the block's first id as `decode` reads them.
    let mut added: [HashMap<Box<[u8]>, Vec<u8>>; 2] = Default::default();
    if let (Some(first), Some(last)) = (newer.first(), newer.last()) {
        let tokenizers = Tokenizers::new()?;
        let lists = build::build(&tokenizers.both, b, &block_texts(conn, *first, last + 1)?)?;
        added = lists.map(|l| std::iter::once((Box::from(&[][..]), l.sizes)).chain(l.lists.into_iter().map(|l| (l.term, l.data))).collect());
    }
    let rows: Vec<(i64, Vec<u8>, Vec<u8>)> = conn
        .prepare_cached("SELECT idx, term, data FROM postings WHERE idx IN (0, 1) AND block = ?1")?
        .query_map([b], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut update = conn.prepare_cached("UPDATE postings SET data = ?4 WHERE idx = ?1 AND block = ?2 AND term = ?3")?;
    let mut delete = conn.prepare_cached("DELETE FROM postings WHERE idx = ?1 AND block = ?2 AND term = ?3")?;
    for (idx, term, data) in rows {
        let more = added[idx as usize].remove(&term[..]);
        let patched = if term.is_empty() { patched_sizes(&data, base, keeps, more)? } else { patched_list(b, &data, keeps, more)? };
        match patched {
            None => continue,
            Some(data) if data.is_empty() => delete.execute(params![idx, b, term])?,
            Some(data) => update.execute(params![idx, b, term, data])?,
        };
    }
    let mut insert = conn.prepare_cached("INSERT INTO postings(idx, term, block, data) VALUES (?1, ?2, ?3, ?4)")?;
    for (index, lists) in [FtsIndex::Words, FtsIndex::Trigrams].into_iter().zip(added) {
        for (term, data) in lists.into_iter().filter(|(_, data)| !data.is_empty()) {
            insert.execute(params![index.code(), &term[..], b, data])?;
        }
    }
    Ok(true)
}

/// A token's list without the chunks `keeps` refuses and with `more`'s
/// entries after its own; `None` when neither changes it.
fn patched_list(b: i64, data: &[u8], keeps: impl Fn(i64) -> bool, more: Option<Vec<u8>>) -> Result<Option<Vec<u8>>> {
    let (mut out, mut last, mut changed) = (Vec::with_capacity(data.len()), b << BLOCK_BITS, more.is_some());
    let mut put = |id: i64, counts: [u32; 2]| -> Result<()> {
        put_entry(&mut out, last, id, counts);
        last = id;
        Ok(())
    };
    decode(b, data, |id, counts| {
        if keeps(id) {
            return put(id, counts);
        }
        changed = true;
        Ok(())
    })?;
    if let Some(more) = more {
        decode(b, &more, &mut put)?;
    }
    Ok(changed.then_some(out))
}

/// A size list without the chunks `keeps` refuses and with `more`'s after
/// its own; `None` when neither changes it.
fn patched_sizes(data: &[u8], base: i64, keeps: impl Fn(i64) -> bool, more: Option<Vec<u8>>) -> Result<Option<Vec<u8>>> {
    let (mut out, mut last, mut changed) = (Vec::with_capacity(data.len()), 0, more.is_some());
    let mut put = |place: usize, size: u64| -> Result<()> {
        put_size(&mut out, (place - last) as u64, size);
        last = place;
        Ok(())
    };
    each_size(data, |place, size| {
        if keeps(base + place as i64) {
            return put(place, size);
        }
        changed = true;
        Ok(())
    })?;
    if let Some(more) = more {
        each_size(&more, &mut put)?;
    }
    Ok(changed.then_some(out))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{CHUNKS, same_as_fts5};
    use super::super::{Writer, rebuild_blocks};
    use super::*;
    use crate::store::Store;
    use crate::store::write::tests::source_with_headings as notes;

    fn rows(conn: &Connection) -> Vec<(i64, i64, Vec<u8>, Vec<u8>)> {
        conn.prepare("SELECT idx, block, term, data FROM postings ORDER BY idx, block, term")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    fn block_ids(conn: &Connection) -> Vec<i64> {
        let sql = format!("SELECT id FROM chunks WHERE id >> {BLOCK_BITS} = 0 ORDER BY id");
        conn.prepare(&sql).unwrap().query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    }

    fn store_of_three_files(dir: &std::path::Path) -> Store {
        let mut store = Store::open(&dir.join("k.db"), false).unwrap();
        let (root, _) = store.ensure_root(dir).unwrap();
        for name in ["a.md", "b.md", "c.md"] {
            store.apply_source(&notes(root, name, CHUNKS), false).unwrap();
        }
        store
    }

    #[test]
    fn a_block_that_only_lost_chunks_loses_their_entries_as_a_rebuild_would() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_of_three_files(dir.path());
        let conn = &store.conn;
        conn.execute_batch("BEGIN").unwrap();
        // b.md's chunks leave: entries of words, prefixes, trigrams and sizes.
        conn.execute("DELETE FROM chunks WHERE doc_id = (SELECT id FROM documents WHERE path LIKE '%b.md')", []).unwrap();
        let holds = block_ids(conn);
        assert_eq!(holds.len(), 2 * CHUNKS.len());
        assert!(patch(conn, 0, &holds).unwrap(), "only lost chunks: patched");
        let patched = rows(conn);
        rebuild_blocks(conn, &[0], &mut Writer::new(conn).unwrap()).unwrap();
        assert_eq!(patched, rows(conn), "the same rows as tokenizing the block again");
        conn.execute_batch("ROLLBACK").unwrap();
    }

    #[test]
    fn a_file_changed_in_a_batch_patches_its_block_as_a_rebuild_would() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = store_of_three_files(dir.path());
        let root = store.ensure_root(dir.path()).unwrap().0;
        // b.md changes: its chunks leave and come back with the newest ids,
        // in the same block (the newest, which a batch leaves stale).
        let mut changed = CHUNKS.to_vec();
        changed[2] = ("검색 기능", "검색어를 바꾸면 새 색인이 필요합니다. borrow data");
        store.begin_batch().unwrap();
        store.apply_source(&notes(root, "b.md", &changed), false).unwrap();
        let conn = &store.conn;
        let holds = block_ids(conn);
        assert!(patch(conn, 0, &holds).unwrap(), "lost some, gained newer ones: patched");
        let patched = rows(conn);
        rebuild_blocks(conn, &[0], &mut Writer::new(conn).unwrap()).unwrap();
        assert_eq!(patched, rows(conn), "the same rows as tokenizing the block again");
        store.conn.execute_batch("ROLLBACK").unwrap();
    }

    #[test]
    fn a_block_that_gained_an_older_chunk_or_has_no_lists_is_left_to_a_rebuild() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_of_three_files(dir.path());
        let conn = &store.conn;
        let mut holds = block_ids(conn);
        let before = rows(conn);
        holds.insert(0, 0);
        assert!(!patch(conn, 0, &holds).unwrap(), "an older chunk the lists do not have");
        assert!(!patch(conn, 7, &[]).unwrap(), "no lists at all");
        assert_eq!(rows(conn), before, "nothing changed");
    }

    #[test]
    fn a_chunk_updated_in_place_has_its_block_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = store_of_three_files(dir.path());
        // One chunk leaves and another is rewritten in place in the same
        // write: pruning alone would keep the rewritten chunk's old words.
        store.begin_batch().unwrap();
        store.conn.execute("DELETE FROM chunks WHERE id = 1", []).unwrap();
        store.conn.execute("UPDATE chunks SET text = 'Nothing about borrowing or data now.' WHERE id = 2", []).unwrap();
        store.commit_batch().unwrap();
        store.settle_postings().unwrap();
        same_as_fts5(&store);
        let left: i64 = store.conn.query_row("SELECT count(*) FROM postings_rebuild", [], |r| r.get(0)).unwrap();
        assert_eq!(left, 0, "settled blocks are no longer marked");
    }
}
