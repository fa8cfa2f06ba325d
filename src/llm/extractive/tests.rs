//! The built-in answerer's behaviour, question by question: what it quotes
//! for each kind of question, and that every quote verifies.

use super::*;
use super::score::stem;
use crate::llm::Heading;
use crate::llm::{Message, Role};

fn grounding(q: &str, ev: &[&str]) -> Grounding {
    Grounding { question: q.into(), evidence: ev.iter().enumerate().map(|(i, t)| (i + 1, t.to_string())).collect(), ..Grounding::default() }
}

/// The answer with the shipped cap on quotes.
fn answer(g: &Grounding) -> String {
    super::answer(g, crate::config::DEFAULT_EXTRACTIVE_QUOTES)
}

/// A follow-up in a conversation: what the previous turn was about, and its answer.
fn follow_up(q: &str, ev: &[&str], context: &str, said: &str) -> Grounding {
    Grounding { context: context.into(), said: said.into(), ..grounding(q, ev) }
}

#[test]
fn a_records_first_sentence_answers_for_its_title() {
    // A glossary record: the title names what its text defines.
    let ev = ["The SQLite extension for full-text search. It ships with most builds.", "Reading list: FTS5 tokenizers, and why trigram helps Korean."];
    let g = Grounding { headings: vec![Heading { n: 1, text: "FTS5".into(), record: true }], ..grounding("What is FTS5?", &ev) };
    assert!(answer(&g).starts_with("\"The SQLite extension for full-text search.\" [#1]"), "{}", answer(&g));
}

#[test]
fn a_sections_heading_names_what_its_first_sentence_defines_when_nothing_else_answers() {
    let ev = ["## Autolyse\n\nMixing only the flour and water, then resting it before the salt goes in."];
    assert_eq!(answer(&grounding("What is autolyse?", &ev)), REFUSALS[0]);
    let heading = Heading { n: 1, text: "Autolyse".into(), record: false };
    let g = Grounding { headings: vec![heading], ..grounding("What is autolyse?", &ev) };
    assert!(answer(&g).starts_with("\"Mixing only the flour and water, then resting it before the salt goes in.\" [#1]"), "{}", answer(&g));
}

#[test]
fn stems_meet_across_inflections() {
    for group in [["take", "takes"], ["store", "stored"], ["borrow", "borrowing"]] {
        assert_eq!(stem(group[0]), stem(group[1]), "{group:?}");
    }
}

#[test]
fn context_picks_between_sentences_that_answer_the_question_alike() {
    let ev = ["A full inspection takes about 20 minutes per hive.", "One alcohol wash takes about ten minutes per hive."];
    let g = follow_up("How long does that take?", &ev, "I counted mites with an alcohol wash of about 300 bees.", "");
    assert!(answer(&g).starts_with("\"One alcohol wash takes about ten minutes per hive.\" [#2]"), "{}", answer(&g));
    // Context alone never makes a sentence an answer.
    let off = follow_up("What colour is the roof?", &ev, &g.context, "");
    assert!(!answer(&off).contains("[#"));
}

#[test]
fn quotes_the_sentence_that_answers_with_its_marker() {
    let g = grounding(
        "How do I create a new project with cargo?",
        &["Cargo is the build tool.", "# Creating\n\nTo create a new project, run `cargo new hello`. It makes a folder.\n\n```\n$ cargo new x\n```"],
    );
    let a = answer(&g);
    assert!(a.starts_with("\"To create a new project, run `cargo new hello`.\" [#2]"), "{a}");
}

#[test]
fn refuses_in_words_when_nothing_covers_the_question() {
    let g = grounding("What temperature should sourdough proof at?", &["Ownership rules apply to every value in Rust."]);
    assert_eq!(answer(&g), "The notes I was given do not answer this question.");
}

#[test]
fn streams_word_by_word_and_stops_when_asked() {
    let req = ChatRequest {
        messages: vec![Message::new(Role::User, "q")],
        temperature: 0.0,
        seed: None,
        max_tokens: None,
        stream: true,
        grounding: Some(grounding("borrow checker rules", &["The borrow checker enforces the borrowing rules at compile time."])),
    };
    let mut got = Vec::new();
    let c = Extractive::default().chat(&req, &mut |p| {
        got.push(p.to_string());
        if got.len() == 2 { Flow::Stop } else { Flow::Continue }
    }).unwrap();
    assert!(c.stopped);
    assert_eq!(got.len(), 2);
    assert_eq!(c.text, got.concat());
    let full = Extractive::default().chat(&req, &mut |_| Flow::Continue).unwrap();
    assert!(!full.stopped && full.text.ends_with("[#1]"));
}

#[test]
fn korean_questions_match_korean_sentences() {
    let mut g = grounding("소유권 규칙은 무엇인가요?", &["소유권 규칙부터 알아보겠습니다. 러스트에서 각각의 값은 소유자가 정해져 있습니다."]);
    g.korean = true;
    let a = answer(&g);
    assert!(a.contains("[#1]") && a.contains("소유권 규칙"), "{a}");
}

fn korean(q: &str, ev: &[&str]) -> Grounding {
    Grounding { korean: true, ..grounding(q, ev) }
}

/// Every quote of `a` is supported by its evidence entry (rag-v2 verification).
fn verified(a: &str, ev: &[&str]) -> bool {
    let marks = crate::rag::extract::markers(a);
    let v = crate::rag::verify::verify(a, &marks, |n| ev.get(n.wrapping_sub(1)).copied());
    v.unsupported.is_empty() && !v.supported.is_empty()
}

#[test]
fn a_list_question_gets_the_list_not_the_sentence_that_echoes_it() {
    // "What are the five unsafe superpowers?" quoted "Let's look at each of the five … in turn."
    let ev = ["Let's look at each of the five hive tools in turn.", "A keeper carries five hive tools on every visit:\n\n* a smoker\n* a hive tool for prying frames\n* a bee brush\n* a veil\n* gloves\n\nThe smoker matters most."];
    let a = answer(&grounding("What are the five hive tools?", &ev));
    for item in ["a smoker", "a bee brush", "gloves"] {
        assert!(a.contains(item), "{item} missing: {a}");
    }
    assert!(!a.starts_with("\"Let's look"), "{a}");
    assert!(verified(&a, &ev), "{a}");
}

#[test]
fn a_question_asking_for_n_things_is_answered_by_the_list_of_n_first() {
    // "러스트의 소유권 규칙 세 가지를 알려주세요." quoted "러스트의 소유권 규칙이
    // 우리를 또다시 구해주었습니다!" and not the three rules under "다음 규칙을
    // 명심하세요:".
    let ev = [
        "정원 규칙은 오래전에 정했고 이웃들이 정원 규칙을 자주 묻는다.\n\n정원 규칙은 다음과 같다:\n\n- 물은 아침에 준다.\n- 잡초는 주말에 뽑는다.\n- 퇴비는 한 달에 한 번 넣는다.\n",
        "The neighbours often ask about the three garden rules.\n\nThe garden rules are these:\n\n- Water in the morning.\n- Weed at the weekend.\n- Compost once a month.\n",
    ];
    for (q, opens) in [
        ("정원 규칙 세 가지 알려줘", "\"정원 규칙은 다음과 같다:\" [#1]"),
        ("정원 규칙 3가지가 뭐야?", "\"정원 규칙은 다음과 같다:\" [#1]"),
        ("What are the three garden rules?", "\"The garden rules are these:\" [#2]"),
    ] {
        let a = answer(&grounding(q, &ev));
        assert!(a.starts_with(opens) && a.contains("Compost once a month") == opens.contains("#2"), "{q}: {a}");
        assert!(verified(&a, &ev), "{a}");
    }
}

#[test]
fn a_sentence_ending_in_a_colon_brings_its_bullet_points() {
    // "Which three conditions make up a data race?" stopped at the ":".
    let ev = ["A colony swarms when three conditions meet:\n\n- the hive is crowded\n- a new queen is being raised\n- the weather is warm\n"];
    let a = answer(&grounding("Which three conditions make a colony swarm?", &ev));
    assert!(a.contains("the hive is crowded") && a.contains("a new queen is being raised") && a.contains("the weather is warm"), "{a}");
    assert!(verified(&a, &ev), "{a}");
}

#[test]
fn an_item_of_a_list_as_long_as_the_question_asks_brings_the_others_when_its_intro_is_in_another_passage() {
    // "What are the three Fn traits …?": the sentence ending in ":" closed one
    // chunk and the three items opened the next; only `FnOnce` was quoted.
    let ev = [
        "Every colony has three castes of bee, and each caste has its own work:",
        "- The queen bee lays every egg in the hive.\n- Worker bees gather nectar and build the comb.\n- Drones mate with a young queen.\n\nA strong colony has tens of thousands of workers.",
    ];
    let a = answer(&grounding("What are the three castes of bee in a hive?", &ev));
    assert!(a.contains("The queen bee lays") && a.contains("Worker bees gather") && a.contains("Drones mate"), "{a}");
    assert!(verified(&a, &ev), "{a}");
    // Asked for two, a list of three is not the answer as a whole.
    let a = answer(&grounding("What are the two castes of bee in a hive?", &ev));
    assert!(!(a.contains("The queen bee lays") && a.contains("Worker bees gather") && a.contains("Drones mate")), "{a}");
}

#[test]
fn a_difference_question_gets_the_definitions_not_the_announcement() {
    // "What is the difference between String and &str?" quoted "We'll first define what we mean by the term _string_."
    let ev = ["We'll first define what we mean by the term _nectar_. Nectar is a sugary liquid that flowers make to attract bees. Honey is nectar that bees have dried and sealed in wax cells."];
    let a = answer(&grounding("What is the difference between nectar and honey?", &ev));
    assert!(!a.contains("We'll first define"), "{a}");
    assert!(a.contains("Nectar is a sugary liquid") && a.contains("Honey is nectar"), "{a}");
}

#[test]
fn an_example_question_gets_the_code_block() {
    let ev = ["You open a hive from the side away from the entrance. For example:\n\n```console\n$ hive open --side back\n```\n\nClose it the same way."];
    let a = answer(&grounding("show me an example of opening a hive", &ev));
    assert!(a.contains("$ hive open --side back"), "{a}");
    assert!(verified(&a, &ev), "{a}");
}

#[test]
fn a_how_do_i_question_gets_the_command_from_the_next_passage_when_the_best_has_none() {
    // The passage saying what to do and the one with the command were split
    // ("run the tests one at a time", then `--test-threads=1` in the next chunk).
    let ev = [
        "Two jobs writing the same log file can clobber each other. One fix is to run the jobs one at a time.",
        "The runner takes a flag for that:\n\n```console\n$ runner --threads=1\n```\n\nRunning the jobs one at a time is slower, but they no longer clobber the log file.",
    ];
    let a = answer(&grounding("my jobs clobber the same log file; how can I make them run one at a time?", &ev));
    assert!(a.contains("$ runner --threads=1"), "{a}");
    assert!(verified(&a, &ev), "{a}");
}

#[test]
fn a_how_do_i_answer_names_the_call_from_another_passage_when_its_sentences_name_none() {
    // "How do I read the arguments given to my program on the command line?"
    // quoted sentences close in meaning that restate it, and not "…, we'll
    // need the `std::env::args` function" from the passage ranked third.
    let ev = [
        "The logger can already show the readings taken from every hive on the roof.",
        "The readings of a hive are kept for a year.",
        "To read the readings, we need the `hivelog::readings` function.",
    ];
    // Closeness in meaning, as the pipeline hands it: the restating sentence nearest.
    let g = Grounding { closeness: vec![(0, 0.9), (1, 0.1), (2, 0.3)], ..grounding("How do I read the readings of each hive?", &ev) };
    let a = answer(&g);
    assert!(a.starts_with("\"The logger can already show"), "{a}");
    assert!(a.contains("\"To read the readings, we need the `hivelog::readings` function.\" [#3]") && verified(&a, &ev), "{a}");
}

#[test]
fn a_how_do_i_question_prefers_the_call_over_a_neighbouring_topic() {
    // "how do I add to a vector" quoted a RefCell sentence.
    let ev = [
        "Frames added to a hive are checked each time a keeper borrows the hive record.",
        "A hive keeps its frames in a box that can grow. To add a frame, call `hive.push(frame)` on the hive.",
    ];
    let a = answer(&grounding("how do I add a frame to a hive", &ev));
    assert!(a.starts_with("\"To add a frame, call `hive.push(frame)` on the hive.\" [#2]"), "{a}");
}

#[test]
fn a_question_the_notes_ask_is_answered_by_the_sentence_after_it() {
    // The notes' rhetorical question echoes the user's best, but says nothing.
    let ev = ["Which flour should you feed a starter? Rye works fastest, then whole wheat."];
    let a = answer(&grounding("which flour should I feed my starter?", &ev));
    assert_eq!(a, "\"Rye works fastest, then whole wheat.\" [#1]");
    assert!(verified(&a, &ev), "{a}");
    // When nothing but the question matches, it is still quoted rather than nothing.
    let ev = ["Does a starter need rye flour?"];
    assert_eq!(answer(&grounding("does a starter need rye flour?", &ev)), "\"Does a starter need rye flour?\" [#1]");
}

#[test]
fn an_announcement_close_in_meaning_loses_to_the_sentence_that_answers() {
    let ev = ["Let's look at how a starter is fed. Feed a starter equal weights of flour and water every day. Starters are kept in jars."];
    let g = grounding("how often do I feed a starter?", &ev);
    // Closeness (as the pipeline measures it) likes the announcement best.
    let g = Grounding { closeness: vec![(0, 0.9), (1, 0.8), (2, 0.5)], ..g };
    let a = answer(&g);
    assert!(a.starts_with("\"Feed a starter equal weights of flour and water every day.\" [#1]"), "{a}");
}

#[test]
fn why_after_an_answer_gives_the_cause_not_the_same_sentence() {
    let ev = ["Bees fan their wings at the hive entrance on hot days. They do this because the brood must stay near 35 degrees."];
    let said = "\"Bees fan their wings at the hive entrance on hot days.\" [#1]";
    let a = answer(&follow_up("why?", &ev, "Bees fan their wings at the hive entrance on hot days.", said));
    assert!(a.starts_with("\"They do this because the brood must stay near 35 degrees.\" [#1]"), "{a}");
    assert!(!a.contains("Bees fan their wings"), "{a}");
}

#[test]
fn a_sentence_with_code_or_an_apostrophe_the_last_turn_quoted_is_not_quoted_again() {
    // What was said was read from the conversation as the search reads
    // it, without backticks and apostrophes ("`String`은" → "String 은",
    // "it’s" → "it s"), so such a sentence was not recognised as said;
    // it is read from the answer as written.
    let ev = ["`hive.close()` seals the hive when it’s below 10 degrees outside. The bees then cluster around the queen. They do this because the brood must stay warm."];
    let context = "hive.close() seals the hive when it s below 10 degrees outside. The bees then cluster around the queen.";
    let said = "\u{201C}`hive.close()` seals the hive when it’s below 10 degrees outside.\u{201D} [#1]\n\"The bees then cluster around the queen.\" [#1]";
    let a = answer(&follow_up("why?", &ev, context, said));
    assert!(a.starts_with("\"They do this because the brood must stay warm.\" [#1]"), "{a}");
    assert!(!a.contains("seals the hive"), "{a}");
}

#[test]
fn mdbook_markup_never_reaches_a_quote_and_the_quote_still_verifies() {
    let ev = ["Print the frame count with the [`tally!` macro][tally]<!-- ignore --> while you inspect the hive.\n\n[tally]: ../std/macro.tally.html"];
    let a = answer(&grounding("How do I print the frame count while inspecting?", &ev));
    assert!(a.contains("the `tally!` macro while you inspect"), "{a}");
    assert!(!a.contains("<!--") && !a.contains("][tally]"), "{a}");
    assert!(verified(&a, &ev), "{a}");
}

#[test]
fn korean_questions_with_the_particle_iran_are_answered() {
    // "소유권이란 무엇인가요?" was refused: -이란 was not stripped.
    let ev = ["벌집은 벌들이 밀랍으로 지은 육각형 방의 모음입니다. 여왕벌은 그 방에 알을 낳습니다."];
    let a = answer(&korean("벌집이란 무엇인가요?", &ev));
    assert!(a.starts_with("\"벌집은 벌들이 밀랍으로 지은 육각형 방의 모음입니다.\" [#1]"), "{a}");
}

#[test]
fn a_korean_request_about_a_term_gets_its_definition() {
    // "Tell me about X" and "what X is" ask what "X란 무엇인가요" asks.
    let ev = ["여왕벌이 알을 낳으면 벌집의 방이 채워집니다. 벌집은 벌들이 밀랍으로 지은 육각형 방의 모음입니다."];
    for q in ["벌집에 대해 알려줘", "벌집이 뭔지 간단히 알려줘"] {
        let a = answer(&korean(q, &ev));
        assert!(a.starts_with("\"벌집은 벌들이 밀랍으로 지은 육각형 방의 모음입니다.\" [#1]"), "{q}: {a}");
    }
}

#[test]
fn an_announcement_quoted_after_the_best_sentence_brings_what_it_announces() {
    // The announcement is not the best sentence, yet what it says is in the
    // sentence and the list after it.
    let ev = [
        "The hive rules were agreed by the club in 2019, and every member signs the hive rules.",
        "### Hive rules\n\nFirst, let's take a look at the hive rules. Keep these in mind on every visit:\n\n- Never open a hive in the rain.\n- Always wear a veil.",
    ];
    let a = answer(&grounding("What are the hive rules?", &ev));
    assert!(a.starts_with("\"The hive rules were agreed"), "{a}");
    assert!(a.contains("\"First, let's take a look at the hive rules.\" [#2]\n\"Keep these in mind on every visit:\" [#2]"), "{a}");
    assert!(a.contains("\"Never open a hive in the rain.\" [#2]") && verified(&a, &ev), "{a}");
}

#[test]
fn a_sentence_quoted_after_the_best_brings_the_list_its_next_sentence_introduces() {
    // "What extra powers does an unsafe block give you?" quoted "You can take
    // five actions in unsafe Rust …" second, without "Those superpowers
    // include the ability to:" and the five after it.
    let ev = [
        "Beekeepers in the club use special tools on every visit, and the club lends special tools to beekeepers.",
        "A new keeper needs four special tools. Those tools are:\n\n- a smoker\n- a veil\n- a hive tool\n- gloves\n\nThe club shop sells them.",
    ];
    let a = answer(&grounding("Which special tools do beekeepers use?", &ev));
    assert!(a.starts_with("\"Beekeepers in the club use special tools"), "{a}");
    assert!(a.contains("\"A new keeper needs four special tools.\" [#2]\n\"Those tools are:\" [#2]"), "{a}");
    assert!(a.contains("\"a smoker\" [#2]") && a.contains("\"gloves\" [#2]") && verified(&a, &ev), "{a}");
}

#[test]
fn a_quote_ending_in_code_brings_the_sentence_after_it_that_says_what_the_code_shows() {
    // "What is the type of a string literal?" quoted "… we can properly
    // understand string literals:" and the `let s = …` block, not "The type
    // of `s` here is `&str`" under it.
    let ev = ["Frames hold the comb. Now we can look at how a frame is labelled:\n\n```\nlabel = \"H3-F7\"\n```\n\n\
        The label here is a hive number then a frame number. Next comes the record of a visit:\n\n```\nvisit = 12\n```"];
    let a = answer(&grounding("How is a frame labelled?", &ev));
    assert!(a.contains("\"Now we can look at how a frame is labelled:\" [#1]\n\u{201C}label = \"H3-F7\"\u{201D} [#1]"), "{a}");
    assert!(a.contains("\"The label here is a hive number then a frame number.\" [#1]") && verified(&a, &ev), "{a}");
    // A sentence that announces the next block is not what the code showed.
    assert!(!a.contains("Next comes the record"), "{a}");
}

#[test]
fn an_announcement_whose_block_is_missing_brings_the_sentence_after_it() {
    // "Can a test return a Result instead of panicking?" quoted "Here's the
    // test …, rewritten to use `Result<T, E>` …:", whose listing is an
    // included file, and not "The `it_works` function now has the
    // `Result<(), String>` return type." after it.
    let ev = ["Frames come out with a hive tool. Here is how a frame is lifted:\n\n\
        The flat end goes under the lug and levers it up.\n\nBees may follow it."];
    let a = answer(&grounding("How is a frame lifted out?", &ev));
    assert!(a.contains("\"Here is how a frame is lifted:\" [#1]\n\"The flat end goes under the lug and levers it up.\" [#1]"), "{a}");
    assert!(!a.contains("Bees may follow") && verified(&a, &ev), "{a}");
}

#[test]
fn a_how_many_question_is_answered_by_the_sentence_with_the_count() {
    let ev = ["The hives on the roof were painted green and white last spring by the club.", "Three hives sit on the roof."];
    let a = answer(&grounding("How many hives are on the roof?", &ev));
    assert!(a.starts_with("\"Three hives sit on the roof.\" [#2]"), "{a}");
    let ev = ["옥상 벌통은 작년 봄에 동호회가 초록색과 흰색으로 칠했다.", "옥상에는 벌통이 두 개 있다."];
    let a = answer(&korean("옥상에 벌통이 몇 개 있어?", &ev));
    assert!(a.starts_with("\"옥상에는 벌통이 두 개 있다.\" [#2]"), "{a}");
    // A listing's number is no count.
    let ev = ["The hives on the roof were painted green and white last spring by the club.", "Listing 3 shows the hives on the roof."];
    let a = answer(&grounding("How many hives are on the roof?", &ev));
    assert!(a.starts_with("\"The hives on the roof were painted"), "{a}");
}

#[test]
fn a_korean_verb_made_of_a_noun_is_matched_by_the_noun() {
    // `유출됐을` is matched by `유출되면` through the noun `유출`.
    let ev = ["키는 설정 파일의 맨 아래 줄에 적어 두었고 매달 새로 받는다.", "키가 유출되면 바로 폐기한다."];
    let a = answer(&korean("키가 유출됐을 때는 어떻게 해?", &ev));
    assert!(a.starts_with("\"키가 유출되면 바로 폐기한다.\" [#2]"), "{a}");
}

#[test]
fn a_what_is_it_for_question_is_answered_by_what_it_lets_one_do() {
    let ev = ["The smoker is a metal can with bellows, bought in 2021 from the club shop.", "The smoker calms the bees so that you can open the hive."];
    let a = answer(&grounding("What is the smoker for?", &ev));
    assert!(a.starts_with("\"The smoker calms the bees so that you can open the hive.\" [#2]"), "{a}");
    // Asked what it is, the definition answers.
    let a = answer(&grounding("What is the smoker?", &ev));
    assert!(a.starts_with("\"The smoker is a metal can"), "{a}");
}

#[test]
fn a_notes_title_line_brings_the_sentences_under_it() {
    let ev = ["Garden plan, spring\n\nBeds: tomatoes along the south fence, beans by the shed.\n\nWatering: every other morning until June."];
    let a = answer(&grounding("what's in the garden plan?", &ev));
    assert!(a.starts_with("\"Garden plan, spring\" [#1]\n\"Beds: tomatoes along the south fence, beans by the shed.\" [#1]"), "{a}");
    assert!(verified(&a, &ev), "{a}");
    // A sentence is no title: it answers alone.
    let ev = ["The garden plan is on the fridge.\n\nBeds: tomatoes along the south fence."];
    assert_eq!(answer(&grounding("where is the garden plan?", &ev)), "\"The garden plan is on the fridge.\" [#1]");
}

#[test]
fn the_best_sentence_brings_the_command_its_next_sentence_introduces() {
    // "How can I make tests run one at a time?" stopped before `--test-threads=1`.
    let ev = ["To inspect one hive at a time, pass the hive count to the logger. Take a look at the following example:\n\n```console\n$ hivelog --hives=1\n```\n\nThe log is slower that way."];
    let a = answer(&grounding("How do I inspect hives one at a time?", &ev));
    assert!(a.starts_with("\"To inspect one hive at a time"), "{a}");
    assert!(a.contains("$ hivelog --hives=1"), "{a}");
    assert!(verified(&a, &ev), "{a}");
}

#[test]
fn a_question_about_a_table_gets_its_row_after_the_header() {
    // Tables were skipped: a results table could not be quoted at all.
    let ev = ["Mite counts after the spring inspection:\n\n| Hive | Mites per 300 bees | Treated |\n|---|---:|---|\n| North |  3 | no  |\n| South | 11 | yes |\n| East  |  5 | no  |\n"];
    let a = answer(&grounding("How many mites did the South hive have?", &ev));
    let lines: Vec<&str> = a.lines().collect();
    assert!(lines.contains(&"\"| Hive | Mites per 300 bees | Treated |\" [#1]"), "{a}");
    assert!(lines.contains(&"\"| South | 11 | yes |\" [#1]"), "{a}");
    let (header, south) = (a.find("| Hive |").unwrap(), a.find("| South |").unwrap());
    assert!(header < south, "the header comes first: {a}");
    assert!(verified(&a, &ev), "{a}");
}

#[test]
fn pieces_rebuild_the_text() {
    let t = "\"a b\" [#1]\n\"c\"  [#2]";
    assert_eq!(pieces(t).collect::<String>(), t);
}

#[test]
fn the_value_a_question_names_is_recognised_in_text() {
    use super::score::Value;
    assert_eq!(Value::asked("What is the dentist's phone number?", || false), Some(Value::Phone));
    assert_eq!(Value::asked("What is my landlord's email address?", || false), Some(Value::Email));
    assert_eq!(Value::asked("until what time is the shop open", || false), Some(Value::Clock));
    assert_eq!(Value::asked("서버실은 몇 시에 열어?", || false), Some(Value::Clock));
    // "how many hours" and a phone *extension* name no such value.
    assert_eq!(Value::asked("서울에서 부산까지 몇 시간 걸려요?", || false), None);
    assert_eq!(Value::asked("What's the phone extension for the helpdesk?", || false), None);
    assert!(Value::Phone.in_text("Call +44 20 7946 0958 after six") && Value::Phone.in_text("Mr. Okoye, 555-0142"));
    assert!(!Value::Phone.in_text("Card expires 2025-08-31") && !Value::Phone.in_text("Policy HX-5520-19"));
    assert!(Value::Email.in_text("write to han@clinic.example") && !Value::Email.in_text("email only"));
    for t in ["leaves at 07:40", "open until 7 pm", "오후 3시에 연다", "closes at noon"] {
        assert!(Value::Clock.in_text(t), "{t}");
    }
    for t in ["afternoon slot", "June 11", "3시간 걸린다", "Listing 9-2"] {
        assert!(!Value::Clock.in_text(t), "{t}");
    }
}

#[test]
fn a_name_is_a_capitalised_word_inside_its_sentence_and_a_date_a_day_written_out() {
    use super::score::Value;
    for q in ["what make is the heater?", "Which brand of flour do I use", "who fixed the boiler", "what was the name of the plumber?"] {
        assert_eq!(Value::asked(q, || false), Some(Value::Name), "{q}");
    }
    // A relative "who", a name asked in Korean (no capitals to tell it by), and "as the name of" ask no name.
    for q in ["how do I tell a user who typed nothing", "사진 작가님 이름이 뭐였더라?", "can I use match as the name of a function?"] {
        assert_eq!(Value::asked(q, || false), None, "{q}");
    }
    for q in ["when did the builders start?", "what day is bin collection", "관리비는 며칠에 빠져나가?", "김치 언제 담갔어?"] {
        assert_eq!(Value::asked(q, || false), Some(Value::Date), "{q}");
    }
    // "When is it fine to …" asks for a case, a present `언제` for a habit, and `며칠` alone how many days.
    for q in ["When is it fine to call unwrap?", "Box는 언제 쓰나요?", "김치는 실온에서 며칠 숙성해?"] {
        assert_eq!(Value::asked(q, || false), None, "{q}");
    }
    for t in ["Took it to the shop on Call Lane", "tutor: Dr. Elena Moreau", "call `fs::read_to_string` for that"] {
        assert!(Value::Name.in_text(t), "{t}");
    }
    // A sentence's or a cell's first word, "I", and a weekday are no names.
    for t in ["Heater: 50W, thermostat on 25°C", "I fed it twice.", "Done. Bought it Tuesday.", "**1 May** – sleeps on my bed", "| Day | Morning |"] {
        assert!(!Value::Name.in_text(t), "{t}");
    }
    // A name the question gives is no answer to it.
    assert!(!Value::Name.in_entry("7 buttons from an Etsy shop", "", &crate::words::words("name of the Etsy seller?")));
    for t in ["Lessons Tuesdays 4:15", "**Sat 8 Mar** – builders in", "expires 2025-08-31", "3월 14일에 갔다", "yesterday, finally", "built in 1872."] {
        assert!(Value::Date.in_text(t), "{t}");
    }
    for t in ["costs £7.50 each", "set it to 1:2:2", "at about 2.5mm", "a 4096-token window"] {
        assert!(!Value::Date.in_text(t), "{t}");
    }
}

#[test]
fn a_sum_of_money_is_a_number_with_its_currency() {
    use super::score::Value;
    assert_eq!(Value::asked("How much did I pay for the new faucet cartridge?", || false), Some(Value::Money));
    assert_eq!(Value::asked("욕실 실리콘 하나에 얼마 줬어?", || false), Some(Value::Money));
    // Only of notes that write prices: not surely money.
    assert_eq!(Value::asked("How much does bounds checking cost?", || false), None);
    assert_eq!(Value::asked("How much does bounds checking cost?", || true), Some(Value::Money));
    for t in ["Entry was free on Sundays", "주차는 무료였다", "New cartridge: 18,000 won at the shop", "Paid $4.50", "2박에 30만원이었고", "숯이랑 그릴 3만2천원", "(개당 6,500원, 동네 철물점)", "학원비 **68만 원**", "난방비 18만 4천 원", "€12 a month"] {
        assert!(Value::Money.in_text(t), "{t}");
    }
    for t in ["I won't run the club", "gluten-free bread", "a 35 mm ceramic one", "Listing 9-2", "2025년 5월까지", "ten hives on three rooftops"] {
        assert!(!Value::Money.in_text(t), "{t}");
    }
    // A bare number is money where the entry names its currency, but not a year or a date.
    let budget = "Numbers in euros.\n| Groceries | 320 | 365 |";
    assert!(Value::Money.in_entry("| Groceries | 320 | 365 |", budget, &[]));
    assert!(!Value::Money.in_entry("| Groceries | 320 | 365 |", "| Groceries | 320 | 365 |", &[]));
    assert!(!Value::Money.in_entry("관리비: 매달 25일, 2025년까지", "8월 236,200원", &[]));
    // An entry that marks its sums (`£85`) writes other numbers bare.
    let log = "Tyres: 700x35c, run at 65 psi rear.\n\n| 19 Apr | Full service | £85 |";
    assert!(!Value::Money.in_entry("Tyres: 700x35c, run at 65 psi rear.", log, &[]));
    assert!(Value::Money.in_entry("| 19 Apr | Full service | £85 |", log, &[]));
    // "Free" answers a price question, but a programmer's "free of data races" does not make notes that write prices.
    assert!(super::score::writes_prices(budget) && !super::score::writes_prices("Dropping a Box frees it; safe code is free of data races."));
}

#[test]
fn a_sentence_too_short_to_quote_alone_finishes_the_one_before_it() {
    // "여기서 `s`는 … 슬라이스입니다. `&str` 타입이죠." quoted only the first
    // half: the type was in the two-word sentence after it.
    let ev = ["벌통마다 여왕벌을 등에 점을 찍어 표시합니다. 파란색이죠. 점은 해마다 색이 바뀝니다."];
    let a = answer(&grounding("여왕벌 표시는 무슨 색이에요?", &ev));
    assert!(a.contains("\"벌통마다 여왕벌을 등에 점을 찍어 표시합니다. 파란색이죠.\" [#1]") && verified(&a, &ev), "{a}");
}

#[test]
fn a_short_sentence_after_a_quote_comes_with_it() {
    // "PETG 뽑고 PLA 넣을 때 … 막힘." was quoted without "콜드풀 3번 해서
    // 뚫음.", which says how the clog was cleared. Not the best sentence,
    // which brings its next sentence whatever its length.
    let ev = [
        "The printer nozzle was replaced in March with a hardened steel printer nozzle.",
        "Also in March the nozzle clogged after a cold filament swap. Cold pulls fixed it.\n\nThe bed was fine.",
        "In March a printer nozzle of brass was ordered for spare parts. Never again, honestly!",
    ];
    let a = answer(&grounding("What happened to the printer nozzle in March?", &ev));
    assert!(a.starts_with("\"The printer nozzle was replaced in March"), "{a}");
    assert!(a.contains("\"Also in March the nozzle clogged after a cold filament swap.\" [#2]\n\"Cold pulls fixed it.\" [#2]"), "{a}");
    // A cheer goes on to something else.
    assert!(a.contains("spare parts.\" [#3]") && !a.contains("Never again") && verified(&a, &ev), "{a}");
}

#[test]
fn an_answer_quotes_no_more_units_than_the_configured_cap() {
    // More sentences than the default cap, each answering as well as the
    // others: the cap, not the scores, decides how many are quoted.
    let ev: Vec<String> = (1..=crate::config::DEFAULT_EXTRACTIVE_QUOTES + 2).map(|n| format!("Hive {n} was inspected for mites on Sunday and looked healthy.")).collect();
    let ev: Vec<&str> = ev.iter().map(String::as_str).collect();
    let g = grounding("which hives were inspected for mites?", &ev);
    let quoted = |a: &str| a.lines().filter(|l| l.contains("[#")).count();
    assert_eq!(quoted(&super::answer(&g, 2)), 2, "{}", super::answer(&g, 2));
    assert_eq!(quoted(&answer(&g)), crate::config::DEFAULT_EXTRACTIVE_QUOTES, "{}", answer(&g));
    let model = Extractive { max_quotes: 3 };
    let req = ChatRequest { messages: Vec::new(), temperature: 0.0, seed: None, max_tokens: None, stream: true, grounding: Some(g.clone()) };
    let said = model.chat(&req, &mut |_| Flow::Continue).unwrap().text;
    assert_eq!(quoted(&said), 3, "{said}");
}

#[test]
fn one_of_the_best_sentences_brings_the_next_when_it_stays_on_the_topic() {
    // Two units quoted: the second's next sentence says the fact, on the
    // same topic, in words the question does not use to rank it.
    let ev = [
        "Repot the fern in early spring, before new fronds unfurl. Use a pot one size larger.",
        "A fern ready to repot shows roots at the drainage hole. The fern then wants a week in shade.",
        "My neighbour repots orchids in autumn. Her cat sleeps on the windowsill.",
    ];
    let text = super::answer(&grounding("When should I repot the fern?", &ev), 2);
    assert!(text.contains("\"The fern then wants a week in shade.\" [#2]"), "{text}");
}

#[test]
fn a_sentence_that_goes_on_from_a_quoted_one_comes_with_it_and_an_aside_does_not() {
    let ev = [
        "Fern leaves turn brown when the air is dry. Dry air is common in winter.",
        "Brown tips on fern leaves also come from tap water salts. Luckily, rain water rinses the salts out.",
        "Brown fern leaves can be cut off at the base. My sister grows orchids on the kitchen shelf.",
    ];
    let text = super::answer(&grounding("Why do my fern leaves turn brown?", &ev), 3);
    assert!(text.contains("\"Luckily, rain water rinses the salts out.\" [#2]"), "{text}");
    assert!(text.contains("cut off at the base") && !text.contains("orchids"), "{text}");
}
