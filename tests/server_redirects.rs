//! A model server that answers the question with a redirect (an `http://`
//! address moved to `https://`, a proxy in front of a moved server): kebab
//! does not follow it — a 301 or 302 would turn the question into a bodiless
//! GET, a 307 or 308 cannot be resent from a stream — and says where the
//! server points, so the user can set `llm.base_url` there.

mod common;

use common::fake_server::{BOTH, Kind, Server, Step};
use common::{Env, stderr};

fn redirect(status: &str, location: &str) -> Step {
    Step::Send(
        format!("HTTP/1.1 {status}\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").into_bytes(),
    )
}

fn home(kind: Kind, server: &Server) -> Env {
    let env = Env::new();
    let config = format!(
        "[llm]\nprovider = \"{}\"\nmodel = \"qwen\"\nbase_url = \"{}\"\ntimeout_secs = 5\n\n\
         [embedding]\nprovider = \"none\"\n\n[search]\ndefault_mode = \"lexical\"\n",
        kind.provider(),
        server.url
    );
    env.write("config/kebab/config.toml", config);
    common::cargo_and_tea_notes(&env);
    env
}

#[test]
fn a_redirected_question_names_where_the_server_points_and_is_never_resent_as_a_get() {
    for kind in BOTH {
        for status in ["301 Moved Permanently", "302 Found", "307 Temporary Redirect", "308 Permanent Redirect"] {
            let what = format!("{kind:?} {status}");
            let location = format!("https://models.example/llm{}", kind.chat_path());
            let server = Server::start(vec![vec![redirect(status, &location)], vec![kind.piece("never asked for")]]);
            let env = home(kind, &server);
            let out = env.run(&["ask", "How do I create a new project with cargo?"]);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{what}: {err}");
            assert!(err.contains(&format!("redirects to {location}")), "{what}: {err}");
            assert!(err.contains("hint: set llm.base_url to https://models.example/llm"), "{what}: {err}");
            assert!(!err.contains("cannot reach"), "{what}: {err}");
            let requests = server.requests();
            assert_eq!(requests.len(), 1, "{what}: {requests:?}");
            assert!(requests[0].starts_with("POST "), "{what}: {requests:?}");
        }
    }
}

#[test]
fn a_redirect_to_a_path_on_the_same_server_names_the_whole_address() {
    let server = Server::start(vec![vec![redirect("308 Permanent Redirect", "/proxy/v1/chat/completions")]]);
    let env = home(Kind::OpenAi, &server);
    let out = env.run(&["ask", "How do I create a new project with cargo?"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("hint: set llm.base_url to {}/proxy", server.url)), "{err}");
}
