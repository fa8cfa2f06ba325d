//! The property checks behind kebab's fuzz targets, shared by the targets in
//! `fuzz/fuzz_targets/` and by `tests/fuzz_corpus.rs`, which replays the
//! committed corpus through them on stable Rust. Both include this file with
//! `#[path]`, so the checks exist once without shipping in the library.
//!
//! Each check takes the raw fuzz input, runs one parser on it and panics when
//! a contract of that parser is broken; a panic inside the parser itself is a
//! finding too. The first bytes of an input choose the knobs (chunk limits,
//! the number of packed entries, line caps, read sizes), the rest is the text.

use std::cell::RefCell;
use std::io::Read;
use std::time::Instant;

use kebab::ingest::chunk::{ChunkDraft, ChunkLimits};
use kebab::ingest::{html, jsonl, markdown, pdf, text};
use kebab::http::{LineError, Lines};
use kebab::llm::stream::{Answer, REASONING_SHOWN};
use kebab::llm::ollama::Ollama;
use kebab::llm::openai::OpenAi;
use kebab::llm::{Completion, Flow, LlmError};
use kebab::rag::{extract, validate};
use kebab::search::query;
use kebab::store::FtsIndex;

/// Splits off the first `n` bytes as knobs (zeros when the input is shorter).
fn knobs<const N: usize>(data: &[u8]) -> ([u8; N], &[u8]) {
    let mut k = [0u8; N];
    let n = data.len().min(N);
    k[..n].copy_from_slice(&data[..n]);
    (k, &data[n..])
}

// ---------------------------------------------------------------- chunkers

/// Markdown, plain-text and JSONL chunking of one input under small limits
/// (so every splitting path runs): spans valid, in order, exact.
pub fn chunkers(data: &[u8]) {
    let ([a, b], rest) = knobs::<2>(data);
    let max_chars = 1 + usize::from(a);
    let limits = ChunkLimits { target_chars: 1 + usize::from(b) % max_chars, max_chars };
    let src = String::from_utf8_lossy(rest);

    let doc = markdown::chunk_markdown(&src, &limits);
    assert_spans(&src, &doc.chunks);
    for c in &doc.chunks {
        assert!(c.heading_path.iter().all(|h| !h.contains('\n')), "heading path with a newline: {c:?}");
    }
    assert!(doc.tags.iter().enumerate().all(|(i, t)| !doc.tags[..i].contains(t)), "duplicate tags {:?}", doc.tags);

    let chunks = text::chunk_text(&src, &limits);
    assert_spans(&src, &chunks);
    assert_covers(&src, &chunks);
    for c in &chunks {
        assert!(c.text.chars().count() <= max_chars, "plain-text chunk over max_chars {max_chars}: {c:?}");
    }

    let (records, bad) = jsonl::parse_jsonl(&src, &limits);
    let line_count = source_lines(&src).len() as u32;
    for r in &records {
        assert!(r.line >= 1 && r.line <= line_count, "record line {} outside 1..={line_count}", r.line);
        assert!(!r.id.trim().is_empty(), "record with an empty id");
        assert!(r.chunks.iter().all(|c| (c.line_start, c.line_end) == (r.line, r.line)), "record chunk not on its line");
    }
    for b in &bad {
        assert!(b.line >= 1 && b.line <= line_count && !b.reason.is_empty(), "bad line report {}: {}", b.line, b.reason);
    }
}

/// The source's lines as an editor numbers them: `\n`, `\r\n` or a lone `\r`
/// ends one (worked out apart from the chunkers' own line index).
fn source_lines(src: &str) -> Vec<String> {
    src.replace("\r\n", "\n").replace('\r', "\n").lines().map(String::from).collect()
}

/// Every chunk is non-blank, its 1-based span is inside the source and after
/// the previous chunk's, and its text is exactly its lines joined by `\n`
/// (or, for pieces of one over-long line, a part of that line).
fn assert_spans(src: &str, chunks: &[ChunkDraft]) {
    let lines = source_lines(src);
    let mut prev: Option<&ChunkDraft> = None;
    for c in chunks {
        assert!(!c.text.trim().is_empty(), "blank chunk {c:?}");
        assert!(c.line_start >= 1 && c.line_start <= c.line_end, "bad span {c:?}");
        assert!(c.line_end as usize <= lines.len(), "span past the last line {}: {c:?}", lines.len());
        let (s, e) = (c.line_start as usize, c.line_end as usize);
        let whole = lines[s - 1..e].join("\n");
        if whole != c.text {
            assert_eq!(s, e, "multi-line chunk differs from its lines: {c:?}");
            assert!(whole.contains(&c.text), "piece not in its line: {c:?}");
        }
        if let Some(p) = prev {
            let same_line_pieces = p.line_start == p.line_end && p.line_end == c.line_start && s == e;
            assert!(p.line_end < c.line_start || same_line_pieces, "overlap or out of order {p:?} / {c:?}");
        }
        prev = Some(c);
    }
}

/// No non-blank line is lost by the plain-text chunker. (Linear: spans are
/// already known to be in order and inside the source.)
fn assert_covers(src: &str, chunks: &[ChunkDraft]) {
    let lines = source_lines(src);
    let mut covered = vec![false; lines.len() + 1];
    for c in chunks {
        covered[c.line_start as usize..=c.line_end as usize].iter_mut().for_each(|x| *x = true);
    }
    for (i, line) in lines.iter().enumerate() {
        assert!(line.trim().is_empty() || covered[i + 1], "line {} lost: {line:?}", i + 1);
    }
}

// --------------------------------------------------------------- citations

/// Citation markers: exactly the `[#N]` (1–3 digits) spans of the answer, in
/// order, on char boundaries; and `validate` grounds the answer exactly when
/// it is non-blank, has a marker, and every marker names a packed entry.
pub fn citations(data: &[u8]) {
    let ([p], rest) = knobs::<1>(data);
    let packed = usize::from(p);
    let answer = String::from_utf8_lossy(rest);
    let found = extract::markers(&answer);

    let expected: Vec<(usize, usize, usize)> = reference_markers(answer.as_bytes());
    let got: Vec<(usize, usize, usize)> = found.iter().map(|m| (m.start, m.end, m.n)).collect();
    assert_eq!(got, expected, "markers differ from the grammar in {answer:?}");
    for m in &found {
        assert!(answer.is_char_boundary(m.start) && answer.is_char_boundary(m.end), "marker off a char boundary: {m:?}");
        assert_eq!(&answer[m.start..m.end], format!("[#{}]", &answer[m.start + 2..m.end - 1]));
    }

    let grounded = !answer.trim().is_empty() && !found.is_empty() && found.iter().all(|m| (1..=packed).contains(&m.n));
    let verdict = validate::validate(&answer, &found, packed);
    assert_eq!(verdict.is_ok(), grounded, "validate({answer:?}, packed {packed}) = {verdict:?}");
    if let Err(reason) = verdict {
        assert_eq!(reason, "llm_self_judge");
    }
}

/// An independent reading of the grammar: every `[#` followed by one to three
/// ASCII digits and `]`. Two such spans can never overlap (each holds one `[`).
fn reference_markers(b: &[u8]) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    for i in 0..b.len() {
        if !b[i..].starts_with(b"[#") {
            continue;
        }
        let digits = b[i + 2..].iter().take_while(|c| c.is_ascii_digit()).count();
        if (1..=3).contains(&digits) && b.get(i + 2 + digits) == Some(&b']') {
            let n = std::str::from_utf8(&b[i + 2..i + 2 + digits]).unwrap().parse().unwrap();
            out.push((i, i + 3 + digits, n));
        }
    }
    out
}

// --------------------------------------------------------------- fts query

thread_local! {
    /// Both FTS5 indexes, tokenised as in the store (migration 0001), in memory.
    static FTS: RefCell<rusqlite::Connection> = RefCell::new(fts_db());
}

fn fts_db() -> rusqlite::Connection {
    let conn = rusqlite::Connection::open_in_memory().expect("in-memory database");
    conn.execute_batch(
        "CREATE VIRTUAL TABLE chunks_fts USING fts5(context, text, tokenize='porter unicode61 remove_diacritics 2');
         CREATE VIRTUAL TABLE chunks_trigram USING fts5(context, text, tokenize='trigram');",
    )
    .expect("FTS5 tables");
    conn
}

/// The query builder turns any text into MATCH expressions that FTS5 accepts:
/// only quoted terms (`"w"` or `"w"*`) joined by ` OR `, at most 64 of them,
/// and never an error from FTS5 — run against a row holding the text itself,
/// so matching and BM25 run too, not only the expression parser.
pub fn fts_query(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let words = query::words(&text);
    assert!(words.iter().all(|w| !w.is_empty() && !w.contains('"')), "bad words {words:?}");
    let terms = query::terms(&text);
    assert!(terms.len() <= 64, "{} terms", terms.len());
    let q = query::build(&text);
    assert_eq!(q.is_empty(), terms.is_empty(), "build and terms disagree on {text:?}");
    let exprs = [("chunks_fts", q.expr(FtsIndex::Words)), ("chunks_trigram", q.expr(FtsIndex::Trigrams))];
    for expr in exprs.iter().filter_map(|(_, e)| e.as_ref()) {
        let parts: Vec<&str> = expr.split(" OR ").collect();
        assert!(parts.len() <= 64, "{} terms in {expr:?}", parts.len());
        for part in parts {
            let inner = part.strip_suffix('*').unwrap_or(part);
            let quoted = inner.len() >= 2 && inner.starts_with('"') && inner.ends_with('"');
            assert!(quoted && !inner[1..inner.len() - 1].contains('"'), "unquoted term {part:?} in {expr:?}");
        }
    }
    FTS.with(|db| {
        let conn = db.borrow();
        for (table, expr) in &exprs {
            let Some(expr) = expr else { continue };
            conn.execute(&format!("DELETE FROM {table}"), []).expect("clear");
            conn.execute(&format!("INSERT INTO {table}(rowid, context, text) VALUES (1, '', ?1)"), [&*text])
                .expect("insert");
            // The search's own query shape (`Store::bm25`), BM25 weights included.
            let sql = format!(
                "SELECT rowid, -bm25({table}, 2.0, 1.0) FROM {table} WHERE {table} MATCH ?1 ORDER BY 2 DESC LIMIT 10"
            );
            let mut stmt = conn.prepare(&sql).expect("prepare");
            let hits = stmt.query_map([expr], |r| r.get::<_, i64>(0)).and_then(|rows| rows.collect::<Result<Vec<_>, _>>());
            if let Err(e) = hits {
                panic!("FTS5 rejected {expr:?} built from {text:?}: {e}");
            }
        }
    });
}

// ----------------------------------------------------------------- streams

/// A reader handing out at most `step` bytes per read, so lines straddle the
/// line reader's buffer refills the way they straddle network packets.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.data.len().min(buf.len()).min(self.step);
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// Knobs for a stream: line cap, read size, and after how many pieces the
/// caller asks to stop (0: never).
fn stream_knobs(data: &[u8]) -> (usize, usize, usize, &[u8]) {
    let ([cap, step, stop], body) = knobs::<3>(data);
    (16 + usize::from(cap) * 8, 1 + usize::from(step), usize::from(stop) % 8, body)
}

/// The line reader against a plain split of the bytes on `\n`.
fn check_lines(body: &[u8], max: usize, step: usize) {
    let mut reader = Lines::new(Trickle { data: body, step }, max);
    let mut segments: Vec<&[u8]> = body.split(|&b| b == b'\n').collect();
    if segments.last().is_some_and(|s| s.is_empty()) {
        segments.pop();
    }
    for seg in segments {
        match reader.next_line() {
            Ok(Some(line)) => {
                assert!(seg.len() <= max, "a {}-byte line passed the {max}-byte cap", seg.len());
                let seg = seg.strip_suffix(b"\r").unwrap_or(seg);
                assert_eq!(line, String::from_utf8_lossy(seg), "line reader changed a line");
            }
            Ok(None) => panic!("line reader ended early"),
            Err(LineError::TooLong) => {
                assert!(seg.len() > max, "a {}-byte line refused under the {max}-byte cap", seg.len());
                return;
            }
            Err(LineError::Io(e)) => panic!("read error from a slice: {e}"),
            Err(LineError::TooSlow(limit)) => panic!("no time limit was set, yet a line took over {limit:?}"),
        }
    }
    assert!(matches!(reader.next_line(), Ok(None)), "line reader invented a line");
}

/// What a streamed answer must satisfy whatever the server sent: the text
/// (or the partial text of an error) is exactly the pieces handed to the
/// caller, a stop request is honoured at once, and the errors are the ones a
/// byte stream can cause — never a timeout or an unreachable server.
fn check_answer(body_len: usize, stop_after: usize, pieces: &[String], result: Result<Completion, LlmError>) {
    let shown: String = pieces.concat();
    // Reasoning shown before a `</think>` with no opening tag said what it was is not the text.
    let joined = shown.split_once(REASONING_SHOWN).map_or(shown.as_str(), |(_, answer)| answer).to_string();
    assert!(pieces.iter().all(|p| !p.is_empty()), "an empty piece reached the caller");
    // JSON escapes shrink; only a lossily replaced byte grows (1 byte → 3).
    assert!(joined.len() <= 3 * body_len, "{} bytes of text from {body_len} bytes", joined.len());
    match result {
        Ok(c) => {
            assert_eq!(c.text, joined, "completion text differs from the streamed pieces");
            assert_eq!(c.stopped, stop_after > 0 && pieces.len() == stop_after, "stopped flag wrong");
        }
        Err(_) if stop_after > 0 && pieces.len() == stop_after => panic!("an error after the caller asked to stop"),
        Err(LlmError::Stream { partial, message, .. }) => {
            assert_eq!(partial, joined, "partial text differs from the streamed pieces");
            assert!(!message.is_empty());
        }
        Err(LlmError::Http { message, .. }) => {
            assert!(pieces.is_empty(), "HTTP error after text: {message}");
            assert!(!message.is_empty(), "HTTP error without a message");
        }
        Err(other) => panic!("impossible error from a byte stream: {other:?}"),
    }
    if stop_after > 0 {
        assert!(pieces.len() <= stop_after, "pieces kept coming after Stop");
    }
}

/// Feeds `body` to a provider's stream parser and checks the result.
fn run_stream(data: &[u8], parse: impl FnOnce(Lines<Trickle>, Answer) -> Result<Completion, LlmError>) {
    let (max, step, stop_after, body) = stream_knobs(data);
    check_lines(body, max, step);
    let mut pieces: Vec<String> = Vec::new();
    let mut on_text = |piece: &str| {
        pieces.push(piece.to_string());
        if stop_after > 0 && pieces.len() >= stop_after { Flow::Stop } else { Flow::Continue }
    };
    let result = parse(Lines::new(Trickle { data: body, step }, max), Answer::new(Instant::now(), &mut on_text));
    check_answer(body.len(), stop_after, &pieces, result);
}

/// Ollama's NDJSON chat stream.
pub fn stream_ndjson(data: &[u8]) {
    let model = Ollama::new("http://127.0.0.1:9", "m", std::time::Duration::from_secs(60));
    run_stream(data, |lines, answer| model.read_stream("http://127.0.0.1:9/api/chat", 200, lines, answer));
}

/// An OpenAI-compatible server's SSE chat stream; the API key must never
/// appear in an error.
pub fn stream_sse(data: &[u8]) {
    const KEY: &str = "sk-fuzz-secret";
    let model = OpenAi::new("http://127.0.0.1:9", "m", Some(KEY.into()), std::time::Duration::from_secs(60));
    let mut shown = None;
    run_stream(data, |lines, answer| {
        let result = model.read_events("http://127.0.0.1:9/v1/chat/completions", 200, lines, answer);
        if let Err(LlmError::Stream { message, .. } | LlmError::Http { message, .. }) = &result {
            shown = Some(message.clone());
        }
        result
    });
    if let Some(message) = shown {
        assert!(!message.contains(KEY), "API key leaked into {message:?}");
    }
}

// ---------------------------------------------------------------- html

/// HTML text extraction under small limits: every span inside the file and
/// in order, heading paths on one line, chunks within `max_chars` except a
/// `<pre>` block, which is never cut.
pub fn html(data: &[u8]) {
    let ([a, b], rest) = knobs::<2>(data);
    let max_chars = 1 + usize::from(a);
    let limits = ChunkLimits { target_chars: 1 + usize::from(b) % max_chars, max_chars };
    let src = String::from_utf8_lossy(rest);
    let doc = html::chunk_html(&src, &limits);
    let line_count = source_lines(&src).len().max(1) as u32;
    let mut last_start = 0;
    for c in &doc.chunks {
        assert!(1 <= c.line_start && c.line_start <= c.line_end && c.line_end <= line_count, "span outside 1..={line_count}: {c:?}");
        assert!(c.line_start >= last_start, "chunks out of order: {c:?}");
        last_start = c.line_start;
        assert!(!c.text.trim().is_empty(), "empty chunk {c:?}");
        assert!(c.heading_path.iter().all(|h| !h.contains('\n') && !h.is_empty()), "bad heading path: {c:?}");
        assert!(c.text.chars().count() <= max_chars || c.text.contains("```"), "chunk over max_chars {max_chars}: {c:?}");
    }
    assert!(doc.title.as_deref().is_none_or(|t| !t.is_empty() && !t.contains('\n')), "bad title {:?}", doc.title);
}

// ---------------------------------------------------------------- pdf

/// PDF text extraction in process (what the `kebab __pdf-text` helper runs):
/// it returns pages or a typed error; a panic inside the parser is caught and
/// reported as `Crashed` (the helper's own contract), so the quiet hook keeps
/// it from counting as a finding. A hang, a stack overflow or an abort still
/// is one, as is any broken property of the pages returned.
pub fn pdf(data: &[u8]) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = pdf::extract(data);
    std::panic::set_hook(previous);
    match result {
        Ok(pages) => {
            assert!(!pages.is_empty() && pages.iter().any(|p| !p.is_empty()), "Ok with no text: {pages:?}");
            for p in &pages {
                assert!(!p.chars().any(|c| c.is_control() && c != '\n' && c != '\t'), "control character in page text {p:?}");
                assert!(p.trim_end() == p && !p.starts_with('\n'), "page text with blank ends {p:?}");
            }
            let chunks = pdf::chunk_pages(&pages, &ChunkLimits { target_chars: 50, max_chars: 100 });
            for c in &chunks {
                assert!(c.line_start == c.line_end && c.line_start >= 1 && c.line_start as usize <= pages.len(), "page span {c:?}");
            }
        }
        Err(e) => assert!(!e.message().is_empty()),
    }
}
