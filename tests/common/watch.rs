//! A running `kebab --json watch` for tests, and `kebab search` polled with a deadline (never a
//! blind sleep) until a change shows.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Env;

/// How long any one change may take to show; generous, since the machine is
/// shared. Polls return as soon as the change is there.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// A running `kebab --json watch`, its NDJSON events read on a thread.
pub struct Watch {
    pub child: Child,
    pub events: Receiver<Value>,
    pub seen: Vec<Value>,
}

impl Watch {
    pub fn start(env: &Env, args: &[&str]) -> Watch {
        let mut all = vec!["--json", "watch"];
        all.extend_from_slice(args);
        Watch::spawn(env.cmd(&all))
    }

    /// Starts `kebab --json watch NOTES` so that it heeds mode 000 (as root, through setpriv:
    /// `heeding_folder_permissions`); None, said on stderr, where this machine cannot.
    pub fn heeding_permissions(env: &Env, notes: &str) -> Option<Watch> {
        let Some(cmd) = super::heeding_folder_permissions(env.cmd(&["--json", "watch", notes])) else {
            eprintln!("skipped: root here, and no working setpriv to make a mode-000 file or folder unreadable");
            return None;
        };
        Some(Watch::spawn(cmd))
    }

    /// Starts `kebab --json watch …` as `cmd` has it.
    pub fn spawn(mut cmd: std::process::Command) -> Watch {
        let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn kebab watch");
        let stdout = child.stdout.take().unwrap();
        let (tx, events) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not NDJSON ({e}): {line}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let mut w = Watch { child, events, seen: Vec::new() };
        w.wait_for("the watching event", |e| e["event"] == "watching");
        w
    }

    /// Reads events until one matches `pred`; panics after the deadline.
    pub fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let end = Instant::now() + DEADLINE;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(e) => {
                    assert_eq!(e["schema_version"], "watch_event.v1", "{e}");
                    self.seen.push(e.clone());
                    if pred(&e) {
                        return e;
                    }
                }
                Err(_) => panic!("no {what} within {DEADLINE:?}; events so far: {:?}", self.seen),
            }
        }
    }

    /// Ctrl-C: the watcher must exit 0 by itself; returns its stderr.
    pub fn interrupt(self) -> String {
        let pid = self.child.id().to_string();
        let sent = std::process::Command::new("kill").args(["-INT", &pid]).status().unwrap();
        assert!(sent.success());
        let (status, err) = self.exit("after Ctrl-C");
        assert_eq!(status.code(), Some(0), "exit after Ctrl-C: {status:?}\n{err}");
        err
    }

    /// Waits for the watcher to exit by itself (`when`: what should make
    /// it); its status and stderr.
    pub fn exit(mut self, when: &str) -> (std::process::ExitStatus, String) {
        let end = Instant::now() + DEADLINE;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < end, "kebab watch did not exit {when}; events: {:?}", self.seen);
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut err = String::new();
        std::io::Read::read_to_string(&mut self.child.stderr.take().unwrap(), &mut err).unwrap();
        (status, err)
    }
}

/// The document paths `kebab search QUERY` finds, with the chunk ids.
pub fn search(env: &Env, query: &str) -> Vec<(String, i64)> {
    env.json(&["search", "--mode", "lexical", query])["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["doc_path"].as_str().unwrap().to_string(), h["chunk_id"].as_i64().unwrap()))
        .collect()
}

/// Polls `kebab search QUERY` until `pred` holds of its hits; returns them.
pub fn poll(env: &Env, query: &str, what: &str, pred: impl Fn(&[(String, i64)]) -> bool) -> Vec<(String, i64)> {
    let end = Instant::now() + DEADLINE;
    loop {
        let hits = search(env, query);
        if pred(&hits) {
            return hits;
        }
        assert!(Instant::now() < end, "search {query:?} never showed {what} within {DEADLINE:?}; last hits: {hits:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub fn paths(hits: &[(String, i64)]) -> Vec<&str> {
    hits.iter().map(|(p, _)| p.as_str()).collect()
}
