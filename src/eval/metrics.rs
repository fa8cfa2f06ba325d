//! Ranking metrics as BEIR/pytrec_eval compute them: nDCG@k with linear gain,
//! Recall@k, MRR@k.

use std::collections::HashMap;

/// nDCG@k of `ranked` document ids against graded `relevant`.
pub fn ndcg_at(ranked: &[String], relevant: &HashMap<String, u32>, k: usize) -> f64 {
    let dcg: f64 = ranked
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, d)| relevant.get(d).copied().unwrap_or(0) as f64 / ((i + 2) as f64).log2())
        .sum();
    let mut ideal: Vec<u32> = relevant.values().copied().collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal.iter().take(k).enumerate().map(|(i, &g)| g as f64 / ((i + 2) as f64).log2()).sum();
    if idcg == 0.0 { 0.0 } else { dcg / idcg }
}

/// Share of the relevant documents found in the top k.
pub fn recall_at(ranked: &[String], relevant: &HashMap<String, u32>, k: usize) -> f64 {
    if relevant.is_empty() {
        return 0.0;
    }
    let found = ranked.iter().take(k).filter(|d| relevant.contains_key(*d)).count();
    found as f64 / relevant.len() as f64
}

/// 1 / rank of the first relevant document within the top k, else 0.
pub fn mrr_at(ranked: &[String], relevant: &HashMap<String, u32>, k: usize) -> f64 {
    ranked.iter().take(k).position(|d| relevant.contains_key(d)).map_or(0.0, |i| 1.0 / (i + 1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(pairs: &[(&str, u32)]) -> HashMap<String, u32> {
        pairs.iter().map(|(d, g)| (d.to_string(), *g)).collect()
    }

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn perfect_ranking_scores_one() {
        let r = rel(&[("a", 1), ("b", 1)]);
        assert!((ndcg_at(&ids(&["a", "b", "c"]), &r, 10) - 1.0).abs() < 1e-12);
        assert_eq!(recall_at(&ids(&["a", "b"]), &r, 100), 1.0);
        assert_eq!(mrr_at(&ids(&["a"]), &r, 10), 1.0);
    }

    #[test]
    fn ndcg_matches_a_hand_computed_value() {
        // Relevant at ranks 2 and 4 of two relevant: DCG = 1/log2(3) + 1/log2(5),
        // IDCG = 1 + 1/log2(3).
        let r = rel(&[("a", 1), ("b", 1)]);
        let got = ndcg_at(&ids(&["x", "a", "y", "b"]), &r, 10);
        let want = (1.0 / 3f64.log2() + 1.0 / 5f64.log2()) / (1.0 + 1.0 / 3f64.log2());
        assert!((got - want).abs() < 1e-12);
        assert_eq!(mrr_at(&ids(&["x", "a"]), &r, 10), 0.5);
        assert_eq!(recall_at(&ids(&["x", "a", "y", "b"]), &r, 3), 0.5);
    }

    #[test]
    fn cutoffs_are_respected_and_misses_score_zero() {
        let r = rel(&[("a", 1)]);
        assert_eq!(ndcg_at(&ids(&["x", "a"]), &r, 1), 0.0);
        assert_eq!(mrr_at(&ids(&["x", "y"]), &r, 10), 0.0);
        assert_eq!(ndcg_at(&ids(&["a"]), &HashMap::new(), 10), 0.0);
    }
}
