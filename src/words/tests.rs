//! The word rules' behaviour: what a question's topic is, in English and Korean.

use super::*;

/// A question's topic words as the gate reads them.
pub(super) fn topic(q: &str) -> Vec<String> {
    topic_terms(q, Negation::Drop).into_iter().map(|t| t.word).collect()
}

#[test]
fn a_questions_topic_leaves_out_contractions_framing_and_function_words() {
    assert_eq!(topic("I'm confused about lifetimes, what are they for?"), ["lifetimes"]);
    let q = "Why doesn’t Rust's borrow checker let me? I’ve tried, it won't";
    assert_eq!(topic(q), ["rust", "borrow", "checker", "let"]);
    let kept: Vec<String> = topic_terms(q, Negation::Keep).into_iter().map(|t| t.word).collect();
    assert_eq!(kept, ["doesn", "rust", "borrow", "checker", "let", "won"]);
    assert_eq!(topic("whats a closure"), ["closure"]);
    // An apostrophe that is not a contraction stays as the index reads it.
    assert_eq!(topic("the 'static lifetime and rock'n'roll"), ["static", "lifetime", "rock", "n", "roll"]);
    // A generic `T` is a topic; only `n't`'s `t` is not.
    assert_eq!(topic("What is T in Option<T>?"), ["t", "option"]);
    assert!(topic("what's it?").is_empty() && topic("don't").is_empty());
    assert_eq!(topic("hey, quick question: how does cargo fetch crates"), ["question", "cargo", "fetch", "crates"]);
    // The asker's habit and "while": "what's my usual dose", "while I'm away".
    assert_eq!(topic("whats my usual dose while I'm away"), ["dose", "away"]);
    // "what size" asks a value, as "what time" does.
    assert_eq!(topic("what size pot did the fig get?"), ["pot", "fig"]);
    // A height or thickness is written as a number: "how tall is catbells" over "Catbells loop …, 451m top".
    assert_eq!(topic("how tall is catbells"), ["catbells"]);
    assert_eq!(topic("what thickness of strings did I fit"), ["strings", "fit"]);
    assert_eq!(topic("which hives were treated before the winter?"), ["hives", "treated", "winter"]);
    // A term is read once, so a second `long` goes with the first.
    assert_eq!(topic("How long does a long string take to sort?"), ["string", "take", "sort"]);
    assert_eq!(topic("how often and how warm should the hive be"), ["hive"]);
    let ko: Vec<String> = topic_terms("러스트에서 null 대신 뭘 써?", Negation::Drop).into_iter().map(|t| t.word).collect();
    assert_eq!(ko, ["러스트에서", "null"]);
    // Korean "use", "make", "do" and "not" in the forms a question takes,
    // as English "use" and "not" are; a word that only starts like one is
    // kept (`쓰레드`; `하나`, "one", is not a topic as English "one" is not).
    let ko: Vec<String> = topic_terms("Rc를 쓰면 스레드를 만들지 않고 쓰레드 하나를 써야 하는 이유는?", Negation::Drop).into_iter().map(|t| t.word).collect();
    assert_eq!(ko, ["rc", "스레드를", "쓰레드"]);
}

#[test]
fn and_or_particles_are_read_off_a_comparisons_words() {
    assert_eq!(topic("String이랑 &str 차이가 뭐야?"), ["string", "str"]);
    assert_eq!(topic("Rc랑 Arc 중에 뭘 써야 돼?"), ["rc", "arc"]);
    assert_eq!(topic("Rc나 Arc?"), ["rc", "arc"]);
    assert_eq!(strip_particle("벡터랑"), "벡터");
    assert_eq!(strip_particle("배열이랑"), "배열");
    assert_eq!(strip_particle("컴파일러한테"), "컴파일러");
    // One syllable before it: part of the word.
    assert_eq!(strip_particle("사랑"), "사랑");
    assert_eq!(strip_particle("하나"), "하나");
    // The spoken copula, likewise: "char 하나는 몇 바이트야?", but `분야` ("field").
    assert_eq!(strip_particle("바이트야"), "바이트");
    assert_eq!(strip_particle("분야"), "분야");
    assert_eq!(topic("char야 아니면 String이야?"), ["char", "string"]);
}

#[test]
fn a_request_for_an_explanation_names_no_topic_but_what_it_is_about() {
    assert_eq!(topic("Give me the gist of traits."), ["traits"]);
    assert_eq!(topic("quick rundown on slices please"), ["slices"]);
    assert_eq!(topic("Summarise what match does for me."), ["match"]);
    assert_eq!(topic("walk me through sourdough feeding, briefly"), ["sourdough", "feeding"]);
    assert_eq!(topic("Break down how a starter differs from a levain."), ["starter", "differs", "levain"]);
    // `break` alone is a word of the notes (a loop's).
    assert_eq!(topic("what does break do in a loop?"), ["break", "loop"]);
    assert_eq!(topic("트레이트가 뭔지 간단히 요약해 줘"), ["트레이트가"]);
    assert_eq!(topic("패키지와 크레이트 차이 좀 정리해 줄래?"), ["패키지와", "크레이트"]);
    assert_eq!(topic("Box<T>를 쉽게 설명해줘"), ["box", "t"]);
    assert_eq!(topic("단위 테스트 작성하는 법 좀 가르쳐 줘"), ["단위", "테스트", "작성하는"]);
    assert_eq!(topic("테스트 하나만 돌리고 싶어"), ["테스트", "돌리고"]);
    assert_eq!(topic("벌집을 옮기고 싶은데"), ["벌집을", "옮기고"]);
}

#[test]
fn a_choice_between_things_names_the_things_not_the_choosing() {
    assert_eq!(topic("Vec vs array - which one should I pick?"), ["vec", "array"]);
    assert_eq!(topic("Whats the diff between a crate and a module"), ["crate", "module"]);
    assert_eq!(topic("Should I prefer rye or spelt? Which would you choose?"), ["rye", "spelt"]);
    assert_eq!(topic("explain shadowing to a beginner"), ["shadowing"]);
    assert_eq!(topic("벡터랑 배열 중에 뭘 골라야 해?"), ["벡터랑", "배열"]);
    assert_eq!(topic("Box는 언제 쓰는 게 좋아?"), ["box"]);
    assert_eq!(topic("호밀이 좋을까 밀이 좋을까?"), ["호밀이", "밀이"]);
    assert_eq!(topic("라이프타임 명시는 왜 필요한 거야?"), ["라이프타임", "명시는", "필요한"]);
    assert_eq!(topic("섀도잉을 초보자한테 설명해 줘"), ["섀도잉을"]);
}

#[test]
fn a_question_about_the_notes_names_what_it_is_about() {
    assert_eq!(topic("tell me everything about hydration"), ["hydration"]);
    assert_eq!(topic("tell me all about hydration"), ["hydration"]);
    assert_eq!(topic("what did I write about sourdough?"), ["sourdough"]);
    assert_eq!(topic("what have I learned about WAL?"), ["wal"]);
    assert_eq!(topic("what do my notes say about checkpoints?"), ["checkpoints"]);
    assert_eq!(topic("anything in my notes regarding queen cells"), ["queen", "cells"]);
    assert_eq!(topic("Coming from Python, I keep reaching for None. What's the Rust equivalent?"), ["python", "reaching", "none", "rust"]);
    assert_eq!(topic("I keep getting \"cannot borrow as mutable\" errors. Any tips?"), ["cannot", "borrow", "mutable", "errors"]);
    assert_eq!(topic("how do I keep the starter warm?"), ["keep", "starter", "warm"]);
    assert_eq!(topic("러스트 처음 배우는데 소유권이 뭔지 모르겠어요"), ["러스트", "소유권이"]);
    // The glob is the topic of "import everything from a module".
    assert_eq!(topic("How do I import everything from a module?"), ["import", "everything", "module"]);
    // An author the notes may lack is asked for.
    assert_eq!(topic("who wrote the BEIR paper?"), ["wrote", "beir", "paper"]);
    assert_eq!(topic("김치에 대해 뭐라고 적었지?"), ["김치에"]);
    // "What was it", "when", "works": spoken forms with no topic.
    assert_eq!(topic("카고 명령 뭐였지?"), ["카고", "명령"]);
    assert_eq!(topic("벡터 쓸까 배열 쓸까?"), ["벡터", "배열"]);
    // Question words with the endings a question gives them; "give"/"pay"; "was it".
    assert_eq!(topic("수술 날짜가 언제였지?"), ["수술", "날짜가"]);
    assert_eq!(topic("재활 치료는 어디서 받아?"), ["재활", "치료는", "받아"]);
    assert_eq!(topic("실리콘 하나에 얼마 줬어?"), ["실리콘"]);
    assert_eq!(topic("욕조를 어떻게 해 두라고 했더라?"), ["욕조를", "두라고"]);
    assert_eq!(topic("Cargo.lock은 무슨 용도야?"), ["cargo", "lock"]);
    assert_eq!(topic("값이 없을 땐 뭘 써?"), ["값이", "없을"]);
    assert_eq!(topic("컴파일이 되는지만 확인하는 명령"), ["컴파일이", "확인하는", "명령"]);
    assert_eq!(topic("내 노트에서 양념 얘기 찾아줘"), ["양념"]);
    assert_eq!(topic("변수 값을 바꾸려고 했더니 에러가 나요"), ["변수", "값을", "바꾸려고", "에러가"]);
}

#[test]
fn korean_measures_and_framing_words_are_not_a_questions_topic() {
    // "how long", "how high": what is measured.
    assert_eq!(topic("배추는 소금물에 얼마나 오래 절여야 해?"), ["배추는", "소금물에", "절여야"]);
    assert_eq!(topic("바람막이는 얼마나 높아?"), ["바람막이는"]);
    // A counter after "몇" stays: the answer says it (`몇 달` → `두 달`).
    assert_eq!(topic("오이지는 몇 달 가요?"), ["오이지는", "달"]);
    // "right away", "most", "all", "can"; `바로` keeps its `로`.
    assert_eq!(topic("담근 김치는 바로 냉장고에 넣나요?"), ["담근", "김치는", "냉장고에"]);
    // "how many days" (`며칠`) is asked as "how many" is: the answer says `이틀`.
    assert_eq!(topic("겨울에 제일 추운 날은 다 며칠이야?"), ["겨울에", "추운", "날은"]);
    assert_eq!(topic("김치는 실온에서 며칠 숙성해?"), ["김치는", "실온에서", "숙성해"]);
    assert_eq!(topic("두 번째 겨울은 추웠나요?"), ["두", "겨울은"]);
    // A number run into its counter is a count as `세 가지` is.
    assert_eq!(topic("정원 규칙 3가지가 뭐야?"), ["정원", "규칙"]);
    assert_eq!(topic("냉장고에서 먹을 수 있어?"), ["냉장고에서", "먹을"]);
    // A copula is read off like a particle: `꿀이야` is about `꿀`.
    assert_eq!(strip_particle("꿀이야"), "꿀");
    assert_eq!(strip_particle("역할이에요"), "역할");
}

#[test]
fn a_rate_says_how_often_not_what_about() {
    assert_eq!(topic("how many hours does the script save each week?"), ["hours", "script", "save"]);
    assert_eq!(topic("피아노 학원비 한 달에 얼마야"), ["피아노", "학원비"]);
    assert_eq!(topic("재활 치료는 일주일에 몇 번 받으셔?"), ["재활", "치료는", "받으셔"]);
    assert_eq!(topic("잔치 밥값 한 사람당 얼마예요?"), ["잔치", "밥값"]);
    // A rate alone is what is asked about.
    assert_eq!(topic("what do I do every day?"), ["every", "day"]);
}

#[test]
fn a_korean_count_and_its_counter_say_how_many_not_what_about() {
    assert_eq!(topic("러스트의 소유권 규칙 세 가지를 알려주세요."), ["러스트의", "소유권", "규칙"]);
    assert_eq!(topic("첫 겨울에 봉군을 몇 개 잃었나요?"), topic("첫 겨울에 봉군을 잃었나요?"));
    // A unit is what the notes write with the number: it stays.
    assert!(topic("고춧가루 몇 킬로 넣었지").contains(&"킬로".to_string()));
    // A word that is not a count before it: `가지` is an eggplant.
    assert_eq!(topic("가지는 언제 심었어?"), ["가지는", "심었어"]);
}

#[test]
fn korean_verbs_of_taking_time_and_leaving_are_not_a_topic() {
    assert_eq!(topic("배추 절이는 데 몇 시간 걸려?"), ["배추", "절이는", "시간"]);
    assert_eq!(topic("김치는 며칠 실온에 둬?"), ["김치는", "실온에"]);
    // A word that only starts like one stays: `두부` is tofu, `걸레` a rag.
    assert_eq!(topic("두부는 얼마나 걸렸어?"), ["두부는"]);
    assert_eq!(topic("걸레는 어디에 둬?"), ["걸레는"]);
}

#[test]
fn a_korean_verb_made_of_a_noun_gives_the_noun() {
    for (verb, noun) in [("패닉해야", "패닉"), ("통과하게", "통과"), ("유출됐을", "유출"), ("설치된", "설치")] {
        assert_eq!(noun_of_verb(verb), Some(noun), "{verb}");
    }
    // A noun of one syllable would match too much.
    assert_eq!(noun_of_verb("말해"), None);
}

#[test]
fn the_trigram_text_is_the_cjk_words_a_query_reads() {
    for text in [
        "Rust의 소유권 규칙은 `let s = String::from(\"hi\");` 처럼",
        "2024년에는 3개, v2 소유권2 abc2024년 東京タワー",
        "",
        "English only, no Hangul.",
        "소유권",
        "١٢٣년 ok 12345",
        "끝.",
    ] {
        let expected: Vec<String> = words(text).into_iter().filter(|w| w.chars().any(is_cjk)).collect();
        assert_eq!(cjk_words(text), expected.join(" "), "{text}");
    }
}

#[test]
fn a_count_before_what_it_counts_says_how_many_things_are_asked_for() {
    assert_eq!(listed("What are the five unsafe superpowers?"), Some(5));
    assert_eq!(listed("소유권 규칙 세 가지를 알려주세요"), Some(3));
    assert_eq!(listed("정원 규칙 3가지가 뭐야?"), Some(3));
    // Not one, nor a count word that counts nothing listed (`세 시`, "네, …").
    for q in ["one of them", "세 시에 만나", "네, 가지고 있어요", "1가지", "five"] {
        assert_eq!(listed(q), None, "{q}");
    }
}
