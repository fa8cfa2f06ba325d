//! HTML and PDF notes end to end: ingest, search with line spans (HTML) and
//! page citations (PDF), `ask` citing a page, `:cite` on a page in the REPL,
//! unchanged files skipped on re-ingest and deleted ones pruned. Every PDF is
//! written by `common::pdf`; every HTML page is written here.

mod common;

use common::pdf::{Extras, pdf, pdf_with};
use common::{Env, file_lines, repl};
use serde_json::Value;

/// A home with the built-in extractive answerer and no embedder: these
/// cases are about reading formats, and lexical search is deterministic.
fn env() -> Env {
    let env = Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n[embedding]\nprovider = \"none\"\n");
    env
}

const PAGE: &str = "<!DOCTYPE html>
<html lang=en>
<head>
  <title>Glassblowing &amp; annealing</title>
  <style>.furnace { color: orange }</style>
  <script>const secret = 'marmalade';</script>
</head>
<body>
  <nav><a href=/>Workshop home</a></nav>
  <h1>Glassblowing</h1>
  <p>The gather is taken from the furnace
     on the end of a blowpipe.</p>
  <h2>Annealing</h2>
  <p>A finished piece rests in the annealer
     overnight so the strain relaxes.</p>
  <pre>
ramp 480 C  2h
hold 480 C  1h
  </pre>
  <footer>Written by the workshop</footer>
</body>
</html>
";

fn hits(env: &Env, query: &str) -> Vec<Value> {
    env.json(&["search", "-k", "10", query])["hits"].as_array().unwrap().clone()
}

#[test]
fn html_hits_carry_headings_and_the_source_lines_they_came_from() {
    let env = env();
    let file = env.write("notes/glass.html", PAGE);
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let docs = env.json(&["docs"]);
    assert_eq!(docs["documents"][0]["title"], "Glassblowing & annealing");

    let hit = &hits(&env, "annealer strain")[0];
    let c = &hit["citation"];
    assert_eq!(c["kind"], "line");
    assert_eq!(c["path"], "notes/glass.html");
    assert_eq!(c["section"], "Glassblowing > Annealing");
    assert_eq!((c["start"].as_u64(), c["end"].as_u64()), (Some(13), Some(19)), "{hit}");
    let cited = file_lines(&file, 13, 19);
    assert!(cited.contains("<h2>Annealing</h2>") && cited.contains("overnight") && cited.contains("hold 480"), "{cited}");
    assert!(c.get("page").is_none());

    let first = &hits(&env, "blowpipe")[0]["citation"];
    assert_eq!((first["start"].as_u64(), first["end"].as_u64()), (Some(10), Some(12)));
}

#[test]
fn html_scripts_styles_and_navigation_are_not_indexed() {
    let env = env();
    env.write("notes/glass.html", PAGE);
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    for absent in ["marmalade", "orange", "Workshop home", "Written by the workshop"] {
        assert!(hits(&env, absent).is_empty(), "{absent} is searchable");
    }
    assert_eq!(hits(&env, "ramp hold").len(), 1, "the <pre> block is indexed");
}

#[test]
fn html_headings_and_titles_keep_words_whole_across_inline_markup_and_entities() {
    let env = env();
    let page = "<html><head><title>AT&amp;T price list</title></head><body>\n\
        <h2>Hyd<b>ra</b>tion &lt;ratio&gt;</h2>\n<p>Rye wakes the starter.</p>\n\
        <h3>Line<br>break</h3>\n<p>The kiln cools overnight.</p>\n</body></html>\n";
    env.write("notes/odd.html", page);
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    assert_eq!(env.json(&["docs"])["documents"][0]["title"], "AT&T price list");
    assert_eq!(hits(&env, "rye")[0]["citation"]["section"], "Hydration <ratio>");
    // A line break inside a heading still parts its words.
    assert_eq!(hits(&env, "kiln")[0]["citation"]["section"], "Hydration <ratio> > Line break");
}

/// A three-page paper; page 2 holds the answer.
fn paper() -> Vec<u8> {
    pdf(&[
        &["Kiln Notes", "An introduction to small electric kilns."],
        &[
            "Bisque firing takes the clay to cone 04.",
            "A bisque firing of earthenware takes eight hours in the kiln.",
            "Open the lid only below one hundred degrees.",
        ],
        &["Glaze firing", "Glazes mature at cone 6 in a stoneware kiln."],
    ])
}

#[test]
fn pdf_hits_are_cited_by_page() {
    let env = env();
    env.write("notes/paper.pdf", paper());
    let summary = env.json(&["ingest", env.notes().to_str().unwrap()]);
    assert_eq!((summary["added"].as_u64(), summary["skipped"].as_u64()), (Some(1), Some(0)), "{summary}");

    let hit = &hits(&env, "earthenware bisque")[0];
    let c = &hit["citation"];
    assert_eq!(c["kind"], "page");
    assert_eq!(c["path"], "notes/paper.pdf");
    assert_eq!(c["page"], 2);
    assert!(c.get("start").is_none() && c.get("end").is_none(), "{c}");
    assert!(hit["snippet"].as_str().unwrap().contains("earthenware"));
    assert_eq!(hits(&env, "stoneware")[0]["citation"]["page"], 3);

    let human = env.ok(&["search", "earthenware"]);
    assert!(human.contains("notes/paper.pdf p. 2"), "{human}");
}

#[test]
fn ask_answers_from_a_pdf_with_a_page_citation() {
    let env = env();
    env.write("notes/paper.pdf", paper());
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let v = env.json(&["ask", "Which firing of earthenware takes eight hours?"]);
    assert_eq!(v["grounded"], true, "{v}");
    let c = &v["citations"][0]["citation"];
    assert_eq!((c["kind"].as_str(), c["path"].as_str(), c["page"].as_u64()), (Some("page"), Some("notes/paper.pdf"), Some(2)), "{v}");
    let human = env.ok(&["ask", "Which firing of earthenware takes eight hours?"]);
    assert!(human.contains("[1] notes/paper.pdf p. 2"), "{human}");
}

#[test]
fn cite_in_the_repl_prints_the_cited_page() {
    let env = env();
    env.write("notes/paper.pdf", paper());
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let input = "Which firing of earthenware takes eight hours?\n:cite 1\n:cite\n";
    let (code, out, err) = repl(&env, &["--repl", "--session", "kiln"], input);
    assert_eq!(code, 0, "{err}");
    let cite = out.split_once(":cite 1\n[1] notes/paper.pdf p. 2\n").map(|(_, rest)| rest).unwrap_or_else(|| panic!("{out}"));
    assert!(cite.starts_with("Bisque firing takes the clay to cone 04.\nA bisque firing of earthenware"), "{out}");
    assert!(cite.contains("Open the lid only below one hundred degrees."), "{out}");
    assert!(out.contains("also shown to the model, not cited:\n  [#2] notes/paper.pdf p. 3"), "{out}");
}

#[test]
fn unchanged_html_and_pdf_are_skipped_and_deleted_ones_pruned() {
    let env = env();
    let page = env.write("notes/glass.html", PAGE);
    let paper_path = env.write("notes/paper.pdf", paper());
    env.write("notes/keep.md", "# Keep\n\nThis note stays.\n");
    let notes = env.notes();
    let notes = notes.to_str().unwrap();
    let first = env.json(&["ingest", notes]);
    assert_eq!(first["added"], 3, "{first}");

    let again = env.json(&["ingest", notes]);
    assert_eq!((again["unchanged"].as_u64(), again["chunks_written"].as_u64()), (Some(3), Some(0)), "{again}");

    // An edited PDF is read again; its page numbers follow the new file.
    env.write("notes/paper.pdf", pdf(&[&["Only one page now, about raku firing."]]));
    let edited = env.json(&["ingest", notes]);
    assert_eq!((edited["updated"].as_u64(), edited["unchanged"].as_u64()), (Some(1), Some(2)), "{edited}");
    assert!(hits(&env, "earthenware").is_empty());
    assert_eq!(hits(&env, "raku")[0]["citation"]["page"], 1);

    std::fs::remove_file(page).unwrap();
    std::fs::remove_file(paper_path).unwrap();
    let kept = env.json(&["ingest", notes]);
    assert_eq!((kept["missing"].as_u64(), kept["removed"].as_u64()), (Some(2), Some(0)), "{kept}");
    let pruned = env.json(&["ingest", "--prune", notes]);
    assert_eq!(pruned["removed"], 2, "{pruned}");
    assert_eq!(env.doc_paths(), ["notes/keep.md"]);
}

#[test]
fn a_pdf_without_a_text_layer_is_skipped_with_an_ocr_hint() {
    let env = env();
    env.write("notes/scan.pdf", pdf(&[&[], &[]]));
    env.write("notes/note.md", "# Note\n\nA good note.\n");
    let s = env.json(&["ingest", env.notes().to_str().unwrap()]);
    assert_eq!((s["added"].as_u64(), s["skipped"].as_u64()), (Some(1), Some(1)), "{s}");
    let reason = s["skipped_files"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("no text layer") && reason.contains("OCR"), "{reason}");
    assert_eq!(s["skipped_files"][0]["path"], "notes/scan.pdf");
}

#[test]
fn an_encrypted_pdf_is_skipped_and_says_so() {
    let env = env();
    let locked = pdf_with(&[&["Secret kiln schedule."]], &Extras { encrypted: true, ..Extras::default() });
    env.write("notes/locked.pdf", locked);
    let out = env.run(&["--json", "ingest", env.path("notes/locked.pdf").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "a named file that could not be read is bad input");
    let s: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("encrypted PDF") || s.to_string().contains("encrypted PDF"), "{err} {s}");
}

#[test]
fn an_empty_pdf_is_reported_as_empty() {
    let env = env();
    env.write("notes/blank.pdf", "");
    env.write("notes/note.md", "# Note\n\nA good note.\n");
    let out = env.run(&["ingest", env.notes().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    // Named, and said to be empty, not a parser's "invalid file header".
    let err = common::stderr(&out);
    let line = err.lines().find(|l| l.contains("notes/blank.pdf")).unwrap_or_else(|| panic!("{err}"));
    assert!(line.contains("empty (0 bytes)") && !line.contains("header"), "{line}");
    let s = env.json(&["ingest", "--force", env.notes().to_str().unwrap()]);
    assert_eq!(s["skipped_files"][0]["path"], "notes/blank.pdf", "{s}");
    assert!(s["skipped_files"][0]["reason"].as_str().unwrap().contains("empty (0 bytes)"), "{s}");
}

#[test]
fn a_note_of_any_format_emptied_is_no_longer_found_and_an_empty_file_is_skipped_alike() {
    // An emptied PDF was skipped ("empty (0 bytes)") and its old text still found; an empty .md
    // or .txt was "added" (a document of 0 chunks), an empty page, record file or PDF skipped.
    blanked_notes_are_removed_and_blank_ones_skipped(&[""], "empty (0 bytes)");
}

#[test]
fn a_note_of_any_format_left_with_only_blank_space_is_no_longer_found_and_is_skipped_as_blank() {
    // A .md or .txt of blank lines was "added" (a document of 0 chunks that nothing can find),
    // and kept so when its text was blanked, while a JSONL of blank lines was skipped.
    let env = blanked_notes_are_removed_and_blank_ones_skipped(&["\n  \n\t\r\n", "\u{feff}\n\n", " \u{3000}\u{a0}\n"], "holds only blank space");
    // Named alone, a blank note is not indexable: not success, as for an empty one.
    let out = env.run(&["ingest", env.path("notes/fresh.md").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", common::stderr(&out));
    assert!(common::stderr(&out).contains("holds only blank space"), "{}", common::stderr(&out));
}

#[test]
fn an_html_page_with_no_readable_text_is_reported_not_indexed_empty() {
    // A page whose text a script writes, or whose article sits in a <nav> left
    // open, was counted "added" with 0 chunks: nothing in it could be found,
    // and nothing said so.
    let env = env();
    let app = "<html><head><title>Dashboard</title><script>render('quince')</script></head><body></body></html>";
    env.write("notes/app.html", app);
    env.write("notes/open-nav.html", "<body><nav>Menu<main><p>The quince harvest was late.</p></main></body>");
    env.write("notes/blank.html", "");
    env.write("notes/note.md", "# Note\n\nA good note.\n");
    let s = env.json(&["ingest", env.notes().to_str().unwrap()]);
    assert_eq!(s["added"], 1, "{s}");
    let skipped = s["skipped_files"].as_array().unwrap();
    let reasons: Vec<(&str, &str)> = skipped.iter().map(|f| (f["path"].as_str().unwrap(), f["reason"].as_str().unwrap())).collect();
    assert_eq!(reasons.len(), 3, "{s}");
    for (path, reason) in &reasons {
        assert!(reason.contains("no readable text") && reason.contains("workspace.exclude"), "{path}: {reason}");
    }
    let blank = reasons.iter().find(|(p, _)| *p == "notes/blank.html").unwrap().1;
    assert!(blank.contains("empty (0 bytes)"), "{blank}");
    assert!(reasons.iter().find(|(p, _)| *p == "notes/open-nav.html").unwrap().1.contains("left open"), "{reasons:?}");
    let docs = env.json(&["docs"]);
    assert_eq!(docs["documents"].as_array().unwrap().len(), 1, "{docs}");

    // A page that had text and lost it is written, so its old text goes.
    env.write("notes/was.html", "<p>The pear harvest.</p>");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    assert_eq!(hits(&env, "pear").len(), 1);
    env.write("notes/was.html", "<script>pear()</script>");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    assert!(hits(&env, "pear").is_empty(), "the old text is still found");
}

#[test]
fn a_format_forced_on_a_file_not_in_it_names_the_file_and_says_to_drop_the_flag() {
    // `--format pdf a.md` said "unreadable PDF (couldn't parse input: invalid
    // file header); re-save or re-export it": the note was fine, the flag was not.
    let env = env();
    let note = env.write("notes/kiln.md", "# Kiln\n\nThe kiln was fired at dawn.\n");
    let given = note.to_str().unwrap();
    for (format, read_as) in [("pdf", "not a PDF"), ("jsonl", "no usable JSONL record")] {
        let out = env.run(&["--json", "ingest", "--format", format, given]);
        assert_eq!(out.status.code(), Some(1), "{}", common::stderr(&out));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let message = doc["message"].as_str().unwrap();
        assert!(message.contains("kiln.md") && message.contains(read_as), "{message}");
        assert!(message.contains(&format!("drop --format {format} to read it as Markdown")), "{message}");
        assert!(!message.contains("re-save") && !message.contains("re-export"), "{message}");
    }
    // Followed, the advice works.
    assert_eq!(env.json(&["ingest", given])["added"], 1);
    // A file whose name says PDF, and is not one, is said to be no PDF; no flag to drop.
    let fake = env.write("notes/fake.pdf", "<html>a saved web page</html>");
    let out = env.run(&["ingest", "--format", "pdf", fake.to_str().unwrap()]);
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("fake.pdf: not a PDF") && !err.contains("drop --format"), "{err}");
}

#[test]
fn a_file_of_no_known_type_is_told_every_format_that_format_takes() {
    // The formats a message offers are the ones `--format` takes, each named once in kebab.
    let env = env();
    let help = String::from_utf8(env.run(&["ingest", "--help"]).stdout).unwrap();
    let values = help.split("[possible values: ").nth(1).and_then(|v| v.split(']').next()).unwrap_or_else(|| panic!("{help}"));
    let formats: Vec<&str> = values.split(", ").filter(|v| *v != "auto").collect();
    assert_eq!(formats.len(), 5, "{help}");
    let note = env.write("notes/kiln.rst", "Kiln\n====\n\nThe kiln was fired at dawn.\n");
    let out = env.run(&["ingest", note.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", common::stderr(&out));
    assert!(common::stderr(&out).contains(&format!("use --format {} to read it", formats.join("|"))), "{}", common::stderr(&out));
    for forced in ["pdf", "jsonl"] {
        let out = env.run(&["--json", "ingest", "--format", forced, note.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{}", common::stderr(&out));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let others: Vec<&str> = formats.iter().copied().filter(|f| *f != forced).collect();
        let fix = format!("give --format the format it is in ({})", others.join(", "));
        assert!(doc["message"].as_str().unwrap().contains(&fix), "{doc}");
    }
    // Every extension of a format is that format, in any case: `.MARKDOWN` is Markdown.
    let shouting = env.write("notes/LOUD.MARKDOWN", "# Loud\n\nThe kiln roared.\n");
    let out = env.run(&["--json", "ingest", "--format", "pdf", shouting.to_str().unwrap()]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["message"].as_str().unwrap().contains("drop --format pdf to read it as Markdown"), "{doc}");
}

/// Writes a note of each format, blanks each with one of `blanks` (taken in turn) and checks its text is
/// no longer found, then adds a blank one of each format and checks all ten are skipped, with
/// reasons opening `said` and the same way out.
fn blanked_notes_are_removed_and_blank_ones_skipped(blanks: &[&str], said: &str) -> Env {
    let env = env();
    let notes = env.notes().to_str().unwrap().to_string();
    env.write("notes/keep.md", "# Keep\n\nA good note.\n");
    let each = common::a_note_of_each_format();
    for (path, _, bytes) in &each {
        env.write(path, bytes);
    }
    assert_eq!(env.json(&["ingest", &notes])["added"], 6);
    for (i, (path, word, _)) in each.iter().enumerate() {
        assert_eq!(hits(&env, word).len(), 1, "{path}");
        env.write(path, blanks[i % blanks.len()]);
    }
    let s = env.json(&["ingest", &notes]);
    assert_eq!((s["removed"].as_u64(), s["skipped"].as_u64()), (Some(5), Some(0)), "{s}");
    for (path, word, _) in &each {
        assert!(hits(&env, word).is_empty(), "{path}: its old text is still found");
    }
    // Blanked, or blank from the start: skipped, with the same words and way out.
    for (i, (path, _, _)) in each.iter().enumerate() {
        env.write(&path.replace("/n.", "/fresh."), blanks[(i + 1) % blanks.len()]);
    }
    let s = env.json(&["ingest", &notes]);
    let skipped = s["skipped_files"].as_array().unwrap();
    assert_eq!(skipped.len(), 10, "{s}");
    for f in skipped {
        let reason = f["reason"].as_str().unwrap();
        assert!(reason.starts_with(&format!("{said}, so there is no ")), "{f}");
        assert!(reason.ends_with(" to index; write or save it again, or list it in workspace.exclude"), "{f}");
    }
    assert_eq!(env.doc_paths(), ["notes/keep.md"]);
    env
}
