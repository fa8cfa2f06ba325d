//! `kebab completions SHELL`: a script for each of the five shells, naming
//! the commands, and a clear error for a shell kebab does not know.

use std::process::Command;

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
