//! Questions that ask what something cost ("how much did the guesthouse
//! cost?", `숙소비 얼마 냈어?`): recognised once, here, so that the gate and
//! the built-in answerer read the price words off the question's topic, and
//! the answerer quotes only a passage that holds a sum of money.

use super::{strip_particle, words};

/// Words that make "how much" (or "what") ask for a price.
const PAYING: &[&str] = &["pay", "paid", "money", "ticket", "tickets", "rent", "tuition"];
/// Words that name a price wherever they are asked about.
const PRICE: &[&str] = &["price", "prices", "priced", "fee", "fees", "fare", "fares"];
/// Words of a price that may be one of time or speed ("how much does
/// bounds checking cost?", "how much time did I spend"), but for what was
/// bought ("how much did the tyres cost?").
const COSTING: &[&str] = &["cost", "costs", "spend", "spent", "charge", "charged"];
/// How a total is asked ("what did the refit come to?"): as "cost" is.
const TOTALLING: &[&str] = &[" come to ", " came to ", " come out to ", " came out to ", " add up to ", " added up to "];
/// What a span of time is measured in: "how much time did I spend".
const TIME_WORDS: &[&str] = &["time", "hours", "hour", "minutes", "days", "weeks", "long"];
/// Korean words that, with `얼마`, ask for a price: fee nouns (`관리비`,
/// `임대료`, `기름값`) and the verbs of paying (`냈`, `줬`, `썼`).
/// Also money put down (`계약금`, `보증금`).
const PAYING_KO: &[&str] = &[
    "가격", "비용", "요금", "값", "돈", "냈", "줬", "썼", "비는", "비가", "비를", "비 ", "비?", "료는", "료가", "료 ", "료?", "금은", "금이", "금을", "금 ",
    "금?",
];
/// The present of paying (`회비 얼마 내지?`), as whole words: `내` alone is
/// also "my".
const PAYING_NOW_KO: &[&str] = &["내지", "내요", "내야", "내는", "내나"];
/// What a price question says of the price rather than of its topic ("how
/// much did the guesthouse cost?" is about the guesthouse): read off, as
/// "what time" is.
const NAMING_PRICE: &[&str] = &[
    "cost", "costs", "come", "came", "pay", "paid", "charge", "charged", "spend", "spent", "money", "price", "prices", "priced", "fee",
    "fees", "fare", "fares",
    "가격", "비용", "요금", "돈",
];
const PAYING_VERBS_KO: &[&str] = &["냈", "줬", "썼", "들었", "나왔"];

/// How a question asks for a price.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriceAsk {
    /// Surely: "how much did I pay", "the entry fee", "what did the tyres
    /// cost", `숙소비 얼마 냈어`.
    Surely,
    /// Of notes that write prices: "how much does it cost" may ask what it
    /// costs in speed or time.
    IfPriced,
}

/// Whether (and how surely) a question asks what something cost: a price
/// word, "how much"/"what" with a word of paying or costing, or Korean `얼마`
/// with a fee noun or a verb of paying.
pub fn asks_price(question: &str) -> Option<PriceAsk> {
    let q = format!(" {} ", question.to_lowercase());
    let ws = words(&q);
    let has_word = |list: &[&str]| ws.iter().any(|w| list.contains(&w.as_str()));
    let amount = q.contains("how much") || has_word(&["what", "what's", "whats"]);
    let spoken = format!(" {} ", ws.join(" "));
    if has_word(PRICE) || (amount && has_word(PAYING)) || (q.contains("얼마") && (PAYING_KO.iter().any(|w| q.contains(w)) || has_word(PAYING_NOW_KO))) {
        Some(PriceAsk::Surely)
    } else if amount && (has_word(COSTING) || TOTALLING.iter().any(|t| spoken.contains(t))) {
        // What was bought cost money; what it does costs time or speed.
        Some(if has_word(&["did"]) && !has_word(TIME_WORDS) { PriceAsk::Surely } else { PriceAsk::IfPriced })
    } else {
        None
    }
}

/// Whether `word` of a price question names the price, not its topic.
pub(super) fn names_price(word: &str) -> bool {
    NAMING_PRICE.contains(&strip_particle(word)) || PAYING_VERBS_KO.iter().any(|v| word.starts_with(v)) || PAYING_NOW_KO.contains(&word)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::words::tests::topic;

    #[test]
    fn a_price_is_asked_surely_by_paying_and_of_priced_notes_by_costing() {
        for q in [
            "How much did I pay for the tyres?", "What was the entry fee?", "how much did the guesthouse cost", "부산 숙소비 얼마 냈어?", "꿀 한 병 가격은 얼마예요?",
            "모임 회비 한 달에 얼마 내지?", "이삿짐 업체에 계약금 얼마 넣었더라", "what did the whole refit come to in the end",
        ] {
            assert_eq!(asks_price(q), Some(PriceAsk::Surely), "{q}");
        }
        // What something does may cost speed or time, not money.
        for q in ["How much does bounds checking cost?", "how much time did I spend on the review?"] {
            assert_eq!(asks_price(q), Some(PriceAsk::IfPriced), "{q}");
        }
        for q in ["Do generics cost anything at runtime?", "who came to the meeting?", "how much water goes into the dal?", "김치찌개에 물은 얼마나 넣어야 돼?"] {
            assert_eq!(asks_price(q), None, "{q}");
        }
    }

    #[test]
    fn a_price_question_is_about_what_was_bought_not_the_paying() {
        assert_eq!(topic("How much did the guesthouse cost?"), ["guesthouse"]);
        assert_eq!(topic("what did the kitchen refit come to?"), ["kitchen", "refit"]);
        assert_eq!(topic("what price did the plumber give for fixing the drip?"), ["plumber", "fixing", "drip"]);
        assert_eq!(topic("강릉 숙소비 얼마 들었어"), ["강릉", "숙소비"]);
        assert_eq!(topic("모임 회비 얼마 내지?"), ["모임", "회비"]);
        // … and a fee word is the cost of its noun, which notes write apart ("숙소는 … 30만원").
        assert_eq!((crate::words::fee_of("숙소비"), crate::words::fee_of("임대료"), crate::words::fee_of("회비")), (Some("숙소"), Some("임대"), None));
        // Not surely a price: "cost" may be the topic ("the cost of dispatch").
        assert_eq!(topic("How much does bounds checking cost?"), ["bounds", "checking", "cost"]);
    }
}
