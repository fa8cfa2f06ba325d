//! Closeness: how near in meaning the question is to each sentence the
//! built-in extractive answerer could quote, measured with the search
//! embedder and handed to the model in `Grounding::closeness`. Words alone
//! pick the sentence that echoes a question asked in other words; the
//! embedder reads the paraphrase. Measured only for a model that uses it, in
//! a mode where the embedder reads the question (not lexical, not Korean with
//! the English-only built-in model), and only for the model's own shortlist.

use crate::llm::{ChatModel, Grounding, extractive};
use crate::search::Mode;
use crate::search::engine::Engine;

/// Fills `g.closeness` when the model reads it and the embedder can; leaves
/// it empty otherwise (or when embedding fails: the model then chooses on
/// words alone, as in lexical mode). A follow-up read with the turn before
/// it (`g.context`) is left to words too: its own few words ("How long does
/// that take?") are not what it means, and their cosine outvoted the
/// previous turn's focus on our labelled dialogues.
pub fn measure(engine: &Engine, mode: Mode, model: &dyn ChatModel, g: &mut Grounding) {
    if !model.reads_closeness() || mode == Mode::Lexical || !g.context.is_empty() {
        return;
    }
    let candidates = extractive::candidates(g);
    if candidates.is_empty() {
        return;
    }
    let texts: Vec<&str> = candidates.iter().map(|(_, t)| t.as_str()).collect();
    if let Ok(cosines) = engine.closeness(&g.question, &texts) {
        g.closeness = candidates.iter().map(|(i, _)| *i).zip(cosines).collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SearchConfig;
    use crate::embed::{EmbedError, Embedder, Role};
    use crate::llm::extractive::Extractive;
    use crate::llm::{ChatModel, ChatRequest, Completion, Flow, LlmError};

    /// Reads "acronym" and "stand for" as the same idea, as a real embedder
    /// would; every other text points elsewhere.
    struct Synonyms;

    impl Embedder for Synonyms {
        fn model_id(&self) -> &str {
            "synonyms"
        }
        fn reads(&self, _: &str) -> bool {
            true
        }
        fn embed(&self, texts: &[&str], _: Role) -> Result<Vec<Vec<f32>>, EmbedError> {
            Ok(texts.iter().map(|t| if t.contains("acronym") || t.contains("stand for") { vec![1.0, 0.0] } else { vec![0.0, 1.0] }).collect())
        }
    }

    /// A model that answers from the prompt alone.
    struct Server;

    impl ChatModel for Server {
        fn id(&self) -> &str {
            "server"
        }
        fn provider(&self) -> &'static str {
            "fake"
        }
        fn chat(&self, _: &ChatRequest, _: &mut dyn FnMut(&str) -> Flow) -> Result<Completion, LlmError> {
            Ok(Completion::default())
        }
    }

    fn grounding() -> Grounding {
        Grounding {
            question: "What does the hive tag HQ stand for on a frame?".into(),
            evidence: vec![
                (1, "Every frame gets a hive tag. The tag HQ is painted on the frame top.".into()),
                (2, "Earlier we said HQ was an acronym for honey queen.".into()),
            ],
            ..Grounding::default()
        }
    }

    fn engine() -> Engine {
        Engine::new(Some(Box::new(Synonyms)), &SearchConfig::default())
    }

    #[test]
    fn the_answerer_quotes_the_paraphrase_closeness_finds_over_the_sentence_that_echoes_the_words() {
        let words_only = extractive::answer(&grounding(), crate::config::DEFAULT_EXTRACTIVE_QUOTES);
        assert!(!words_only.starts_with("\"Earlier we said"), "{words_only}");
        let mut g = grounding();
        measure(&engine(), Mode::Hybrid, &Extractive::default(), &mut g);
        assert!(!g.closeness.is_empty());
        let a = extractive::answer(&g, crate::config::DEFAULT_EXTRACTIVE_QUOTES);
        assert!(a.starts_with("\"Earlier we said HQ was an acronym for honey queen.\" [#2]"), "{a}");
    }

    #[test]
    fn closeness_is_measured_only_for_a_standalone_question_to_a_model_that_reads_it_in_a_mode_with_vectors() {
        let mut g = grounding();
        measure(&engine(), Mode::Lexical, &Extractive::default(), &mut g);
        assert!(g.closeness.is_empty(), "lexical mode");
        measure(&engine(), Mode::Hybrid, &Server, &mut g);
        assert!(g.closeness.is_empty(), "a server model");
        measure(&Engine::new(None, &SearchConfig::default()), Mode::Hybrid, &Extractive::default(), &mut g);
        assert!(g.closeness.is_empty(), "no embedder");
        g.context = "hive tags painted on frames".into();
        measure(&engine(), Mode::Hybrid, &Extractive::default(), &mut g);
        assert!(g.closeness.is_empty(), "a follow-up read with the turn before it");
    }
}
