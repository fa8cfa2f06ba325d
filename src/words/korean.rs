//! Korean words as kebab reads a question: particles stripped from a word's
//! end, the verbs and words that frame a question without naming its topic,
//! and the endings that mark a word as the question's predicate.

/// The Korean verbs English lists among question words, stop words and
/// `NOT_TOPICS`: 쓰다 "use", 만들다 "make", 하다 "do", 있다 "have", "can"
/// (`먹을 수 있어`), and 않다 / 못하다 "not", as the stems they take before an
/// ending (`써야`, `만든`, `했`).
/// Questions say "Rc를 쓰면"; notes say "Rc<T>를 사용하면".
pub(super) const KOREAN_VERB_STEMS: &[&str] = &[
    "쓰", "써", "쓸", "쓴", "씁", "썼", "만들", "만드", "만든", "만듭", "하", "해", "했", "합", "있", "않", "못하", "못해", "못할", "못한",
    // "work", "be done" (`컴파일이 되는지`): what works is the topic.
    "되", "돼", "됐", "됩", "될", "된",
    // "give", "pay", and "for me" after a verb (`얼마 줬어`, `수술해 주신`).
    "주", "줬", "준", "주신",
    // A request for an explanation: "요약해 줘" (sum up), "정리해 줄래?" (lay
    // out), "가르쳐 줘" (teach), "알려줄래?" (tell).
    "요약해", "요약하", "정리해", "정리하", "설명해", "설명하", "가르쳐", "가르치", "알려",
    // "want to" after a verb: "테스트 하나만 돌리고 싶어".
    "싶",
    // "choose" and "good" in a choice: "벡터랑 배열 중에 뭘 골라야 해?", "Box는 언제 쓰는 게 좋아?".
    "고르", "골라", "고른", "골랐", "좋",
    // Finding it in the notes: "양념 얘기 찾아줘".
    "찾아",
    // "take (time)" and "leave (it)", as English "take" and "keep": "몇 시간
    // 걸려?", "며칠 실온에 둬?" ask about the time, not about taking. (Not
    // the stem `두` alone: it is also "two", as in `두 번째 겨울`.)
    "걸리", "걸려", "걸렸", "걸린", "걸릴", "둬", "뒀", "둔",
    // The asker, not the topic: "처음 배우는데 … 모르겠어요" ("I'm learning …
    // and don't get …", as English "confused", "understand").
    "배우", "배워", "배운", "모르", "몰라",
];

/// The endings those stems take in a question. A stem and one of these make
/// the whole word, so `쓰레드` (thread) and `하나` (one) are not read as verbs.
pub(super) const KOREAN_VERB_ENDINGS: &[&str] = &[
    "", "다", "는", "고", "면", "지", "기", "게", "도", "서", "야", "요", "려", "려고", "려는", "는데", "던데", "니다", "세요",
    "어", "어서", "어야", "어요", "었", "었다", "었어", "았", "았어", "아", "아서", "아야", "아요", "으면", "은", "을", "는지", "도록", "죠", "까", "까요",
    "줘", "줘요", "줄래", "줄래요", "주세요", "은데", "습니다", "을까", "더니", "겠어", "겠어요", "더라", "던가", "었지", "었더라",
];

/// Korean words that carry no topic, as their English counterparts in the
/// lists above do not: "not" (`안`, `못`), "why" (`이유`, "the reason"),
/// "after" (`뒤`, `후`), "already", "often", "instead", "one" (`하나`), the
/// ordinal's `번째` (`첫 번째`: "first" is `첫`; notes say `1차`, `2024년`),
/// and the adverbs a question is framed with: "all" (`다`), "most" (`제일`,
/// `가장`), "really", "very", "just", "right away" (`바로`), "actually",
/// "exactly", "in the end" (`결국`); `까닭` is "reason" too. And how an explanation is asked for:
/// "what it is" (`뭔지`), "difference" (`차이`, as English), "briefly", "simply", "roughly", "in a word",
/// who it is for: "beginner" (`초보자`), "about" (`대해`), and the notes themselves.
pub(super) const KOREAN_NOT_TOPICS: &[&str] = &[
    "안", "못", "이유", "까닭", "뒤", "후", "이미", "자주", "대신", "하나", "번째", "다", "제일", "가장", "정말", "진짜", "너무", "아주", "매우", "꼭",
    "혹시", "그냥", "바로", "실제로", "정확히", "결국", "뭔지", "차이", "간단히", "간단하게", "쉽게", "대충", "짧게", "한마디로",
    "초보자", "초보",
    // "what it is for" (`무슨 용도야?`), as English "for".
    "용도",
    // "about" (`김치에 대해`, `…에 관한`), and the notes themselves: "note", "memo", "talk of".
    "대해", "대해서", "대한", "관해", "관해서", "관한", "노트", "메모", "얘기", "이야기",
    // "my" (`내 노트`), or "within" after a noun (`함수 내`): no topic either way.
    "내",
    // "for the first time" (`처음 배우는데`): the notes say `첫 번째`, `맨 앞` for a first item.
    "처음",
    // "what did I write down": not the stem `적` alone, which is also "few" (`적었던`).
    "적었지", "적었더라", "적어둔", "적어놓은",
];

/// Whether a Korean word is one of those verbs or words (`쓰면`, `않고`, `이유는`).
pub(super) fn is_korean_function_word(word: &str) -> bool {
    let bare = strip_particle(word);
    // Both forms: `바로` ("right away") would lose `로` as a particle.
    KOREAN_NOT_TOPICS.contains(&word) || KOREAN_NOT_TOPICS.contains(&bare)
        || [word, bare].iter().any(|w| KOREAN_VERB_STEMS.iter().any(|s| w.strip_prefix(s).is_some_and(|e| KOREAN_VERB_ENDINGS.contains(&e))))
}

/// Korean sentence-final and connective endings: a word ending in one is the
/// question's predicate (`쓰나요`, `있을까요`, `만들려면`), not its topic.
pub(super) const QUESTION_ENDINGS: &[&str] = &[
    "나요", "가요", "까요", "는지", "은지", "인지", "습니까", "합니까", "니까", "려면", "으면", "나", "죠", "요",
];

/// Korean words too common or too grammatical to count as a topic.
pub(super) const KOREAN_FILLERS: &[&str] = &[
    "수", "것", "등", "때", "있는", "있다", "하는", "할", "한", "및", "또는", "혹은", "아니면", "그", "이", "저", "뭐", "좀", "중", "그럼", "그러면", "그건",
    "그게", "그것", "그거", "이건", "이거", "거기", "저기", "건", "거", "게", "걸", "나", "거야", "거예요",
    // "when" as `때는` is spoken (`값이 없을 땐`).
    "땐",
    // "how to" (`추가하는 법`), as `방법` is; "in doing" (`절이는 데`).
    "법", "데",
];

/// Korean question words as a word starts with them, whatever ending
/// follows: "what", "when", "how much", "where", "who", "which", "how".
pub(super) const KOREAN_QUESTION_STEMS: &[&str] = &["뭐", "뭘", "뭔", "무엇", "언제", "얼마", "어디", "누구", "누가", "어느", "어떻게", "며칠"];

/// Korean particles and copula endings, longest first, stripped from the end
/// of a word before it is used as a prefix.
pub(super) const PARTICLES: &[&str] = &[
    "에서부터", "으로부터", "으로서", "으로써", "이라는", "에게서", "까지는", "에서는", "으로는", "이라고", "입니다", "이에요", "한테서", "에서도",
    "으로도", "에게는", "에서", "에게", "으로", "부터", "까지", "라는", "라고", "이란", "이다", "이야", "예요", "하는", "하고", "보다", "처럼",
    "마다", "에는", "에도", "로서", "로써", "이랑", "한테", "께서", "조차", "란", "은", "는", "이", "가", "을", "를", "의", "에", "로", "와", "과",
    "도", "만",
];

/// "And" (`벡터랑 배열`) and the spoken copula after a vowel (`바이트야`,
/// "it's bytes"), which also end many short words (`사랑`, `분야`): stripped
/// only after two syllables or more, or standing alone, cut off a Latin word
/// by the script change (`Rc랑 Arc`, `char야`).
pub(super) const SHORT_PARTICLES: &[&str] = &["랑", "야"];

/// The word without a trailing particle, keeping at least one character.
pub fn strip_particle(word: &str) -> &str {
    for p in PARTICLES {
        if let Some(stem) = word.strip_suffix(p)
            && !stem.is_empty()
        {
            return stem;
        }
    }
    SHORT_PARTICLES.iter().find_map(|p| word.strip_suffix(p).filter(|stem| stem.chars().count() >= 2)).unwrap_or(word)
}

/// Syllables that make a noun into what it costs: `숙소비` (the lodging's
/// cost), `임대료`, `기름값`.
const FEE_SYLLABLES: &[char] = &['비', '료', '값'];

/// The noun a fee word is the cost of (`숙소비` → `숙소`), for notes that
/// write the noun and its price apart ("숙소는 … 2박에 30만원"); `None`
/// for a word of fewer than three syllables (`회비`, `자료`).
pub fn fee_of(word: &str) -> Option<&str> {
    let base = word.strip_suffix(FEE_SYLLABLES)?;
    (base.chars().count() >= 2).then_some(base)
}

/// Syllables a noun takes to be a verb, `하다` ("do") and `되다` ("become"),
/// in their forms before an ending: `패닉해야`, `통과하게`, `설치된`.
const DOING_SYLLABLES: &[char] = &['하', '해', '했', '한', '할', '합', '함', '되', '돼', '됐', '된', '될', '됩'];

/// The noun a `하다`/`되다` verb is made of (`패닉해야` → `패닉`), for notes
/// that write the noun (`패닉이 발생`); `None` for a word whose noun would be
/// shorter than two syllables (`말해`, `안해`).
pub fn noun_of_verb(word: &str) -> Option<&str> {
    let (at, _) = word.char_indices().skip(2).find(|(_, c)| DOING_SYLLABLES.contains(c))?;
    Some(&word[..at])
}
