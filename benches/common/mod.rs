//! What the benches share: the deterministic synthetic Markdown corpus (English and
//! Korean notes, Zipf-distributed words), the Rust Book location and its reader queries,
//! `--size` parsing, a scratch folder, nearest-rank percentiles, peak RSS and random
//! unit vectors.
//!
//! Each bench includes this file with `mod common;` and uses a part of it.
#![allow(dead_code)]

pub mod process;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// Files in the synthetic corpus per size. Each file is a title section plus 19 sections
/// of ~800 chars, which the chunker keeps whole: 20 chunks a file.
pub const FILES_10K: usize = 500;
pub const FILES_100K: usize = 5_000;
/// Opt-in (`--size 1m`): about 850 MB of notes, a database of a few GB under the temp dir.
pub const FILES_1M: usize = 50_000;
pub const SECTIONS_PER_FILE: usize = 19;
pub const CORPUS_SEED: u64 = 0x6b65_6261_6221;

/// The shared evaluation data beside the repository (absent in a bare clone).
pub fn eval_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/eval")
}

/// The Rust Book's Markdown sources, when the shared eval data is checked out.
pub fn rust_book_dir() -> PathBuf {
    eval_dir().join("rust-book-en/src")
}

/// The command line every bench accepts (`bench/run` passes the same arguments to each):
/// `--size 10k|100k|both|1m` picks the synthetic corpora, as `(name, files)` (`1m` is the
/// whole growth curve: 10k, 100k and 1M chunks, each measured beside the same run's
/// references); `--embed` adds
/// the figures that run the embedding model over a whole corpus (slow: minutes per
/// thousand chunks), which only the lexical bench has.
pub struct Args {
    pub sizes: Vec<(&'static str, usize)>,
    pub embed: bool,
}

/// Parses the bench's arguments, with `default_size` (`"10k"`, `"100k"` or `"both"`) when
/// `--size` is absent. Cargo passes `--bench` to every bench binary.
pub fn parse_args(bench: &str, default_size: &str) -> Result<Args> {
    let mut size = default_size.to_string();
    let mut embed = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--bench" => {}
            "--embed" => embed = true,
            "--size" => size = args.next().context("--size needs a value: 10k, 100k, both or 1m")?,
            _ if a.starts_with("--size=") => size = a["--size=".len()..].to_string(),
            _ => bail!("unknown argument {a:?}; usage: {bench} [--size 10k|100k|both|1m] [--embed]"),
        }
    }
    let sizes = match size.as_str() {
        "10k" => vec![("synthetic-10k", FILES_10K)],
        "100k" => vec![("synthetic-100k", FILES_100K)],
        "both" => vec![("synthetic-10k", FILES_10K), ("synthetic-100k", FILES_100K)],
        "1m" => vec![("synthetic-10k", FILES_10K), ("synthetic-100k", FILES_100K), ("synthetic-1m", FILES_1M)],
        other => bail!("--size must be 10k, 100k, both or 1m, not {other:?}"),
    };
    Ok(Args { sizes, embed })
}

/// The installed embedding model's folder, if its files are there.
pub fn model_dir() -> Option<PathBuf> {
    let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/kebab-test-model");
    let dir = ["KEBAB_MODEL_DIR", "KEBAB_TEST_MODEL_DIR"]
        .iter()
        .find_map(|v| std::env::var_os(v).filter(|s| !s.is_empty()).map(PathBuf::from))
        .unwrap_or(default);
    kebab::embed::local::FILES.iter().all(|f| dir.join(f).is_file()).then_some(dir)
}

/// Nearest-rank p50 and p95; NaN for no samples (every query skipped).
pub fn p50_p95(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |p: f64| v.get(((p * v.len() as f64).ceil() as usize).max(1) - 1).copied().unwrap_or(f64::NAN);
    (at(0.50), at(0.95))
}

pub fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1_000_000.0
}

/// Writes `doc` as pretty JSON, creating the folder.
pub fn write_json(path: &Path, doc: &serde_json::Value) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, serde_json::to_string_pretty(doc)? + "\n")
        .with_context(|| format!("writing {}", path.display()))
}

/// Peak resident set of this process (Linux VmHWM), in kB.
pub fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A unique scratch folder, removed on drop (also when the bench fails half-way).
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new() -> Result<TempDir> {
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
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    /// A standard normal draw (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.unit(); // in (0, 1]: ln is finite
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// `n` random unit vectors of `dim` floats, row-major: directions uniform on the
/// sphere (normal draws, normalised), the same every run for a given seed.
pub fn unit_vectors(seed: u64, n: usize, dim: usize) -> Vec<f32> {
    let mut rng = Rng(seed);
    let mut out = Vec::with_capacity(n * dim);
    let mut row = vec![0.0f64; dim];
    for _ in 0..n {
        row.iter_mut().for_each(|x| *x = rng.normal());
        let norm = row.iter().map(|x| x * x).sum::<f64>().sqrt().max(f64::MIN_POSITIVE);
        out.extend(row.iter().map(|x| (x / norm) as f32));
    }
    out
}

/// A word list sampled with Zipf weights 1/rank, so a few words are everywhere and
/// most are rare: the term-frequency shape BM25 sees in real notes.
pub struct Zipf {
    words: Vec<&'static str>,
    cumulative: Vec<f64>,
}

impl Zipf {
    pub fn new(list: &'static str) -> Zipf {
        let words: Vec<&str> = list.split_whitespace().collect();
        let (mut cumulative, mut sum) = (Vec::with_capacity(words.len()), 0.0);
        for rank in 1..=words.len() {
            sum += 1.0 / rank as f64;
            cumulative.push(sum);
        }
        Zipf { words, cumulative }
    }
    pub fn pick(&self, rng: &mut Rng) -> &'static str {
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
pub const KO_PARTICLES: &[&str] = &["은", "는", "이", "가", "을", "를", "의", "에서", "으로", "와", "도"];

pub struct Vocab {
    pub function: Zipf,
    pub content: Zipf,
    pub korean: Zipf,
}

impl Vocab {
    pub fn new() -> Vocab {
        Vocab { function: Zipf::new(EN_FUNCTION), content: Zipf::new(EN_CONTENT), korean: Zipf::new(KO_WORDS) }
    }
    /// One running-text word; `korean` is the share of Korean words in this document.
    pub fn word(&self, rng: &mut Rng, korean: f64, out: &mut String) {
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
pub fn write_corpus(dir: &Path, files: usize, v: &Vocab) -> Result<u64> {
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
pub fn join(s: &mut String, n: usize, mut item: impl FnMut(&mut String)) {
    for i in 0..n {
        if i > 0 {
            s.push(' ');
        }
        item(s);
    }
}

/// Short questions a reader of the Rust Book might type.
#[rustfmt::skip]
pub const RUST_BOOK_QUERIES: &[&str] = &[
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
