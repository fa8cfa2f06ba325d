//! `kebab search` end to end: hits carry exact line spans, hostile queries
//! search as words, Korean matches inside words, and the JSON shape holds.

mod common;

use common::{Env, builtin_notes_env, file_lines, stderr};

fn indexed(env: &Env) {
    env.write(
        "notes/guide.md",
        "# Field guide\n\nIntro line.\n\n## Herons\n\nThe grey heron hunts in shallow water.\nIt stands very still.\n\n## Owls\n\nBarn owls hunt by sound at night.\n",
    );
    env.write("notes/ko.md", "# 형태소\n\n형태소 분석기는 문장을 나눈다.\n\n## 소유권\n\n러스트의 소유권 규칙은 세 가지다.\n");
    env.write("notes/ops.txt", "Operators: use AND OR NOT near (parentheses) and col:val pairs.\n");
    let notes = env.notes();
    env.ok(&["ingest", notes.to_str().unwrap()]);
}

#[test]
fn hit_citation_lines_hold_the_matched_text() {
    let env = Env::new();
    indexed(&env);
    let v = env.json(&["search", "heron"]);
    assert_eq!(v["schema_version"], "search_response.v1");
    assert_eq!(v["mode"], "lexical");
    let hit = &v["hits"][0];
    assert_eq!(hit["schema_version"], "search_hit.v1");
    assert_eq!(hit["rank"], 1);
    assert_eq!(hit["score_kind"], "bm25");
    assert!(hit["score"].as_f64().unwrap() > 0.0);
    assert_eq!(hit["doc_path"], "notes/guide.md");
    assert_eq!(hit["heading_path"], serde_json::json!(["Field guide", "Herons"]));
    let c = &hit["citation"];
    assert_eq!(c["kind"], "line");
    assert_eq!(c["section"], "Field guide > Herons");
    let (start, end) = (c["start"].as_u64().unwrap(), c["end"].as_u64().unwrap());
    assert_eq!((start, end), (5, 8));
    let text = file_lines(&env.path("notes/guide.md"), start, end);
    assert!(text.starts_with("## Herons") && text.contains("grey heron"), "{text}");
    assert!(hit["snippet"].as_str().unwrap().contains("«heron»"), "{}", hit["snippet"]);
    assert_eq!(hit["retrieval"]["method"], "lexical");
    assert_eq!(hit["retrieval"]["lexical_rank"], 1);
}

#[test]
fn stemming_matches_other_forms_of_a_word() {
    let env = Env::new();
    indexed(&env);
    let v = env.json(&["search", "hunting"]);
    let paths: Vec<&str> = v["hits"].as_array().unwrap().iter().map(|h| h["citation"]["section"].as_str().unwrap_or("")).collect();
    assert!(paths.contains(&"Field guide > Herons") && paths.contains(&"Field guide > Owls"), "{paths:?}");
}

#[test]
fn a_word_written_closed_up_is_searched_as_the_notes_hyphenate_it() {
    let env = Env::new();
    env.write("notes/net.md", "# Network\n\nThe Pi-hole box answers DNS for the house on 192.168.68.2.\n");
    env.write("notes/other.md", "# Garden\n\nThe hole by the fence needs filling.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let v = env.json(&["search", "pihole address"]);
    assert_eq!(v["respelled"], serde_json::json!([{ "typed": "pihole", "read": "pi-hole" }]));
    assert_eq!(v["hits"][0]["doc_path"], "notes/net.md", "{v}");
    // Two words the notes hold apart, not side by side, are no reading.
    let v = env.json(&["search", "fencehole"]);
    assert!(v.get("respelled").is_none(), "{v}");
}

#[test]
fn a_word_spelt_the_british_or_american_way_is_searched_as_the_notes_spell_it() {
    // "How do I initialise a vector?" found nothing of notes that write
    // "initialize": the search lost the word and the gate counted it missing.
    let env = Env::new();
    env.write("notes/code.md", "# Code\n\nInitialize the buffer before the loop. Its behavior is documented.\n");
    env.write("notes/town.md", "# Town\n\nThe centre of town has a market. We analyse its prices.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    for (q, typed, read, file) in [
        ("initialise the buffer", "initialise", "initialize", "notes/code.md"),
        ("its behaviour", "behaviour", "behavior", "notes/code.md"),
        ("town center", "center", "centre", "notes/town.md"),
        ("analyze prices", "analyze", "analyse", "notes/town.md"),
    ] {
        let v = env.json(&["search", q]);
        assert_eq!(v["respelled"], serde_json::json!([{ "typed": typed, "read": read }]), "{q}");
        assert_eq!(v["hits"][0]["doc_path"], file, "{q}: {v}");
    }
}

#[test]
fn a_korean_compound_the_notes_write_apart_is_searched_as_its_two_words() {
    // "필기시험 점수 몇 점이었지?" found nothing: the notes write `학과시험
    // (필기)` and `시험` alone, never `필기시험`.
    let env = Env::new();
    env.write("notes/license.md", "# 운전면허\n\n## 학과시험 (필기)\n3월 11일 응시, 88점 합격.\n\n## 기능\n첫 시험은 떨어졌다.\n");
    env.write("notes/other.md", "# 장보기\n\n우유와 달걀을 샀다.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let v = env.json(&["search", "필기시험을 언제 봤지"]);
    assert_eq!(v["respelled"], serde_json::json!([{ "typed": "필기시험을", "read": "필기 시험을" }]));
    assert_eq!(v["hits"][0]["doc_path"], "notes/license.md", "{v}");
    // A word the notes hold whole, or a past verb, is left as typed.
    for q in ["학과시험", "떨어졌었지"] {
        assert!(env.json(&["search", q]).get("respelled").is_none(), "{q}");
    }
}

#[test]
fn a_korean_loanword_spelt_another_way_is_searched_as_the_notes_spell_it() {
    // "메소드를 어떻게 정의해?" found nothing in notes that write `메서드`:
    // loanwords have more than one spelling in use.
    let env = Env::new();
    let code = "# 코드\n\n메서드는 impl 블록 안에 정의한다.\n\n스레드를 만들 때는 spawn을 쓴다.\n\n트레이트는 공통 동작을 묶는다.\n\n버전은 Cargo.toml에 적는다.\n";
    env.write("notes/code.md", code);
    env.write("notes/other.md", "# 장보기\n\n시장 거리에서 우유를 샀다.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    for (q, typed, read) in [
        ("메소드를 어떻게 정의해", "메소드를", "메서드를"),
        ("쓰레드 만드는 법", "쓰레드", "스레드"),
        ("트레잇이 뭐야", "트레잇이", "트레이트가"),
        // Two syllables are read so only when spelt by ear (`젼` is no Korean spelling).
        ("버젼 올리기", "버젼", "버전"),
    ] {
        let v = env.json(&["search", q]);
        assert_eq!(v["respelled"], serde_json::json!([{ "typed": typed, "read": read }]), "{q}");
        assert_eq!(v["hits"][0]["doc_path"], "notes/code.md", "{q}: {v}");
    }
    // A word the notes hold, a short one (`고리`, though the notes hold `거리`), or one with no spelling they hold is left as typed.
    for q in ["메서드 정의", "고리 우유", "소프트웨어"] {
        assert!(env.json(&["search", q]).get("respelled").is_none(), "{q}");
    }
}

#[test]
fn a_korean_request_word_does_not_outrank_the_topic_it_asks_about() {
    // "러스트의 소유권 규칙 세 가지를 알려주세요." ranked first a chunk that
    // happens to say `알려주세요`, a word rarer in the notes than the topic's.
    let env = Env::new();
    env.write("notes/rules.md", "# 소유권\n\n소유권 규칙은 세 가지다. 값마다 소유자가 하나 있다.\n");
    env.write("notes/memo.md", "# 메모\n\n소유권 이야기는 나중에 하자.\n");
    env.write("notes/team.md", "# 회의\n\n팀 규칙은 회의에서 정한다.\n");
    env.write("notes/contact.md", "# 문의\n\n궁금한 점이 있으면 메일로 알려주세요.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let v = env.json(&["search", "소유권 규칙을 알려주세요"]);
    assert_eq!(v["hits"][0]["doc_path"], "notes/rules.md", "{v}");
    assert!(v["hits"].as_array().unwrap().iter().all(|h| h["doc_path"] != "notes/contact.md"), "{v}");
    // Asked alone, it is still searched.
    assert_eq!(env.json(&["search", "알려주세요"])["hits"][0]["doc_path"], "notes/contact.md");
}

#[test]
fn a_misspelt_word_is_searched_as_the_notes_spell_it() {
    let env = Env::new();
    indexed(&env);
    let v = env.json(&["search", "shalow water"]);
    assert_eq!(v["respelled"], serde_json::json!([{ "typed": "shalow", "read": "shallow" }]));
    assert_eq!(v["query"], "shalow water");
    assert_eq!(v["hits"][0]["citation"]["section"], "Field guide > Herons");
    let out = env.run(&["search", "shalow"]);
    assert!(stderr(&out).contains("read \"shalow\" as \"shallow\""), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("«shallow»"));
    // Capitalised, it may be a name: left as typed, and it finds nothing.
    let v = env.json(&["search", "Shalow"]);
    assert!(v.get("respelled").is_none() && v["hits"].as_array().unwrap().is_empty(), "{v}");
}

#[test]
fn operator_soup_searches_as_words_and_never_errors() {
    let env = Env::new();
    indexed(&env);
    let long = "heron ".repeat(2000); // 12 KB
    let queries = [
        "\"", "\"unbalanced", "AND", "OR NOT", "NEAR(heron owl, 3)", "col:val", "(parentheses", "heron*", "-heron",
        "^owl", "a AND (b OR \"c", "*", "::", "heron -- owl", "{col}: x", long.as_str(),
    ];
    for q in queries {
        // `--` so that a query starting with `-` is not read as a flag.
        let out = env.run(&["--json", "search", "--", q]);
        let code = out.status.code();
        // Punctuation-only queries are bad input (exit 1); everything else is a search (exit 0).
        assert!(code == Some(0) || code == Some(1), "{q:?}: {code:?} {}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{q:?}: not JSON"));
        if code == Some(1) {
            assert_eq!(v["schema_version"], "error.v1", "{q:?}");
        }
    }
    // Operator words are searched as words.
    let v = env.json(&["search", "parentheses AND col:val"]);
    assert_eq!(v["hits"][0]["doc_path"], "notes/ops.txt");
    let v = env.json(&["search", "-k", "3", "--", "-heron"]);
    assert_eq!(v["hits"][0]["doc_path"], "notes/guide.md");
}

#[test]
fn korean_words_match_inside_longer_words() {
    let env = Env::new();
    indexed(&env);
    // Trigram: the query word is the stem of the indexed `분석기는`.
    let v = env.json(&["search", "분석기"]);
    assert_eq!(v["hits"][0]["doc_path"], "notes/ko.md");
    assert!(v["hits"][0]["snippet"].as_str().unwrap().contains("«분석기"), "{}", v["hits"][0]["snippet"]);
    // Two characters: prefix match on the word index.
    let v = env.json(&["search", "소유"]);
    assert_eq!(v["hits"][0]["citation"]["section"], "형태소 > 소유권");
    // A particle on the query word is stripped before matching.
    let v = env.json(&["search", "소유권은"]);
    assert_eq!(v["hits"][0]["citation"]["section"], "형태소 > 소유권");
}

#[test]
fn mixed_script_query_fuses_both_indexes() {
    let env = Env::new();
    indexed(&env);
    let v = env.json(&["search", "--trace", "heron 분석기"]);
    assert!(v["trace"]["word_match"].as_str().unwrap().contains("heron"));
    assert!(v["trace"]["trigram_match"].as_str().unwrap().contains("분석기"));
    let paths: Vec<&str> = v["hits"].as_array().unwrap().iter().map(|h| h["doc_path"].as_str().unwrap()).collect();
    assert!(paths.contains(&"notes/guide.md") && paths.contains(&"notes/ko.md"), "{paths:?}");
}

#[test]
fn a_word_in_half_the_chunks_is_left_out_and_the_trace_says_so() {
    let env = Env::new();
    // "garden" is in every note; BM25 gives it no weight. "heron" is in two of five.
    let days = ["A heron stood by the pond.", "The heron left at dawn.", "Tomatoes need sun.", "Mulch keeps water in.", "Rain."];
    for (i, extra) in days.iter().enumerate() {
        env.write(&format!("notes/n{i}.md"), format!("# Garden log {i}\n\nIn the garden today. {extra}\n"));
    }
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let v = env.json(&["search", "--mode", "lexical", "-k", "2", "--trace", "garden heron"]);
    assert_eq!(v["trace"]["weightless"], serde_json::json!(["\"garden\""]));
    let mut paths: Vec<&str> = v["hits"].as_array().unwrap().iter().map(|h| h["doc_path"].as_str().unwrap()).collect();
    paths.sort();
    assert_eq!(paths, ["notes/n0.md", "notes/n1.md"]);
    let text = env.ok(&["search", "--mode", "lexical", "-k", "2", "--trace", "garden heron"]);
    assert!(text.contains("left out, in half the chunks or more: \"garden\""), "{text}");
    // Asked for three, the heron notes are not enough: the whole query is ranked.
    let v = env.json(&["search", "--mode", "lexical", "-k", "3", "--trace", "garden heron"]);
    assert_eq!(v["trace"]["weightless"], serde_json::json!([]));
    assert_eq!(v["hits"].as_array().unwrap().len(), 3);
}

#[test]
fn k_limits_the_hits() {
    let env = Env::new();
    indexed(&env);
    assert_eq!(env.json(&["search", "-k", "1", "hunt"])["hits"].as_array().unwrap().len(), 1);
    let out = env.run(&["search", "-k", "0", "hunt"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn punctuation_only_query_is_bad_input() {
    let env = Env::new();
    indexed(&env);
    let out = env.run(&["--json", "search", "()*"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["code"], "bad_input");
}

#[test]
fn search_on_an_empty_index_says_how_to_fill_it() {
    let env = Env::new();
    // An index that exists but holds nothing (a missing one is `no_index`, exit 1: tests/new_user.rs).
    env.ok(&["init"]);
    let out = env.run(&["search", "anything"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("kebab ingest"), "{}", stderr(&out));
}

#[test]
fn notes_with_escape_sequences_never_reach_the_terminal_raw() {
    let env = Env::new();
    env.write("notes/evil.md", "# Evil\n\nclear \u{1b}[2J screen and \u{1b}]0;title\u{7} here, plus heron.\n");
    env.write("notes/we\nird.md", "# Weird\n\nheron in a file with a newline in its name.\n");
    let notes = env.notes();
    env.ok(&["ingest", notes.to_str().unwrap()]);
    let out = env.ok(&["search", "heron"]);
    assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out:?}");
    assert!(out.contains("we\\nird.md"), "{out}");
}

#[test]
fn human_output_lists_path_lines_and_section() {
    let env = Env::new();
    indexed(&env);
    let out = env.ok(&["search", "owls"]);
    let first = out.lines().next().unwrap();
    assert!(first.starts_with(" 1. notes/guide.md:10-12 · Field guide > Owls"), "{out}");
}

#[test]
fn notes_whose_names_end_in_a_multibyte_character_before_the_extension_are_found() {
    // The last four bytes of `café.md` written decomposed (NFD: `e` + U+0301)
    // and of `resumé.md` start inside a character; finding them must not crash.
    let env = builtin_notes_env(&[
        ("cafe\u{301}.md", "# Cafe\n\nThe espresso machine needs descaling monthly.\n"),
        ("resum\u{e9}.md", "# Resume\n\nThe gardener prunes roses in March.\n"),
    ]);
    for (query, name) in [("espresso descaling", "cafe\u{301}.md"), ("gardener roses", "resum\u{e9}.md")] {
        let v = env.json(&["search", query]);
        assert_eq!(v["hits"][0]["citation"]["kind"], "line", "{v}");
        assert_eq!(v["hits"][0]["doc_path"], format!("notes/{name}"), "{v}");
        let out = env.run(&["search", query]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    }
    let out = env.run(&["ask", "What does the espresso machine need?"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("descaling"), "{}", String::from_utf8_lossy(&out.stdout));
}
