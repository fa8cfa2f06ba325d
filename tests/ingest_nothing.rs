//! `kebab ingest` (and `kebab watch`) given nothing it can index: a path
//! that is not there fails naming it, and leaves no database it never used;
//! a database already there is left as it was.

mod common;

use common::{Env, stderr};

/// The data dir's entries with their sizes and modification times.
fn data_dir_state(env: &Env) -> Vec<(String, u64, std::time::SystemTime)> {
    let Ok(entries) = std::fs::read_dir(env.database().parent().unwrap()) else { return Vec::new() };
    let mut state: Vec<_> = entries
        .map(|e| {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            (e.file_name().to_string_lossy().to_string(), m.len(), m.modified().unwrap())
        })
        .collect();
    state.sort();
    state
}

#[test]
fn a_path_that_is_not_there_fails_naming_it_and_creates_no_database() {
    let env = Env::new();
    let gone = env.path("no/such/notes");
    for command in ["ingest", "watch"] {
        let out = env.run(&[command, gone.to_str().unwrap()]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{command}: {err}");
        assert!(err.contains(&format!("cannot ingest {}: No such file or directory", gone.display())), "{command}: {err}");
        assert!(!env.database().exists(), "{command} created {} for a path that is not there", env.database().display());
    }
    // No PATH, no workspace.roots and no database: nothing to ingest, and still no database.
    let out = env.run(&["ingest"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("nothing to ingest"), "{}", stderr(&out));
    assert!(!env.database().exists(), "a bare ingest created {}", env.database().display());
    // A database already there is not touched, and the run says the same.
    env.write("notes/tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n");
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let before = (std::fs::read(env.database()).unwrap(), data_dir_state(&env));
    let out = env.run(&["ingest", gone.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!("cannot ingest {}", gone.display())), "{}", stderr(&out));
    assert_eq!((std::fs::read(env.database()).unwrap(), data_dir_state(&env)), before, "the database changed");
}
