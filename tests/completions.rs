//! `kebab completions SHELL`: a script for each of the five shells, naming
//! the commands, a clear error for a shell kebab does not know, and a failed
//! write (a closed pipe, a full disk) ending as for every other command.

use std::process::{Command, Stdio};

fn completions(shell: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_kebab"))
        .args(["completions", shell])
        .env("NO_COLOR", "1")
        .output()
        .expect("run kebab")
}

#[test]
fn each_shell_gets_a_script_that_names_the_commands() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = completions(shell);
        assert!(out.status.success(), "{shell}: {}", String::from_utf8_lossy(&out.stderr));
        let script = String::from_utf8(out.stdout).expect("utf-8 script");
        for word in ["ingest", "search", "ask", "sessions", "mcp", "completions", "data-dir"] {
            assert!(script.contains(word), "{shell} script does not mention {word}");
        }
    }
}

#[test]
fn a_shell_kebab_does_not_know_is_a_usage_error_listing_the_shells() {
    let out = completions("tcsh");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("tcsh") && stderr.contains("zsh"), "{stderr}");
}

/// `kebab completions SHELL` with its standard output on `stdout`.
fn completions_into(shell: &str, stdout: impl Into<Stdio>) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_kebab"))
        .args(["completions", shell])
        .env("NO_COLOR", "1")
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("run kebab")
}

#[test]
fn a_closed_pipe_ends_the_script_quietly_with_exit_0() {
    // The reading end is closed before kebab starts, so its first write fails
    // as `kebab completions bash | head -1` does, whatever the script's length.
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = completions_into("bash", writer);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_is_an_error_line_with_exit_2_not_a_panic() {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("open /dev/full");
    let out = completions_into("zsh", full);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with("error: No space left on device"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn completions_with_json_is_refused_as_json_not_printed_as_a_script() {
    // `kebab --json completions bash` printed the bash script on stdout,
    // where `--json` promises one JSON document (as the REPL refuses --json).
    for args in [&["--json", "completions", "bash"][..], &["completions", "zsh", "--json"][..]] {
        let out = Command::new(env!("CARGO_BIN_EXE_kebab")).args(args).env("NO_COLOR", "1").output().expect("run kebab");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
        assert_eq!((v["schema_version"].as_str(), v["code"].as_str()), (Some("error.v1"), Some("usage")), "{v}");
        assert!(v["hint"].as_str().unwrap().contains("drop --json"), "{v}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("error:") && stderr.contains("hint:"), "{stderr}");
    }
}
