//! `llm.base_url` pointing a little off the server: an `https://` address for
//! a server that speaks plain HTTP (a local Ollama or llama-server), and a
//! server that answers the question with a redirect (an `http://` address
//! moved to `https://`, a proxy in front of a moved server). Neither is
//! "cannot reach the server, start it": the error says what happened and the
//! hint the address to set. A redirect is not followed — a 301 or 302 would
//! turn the question into a bodiless GET, a 307 or 308 cannot be resent from
//! a stream.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use common::fake_server::{BOTH, Kind, Server, Step, chunk, response, stream_head};
use common::{Env, stderr};

fn redirect(status: &str, location: &str) -> Step {
    Step::Send(
        format!("HTTP/1.1 {status}\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").into_bytes(),
    )
}

fn home(kind: Kind, server: &Server) -> Env {
    home_at(kind, &server.url)
}

fn home_at(kind: Kind, base_url: &str) -> Env {
    home_with(kind.provider(), base_url)
}

fn home_with(provider: &str, base_url: &str) -> Env {
    let env = Env::new();
    let config = format!(
        "[llm]\nprovider = \"{provider}\"\nmodel = \"qwen\"\nbase_url = \"{base_url}\"\ntimeout_secs = 5\n\n\
         [embedding]\nprovider = \"none\"\n\n[search]\ndefault_mode = \"lexical\"\n"
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

#[test]
fn an_https_address_for_a_plain_http_server_says_so_and_names_the_http_address() {
    for kind in BOTH {
        // What an HTTP server does with a TLS handshake: answer 400 in plain text (Go's
        // net/http, so Ollama), or close the connection.
        let replies = [vec![response("400 Bad Request", "text/plain", "Client sent an HTTP request to an HTTPS server")], vec![]];
        for reply in replies {
            // Twice: Ollama's first connection asks /api/show.
            let server = Server::start(vec![reply.clone(), reply]);
            let address = server.url.replace("http://", "https://");
            let env = home_at(kind, &address);
            let out = env.run(&["ask", "How do I create a new project with cargo?"]);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{kind:?}: {err}");
            assert!(err.contains(&format!("no https connection with the model server at {address}")), "{kind:?}: {err}");
            assert!(err.contains(&format!("set llm.base_url to {}", server.url)), "{kind:?}: {err}");
            assert!(!err.contains("start Ollama") && !err.contains("start the OpenAI"), "{kind:?}: {err}");
        }
    }
}

#[test]
fn an_address_with_no_host_is_a_config_error_naming_the_setting() {
    for (section, address) in [("llm", "http://"), ("llm", "https:///v1"), ("embedding", "http://:11434")] {
        let env = Env::new();
        env.write("config/kebab/config.toml", format!("[{section}]\nbase_url = \"{address}\"\n"));
        let out = env.run(&["ask", "How do I create a new project with cargo?"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{address}: {err}");
        assert!(err.contains(&format!("`{section}.base_url` must name the server's host after http://")), "{address}: {err}");
    }
    // A host, a port, a user and IPv6 pass.
    for address in ["http://127.0.0.1:11434", "https://me@models.example/v1", "http://[::1]:8080"] {
        let env = Env::new();
        env.write("config/kebab/config.toml", format!("[llm]\nprovider = \"extractive\"\nbase_url = \"{address}\"\n"));
        env.ok(&["config", "show"]);
    }
}

/// An address nothing listens on.
fn closed_address() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", listener.local_addr().unwrap())
}

#[test]
fn an_ollama_address_ending_in_v1_says_to_drop_v1() {
    const QUESTION: &str = "How do I create a new project with cargo?";
    // Ollama answers a path it does not serve (/v1/api/show, /v1/api/chat) with Go's plain 404.
    let not_found = || vec![response("404 Not Found", "text/plain; charset=utf-8", "404 page not found")];
    let server = Server::start(vec![not_found(), not_found()]);
    let out = home_at(Kind::Ollama, &format!("{}/v1", server.url)).run(&["ask", QUESTION]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("{}/v1/api/chat answered 404", server.url)), "{err}");
    let drop_v1 = format!(
        "hint: llm.base_url ends in /v1, the OpenAI-compatible API's path, but providers \"ollama\" and \"auto\" speak \
         Ollama's own API, whose /api/ path kebab adds: set llm.base_url to {}, or llm.provider = \"openai\" to keep /v1",
        server.url
    );
    assert!(err.contains(&drop_v1), "{err}");
    // No server there either: the same, not "start Ollama so it listens at …/v1".
    let down = closed_address();
    let err = stderr(&home_at(Kind::Ollama, &format!("{down}/v1/")).run(&["ask", QUESTION]));
    assert!(err.contains(&format!("set llm.base_url to {down}, or")), "{err}");
    assert!(err.contains("start the server if it is not running") && !err.contains("listens at"), "{err}");
}

#[test]
fn an_openai_address_ending_in_api_says_it_looks_like_ollamas_own_api() {
    const QUESTION: &str = "How do I create a new project with cargo?";
    // Ollama answers /api/v1/chat/completions, a path it does not serve, with Go's plain 404.
    let server = Server::start(vec![vec![response("404 Not Found", "text/plain; charset=utf-8", "404 page not found")]]);
    let out = home_at(Kind::OpenAi, &format!("{}/api", server.url)).run(&["ask", QUESTION]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let looks_like = |base: &str| {
        format!(
            "llm.base_url {base}/api looks like Ollama's own API, which provider \"openai\" does not speak: \
             if the server is Ollama, set llm.base_url to {base}/v1 (its OpenAI-compatible API), \
             or llm.provider = \"ollama\" with llm.base_url = {base}"
        )
    };
    assert!(err.contains(&format!("hint: {}; else check llm.model (qwen)", looks_like(&server.url))), "{err}");
    // No server there: the same, not "start Ollama", which would not help an openai provider at /api.
    let down = closed_address();
    let err = stderr(&home_at(Kind::OpenAi, &format!("{down}/api")).run(&["ask", QUESTION]));
    assert!(err.contains(&format!("hint: {}; start the server if it is not running", looks_like(&down))), "{err}");
    assert!(!err.contains("start Ollama"), "{err}");
}

/// A plain HTTP server that answers what arrives first with a 400 at once, as
/// Go's net/http (so Ollama) answers a TLS handshake; its address as https://.
fn plain_http_at_an_https_address() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = format!("https://{}", listener.local_addr().unwrap());
    // Not joined: a kebab that never connects fails the test without it.
    std::thread::spawn(move || {
        let Ok((mut socket, _)) = listener.accept() else { return };
        let _ = socket.set_read_timeout(Some(Duration::from_secs(2)));
        let _ = socket.read(&mut [0u8; 4096]);
        let _ = socket.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 11\r\nConnection: close\r\n\r\nBad Request");
    });
    address
}

#[test]
fn auto_with_an_https_address_or_a_redirect_gives_the_address_to_set_not_no_model_server() {
    const QUESTION: &str = "How do I create a new project with cargo?";
    let fallback = "; answering with the built-in extractive model";
    let address = plain_http_at_an_https_address();
    let out = home_with("auto", &address).run(&["ask", QUESTION]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains(&format!("no https connection with the model server at {address}/api/tags")), "{err}");
    let plain = address.replace("https://", "http://");
    assert!(err.contains(&format!("set llm.base_url to {plain}{fallback}")), "{err}");
    assert!(!err.contains("no model server"), "{err}");

    let server = Server::start(vec![vec![redirect("301 Moved Permanently", "https://models.example/llm/api/tags")]]);
    let out = home_with("auto", &server.url).run(&["ask", QUESTION]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let advice = "it redirects to https://models.example/llm/api/tags; \
                  set llm.base_url to https://models.example/llm (kebab does not follow redirects)";
    assert!(err.contains(&format!("{advice}{fallback}")), "{err}");
    assert!(!err.contains("no model server"), "{err}");
    // Nothing there at all is still said so.
    let down = closed_address();
    let err = stderr(&home_with("auto", &down).run(&["ask", QUESTION]));
    assert!(err.contains(&format!("no model server at {down}{fallback}")), "{err}");
}

#[test]
fn doctor_gives_the_address_to_set_for_an_https_address_or_a_redirect_as_ask_does() {
    let doctor = |provider: &str, address: &str| {
        String::from_utf8_lossy(&home_with(provider, address).run(&["doctor"]).stdout).into_owned()
    };
    // What each provider's check asks first: Ollama's model list, or an OpenAI-compatible server's.
    for (provider, endpoint) in [("auto", "/api/tags"), ("ollama", "/api/tags"), ("openai", "/v1/models")] {
        let address = plain_http_at_an_https_address();
        let shown = doctor(provider, &address);
        let failed = format!("no https connection with the model server at {address}{endpoint}");
        assert!(shown.contains(&failed), "{provider}: {shown}");
        let plain = address.replace("https://", "http://");
        let tls = format!("fix: if the server speaks plain HTTP, as a local Ollama or llama-server does, \
                           set llm.base_url to {plain}\n");
        assert!(shown.contains(&tls), "{provider}: {shown}");

        let target = format!("https://models.example/llm{endpoint}");
        let server = Server::start(vec![vec![redirect("301 Moved Permanently", &target)]]);
        let shown = doctor(provider, &server.url);
        assert!(shown.contains(&format!("redirects to {target}")), "{provider}: {shown}");
        let set = "fix: set llm.base_url to https://models.example/llm (kebab does not follow redirects)\n";
        assert!(shown.contains(set), "{provider}: {shown}");
        assert!(!shown.contains("ollama serve") && !shown.contains("start the server"), "{provider}: {shown}");
    }
}

#[test]
fn a_server_that_is_not_ollama_is_said_to_answer_but_not_as_ollama_by_ask_and_doctor_alike() {
    const QUESTION: &str = "How do I create a new project with cargo?";
    const NOT_OLLAMA: &str = "the server at llm.base_url answers, but not as Ollama does: \
                              for an OpenAI-compatible server set llm.provider = \"openai\", else fix llm.base_url";
    // What llama-server answers a path it does not serve, such as Ollama's /api/tags and /api/chat.
    let body = r#"{"error":{"code":404,"message":"File Not Found"}}"#;
    let not_found = || vec![response("404 Not Found", "application/json", body)];
    let answered = |url: &str, path: &str| format!("the model server at {url}{path} answered 404: File Not Found");
    for provider in ["auto", "ollama"] {
        let server = Server::start(vec![not_found()]);
        let out = home_with(provider, &server.url).run(&["ask", QUESTION]);
        let err = stderr(&out);
        let path = if provider == "auto" { "/api/tags" } else { "/api/chat" };
        assert!(err.contains(&answered(&server.url, path)), "{provider}: {err}");
        assert!(err.contains(NOT_OLLAMA) && !err.contains("no model server"), "{provider}: {err}");

        let server = Server::start(vec![not_found()]);
        let shown = home_with(provider, &server.url).run(&["doctor"]);
        let shown = String::from_utf8_lossy(&shown.stdout);
        assert!(shown.contains(&answered(&server.url, "/api/tags")), "{provider}: {shown}");
        assert!(shown.contains(&format!("fix: {NOT_OLLAMA}\n")), "{provider}: {shown}");
    }
}

#[test]
fn auto_says_what_a_server_that_fails_wants_a_key_or_sends_a_web_page_answered_not_no_model_server() {
    const QUESTION: &str = "How do I create a new project with cargo?";
    let fallback = "; answering with the built-in extractive model";
    let failed = "the server at llm.base_url answers, but failed to list its models: \
                  check that server (or, behind a proxy, the one it forwards to) and its log";
    let key = "the server at llm.base_url wants an API key, which kebab sends only as provider \"openai\": \
               for an OpenAI-compatible server set llm.provider = \"openai\" and llm.api_key_env, else fix llm.base_url";
    let not_ollama = "the server at llm.base_url answers, but not as Ollama does: \
                      for an OpenAI-compatible server set llm.provider = \"openai\", else fix llm.base_url";
    let page = "<!doctype html><html><head><title>Open WebUI</title></head><body>sign in</body></html>";
    // (the server's answer to GET /api/tags, what kebab says it answered, the advice)
    let gateway = "<html><body><h1>502 Bad Gateway</h1></body></html>";
    let cases = [
        (response("502 Bad Gateway", "text/html", gateway), "answered 502: 502 Bad Gateway", failed),
        (response("500 Internal Server Error", "text/plain", "disk full"), "answered 500: disk full", failed),
        (response("401 Unauthorized", "application/json", r#"{"error":"missing key"}"#), "answered 401: missing key", key),
        (response("403 Forbidden", "text/plain", ""), "answered 403: forbidden", key),
        (response("200 OK", "text/html", page), "answered 200: not Ollama's model list: \"<!doctype html>", not_ollama),
        (response("200 OK", "application/json", r#"{"data":[]}"#),
         "answered 200: not Ollama's model list: no `models`", not_ollama),
    ];
    for (reply, answered, advice) in cases {
        let server = Server::start(vec![vec![reply.clone()]]);
        let out = home_with("auto", &server.url).run(&["ask", QUESTION]);
        let err = stderr(&out);
        let what = format!("{answered}: {err}");
        assert_eq!(out.status.code(), Some(0), "{what}");
        assert!(err.contains(&format!("the model server at {}/api/tags {answered}", server.url)), "{what}");
        assert!(err.contains(&format!("; {advice}{fallback}")), "{what}");
        assert!(!err.contains("no model server"), "{what}");

        // `kebab doctor` shares the probe, and its advice.
        let server = Server::start(vec![vec![reply]]);
        let shown = home_with("auto", &server.url).run(&["doctor"]);
        let shown = String::from_utf8_lossy(&shown.stdout);
        assert!(shown.contains(&format!("{}/api/tags {answered}", server.url)), "{answered}: {shown}");
        assert!(shown.contains(&format!("fix: {advice}\n")), "{answered}: {shown}");
        assert!(!shown.contains("ollama serve"), "{answered}: {shown}");
    }
}

#[test]
fn a_web_page_answering_the_question_is_told_as_an_answer_with_a_hint_to_set_llm_base_url_not_a_broken_stream() {
    let page = "<!doctype html><html><head><title>Open WebUI</title></head><body>sign in</body></html>";
    let hint = "hint: llm.base_url reaches a web page (a web UI, a proxy's sign-in), not the model server's API: \
                set it to the model server's own address";
    for kind in BOTH {
        let server = Server::start(vec![vec![response("200 OK", "text/html; charset=utf-8", page)]; 2]);
        let env = home(kind, &server);
        let out = env.run(&["ask", "How do I create a new project with cargo?"]);
        let (shown, err) = (String::from_utf8_lossy(&out.stdout), stderr(&out));
        assert_eq!(out.status.code(), Some(2), "{kind:?}: {err}");
        let answered = format!("the model server at {}{} answered 200: a web page, not a model stream (Open WebUI sign in)",
            server.url, kind.chat_path());
        assert!(err.contains(&answered) && err.contains(hint) && !err.contains("broke"), "{kind:?}: {err}");
        // Asking again gets the same page: the user has something to fix, not a stream that broke.
        assert!(shown.contains("refused: model_error"), "{kind:?}: {shown}");
        let doc: serde_json::Value = serde_json::from_slice(&env.run(&["--json", "ask", "How do I build it?"]).stdout).unwrap();
        assert_eq!(doc["hint"], hint.strip_prefix("hint: ").unwrap(), "{kind:?}: {doc}");
    }
}

#[test]
fn auto_says_a_server_whose_model_list_broke_off_answered_and_to_check_it_not_no_model_server() {
    let failed = "the server at llm.base_url answers, but failed to list its models: \
                  check that server (or, behind a proxy, the one it forwards to) and its log";
    // A 200 whose body stops short of its length (part of the list, or none of it), a chunked one cut
    // off, and one that stalls past the probe's wait (`ask` waits 400 ms, `doctor` 2 s).
    let cut = |body: &str| {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n";
        vec![Step::Send(format!("{head}{body}").into_bytes())]
    };
    let chunked = vec![stream_head("application/json"), chunk(r#"{"models":[{"name":"#)];
    let stalled = [cut(r#"{"models":["#), vec![common::fake_server::wait(2500)]].concat();
    // (the reply, why it broke off as `ask` and `doctor` say: any transport error's words, or the wait)
    let cases = [
        (cut(r#"{"models":[{"name":"qw"#), "", ""),
        (cut(""), "", ""),
        (chunked, "", ""),
        (stalled, "nothing more came within 400 ms)", "nothing more came within 2000 ms)"),
    ];
    for (reply, ask_why, doctor_why) in cases {
        let server = Server::start(vec![reply.clone()]);
        let out = home_with("auto", &server.url).run(&["ask", "How do I create a new project with cargo?"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{err}");
        let answered = format!("{}/api/tags answered 200: its reply broke off (", server.url);
        assert!(err.contains(&format!("the model server at {answered}{ask_why}")), "{err}");
        assert!(err.contains(&format!("; {failed}; answering with the built-in extractive model")), "{err}");
        assert!(!err.contains("no model server") && !err.contains("not Ollama's model list"), "{err}");

        let server = Server::start(vec![reply]);
        let shown = home_with("auto", &server.url).run(&["doctor"]);
        let shown = String::from_utf8_lossy(&shown.stdout);
        let answered = format!("{}/api/tags answered 200: its reply broke off (", server.url);
        assert!(shown.contains(&format!("{answered}{doctor_why}")), "{shown}");
        assert!(shown.contains(&format!("fix: {failed}\n")), "{shown}");
    }
}

#[test]
fn a_model_list_of_over_4_mib_is_said_to_be_too_long_to_read_not_to_be_another_servers_and_one_of_4_mib_is_read() {
    const MIB: usize = 1024 * 1024;
    // Ollama's list of exactly `size` bytes, the model asked for ("qwen", listed as "qwen:latest") last.
    let list = |size: usize| {
        let (head, tail) = (r#"{"models":[{"name":"other","digest":""#, r#""},{"name":"qwen:latest"}]}"#);
        let reply = format!("{head}{}{tail}", "0".repeat(size - head.len() - tail.len()));
        assert_eq!(reply.len(), size);
        vec![response("200 OK", "application/json", &reply)]
    };
    let doctor = |provider: &str, server: &Server| {
        String::from_utf8_lossy(&home_with(provider, &server.url).run(&["doctor"]).stdout).into_owned()
    };
    // At the cap the list is read whole, and has the model.
    let server = Server::start(vec![list(4 * MIB)]);
    let shown = doctor("ollama", &server);
    assert!(shown.contains(&format!("Ollama at {} has qwen", server.url)), "{shown}");

    // A byte past it is too long to read, where cut there it read as not Ollama's list.
    let too_long = "the server at llm.base_url sent a longer model list than kebab reads: check that llm.base_url is \
                    the Ollama server's; for one with that many models set llm.provider = \"ollama\" \
                    (only \"auto\" and `kebab doctor` read the list)";
    let answered = "/api/tags answered 200: a model list of over 4 MiB, more than kebab reads";
    let server = Server::start(vec![list(4 * MIB + 1)]);
    let out = home_with("auto", &server.url).run(&["ask", "How do I create a new project with cargo?"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let said = format!("the model server at {}{answered}; {too_long}; answering with the built-in extractive", server.url);
    assert!(err.contains(&said), "{err}");
    assert!(!err.contains("not Ollama's model list"), "{err}");

    let server = Server::start(vec![list(4 * MIB + 1)]);
    let shown = doctor("ollama", &server);
    assert!(shown.contains(&format!("{}{answered}", server.url)), "{shown}");
    assert!(shown.contains(&format!("fix: {too_long}\n")), "{shown}");
    assert!(!shown.contains("not Ollama's model list"), "{shown}");
}

#[test]
fn auto_says_a_server_that_took_the_connection_but_listed_its_models_too_late_sent_nothing_not_no_model_server() {
    let slow = "the server at llm.base_url took the connection but did not list its models in time: \
                check that server and its log; for one that is only slow, provider \"ollama\" waits \
                llm.timeout_secs for it, where \"auto\" gives up in under a second";
    // A server that has the model, but answers later than `ask` (400 ms) and `doctor` (2 s) wait.
    let list = r#"{"models":[{"name":"qwen"}]}"#;
    let late = || vec![common::fake_server::wait(2500), response("200 OK", "application/json", list)];
    let server = Server::start(vec![late()]);
    let out = home_with("auto", &server.url).run(&["ask", "How do I create a new project with cargo?"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let said = format!("the model server at {}/api/tags sent nothing within 400 ms; {slow}; answering with", server.url);
    assert!(err.contains(&said) && !err.contains("no model server"), "{err}");

    let server = Server::start(vec![late()]);
    let shown = home_with("auto", &server.url).run(&["doctor"]);
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains(&format!("{}/api/tags sent nothing for 2 s", server.url)), "{shown}");
    assert!(shown.contains(&format!("fix: {slow}\n")) && !shown.contains("ollama serve"), "{shown}");
}

#[test]
fn auto_with_an_address_ending_in_v1_says_to_drop_v1_without_saying_provider_ollama_was_set() {
    // What vLLM answers a path it does not serve, such as /v1/api/tags.
    let not_found = || vec![response("404 Not Found", "application/json", r#"{"detail":"Not Found"}"#)];
    let server = Server::start(vec![not_found()]);
    let out = home_with("auto", &format!("{}/v1", server.url)).run(&["ask", "How do I create a new project with cargo?"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let drop_v1 = format!(
        "the model server at {0}/v1/api/tags answered 404: Not Found; llm.base_url ends in /v1, the OpenAI-compatible API's \
         path, but providers \"ollama\" and \"auto\" speak Ollama's own API, whose /api/ path kebab adds: \
         set llm.base_url to {0}, or llm.provider = \"openai\" to keep /v1; answering with the built-in extractive model",
        server.url
    );
    assert!(err.contains(&drop_v1), "{err}");
    assert!(!err.contains("provider \"ollama\" speaks"), "{err}");
}

#[test]
fn doctor_says_a_server_that_took_no_connection_within_its_2_s_probe_was_given_2_s_not_the_5_s_an_ask_waits() {
    // A listener with its backlog full: the connect itself hangs, past doctor's 2 s probe.
    let (listener, _held) = common::fake_server::full_backlog();
    let base = format!("http://{}", listener.local_addr().unwrap());
    for (kind, path) in [(Kind::Ollama, "/api/tags"), (Kind::OpenAi, "/v1/models")] {
        let out = home_at(kind, &base).run(&["doctor"]);
        let shown = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(2), "{kind:?}: {shown}");
        let said = format!("cannot reach the model server at {base}{path}: no connection within 2 s");
        assert!(shown.contains(&said), "{kind:?}: {shown}");
    }
}
