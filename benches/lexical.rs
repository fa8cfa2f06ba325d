//! Lexical benchmark: how much kebab adds on top of the SQLite FTS5 it is built on.
//!
//! For each corpus (the Rust Book from `../shared/eval/rust-book-en/src` when present,
//! and a synthetic English/Korean Markdown corpus of ~10k and/or ~100k chunks) it measures:
//!
//! * ingest throughput: `kebab::ingest::run` into a fresh database, against a raw FTS5
//!   bulk insert of the very same chunk texts in one transaction (same pragmas). kebab's
//!   figure includes everything it does: walking, hashing, Markdown chunking, one
//!   transaction per file, and the trigram index for chunks with Hangul;
//! * lexical search latency: `kebab::search::lexical::search` (k = 10, snippets on),
//!   against the bare FTS5 `MATCH … ORDER BY bm25 LIMIT 10` of the same query's word
//!   expression on the same connection.
//!
//! Each kebab figure is printed beside its reference from the same run; the ratio is
//! kebab / reference (throughput: below 1 means kebab is slower; latency: above 1 means
//! kebab is slower). Both throughputs are over the same bytes, the corpus's source
//! files, so the ingest ratio is a ratio of times. Nothing is asserted: numbers only.
//!
//! Run: `bench/run [--size 10k|100k|both]` (or `cargo bench --bench lexical -- --size 10k`).
//! Prints the table on stdout and writes the same data to `target/bench/lexical.json`
//! under the crate root.

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use kebab::config::{Config, DEFAULT_HEADING_WEIGHT};
use kebab::ingest::{FormatChoice, IngestOptions};
use kebab::search::{lexical, query};
use kebab::store::Store;
use rusqlite::Connection;
use serde_json::json;

/// Timed passes over the query list, after one untimed warm-up pass.
const ROUNDS: usize = 5;
/// Files in the synthetic corpus per size. Each file is a title section plus 19 sections
/// of ~800 chars, which the chunker keeps whole: 20 chunks a file.
const FILES_10K: usize = 500;
const FILES_100K: usize = 5_000;
const SECTIONS_PER_FILE: usize = 19;
const CORPUS_SEED: u64 = 0x6b65_6261_6221;
const QUERY_SEED: u64 = 0x7175_6572_7921;

/// One printed figure: kebab's value beside the reference measured in the same run.
struct Row {
    corpus: String,
    chunks: i64,
    mb: f64,
    figure: &'static str,
    kebab: f64,
    reference: f64,
}

fn main() -> Result<()> {
    let started = Instant::now();
    let sizes = parse_args()?;
    let work = TempDir::new()?;
    let mut rows = Vec::new();

    let book = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/eval/rust-book-en/src");
    if book.is_dir() {
        let queries: Vec<String> = RUST_BOOK_QUERIES.iter().map(|q| q.to_string()).collect();
        rows.extend(bench_corpus("rust-book", &book, &queries, &work.0.join("rust-book"))?);
    } else {
        println!("rust-book: {} not found; skipping that corpus", book.display());
    }
    let vocab = Vocab::new();
    for (name, files) in sizes {
        let dir = work.0.join(name).join("corpus");
        let t = Instant::now();
        let bytes = write_corpus(&dir, files, &vocab)?;
        eprintln!("{name}: wrote {files} files, {:.1} MB in {:.1}s", mb(bytes), t.elapsed().as_secs_f64());
        let queries = synthetic_queries(&vocab);
        rows.extend(bench_corpus(name, &dir, &queries, &work.0.join(name))?);
        // Free the disk as we go: the 100k corpus and its databases take a few hundred MB.
        std::fs::remove_dir_all(work.0.join(name)).with_context(|| format!("removing the {name} corpus"))?;
    }

    print_table(&rows);
    let rss = peak_rss_kb();
    let elapsed = started.elapsed().as_secs_f64();
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench/lexical.json");
    write_json(&out, &rows, rss, elapsed)?;
    println!("peak RSS: {}", rss.map_or("n/a".to_string(), |kb| format!("{:.1} MB", kb as f64 / 1024.0)));
    println!("total {elapsed:.1}s; JSON in {}", out.display());
    Ok(())
}

/// `--size 10k|100k|both` (default both). Cargo passes `--bench` to every bench binary.
fn parse_args() -> Result<Vec<(&'static str, usize)>> {
    let mut size = "both".to_string();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--bench" => {}
            "--size" => size = args.next().context("--size needs a value: 10k, 100k or both")?,
            _ if a.starts_with("--size=") => size = a["--size=".len()..].to_string(),
            _ => bail!("unknown argument {a:?}; usage: lexical [--size 10k|100k|both]"),
        }
    }
    Ok(match size.as_str() {
        "10k" => vec![("synthetic-10k", FILES_10K)],
        "100k" => vec![("synthetic-100k", FILES_100K)],
        "both" => vec![("synthetic-10k", FILES_10K), ("synthetic-100k", FILES_100K)],
        other => bail!("--size must be 10k, 100k or both, not {other:?}"),
    })
}

/// Ingest `src` into a fresh database under `work`, then time ingest and search
/// against their raw FTS5 references.
fn bench_corpus(name: &str, src: &Path, queries: &[String], work: &Path) -> Result<Vec<Row>> {
    std::fs::create_dir_all(work).with_context(|| format!("creating {}", work.display()))?;
    let mut store = Store::open(&work.join("kebab.db"), false)?;
    let opts = IngestOptions { paths: vec![src.to_path_buf()], format: FormatChoice::Auto, prune: false, force: false };
    let t = Instant::now();
    let summary = kebab::ingest::run(&mut store, &Config::default(), work, &opts, &mut |_| {})?;
    let kebab_s = t.elapsed().as_secs_f64();
    if summary.skipped > 0 {
        eprintln!("{name}: ingest skipped {} files: {:?}", summary.skipped, summary.skipped_files);
    }
    let chunks = store.chunk_count()?;
    let corpus_mb = mb(summary.bytes_read);
    eprintln!("{name}: {chunks} chunks from {} files, {corpus_mb:.1} MB, ingest {kebab_s:.2}s", summary.files_seen);

    let raw_s = raw_ingest(&store, &work.join("raw.db"))?;
    let row =
        |figure, kebab, reference| Row { corpus: name.to_string(), chunks, mb: corpus_mb, figure, kebab, reference };
    let mut rows = vec![
        row("ingest MB/s", corpus_mb / kebab_s, corpus_mb / raw_s),
        row("ingest chunks/s", chunks as f64 / kebab_s, chunks as f64 / raw_s),
    ];

    let (mut kebab_ms, mut raw_ms) = (Vec::new(), Vec::new());
    let search_opts = lexical::Options { k: 10, heading_weight: DEFAULT_HEADING_WEIGHT, snippets: true };
    let mut no_hits = 0;
    // Round 0 warms SQLite's page cache and statement cache and is not timed.
    for round in 0..=ROUNDS {
        for q in queries {
            let t = Instant::now();
            let (hits, _) = lexical::search(&store, q, search_opts)?;
            let k = t.elapsed().as_secs_f64() * 1000.0;
            black_box(&hits);
            // The reference runs only the word index: what one FTS5 query costs.
            let r = query::build(q).words.map(|expr| raw_search(&store, &expr)).transpose()?;
            if round > 0 {
                kebab_ms.push(k);
                raw_ms.extend(r);
            } else if hits.is_empty() {
                no_hits += 1;
            }
        }
    }
    if no_hits > 0 {
        eprintln!("{name}: {no_hits} of {} queries found nothing", queries.len());
    }
    let ((kp50, kp95), (rp50, rp95)) = (p50_p95(&mut kebab_ms), p50_p95(&mut raw_ms));
    rows.push(row("search p50 ms", kp50, rp50));
    rows.push(row("search p95 ms", kp95, rp95));
    Ok(rows)
}

/// Seconds to bulk-insert kebab's own chunk texts into a bare FTS5 table in one
/// transaction: the floor for what indexing those texts costs in SQLite.
fn raw_ingest(store: &Store, path: &Path) -> Result<f64> {
    let texts: Vec<(String, String)> = {
        let mut stmt = store.conn().prepare("SELECT context, text FROM chunks ORDER BY id")?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?
    };
    let mut conn = Connection::open(path).with_context(|| format!("opening {}", path.display()))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.execute_batch(
        "CREATE TABLE docs(id INTEGER PRIMARY KEY, context TEXT NOT NULL, text TEXT NOT NULL);
         CREATE VIRTUAL TABLE docs_fts USING fts5(context, text, tokenize='porter unicode61 remove_diacritics 2');",
    )?;
    let t = Instant::now();
    let tx = conn.transaction()?;
    {
        let mut plain = tx.prepare("INSERT INTO docs(context, text) VALUES (?1, ?2)")?;
        let mut fts = tx.prepare("INSERT INTO docs_fts(rowid, context, text) VALUES (?1, ?2, ?3)")?;
        for (context, text) in &texts {
            plain.execute([context, text])?;
            fts.execute(rusqlite::params![tx.last_insert_rowid(), context, text])?;
        }
    }
    tx.commit()?;
    Ok(t.elapsed().as_secs_f64())
}

/// Milliseconds for the bare word-index query, rows collected.
fn raw_search(store: &Store, expr: &str) -> Result<f64> {
    let t = Instant::now();
    let sql = "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?1 ORDER BY 2 LIMIT 10";
    let mut stmt = store.conn().prepare_cached(sql)?;
    let rows = stmt.query_map([expr], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?)))?;
    let rows = rows.collect::<rusqlite::Result<Vec<_>>>()?;
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    black_box(rows);
    Ok(ms)
}

/// Nearest-rank p50 and p95; NaN for no samples (every query skipped).
fn p50_p95(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |p: f64| v.get(((p * v.len() as f64).ceil() as usize).max(1) - 1).copied().unwrap_or(f64::NAN);
    (at(0.50), at(0.95))
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1_000_000.0
}

fn print_table(rows: &[Row]) {
    println!("\n{:<16} {:>8} {:>7}  {:<16} {:>12} {:>12} {:>7}", "corpus", "chunks", "MB", "figure", "kebab", "raw FTS5", "ratio");
    for r in rows {
        let prec = if r.figure.ends_with("ms") { 3 } else { 1 };
        println!(
            "{:<16} {:>8} {:>7.1}  {:<16} {:>12.prec$} {:>12.prec$} {:>7.2}",
            r.corpus, r.chunks, r.mb, r.figure, r.kebab, r.reference, r.kebab / r.reference
        );
    }
    println!("ratio = kebab / raw FTS5 (MB/s, chunks/s: <1 is slower; ms: >1 is slower)\n");
}

fn write_json(path: &Path, rows: &[Row], rss_kb: Option<u64>, elapsed_s: f64) -> Result<()> {
    let row = |r: &Row| {
        json!({"corpus": r.corpus, "chunks": r.chunks, "mb": r.mb, "figure": r.figure,
               "kebab": r.kebab, "reference": r.reference, "ratio": r.kebab / r.reference})
    };
    let rows: Vec<_> = rows.iter().map(row).collect();
    let doc = json!({"schema_version": "bench_lexical.v1", "kebab_version": env!("CARGO_PKG_VERSION"),
                     "rounds": ROUNDS, "rows": rows, "peak_rss_kb": rss_kb, "elapsed_s": elapsed_s});
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, serde_json::to_string_pretty(&doc)? + "\n")
        .with_context(|| format!("writing {}", path.display()))
}

/// Peak resident set of this process (Linux VmHWM), in kB.
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A unique scratch folder, removed on drop (also when the bench fails half-way).
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<TempDir> {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!("kebab-bench-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ---- Deterministic synthetic corpus -------------------------------------------------

/// splitmix64: tiny, fast, and the same stream on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }
    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

/// A word list sampled with Zipf weights 1/rank, so a few words are everywhere and
/// most are rare: the term-frequency shape BM25 sees in real notes.
struct Zipf {
    words: Vec<&'static str>,
    cumulative: Vec<f64>,
}

impl Zipf {
    fn new(list: &'static str) -> Zipf {
        let words: Vec<&str> = list.split_whitespace().collect();
        let (mut cumulative, mut sum) = (Vec::with_capacity(words.len()), 0.0);
        for rank in 1..=words.len() {
            sum += 1.0 / rank as f64;
            cumulative.push(sum);
        }
        Zipf { words, cumulative }
    }
    fn pick(&self, rng: &mut Rng) -> &'static str {
        let u = rng.unit() * self.cumulative.last().copied().unwrap_or(0.0);
        self.words[self.cumulative.partition_point(|&c| c < u).min(self.words.len() - 1)]
    }
}

const EN_FUNCTION: &str = "the of and to a in is that for it as with be on this are by or from at an not can
    you we which when if each one all more use new also how so then only into than other some any first these
    time two may most must should does just like";
const EN_CONTENT: &str = "data index search query note file page text word term rank score result document chunk
    heading section title list table value type function method module crate package library build test error
    option string vector array map key memory thread task process server client request response cache store
    disk network latency throughput version release change commit branch merge review issue bug fix feature
    design plan goal meeting project team week day month year report summary idea question answer example reason
    problem solution pattern model system user config setting path folder tree node graph edge sort order filter
    split parse token stem match phrase prefix suffix weight field column row schema migration transaction lock
    write read update delete insert select join count sum average median percent sample benchmark profile trace
    log metric alert deploy image container cluster region backup restore sync offline local remote cloud account
    password secret permission access share link tag label topic category archive draft journal recipe travel
    book chapter lesson course lecture exercise homework exam grade teacher student paper author citation
    reference source quote borrow owner lifetime trait generic closure iterator macro async await future stream
    channel mutex atomic unsafe pointer box slice struct enum impl loop panic unwrap compile compiler cargo rustc
    linker target debug optimize inline allocate garbage collector runtime kernel driver socket packet protocol
    header body payload encode decode compress hash checksum encrypt sign verify certificate browser window screen
    button menu dialog keyboard mouse font color theme layout style markdown render preview export import convert";
const KO_WORDS: &str = "검색 색인 문서 노트 데이터 분석 분석기 형태소 질문 답변 프로그램 함수 변수 메모리 소유권 빌림
    수명 트레잇 구조체 열거형 모듈 패키지 컴파일러 오류 처리 테스트 성능 속도 파일 폴더 경로 설정 서버 클라이언트
    네트워크 요청 응답 데이터베이스 테이블 쿼리 결과 순위 점수 단어 문장 문단 제목 목록 코드 예제 설명 방법 이유
    문제 해결 사용자 시스템 구조 알고리즘 정렬 탐색 그래프 트리 배열 벡터 문자열 숫자 시간 날짜 회의 일정 프로젝트
    계획 목표 진행 완료 기록 요약 정리 학습 공부 책 개념 원리 동시성 스레드 비동기 작업 캐시 저장소 버전 변경
    배포 빌드 의존성 라이브러리 인터페이스 타입 참조 포인터 안전성 한국어 영어 번역";
/// Particles glued to Korean words, as Korean is written; the query side strips them.
const KO_PARTICLES: &[&str] = &["은", "는", "이", "가", "을", "를", "의", "에서", "으로", "와", "도"];

struct Vocab {
    function: Zipf,
    content: Zipf,
    korean: Zipf,
}

impl Vocab {
    fn new() -> Vocab {
        Vocab { function: Zipf::new(EN_FUNCTION), content: Zipf::new(EN_CONTENT), korean: Zipf::new(KO_WORDS) }
    }
    /// One running-text word; `korean` is the share of Korean words in this document.
    fn word(&self, rng: &mut Rng, korean: f64, out: &mut String) {
        if rng.chance(korean) {
            out.push_str(self.korean.pick(rng));
            if rng.chance(0.5) {
                out.push_str(KO_PARTICLES[rng.range(0, KO_PARTICLES.len() - 1)]);
            }
        } else if rng.chance(0.4) {
            out.push_str(self.function.pick(rng));
        } else {
            out.push_str(self.content.pick(rng));
        }
    }
}

/// Writes `files` Markdown files (fixed seed, so the same bytes every run) into `dir`
/// and returns their total size.
fn write_corpus(dir: &Path, files: usize, v: &Vocab) -> Result<u64> {
    let mut rng = Rng(CORPUS_SEED);
    let mut total = 0;
    for i in 0..files {
        // Folders of 100 files, like a notes tree, rather than one huge directory.
        let sub = dir.join(format!("d{:03}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&sub).with_context(|| format!("creating {}", sub.display()))?;
        }
        let doc = document(&mut rng, v);
        total += doc.len() as u64;
        std::fs::write(sub.join(format!("note{i:05}.md")), doc).context("writing a corpus file")?;
    }
    Ok(total)
}

fn document(rng: &mut Rng, v: &Vocab) -> String {
    // Most notes are English; some are Korean notes with English terms mixed in.
    let korean = if rng.chance(0.35) { 0.6 } else { 0.0 };
    let mut s = String::new();
    s.push_str("# ");
    heading(rng, v, &mut s);
    paragraph(rng, v, korean, &mut s);
    for i in 0..SECTIONS_PER_FILE {
        s.push_str(if i == 0 || rng.chance(0.5) { "## " } else { "### " });
        heading(rng, v, &mut s);
        for _ in 0..rng.range(2, 4) {
            paragraph(rng, v, korean, &mut s);
        }
        if rng.chance(0.25) {
            for _ in 0..rng.range(3, 5) {
                s.push_str("- ");
                sentence(rng, v, korean, 3, 8, &mut s);
                s.push('\n');
            }
            s.push('\n');
        }
        if rng.chance(0.2) {
            s.push_str("```rust\n");
            for _ in 0..rng.range(3, 8) {
                let _ = writeln!(s, "let {} = {}({});", v.content.pick(rng), v.content.pick(rng), rng.range(0, 999));
            }
            s.push_str("```\n\n");
        }
    }
    s
}

fn heading(rng: &mut Rng, v: &Vocab, s: &mut String) {
    join(s, rng.range(2, 5), |s| s.push_str(v.content.pick(rng)));
    s.push_str("\n\n");
}

fn paragraph(rng: &mut Rng, v: &Vocab, korean: f64, s: &mut String) {
    join(s, rng.range(3, 5), |s| sentence(rng, v, korean, 6, 14, s));
    s.push_str("\n\n");
}

fn sentence(rng: &mut Rng, v: &Vocab, korean: f64, lo: usize, hi: usize, s: &mut String) {
    join(s, rng.range(lo, hi), |s| v.word(rng, korean, s));
    s.push('.');
}

/// Calls `item` `n` times, with a space between the items it writes.
fn join(s: &mut String, n: usize, mut item: impl FnMut(&mut String)) {
    for i in 0..n {
        if i > 0 {
            s.push(' ');
        }
        item(s);
    }
}

/// 50 queries from the corpus vocabulary: English (1–5 terms), Korean, and mixed.
fn synthetic_queries(v: &Vocab) -> Vec<String> {
    let mut rng = Rng(QUERY_SEED);
    (0..50)
        .map(|i| {
            let (korean, lo, hi) = match i % 5 {
                0..=2 => (0.0, 1, 5),
                3 => (1.0, 1, 3),
                _ => (0.5, 2, 4),
            };
            let mut q = String::new();
            join(&mut q, rng.range(lo, hi), |q| {
                if korean > 0.0 { v.word(&mut rng, korean, q) } else { q.push_str(v.content.pick(&mut rng)) }
            });
            q
        })
        .collect()
}

/// Short questions a reader of the Rust Book might type.
#[rustfmt::skip]
const RUST_BOOK_QUERIES: &[&str] = &[
    "borrow checker", "lifetime elision", "trait objects dyn", "async await futures", "error handling Result",
    "ownership move semantics", "references and borrowing", "mutable reference rules", "slice type", "String vs str",
    "struct update syntax", "tuple structs", "method syntax self", "enum Option None", "match arms exhaustive",
    "if let syntax", "modules and paths", "use keyword pub", "crates.io publish", "Vec push",
    "HashMap entry", "UTF-8 strings indexing", "panic unwind abort", "question mark operator", "generic type parameters",
    "trait bounds where clause", "default trait implementation", "lifetime annotations", "unit tests cfg test",
    "integration tests", "closures capture environment", "Fn FnMut FnOnce", "iterator adapters map filter",
    "Box smart pointer", "Deref trait", "Drop trait cleanup", "Rc reference counting", "RefCell interior mutability",
    "reference cycles Weak", "threads spawn join", "message passing channels", "Mutex Arc shared state",
    "Send and Sync", "pattern matching destructuring", "unsafe raw pointers", "macro_rules declarative macros",
    "procedural macros derive", "cargo workspaces", "web server thread pool", "graceful shutdown",
];
