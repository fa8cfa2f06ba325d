//! Validate: is the answer grounded? Non-empty, at least one marker, and
//! every marker names a packed evidence entry. Anything else — including an
//! answer that says the evidence is insufficient, or one that only copies the
//! prompt's worked example — is not grounded, refusal reason `llm_self_judge`.
//! Under rag-v2, an answer whose every quote is missing from the evidence it
//! cites is `unsupported_claims`. When kebab attributed the sentences the
//! model did not cite (`attribute`), markers are no longer required: the
//! answer is grounded when every substantive sentence is model-cited or
//! attributed, and `unsupported_claims` when any is not.

use super::attribute::Attribution;
use super::extract::Marker;
use super::verify::Verification;

/// What the verdict weighs beside the answer text.
pub struct Checks<'a> {
    pub markers: &'a [Marker],
    /// Entries packed: a marker above this names nothing.
    pub packed: usize,
    pub verification: Option<&'a Verification>,
    pub attribution: Option<&'a Attribution>,
}

/// The whole verdict on a finished answer: `validate` (or the attribution's
/// judgement), then what only a complete reply shows (a copy of the example,
/// quotes that all fail).
pub fn verdict(answer: &str, c: &Checks) -> Result<(), &'static str> {
    match c.attribution {
        None => validate(answer, c.markers, c.packed)?,
        Some(a) => {
            if answer.trim().is_empty() || c.markers.iter().any(|m| m.n == 0 || m.n > c.packed) {
                return Err("llm_self_judge");
            }
            // The model's own refusal, or nothing that claims anything.
            if (a.says_no_answer && c.markers.is_empty()) || a.sentences.is_empty() {
                return Err("llm_self_judge");
            }
        }
    }
    if super::render::is_only_the_example(answer) {
        return Err("llm_self_judge");
    }
    if c.attribution.is_some_and(|a| !a.grounded()) {
        return Err("unsupported_claims");
    }
    let verification = c.verification;
    if verification.is_some_and(|v| v.supported.is_empty() && !v.unsupported.is_empty()) {
        return Err("unsupported_claims");
    }
    Ok(())
}

/// `Ok(())` when grounded, else the refusal reason.
pub fn validate(answer: &str, markers: &[Marker], packed: usize) -> Result<(), &'static str> {
    if answer.trim().is_empty() || markers.is_empty() {
        return Err("llm_self_judge");
    }
    if markers.iter().any(|m| m.n == 0 || m.n > packed) {
        return Err("llm_self_judge");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rag::extract::markers;

    fn check(a: &str, packed: usize) -> Result<(), &'static str> {
        validate(a, &markers(a), packed)
    }

    #[test]
    fn all_valid_markers_ground_the_answer() {
        assert_eq!(check("Use \"cargo new\" [#1] and [#3].", 3), Ok(()));
    }

    #[test]
    fn a_marker_naming_no_packed_entry_is_self_judged() {
        assert_eq!(check("True [#1] but also [#7].", 3), Err("llm_self_judge"));
        assert_eq!(check("Zero [#0].", 3), Err("llm_self_judge"));
    }

    #[test]
    fn no_marker_or_empty_is_self_judged() {
        assert_eq!(check("The evidence does not say.", 3), Err("llm_self_judge"));
        assert_eq!(check("It is vec![1] [1].", 3), Err("llm_self_judge"));
        assert_eq!(check("   ", 3), Err("llm_self_judge"));
    }
}
