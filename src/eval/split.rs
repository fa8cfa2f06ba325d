//! The dev/test split of labelled items: a stable hash of the item's id
//! (FNV-1a, 64 bit), even → dev. Fixed before any tuning; tune on dev, report
//! test. scripts/labelled-check.py computes the same split.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Split {
    Dev,
    Test,
}

impl Split {
    pub fn of(id: &str) -> Split {
        if fnv1a64(id).is_multiple_of(2) { Split::Dev } else { Split::Test }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Split::Dev => "dev",
            Split::Test => "test",
        }
    }
}

pub fn fnv1a64(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_fnv1a_and_the_split_follows_its_parity() {
        // Reference values of FNV-1a 64.
        assert_eq!(fnv1a64(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(Split::of("a"), Split::Dev);
        assert_eq!(fnv1a64("b"), 0xaf63_df4c_8601_f1a5);
        assert_eq!(Split::of("b"), Split::Test);
    }
}
