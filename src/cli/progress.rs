//! Progress of a counted run (chunks embedded, files read): a bar with
//! elapsed time, rate and ETA on a terminal; off a terminal (or with
//! `KEBAB_PROGRESS=plain`) a plain line now and then, so a piped run that
//! takes minutes is never silent; nothing with `--quiet`.

use std::time::{Duration, Instant};

use crate::render::Output;

/// How often a plain progress line may be printed.
const PLAIN_EVERY: Duration = Duration::from_secs(3);

/// Where progress goes.
enum Sink {
    Bar(indicatif::ProgressBar),
    Lines { last: Option<Instant> },
    Nothing,
}

/// Progress of one counted run; `set(done, total)` as it goes.
pub struct Counter {
    sink: Sink,
    what: &'static str,
    started: Instant,
}

/// Whether `KEBAB_PROGRESS=plain` asks for lines even on a terminal.
pub fn plain_requested() -> bool {
    std::env::var("KEBAB_PROGRESS").is_ok_and(|v| v == "plain")
}

impl Counter {
    /// `what` names the unit counted ("chunks embedded").
    pub fn new(out: &Output, what: &'static str) -> Counter {
        let sink = if out.quiet {
            Sink::Nothing
        } else if out.progress_on_terminal() && !plain_requested() {
            let bar = indicatif::ProgressBar::new(0);
            bar.set_style(
                indicatif::ProgressStyle::with_template(&format!("{{bar:20}} {{pos}}/{{len}} {what}{{msg}}"))
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            Sink::Bar(bar)
        } else {
            Sink::Lines { last: None }
        };
        Counter { sink, what, started: Instant::now() }
    }

    pub fn set(&mut self, done: usize, total: usize) {
        self.set_skipping(done, 0, total);
    }

    /// `set` for a run that passes over some of its steps (files skipped):
    /// they count towards the rate and the ETA, not as `what` done, so a run
    /// whose one file was skipped says `0/1 files read, 1 skipped`.
    pub fn set_skipping(&mut self, done: usize, skipped: usize, total: usize) {
        let rate = rate_and_eta(done + skipped, total, self.started.elapsed());
        let also = if skipped > 0 { format!(", {skipped} skipped") } else { String::new() };
        match &mut self.sink {
            Sink::Bar(b) => {
                b.set_length(total as u64);
                b.set_position(done as u64);
                b.set_message(format!("{also} {rate}"));
            }
            Sink::Lines { last } => {
                // The first and the last step always; between them, one line per few seconds.
                let due = last.is_none_or(|t| t.elapsed() >= PLAIN_EVERY) || done + skipped >= total;
                if due {
                    *last = Some(Instant::now());
                    eprintln!("{done}/{total} {}{also} · {rate}", self.what);
                }
            }
            Sink::Nothing => {}
        }
    }

    pub fn finish(self) {
        if let Sink::Bar(b) = self.sink {
            b.finish_and_clear();
        }
    }
}

/// `7.99/s · 12s elapsed · ETA 1m05s`: the rate with two decimals so it does
/// not jitter in width; no rate or ETA before anything is done.
pub fn rate_and_eta(done: usize, total: usize, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64();
    let spent = clock(elapsed.as_secs());
    if done == 0 || secs <= 0.0 {
        return format!("{spent} elapsed");
    }
    let rate = done as f64 / secs;
    let left = total.saturating_sub(done) as f64 / rate;
    format!("{rate:.2}/s · {spent} elapsed · ETA {}", clock(left.round() as u64))
}

/// Seconds as `42s`, `3m07s` or `1h02m`.
fn clock(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        s => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_has_two_decimals_and_the_eta_counts_what_is_left() {
        let line = rate_and_eta(8, 24, Duration::from_millis(1001));
        assert!(line.starts_with("7.99/s · 1s elapsed · ETA 2s"), "{line}");
        assert_eq!(rate_and_eta(0, 10, Duration::from_secs(5)), "5s elapsed");
        assert_eq!(clock(187), "3m07s");
        assert_eq!(clock(3720), "1h02m");
    }
}
