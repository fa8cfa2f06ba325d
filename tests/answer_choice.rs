//! Which passage the built-in model quotes for what a question asks: the
//! line under a short section's heading, the command under a "how do I",
//! a sum of money for a price, a phone number, a time of day, a name or a
//! day for one, and nothing for a count alone. Each on notes written for it.

mod common;

use common::{TEA, answers_open_with, builtin_notes_env};

#[test]
fn a_short_sections_heading_says_what_its_sentence_answers() {
    // Notes written as labels and values: the answer's words are in the
    // heading only. "What is the Wi-Fi password?" quoted "The Wi-Fi router
    // sits in the hallway cupboard." (it has "Wi-Fi") from the next section.
    let env = builtin_notes_env(&[
        ("home.md", "# Home\n\n## Wi-Fi password\nThe network key is hunter2.\n\n## Router\nThe Wi-Fi router sits in the hallway cupboard.\n"),
        (
            "pancakes.md",
            "# Pancakes\n\n## Ingredients\nTwo eggs, 200 g flour and 300 ml milk are needed.\n\n## Resting\nPancake batter rests for 30 minutes before frying.\n",
        ),
        ("kimchi.md", "# 김치 만들기\n\n## 재료\n배추 한 포기와 고춧가루 세 큰술이 필요하다.\n\n## 숙성\n김치는 실온에서 이틀 숙성한 뒤 냉장고에 보관한다.\n"),
    ]);
    answers_open_with(
        &env,
        &[
            ("What is the Wi-Fi password?", "\"The network key is hunter2.\" [#"),
            ("What are the ingredients for pancakes?", "\"Two eggs, 200 g flour and 300 ml milk are needed.\" [#"),
            ("김치에 필요한 재료는 뭐야?", "\"배추 한 포기와 고춧가루 세 큰술이 필요하다.\" [#"),
            // The other sections still answer what they say in their own words.
            ("Where is the router?", "\"The Wi-Fi router sits in the hallway cupboard.\" [#"),
            ("How long does the batter rest?", "\"Pancake batter rests for 30 minutes before frying.\" [#"),
        ],
    );
}

#[test]
fn a_count_in_the_question_brings_no_sentence_of_its_own_and_at_once_is_no_topic() {
    // "does sqlite allow two writers at once?" quoted "Two feeds in a row at
    // 1:5:5 bring it back." from the sourdough note: the answerer brings a
    // sentence for each question word the others miss, and "two" was one.
    let env = builtin_notes_env(&[
        (
            "wal.md",
            "# SQLite write-ahead logging\n\nIn rollback-journal mode a writer blocks every reader. With WAL, SQLite allows readers \
             to keep reading the last snapshot while one writer appends to the log.\n",
        ),
        ("starter.md", "# Starter\n\nA sluggish starter needs warmth. Two feeds in a row at 1:5:5 bring it back.\n"),
        ("tea.md", TEA),
    ]);
    // "at once" says together, not a topic the notes lack (it was refused).
    for q in ["can sqlite have two writers?", "does sqlite allow two writers at once?"] {
        let out = env.ok(&["ask", q]);
        assert!(out.contains("grounded") && out.contains("one writer"), "{q}: {out}");
        assert!(!out.contains("Two feeds") && !out.contains("two minutes"), "{q}: {out}");
    }
}

#[test]
fn a_how_to_question_brings_the_command_under_a_sentence_that_names_none() {
    // "how do I reset the WAL file?" quoted the paragraph on checkpoints
    // but not the command under it.
    let env = builtin_notes_env(&[
        (
            "wal.md",
            "# SQLite write-ahead logging\n\n## Checkpoints\n\nThe WAL file grows until a checkpoint copies its pages back into the \
             main database. A reader that holds an old snapshot open can stop the checkpoint from resetting the file.\n\n\
             ```sql\nPRAGMA wal_checkpoint(TRUNCATE);\n```\n",
        ),
        ("tea.md", TEA),
        ("starter.md", "# Starter\n\nA sluggish starter needs warmth. Two feeds in a row at 1:5:5 bring it back.\n"),
        ("bike.md", "# Bike\n\nThe chain wants oil every 300 km, and the tyres 4 bar.\n"),
    ]);
    let out = env.ok(&["ask", "how do I reset the WAL file?"]);
    assert!(out.contains("grounded") && out.contains("checkpoint") && out.contains("PRAGMA wal_checkpoint(TRUNCATE);"), "{out}");
}

#[test]
fn a_question_asking_a_price_is_answered_by_a_sum_of_money_or_refused() {
    // "What did Gamcheon village cost?" quoted the sentence about the walk,
    // and "How much did the guesthouse cost?" was refused: "cost" counted as
    // a topic the notes lack, and the price is in the sentence after the one
    // naming the guesthouse.
    let env = builtin_notes_env(&[
        (
            "busan.md",
            "# Busan weekend\n\n## Where we stayed\nThe guesthouse was two streets from Haeundae beach. Two nights came to 180,000 won \
             with breakfast.\n\n## Sights\nWe spent Saturday morning at the Busan Museum of Art and walked through Gamcheon village in \
             the afternoon.\n",
        ),
        ("busan-ko.md", "# 부산 주말 여행\n\n## 숙소\n숙소는 해운대 해변에서 두 블록 떨어진 게스트하우스였다. 2박에 18만원이었고 아침이 나왔다.\n"),
        (
            "bounds.md",
            "# Bounds checks\n\nIndexing a slice checks the index against the slice's length at run time. The check has a small runtime cost, \
             one comparison and a branch.\n\nIterating with a for loop is free of such checks.\n",
        ),
    ]);
    for (q, opens, price) in [
        ("How much did the guesthouse cost?", "\"The guesthouse was two streets from Haeundae beach.\" [#", "180,000 won"),
        ("부산 숙소비 얼마 냈어?", "\"숙소는 해운대 해변에서 두 블록 떨어진 게스트하우스였다.\" [#", "18만원"),
    ] {
        answers_open_with(&env, &[(q, opens)]);
        assert!(env.ok(&["ask", q]).contains(price), "{q}");
    }
    for q in ["What did Gamcheon village cost?", "How much did we pay at the Busan Museum of Art?", "부산시립미술관에 얼마 냈어?"] {
        let out = env.ok(&["ask", q]);
        assert!(out.contains("refused"), "{q}: {out}");
    }
    // What checking costs is not money: asked of notes that hold no price
    // ("free of such checks" is none), it is answered.
    answers_open_with(&env, &[("How much does bounds checking cost?", "\"The check has a small runtime cost")]);
}

#[test]
fn a_question_naming_the_value_it_wants_is_refused_when_no_passage_holds_one() {
    // "What is the dentist's phone number?" quoted the dentist's line, which
    // has no number: the notes are about the dentist, not the answer.
    let env = builtin_notes_env(&[
        (
            "contacts.md",
            "# Contacts\n\n## Dentist\nDr. Han, Tuesday 3 pm, clinic on Maple Street\n\n## Plumber\nMr. Okoye, phone 555-0142, weekdays only\n\n\
             ## Library\nCard expires 2025-08-31\n",
        ),
        ("tea.md", TEA),
    ]);
    answers_open_with(
        &env,
        &[
            ("What is the plumber's phone number?", "\"Mr. Okoye, phone 555-0142, weekdays only\" [#"),
            ("What time is my dentist on Tuesday?", "\"Dr. Han, Tuesday 3 pm, clinic on Maple Street\" [#"),
        ],
    );
    // No number, no address, no time of day (a date is not a phone number).
    for q in ["What is the dentist's phone number?", "What is the library's phone number?", "What's the plumber's email address?", "What time does the library open?"] {
        let out = env.ok(&["ask", q]);
        assert!(out.contains("refused"), "{q}: {out}");
    }
}

#[test]
fn a_yes_or_no_question_answered_by_a_short_sentence_in_its_own_words_is_grounded() {
    // The quote repeats every word of the question, as the answer to a
    // yes-or-no question may: it was judged an echo of the question and the
    // answer, shown in full, was then marked refused (llm_self_judge).
    let env = builtin_notes_env(&[("sub/c.md", "# Gamma\n\nCopper kettles tarnish.\n")]);
    answers_open_with(&env, &[("Do copper kettles tarnish?", "\"Copper kettles tarnish.\" [#1]")]);
}

#[test]
fn a_korean_question_in_a_past_or_must_form_the_notes_never_write_is_answered() {
    // "앞쪽 브레이크 패드 어디서 바꿨어요?" was refused: `바꿨어요` is in no
    // note (they say `교체했다`), and the gate read it as a topic the notes lack.
    let env = builtin_notes_env(&[
        ("car.md", "# 자동차 정비\n\n앞 브레이크 패드는 2024년 4월 스피드메이트에서 교체했다.\n\n엔진오일은 7,000km마다 교체한다.\n"),
        ("tea.md", TEA),
        ("bike.md", "# Bike\n\nThe chain wants oil every 300 km, and the tyres 4 bar.\n"),
    ]);
    answers_open_with(
        &env,
        &[
            ("브레이크 패드 어디서 바꿨지?", "\"앞 브레이크 패드는 2024년 4월 스피드메이트에서 교체했다.\" [#"),
            // So is a "must" (`갈아야 해`): "관리비 언제까지 내야 돼?" was refused.
            ("엔진오일 언제 갈아야 해?", "\"엔진오일은 7,000km마다 교체한다.\" [#"),
        ],
    );
    // The verb counts for nothing either way: a topic the notes lack still refuses.
    let out = env.ok(&["ask", "스노우타이어 어디서 바꿨지?"]);
    assert!(out.contains("refused:"), "{out}");
}

#[test]
fn a_question_about_an_outcome_asked_with_words_the_notes_never_write_is_answered() {
    // "what went wrong in week 5?" and "what happens if the power goes out?"
    // were refused on the demo notes: "went", "wrong", "happens" and "goes"
    // are in no note, and the gate read them as topics the notes lack.
    let env = builtin_notes_env(&[
        ("wal.md", "# Durability\n\nA power cut can lose the last transactions, but the database is never corrupted.\n"),
        ("starter.md", "# Starter\n\n- Week 2: hooch on top; the starter was hungry.\n- Week 5: pink streaks, so the jar was thrown away.\n"),
        ("tea.md", TEA),
    ]);
    answers_open_with(
        &env,
        &[
            ("what happens if the power goes out?", "\"A power cut can lose the last transactions, but the database is never corrupted.\" [#"),
            ("what went wrong in week 5?", "\"Week 5: pink streaks, so the jar was thrown away.\" [#"),
        ],
    );
    // Those words count for nothing either way: a topic the notes lack still refuses.
    let out = env.ok(&["ask", "what happens if the dog goes out?"]);
    assert!(out.contains("refused:"), "{out}");
}

#[test]
fn a_question_asking_a_name_or_a_day_is_refused_by_a_passage_without_one() {
    // "what make is the heater in the fish tank" quoted "Heater: 50W,
    // thermostat on 25°C": on the topic, but no make in it.
    let env = builtin_notes_env(&[
        (
            "appliances.md",
            "# Appliances\n\n## Kettle\nThe kettle holds 1.7 litres and boils in under three minutes.\n\n\
             ## Fridge\nThe fridge is a Bosch, bought in the spring sale for £420.\n",
        ),
        (
            "hallway.md",
            "# Hallway\n\nThe hallway took two coats of sage green paint.\n\nI sanded the skirting boards on 14 March.\n",
        ),
        ("tea.md", TEA),
    ]);
    answers_open_with(
        &env,
        &[
            ("what make is the fridge?", "\"The fridge is a Bosch, bought in the spring sale for £420.\" [#"),
            ("when did I sand the skirting boards?", "\"I sanded the skirting boards on 14 March.\" [#"),
        ],
    );
    for q in ["what make is the kettle?", "when did I paint the hallway?"] {
        let out = env.ok(&["ask", q]);
        assert!(out.contains("refused"), "{q}: {out}");
    }
}
