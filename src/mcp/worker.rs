//! The thread that owns the knowledge base. `Kb` holds a SQLite connection
//! and the vectors it cached, neither of which may cross threads, so the
//! server sends each call here as a job and awaits its reply; calls run one
//! at a time, in the order they came.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc;

use anyhow::{Result, anyhow};

use super::{Open, Setup};
use crate::rag::Kb;

/// The worker's state: how to open the knowledge base, the one it opened,
/// and why its default mode falls back to lexical, as last said on stderr.
pub struct State {
    pub setup: Setup,
    kb: Option<Kb>,
    /// Kept so the reason is said once (the opener says it), not on every
    /// call that falls back for the same reason.
    pub fallback_said: Option<String>,
}

impl State {
    /// The knowledge base, opened on first use, and again when its file was
    /// removed or replaced since. A failed open is not kept: the next call
    /// tries again (say, after the first `kebab ingest`).
    pub fn kb(&mut self, open: Open) -> Result<&mut Kb> {
        let kb = match self.kb.take() {
            Some(mut kb) => {
                let path = kb.store.path().display().to_string();
                match kb.reopen_if_replaced(&self.setup.open, open) {
                    Ok(false) => return Ok(self.kb.insert(kb)),
                    Ok(true) => {
                        eprintln!("kebab mcp: {path} was removed or replaced since it was opened; opened it again");
                        kb
                    }
                    // Removed: "nothing is indexed yet", as for a server started now.
                    Err(e) => {
                        eprintln!("kebab mcp: {path} was removed or replaced since it was opened; it cannot be opened again");
                        return Err(e);
                    }
                }
            }
            None => (self.setup.open)(open)?,
        };
        // The opener has just said why the default mode falls back, if it does.
        let default = kb.cfg.search.default_mode;
        self.fallback_said = kb.engine.resolve(&kb.store, default, false).ok().and_then(|(_, note)| note);
        Ok(self.kb.insert(kb))
    }
}

type Job = Box<dyn FnOnce(&mut State) + Send>;

/// A handle on the worker thread; dropping it ends the thread.
pub struct Worker {
    jobs: mpsc::Sender<Job>,
}

impl Worker {
    pub fn start(setup: Setup) -> Result<Worker> {
        let (jobs, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("kebab-mcp-kb".into())
            .spawn(move || {
                let mut state = State { setup, kb: None, fallback_said: None };
                for job in rx {
                    // A bug in one call must not take the server down: the
                    // caller gets an error and the next call reopens the database.
                    if std::panic::catch_unwind(AssertUnwindSafe(|| job(&mut state))).is_err() {
                        state.kb = None;
                    }
                }
            })
            .map_err(|e| anyhow!("starting the MCP worker thread: {e}"))?;
        Ok(Worker { jobs })
    }

    /// Runs `f` on the worker thread and returns what it returned; an error
    /// when the worker is gone or the call panicked.
    pub async fn call<T: Send + 'static>(&self, f: impl FnOnce(&mut State) -> Result<T> + Send + 'static) -> Result<T> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |state| {
            let _ = reply.send(f(state));
        });
        self.jobs.send(job).map_err(|_| anyhow!("the MCP worker thread has stopped"))?;
        answer.await.map_err(|_| anyhow!("the call failed inside kebab (a bug): see the server's stderr"))?
    }
}
