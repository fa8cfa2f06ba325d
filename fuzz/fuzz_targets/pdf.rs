//! Fuzz target `pdf`: the check of the same name in `fuzz/checks.rs`.
#![no_main]

#[path = "../checks.rs"]
#[allow(dead_code)]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::pdf(data));
