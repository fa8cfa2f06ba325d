//! The best `k` of many scored items as they stream by — the vector scan's
//! rows, the lexical sum's chunks — kept in a bounded heap rather than
//! sorting them all: higher scores first, equal scores by the smaller id.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// A score with a total order (`total_cmp`: even a NaN has a place).
pub trait Score: Copy {
    fn total(&self, other: &Self) -> Ordering;
}

impl Score for f32 {
    fn total(&self, other: &Self) -> Ordering {
        self.total_cmp(other)
    }
}

impl Score for f64 {
    fn total(&self, other: &Self) -> Ordering {
        self.total_cmp(other)
    }
}

/// A scored id, greater when better: the higher score, then the smaller id.
struct Ranked<S, I>(S, I);

impl<S: Score, I: Ord> Ord for Ranked<S, I> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total(&other.0).then(other.1.cmp(&self.1))
    }
}

impl<S: Score, I: Ord> PartialOrd for Ranked<S, I> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<S: Score, I: Ord> PartialEq for Ranked<S, I> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl<S: Score, I: Ord> Eq for Ranked<S, I> {}

/// The best `keep` of the items offered so far.
pub struct Best<S, I> {
    keep: usize,
    /// The worst kept on top, to be dropped first.
    heap: BinaryHeap<Reverse<Ranked<S, I>>>,
}

impl<S: Score, I: Ord> Best<S, I> {
    pub fn new(keep: usize) -> Best<S, I> {
        Best { keep, heap: BinaryHeap::with_capacity(keep + 1) }
    }

    #[inline]
    pub fn offer(&mut self, score: S, id: I) {
        let item = Ranked(score, id);
        if self.heap.len() < self.keep {
            self.heap.push(Reverse(item));
        } else if self.heap.peek().is_some_and(|Reverse(worst)| item > *worst) {
            self.heap.pop();
            self.heap.push(Reverse(item));
        }
    }

    /// The kept items, best first.
    pub fn into_sorted(self) -> Vec<(S, I)> {
        // Ascending in `Reverse` is best first.
        self.heap.into_sorted_vec().into_iter().map(|Reverse(Ranked(s, i))| (s, i)).collect()
    }

    /// The kept items, in no order.
    pub fn into_items(self) -> impl Iterator<Item = (S, I)> {
        self.heap.into_iter().map(|Reverse(Ranked(s, i))| (s, i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_highest_scores_and_breaks_ties_by_the_smaller_id() {
        let mut best = Best::new(3);
        for (s, id) in [(0.5, 7), (0.9, 3), (0.5, 2), (0.1, 1), (0.9, 8), (0.5, 4)] {
            best.offer(s, id);
        }
        assert_eq!(best.into_sorted(), [(0.9, 3), (0.9, 8), (0.5, 2)]);
        let mut none = Best::<f32, usize>::new(0);
        none.offer(1.0, 1);
        assert!(none.into_sorted().is_empty());
    }
}
