//! Building a block's postings: each chunk's tokens counted into the lists
//! of the block (`BlockLists`), and the thread that does it for the chunks
//! a bulk ingest writes while the writer goes on (`Builder`).

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasherDefault;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use anyhow::{Result, anyhow};
use rusqlite::Connection;

use super::{BLOCK_BITS, Settle, put_entry, put_size};
use crate::store::FtsIndex;
use crate::store::tokens::{Purpose, Tokenizer, Tokens};

/// Both indexes' tokenizers, on a connection of the calling thread's own
/// (a tokenizer lives on the connection that made it).
pub(super) struct Tokenizers {
    // Dropped before the connection: fields drop in order.
    pub both: [Tokenizer; 2],
    _conn: Connection,
}

impl Tokenizers {
    pub fn new() -> Result<Tokenizers> {
        let conn = Connection::open_in_memory()?;
        let both = [Tokenizer::new(&conn, FtsIndex::Words)?, Tokenizer::new(&conn, FtsIndex::Trigrams)?];
        Ok(Tokenizers { both, _conn: conn })
    }
}

/// A block built by the `Builder`: the chunks it was given, in order, and their lists.
pub(super) struct Built {
    pub ids: Vec<i64>,
    pub lists: [BlockLists; 2],
}

enum Message {
    Chunk(ChunkText),
    /// Send back the blocks built (with `Settle::Full`, all but the newest chunk's).
    Take(Settle, i64),
}

/// Postings built beside a bulk ingest's batches: each chunk the writer
/// inserts goes to a thread that tokenizes it while the writer goes on with
/// FTS5, so that `settle` finds its blocks built. `settle` checks each
/// against the chunks the block holds, and rebuilds it from them if they differ.
pub struct Builder {
    to: Option<SyncSender<Message>>,
    from: Receiver<Result<BTreeMap<i64, Built>, String>>,
    thread: Option<JoinHandle<()>>,
}

impl Builder {
    pub fn start() -> Builder {
        let (to, messages) = sync_channel::<Message>(4096);
        let (reply, from) = sync_channel(1);
        let thread = std::thread::spawn(move || {
            let mut blocks: BTreeMap<i64, Built> = BTreeMap::new();
            let (mut tokens, mut failed) = (Tokens::default(), None);
            let made = Tokenizers::new().map_err(|e| format!("{e:#}"));
            for message in messages {
                match (message, &made) {
                    (Message::Chunk(c), Ok(tokenizers)) if failed.is_none() => {
                        let built = blocks.entry(c.id >> BLOCK_BITS).or_insert_with(|| Built { ids: Vec::new(), lists: Default::default() });
                        built.ids.push(c.id);
                        if let Err(e) = add(&tokenizers.both, &mut tokens, &c, &mut built.lists) {
                            failed = Some(format!("{e:#}"));
                        }
                    }
                    (Message::Chunk(_), _) => {}
                    (Message::Take(which, newest), made) => {
                        let out = match (made, &failed) {
                            (Err(e), _) | (_, Some(e)) => Err(e.clone()),
                            _ if which == Settle::All => Ok(std::mem::take(&mut blocks)),
                            _ => {
                                let newest = blocks.remove(&newest);
                                let rest = std::mem::take(&mut blocks);
                                blocks.extend(newest.map(|b| (b.ids[0] >> BLOCK_BITS, b)));
                                Ok(rest)
                            }
                        };
                        // The writer stopped waiting (an error): stop too.
                        if reply.send(out).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        Builder { to: Some(to), from, thread: Some(thread) }
    }

    /// Hands a chunk just inserted to the thread.
    pub fn add(&self, chunk: ChunkText) -> Result<()> {
        self.send(Message::Chunk(chunk))
    }

    /// The blocks built so far, by block.
    pub(super) fn take(&self, which: Settle, newest_block: i64) -> Result<BTreeMap<i64, Built>> {
        self.send(Message::Take(which, newest_block))?;
        let built = self.from.recv().map_err(|_| anyhow!("the postings thread stopped"))?;
        built.map_err(|e| anyhow!("building the postings: {e}"))
    }

    fn send(&self, message: Message) -> Result<()> {
        let to = self.to.as_ref().expect("the sender lives until drop");
        to.send(message).map_err(|_| anyhow!("the postings thread stopped"))
    }
}

impl Drop for Builder {
    fn drop(&mut self) {
        // Closing the channel ends the thread's loop.
        self.to.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Adds one chunk to its block's lists of both indexes.
fn add(tokenizers: &[Tokenizer; 2], tokens: &mut Tokens, c: &ChunkText, lists: &mut [BlockLists; 2]) -> Result<()> {
    lists[0].add(&tokenizers[0], tokens, c.id, &c.words)?;
    if let Some(cjk) = &c.cjk {
        lists[1].add(&tokenizers[1], tokens, c.id, cjk)?;
    }
    Ok(())
}

/// A chunk's columns as each index holds them (`cjk`: none when the trigram index does not).
pub struct ChunkText {
    pub id: i64,
    pub words: [String; 2],
    pub cjk: Option<[String; 2]>,
}

/// Block `b`'s lists for both indexes, from its chunks in id order.
pub(super) fn build(tokenizers: &[Tokenizer; 2], b: i64, chunks: &[ChunkText]) -> Result<[BlockLists; 2]> {
    let mut lists: [BlockLists; 2] = Default::default();
    let mut tokens = Tokens::default();
    for c in chunks {
        debug_assert_eq!(c.id >> BLOCK_BITS, b);
        add(tokenizers, &mut tokens, c, &mut lists)?;
    }
    Ok(lists)
}

/// One block's lists of one index, being built chunk after chunk.
#[derive(Default)]
pub(super) struct BlockLists {
    /// Each token's place in `lists`.
    places: HashMap<Box<[u8]>, u32, BuildHasherDefault<Fx>>,
    pub(super) lists: Vec<List>,
    /// Places of the tokens of the chunk being added.
    touched: Vec<u32>,
    /// Each chunk's size in tokens, after its distance from the one before
    /// (`sizes_of` reads them), and the last chunk sized.
    pub(super) sizes: Vec<u8>,
    sized: Option<i64>,
}

/// A token's entries in one block.
pub(super) struct List {
    pub(super) term: Box<[u8]>,
    pub(super) data: Vec<u8>,
    /// The last chunk with an entry, and the one whose counts `counts` holds.
    last: i64,
    counting: i64,
    counts: [u32; 2],
}

impl BlockLists {
    /// Appends chunk `id`'s entry, from its two columns, to the list of every token it holds.
    fn add(&mut self, tokenizer: &Tokenizer, tokens: &mut Tokens, id: i64, columns: &[String; 2]) -> Result<()> {
        self.touched.clear();
        let mut size = 0;
        for (col, text) in columns.iter().enumerate() {
            tokenizer.tokenize(text, Purpose::Document, tokens)?;
            size += tokens.counted;
            for t in tokens.iter() {
                let place = match self.places.get(t) {
                    Some(&p) => p,
                    None => {
                        let p = self.lists.len() as u32;
                        let base = (id >> BLOCK_BITS) << BLOCK_BITS;
                        self.lists.push(List { term: t.into(), data: Vec::new(), last: base, counting: -1, counts: [0, 0] });
                        self.places.insert(t.into(), p);
                        p
                    }
                };
                let list = &mut self.lists[place as usize];
                if list.counting != id {
                    (list.counting, list.counts) = (id, [0, 0]);
                    self.touched.push(place);
                }
                list.counts[col] += 1;
            }
        }
        // Entries as `decode` reads them.
        for &place in &self.touched {
            let list = &mut self.lists[place as usize];
            put_entry(&mut list.data, list.last, id, list.counts);
            list.last = id;
        }
        let last = self.sized.unwrap_or((id >> BLOCK_BITS) << BLOCK_BITS);
        put_size(&mut self.sizes, (id - last) as u64, u64::from(size));
        self.sized = Some(id);
        Ok(())
    }
}

/// The Firefox/rustc hash: tokens are short and not chosen by an attacker
/// (they come from the user's own notes), so SipHash's cost buys nothing.
#[derive(Default)]
struct Fx(u64);

impl std::hash::Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        let mix = |h: u64, w: u64| (h.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.0 = mix(self.0, u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        for &b in chunks.remainder() {
            self.0 = mix(self.0, u64::from(b));
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

