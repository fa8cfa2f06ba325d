//! `kebab mcp` end to end: the test is an MCP client speaking newline-
//! delimited JSON-RPC to the real binary over its pipes — the handshake, the
//! tool list with schemas, a call of every tool, tool errors carrying
//! `error.v1`, a bad argument, `--readonly`, and calls while another process
//! ingests into the same database.

mod common;

use std::io::{BufRead, Write};

use common::mcp_client::{Client, home};
use common::{Env, cargo_and_tea_notes};
use serde_json::{Value, json};

#[test]
fn the_handshake_names_kebab_and_the_six_tools_come_with_input_schemas() {
    let env = home();
    cargo_and_tea_notes(&env);
    let (mut client, init) = Client::start(&env, &[]);
    assert_eq!(init["result"]["serverInfo"]["name"], "kebab", "{init}");
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    assert!(init["result"]["capabilities"]["tools"].is_object(), "{init}");

    let list = client.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap_or_else(|| panic!("{list}"));
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["ask", "cite", "ingest", "search", "session_show", "sessions_list"]);
    let schema = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap()["inputSchema"].clone();
    for t in tools {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        assert!(!t["description"].as_str().unwrap().is_empty(), "{t}");
    }
    assert_eq!(schema("search")["required"], json!(["query"]));
    assert!(schema("search")["properties"]["k"].is_object());
    assert_eq!(schema("ask")["required"], json!(["question"]));
    assert!(schema("ask")["properties"]["session"].is_object());
    assert_eq!(schema("session_show")["required"], json!(["name"]));
    assert_eq!(schema("ingest")["required"], json!(["paths"]));
    let (code, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn search_returns_search_hits_with_their_citations() {
    let env = home();
    cargo_and_tea_notes(&env);
    let (mut client, _) = Client::start(&env, &[]);
    let doc = client.ok("search", json!({ "query": "green tea", "k": 3 }));
    assert_eq!(doc["schema_version"], "search_response.v1", "{doc}");
    assert_eq!(doc["mode"], "lexical");
    let hit = &doc["hits"][0];
    assert_eq!(hit["schema_version"], "search_hit.v1", "{doc}");
    assert_eq!(hit["citation"]["path"], "notes/tea.md");
    assert_eq!(hit["citation"]["start"], 1);
    assert!(hit["snippet"].as_str().unwrap().contains("«"), "{hit}");
    assert!(doc["hits"].as_array().unwrap().len() <= 3);
    // A misspelt word is searched as the notes write it, and said so.
    let doc = client.ok("search", json!({ "query": "green tea steeeps" }));
    assert_eq!(doc["respelled"], json!([{ "typed": "steeeps", "read": "steeps" }]), "{doc}");
    assert_eq!(doc["query"], "green tea steeeps");
    assert_eq!(doc["hits"][0]["citation"]["path"], "notes/tea.md", "{doc}");
}

#[test]
fn a_line_rmcp_cannot_read_is_answered_not_left_waiting() {
    // rmcp dropped a line that is not JSON, or not UTF-8, without a reply:
    // the client waited forever.
    let env = home();
    cargo_and_tea_notes(&env);
    let (mut client, _) = Client::start(&env, &[]);
    let stdin = client.stdin.as_mut().expect("stdin open");
    let mut raw = b"{not json\n".to_vec();
    raw.extend_from_slice(br#"{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"search","arguments":{"query":"green tea "#);
    raw.extend_from_slice(b"\xE9\"}}}\n");
    stdin.write_all(&raw).and_then(|()| stdin.flush()).expect("write to kebab mcp");
    // A later call on the same worker is answered after it: by then the
    // first has its reply or never will.
    client.send(&json!({ "jsonrpc": "2.0", "id": 100, "method": "tools/call", "params": { "name": "search", "arguments": { "query": "green tea" } } }));
    let mut seen: Vec<Value> = Vec::new();
    while !seen.iter().any(|m| m["id"] == json!(100)) {
        let mut line = String::new();
        assert!(client.stdout.read_line(&mut line).expect("read from kebab mcp") > 0, "kebab mcp closed stdout: {seen:?}");
        seen.push(serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {line}")));
    }
    let parse_error = seen.iter().find(|m| m["error"]["code"] == json!(-32700)).unwrap_or_else(|| panic!("no parse error: {seen:?}"));
    assert_eq!(parse_error["id"], Value::Null, "{parse_error}");
    let answer = seen.iter().find(|m| m["id"] == json!(99)).unwrap_or_else(|| panic!("no reply to request 99: {seen:?}"));
    let doc = &answer["result"]["structuredContent"];
    assert_eq!(doc["query"], "green tea \u{FFFD}", "{answer}");
    assert_eq!(doc["hits"][0]["citation"]["path"], "notes/tea.md", "{answer}");
    assert_eq!(client.finish().0, Some(0));
}

#[test]
fn ask_answers_with_a_cited_source_and_refuses_what_the_notes_do_not_hold() {
    let env = home();
    cargo_and_tea_notes(&env);
    let (mut client, _) = Client::start(&env, &[]);
    let a = client.ok("ask", json!({ "question": "How do I create a new project with cargo?" }));
    assert_eq!(a["schema_version"], "answer.v1", "{a}");
    assert_eq!(a["grounded"], true, "{a}");
    assert!(a["answer"].as_str().unwrap().contains("cargo new hello"), "{a}");
    assert_eq!(a["citations"][0]["citation"]["path"], "notes/cargo.md", "{a}");

    let r = client.ok("ask", json!({ "question": "Which tea won the football world cup in 1998?" }));
    assert_eq!(r["schema_version"], "answer.v1", "{r}");
    assert_eq!(r["grounded"], false, "{r}");
    assert!(r["refusal_reason"].is_string(), "{r}");
    assert_eq!(r["citations"], json!([]), "{r}");
}

#[test]
fn ask_in_a_session_on_readonly_data_says_the_turn_was_not_saved() {
    // The answer came back without conversation_id and turn_index, and
    // nothing said why: the command line's notice goes to stderr.
    let env = home();
    cargo_and_tea_notes(&env);
    let (mut client, _) = Client::start_with(&env, &[], &[("KEBAB_READONLY", "1")]);
    let a = client.ok("ask", json!({ "question": "How do I create a new project with cargo?", "session": "ro" }));
    assert_eq!(a["grounded"], true, "{a}");
    assert!(a.get("conversation_id").is_none(), "{a}");
    let not_saved = a["not_saved"].as_str().unwrap_or_else(|| panic!("no not_saved: {a}"));
    assert!(not_saved.contains("not saved to session \"ro\"") && not_saved.contains("--readonly"), "{not_saved}");
    // Without a session there is nothing to save it to, and nothing to say.
    let plain = client.ok("ask", json!({ "question": "How do I create a new project with cargo?" }));
    assert!(plain.get("not_saved").is_none(), "{plain}");
    assert_eq!(client.finish().0, Some(0));
    // Written, a turn is saved and says nothing of the kind.
    let (mut writer, _) = Client::start(&env, &[]);
    let saved = writer.ok("ask", json!({ "question": "How do I create a new project with cargo?", "session": "rw" }));
    assert_eq!(saved["turn_index"], 0, "{saved}");
    assert!(saved.get("not_saved").is_none(), "{saved}");
}

#[test]
fn cite_gives_the_evidence_by_session_turn_and_by_chunk_and_sees_a_changed_note() {
    let env = home();
    cargo_and_tea_notes(&env);
    let (mut client, _) = Client::start(&env, &[]);
    let a = client.ok("ask", json!({ "question": "How do I create a new project with cargo?", "session": "work" }));
    assert_eq!(a["grounded"], true, "{a}");

    let by_turn = client.ok("cite", json!({ "session": "work", "turn": 1, "n": 1 }));
    assert_eq!(by_turn["schema_version"], "evidence.v1", "{by_turn}");
    assert_eq!(by_turn["cited"], true, "{by_turn}");
    assert_eq!(by_turn["changed_since"], false, "{by_turn}");
    assert_eq!(by_turn["citation"]["path"], "notes/cargo.md");
    assert_eq!(by_turn["citation"]["section"], "Cargo > New projects");
    assert_eq!(by_turn["heading_path"], json!(["Cargo", "New projects"]));
    assert!(by_turn["text"].as_str().unwrap().contains("run `cargo new hello` in a terminal"), "{by_turn}");

    let chunk_id = a["citations"][0]["chunk_id"].clone();
    let by_chunk = client.ok("cite", json!({ "chunk_id": chunk_id }));
    assert_eq!(by_chunk["text"], by_turn["text"]);
    assert_eq!(by_chunk["chunk_id"], chunk_id);
    assert!(by_chunk.get("cited").is_none(), "{by_chunk}");

    // The note is edited after indexing: the evidence says so.
    env.write("notes/cargo.md", "# Cargo\n\nRewritten.\n");
    let after = client.ok("cite", json!({ "chunk_id": chunk_id }));
    assert_eq!(after["changed_since"], true, "{after}");

    let missing = client.tool_error("cite", json!({ "session": "work", "turn": 1, "n": 40 }));
    assert_eq!(missing["code"], "not_found", "{missing}");
    assert!(missing["message"].as_str().unwrap().contains("no evidence 40"), "{missing}");
    let neither = client.tool_error("cite", json!({ "session": "work" }));
    assert_eq!(neither["code"], "bad_input", "{neither}");
    assert!(neither["hint"].as_str().unwrap().contains("chunk_id"), "{neither}");
}

#[test]
fn cite_reads_a_note_whose_name_is_not_utf8_as_unchanged() {
    use std::os::unix::ffi::OsStrExt;
    let env = home();
    let name = std::ffi::OsStr::from_bytes(b"caf\xE9.md");
    std::fs::create_dir_all(env.notes()).unwrap();
    std::fs::write(env.notes().join(name), "# Coffee\n\nThe espresso machine descales every month.\n").unwrap();
    env.ok(&["ingest", env.notes().to_str().unwrap()]);
    let (mut client, _) = Client::start(&env, &[]);
    let hits = client.ok("search", json!({ "query": "espresso descales" }));
    let hit = &hits["hits"][0];
    assert_eq!(hit["citation"]["path"], "notes/caf\\xE9.md", "{hits}");
    let evidence = client.ok("cite", json!({ "chunk_id": hit["chunk_id"].clone() }));
    assert_eq!(evidence["changed_since"], false, "{evidence}");
}

#[test]
fn sessions_list_and_session_show_return_the_saved_conversation() {
    let env = home();
    cargo_and_tea_notes(&env);
    let (mut client, _) = Client::start(&env, &[]);
    client.ok("ask", json!({ "question": "How do I create a new project with cargo?", "session": "work" }));
    client.ok("ask", json!({ "question": "How long does green tea steep?", "session": "work" }));

    let list = client.ok("sessions_list", json!({}));
    assert_eq!(list["schema_version"], "session_list.v1", "{list}");
    assert_eq!(list["sessions"][0]["name"], "work", "{list}");
    assert_eq!(list["sessions"][0]["turns"], 2, "{list}");

    let show = client.ok("session_show", json!({ "name": "work" }));
    assert_eq!(show["schema_version"], "session.v1", "{show}");
    let turns = show["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[1]["question"], "How long does green tea steep?");
    assert_eq!(turns[1]["answer"]["schema_version"], "answer.v1");

    let none = client.tool_error("session_show", json!({ "name": "nope" }));
    assert_eq!(none["code"], "not_found", "{none}");
    // What the client sees matches what the CLI saves.
    let cli = env.json(&["sessions", "show", "work"]);
    assert_eq!(cli["turns"][0]["answer"]["answer"], turns[0]["answer"]["answer"]);
}

#[test]
fn a_session_name_no_session_can_have_is_bad_input_saying_what_a_name_may_hold() {
    // session_show and cite answered not_found ("there is no session named"),
    // as if the name were fine and only unused.
    let env = home();
    cargo_and_tea_notes(&env);
    let (mut client, _) = Client::start(&env, &[]);
    for (tool, args) in [
        ("session_show", json!({ "name": "bad/name" })),
        ("cite", json!({ "session": "bad/name", "turn": 1, "n": 1 })),
    ] {
        let err = client.tool_error(tool, args);
        assert_eq!(err["code"], "bad_input", "{tool}: {err}");
        assert_eq!(err["message"], "\"bad/name\" is not a usable session name", "{tool}: {err}");
        assert!(err["hint"].as_str().unwrap().contains("letters, digits, '-', '_' or '.'"), "{tool}: {err}");
    }
}

#[test]
fn ingest_indexes_new_notes_and_is_refused_under_readonly() {
    let env = home();
    // No database yet: reads say what to do, ingest creates it.
    let (mut client, _) = Client::start(&env, &[]);
    let empty = client.tool_error("search", json!({ "query": "kettle" }));
    assert_eq!(empty["code"], "no_index", "{empty}");
    assert!(empty["hint"].as_str().unwrap().contains("ingest"), "{empty}");

    env.write("notes/kettle.md", "# Kettle\n\nThe kettle is descaled with vinegar once a month.\n");
    let summary = client.ok("ingest", json!({ "paths": [env.notes()] }));
    assert_eq!(summary["schema_version"], "ingest_summary.v1", "{summary}");
    assert_eq!(summary["added"], 1, "{summary}");
    let found = client.ok("search", json!({ "query": "kettle vinegar" }));
    assert_eq!(found["hits"][0]["citation"]["path"], "notes/kettle.md", "{found}");
    let again = client.ok("ingest", json!({ "paths": [env.notes()] }));
    assert_eq!(again["unchanged"], 1, "{again}");
    let (code, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");

    let (mut readonly, _) = Client::start(&env, &["--readonly"]);
    let refused = readonly.tool_error("ingest", json!({ "paths": [env.notes()] }));
    assert_eq!(refused["code"], "readonly", "{refused}");
    assert!(refused["message"].as_str().unwrap().contains("--readonly"), "{refused}");
    assert!(refused["hint"].as_str().unwrap().contains("drop --readonly"), "{refused}");
    // Reads still work read-only.
    let found = readonly.ok("search", json!({ "query": "kettle" }));
    assert_eq!(found["hits"][0]["citation"]["path"], "notes/kettle.md");
}

#[test]
fn hints_name_the_tool_to_call_not_a_command_line() {
    // An MCP client was told to run `kebab sessions list` or `kebab ingest
    // PATH`: commands for a terminal, not the tools it can call.
    let env = home();
    let (mut client, _) = Client::start(&env, &[]);
    let empty = client.tool_error("search", json!({ "query": "kettle" }));
    let hint = empty["hint"].as_str().unwrap();
    assert!(hint.contains("call the `ingest` tool with {\"paths\": ["), "{empty}");
    assert!(!hint.contains("kebab ingest"), "{empty}");
    env.write("notes/kettle.md", "# Kettle\n\nThe kettle is descaled with vinegar once a month.\n");
    client.ok("ingest", json!({ "paths": [env.notes()] }));
    let no_session = client.tool_error("cite", json!({ "session": "nope", "turn": 1, "n": 1 }));
    assert_eq!(no_session["code"], "not_found", "{no_session}");
    assert_eq!(no_session["hint"], "the `sessions_list` tool shows the sessions there are", "{no_session}");
    let (code, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn ingest_of_a_relative_path_not_found_says_where_relative_paths_are_read_from() {
    // "cannot ingest fixtures/demo: No such file or directory": the client
    // could not tell which folder the path was looked for in.
    let env = home();
    let (mut client, _) = Client::start(&env, &[]);
    let err = client.tool_error("ingest", json!({ "paths": ["fixtures/demo"] }));
    assert_eq!(err["code"], "bad_input", "{err}");
    let message = err["message"].as_str().unwrap();
    // The tests start the server in the temp dir.
    let cwd = env.path("").canonicalize().unwrap();
    assert!(message.starts_with("cannot ingest \"fixtures/demo\": "), "{message}");
    let said = format!("relative paths are read from the server's working directory, {}", cwd.display());
    assert!(message.ends_with(&said), "{message}");
    assert!(err["hint"].as_str().unwrap().contains("absolute path"), "{err}");
    // Nothing was created for it: a read still finds no index.
    assert_eq!(client.tool_error("search", json!({ "query": "kettle" }))["code"], "no_index");
}

#[test]
fn an_ingest_that_skips_everything_named_says_which_file_and_why() {
    let env = home();
    let file = env.write("notes/latin.txt", b"caf\xE9 cr\xE8me\n");
    let (mut client, _) = Client::start(&env, &[]);
    // The client sees only this error (no warnings on a terminal), so it names the file and the reason.
    let err = client.tool_error("ingest", json!({ "paths": [file] }));
    assert_eq!(err["code"], "bad_input", "{err}");
    let message = err["message"].as_str().unwrap();
    assert!(message.contains("notes/latin.txt") && message.contains("not valid UTF-8"), "{err}");
    // Said once: the one file's reason was given twice over.
    assert_eq!(message.matches("not valid UTF-8").count(), 1, "{err}");
    // No command-line flag the tool does not have.
    assert!(!err["hint"].as_str().unwrap().contains("--format"), "{err}");
    // Two files: each named with its reason, once.
    env.write("notes/empty.pdf", b"not a pdf");
    let err = client.tool_error("ingest", json!({ "paths": [env.notes()] }));
    let message = err["message"].as_str().unwrap();
    assert!(message.contains("2 skipped") && message.contains("notes/empty.pdf: not a PDF"), "{err}");
    assert_eq!(message.matches("not valid UTF-8").count(), 1, "{err}");
}

#[test]
fn an_ingest_skip_tells_the_client_what_it_can_do_not_a_format_flag_the_tool_lacks() {
    // Its reasons said "use --format md|txt|…", a command-line flag the ingest tool has no argument for.
    let env = home();
    let photo = env.write("pics/photo.png", b"\x89PNG\r\n");
    env.write("notes/tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n");
    let (mut client, _) = Client::start(&env, &[]);
    let list = client.request("tools/list", json!({}));
    let ingest = list["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "ingest").unwrap().clone();
    assert!(ingest["inputSchema"]["properties"].get("format").is_none(), "the tool takes a format now: {ingest}");
    let err = client.tool_error("ingest", json!({ "paths": [photo] }));
    let message = err["message"].as_str().unwrap();
    assert!(message.contains("skipped pics/photo.png: unsupported extension .png; kebab reads .md, .markdown"), "{err}");
    assert!(message.ends_with(".pdf: convert it to one of those"), "{err}");
    let err = client.tool_error("ingest", json!({ "paths": [env.path("pics")] }));
    let message = err["message"].as_str().unwrap();
    assert!(message.ends_with("only 1 other file (pics/photo.png); add notes in one of those formats"), "{err}");
    // Beside notes the ingest succeeds, and its summary gives the same reason.
    let summary = client.ok("ingest", json!({ "paths": [env.notes(), photo] }));
    let reason = summary["skipped_files"][0]["reason"].as_str().unwrap();
    assert!(reason.starts_with("unsupported extension .png; kebab reads") && !reason.contains("--format"), "{summary}");
}

#[test]
fn an_ingest_that_skips_a_folder_says_to_give_it_notes_kebab_can_read_not_to_convert_a_file() {
    // The hint was "fix or convert the file named" for a folder too.
    let env = home();
    env.write("pics/photo.png", b"\x89PNG\r\n");
    let latin = env.write("latin.txt", b"caf\xE9 cr\xE8me\n");
    let (mut client, _) = Client::start(&env, &[]);
    let err = client.tool_error("ingest", json!({ "paths": [env.path("pics")] }));
    assert!(err["message"].as_str().unwrap().contains("skipped pics: holds no file kebab reads"), "{err}");
    let folder = "give the folder named notes kebab can read, as its reason says (or leave it out), then call ingest again";
    assert_eq!(err["hint"], folder, "{err}");
    // A file and a folder: each gets its own advice.
    let err = client.tool_error("ingest", json!({ "paths": [env.path("pics"), latin] }));
    let message = err["message"].as_str().unwrap();
    assert!(message.contains("2 skipped") && message.contains("pics: holds no file") && message.contains("latin.txt: not valid UTF-8"), "{err}");
    let both = "fix or convert the file named and give the folder named notes kebab can read, as their reasons say \
                (or leave them out), then call ingest again";
    assert_eq!(err["hint"], both, "{err}");
    let (code, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");

    // A folder that cannot be listed, inside one named.
    env.write("notes/closed/tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n");
    let mut cmd = env.cmd(&["mcp"]);
    cmd.current_dir(env.path(""));
    let Some(cmd) = common::heeding_folder_permissions(cmd) else {
        eprintln!("skipped: root here, and no working setpriv to make a mode-000 folder unlistable");
        return;
    };
    let _guard = common::unlistable(env.path("notes/closed"));
    let (mut client, _) = Client::start_command(cmd);
    let err = client.tool_error("ingest", json!({ "paths": [env.notes()] }));
    assert!(err["message"].as_str().unwrap().contains("skipped notes/closed: cannot read: Permission denied"), "{err}");
    assert_eq!(err["hint"], folder, "{err}");
    let (code, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn bad_arguments_get_a_clear_error_naming_the_argument() {
    let env = home();
    cargo_and_tea_notes(&env);
    let (mut client, _) = Client::start(&env, &[]);
    // Not the schema: a tool error with error.v1 naming the argument.
    let wrong_type = client.tool_error("search", json!({ "query": "tea", "k": "many" }));
    assert_eq!(wrong_type["code"], "bad_input", "{wrong_type}");
    assert!(wrong_type["message"].as_str().unwrap().contains("\"many\""), "{wrong_type}");
    assert!(wrong_type["hint"].as_str().unwrap().contains("input schema"), "{wrong_type}");
    let missing = client.tool_error("ask", json!({}));
    assert!(missing["message"].as_str().unwrap().contains("missing field `question`"), "{missing}");
    let unknown = client.tool_error("search", json!({ "qeury": "tea" }));
    assert!(unknown["message"].as_str().unwrap().contains("unknown field `qeury`"), "{unknown}");
    let bad_mode = client.tool_error("search", json!({ "query": "tea", "mode": "sideways" }));
    assert!(bad_mode["message"].as_str().unwrap().contains("sideways"), "{bad_mode}");
    let no_tool = client.request("tools/call", json!({ "name": "teleport", "arguments": {} }));
    // A tool that does not exist is the SDK's JSON-RPC error.
    assert_eq!(no_tool["error"]["code"], -32602, "{no_tool}");
    assert!(no_tool["error"]["message"].as_str().unwrap().contains("not found"), "{no_tool}");

    // In the schema but not usable: a tool error with error.v1.
    let zero = client.tool_error("search", json!({ "query": "tea", "k": 0 }));
    assert_eq!(zero["code"], "bad_input", "{zero}");
    assert!(zero["message"].as_str().unwrap().contains("k must be at least 1"), "{zero}");
    // A k no ranking could hold aborted the server (memory allocation failed).
    let huge = client.tool_error("search", json!({ "query": "tea", "k": 99_999_999_999_i64 }));
    assert_eq!(huge["code"], "bad_input", "{huge}");
    assert!(huge["message"].as_str().unwrap().contains("k must be at most 10000"), "{huge}");
    let punctuation = client.tool_error("search", json!({ "query": "?!" }));
    assert_eq!(punctuation["code"], "bad_input", "{punctuation}");
    let name = client.tool_error("ask", json!({ "question": "What is tea?", "session": "two words" }));
    assert_eq!(name["code"], "bad_input", "{name}");
    assert!(name["message"].as_str().unwrap().contains("two words"), "{name}");
    // The server is still serving after every error.
    assert_eq!(client.ok("search", json!({ "query": "tea" }))["hits"][0]["citation"]["path"], "notes/tea.md");
}

#[test]
fn a_wrong_typed_argument_is_named_with_the_type_it_needs() {
    // serde's "invalid type: string \"many\", expected usize" said neither
    // which argument nor what a JSON client should send instead.
    let env = home();
    cargo_and_tea_notes(&env);
    let (mut client, _) = Client::start(&env, &[]);
    for (tool, args, name, needs) in [
        ("search", json!({ "query": "tea", "k": "many" }), "`k`", "a whole number"),
        ("search", json!({ "query": 5 }), "`query`", "a string"),
        ("ask", json!({ "question": "What is tea?", "k": 1.5 }), "`k`", "a whole number"),
        ("cite", json!({ "chunk_id": "12" }), "`chunk_id`", "a whole number"),
        ("ingest", json!({ "paths": "/tmp", "force": true }), "`paths`", "an array"),
        ("ingest", json!({ "paths": ["/tmp"], "prune": "yes" }), "`prune`", "a boolean"),
    ] {
        let err = client.tool_error(tool, args.clone());
        let message = err["message"].as_str().unwrap();
        assert_eq!(err["code"], "bad_input", "{err}");
        assert!(message.contains(&format!("argument {name}")) && message.contains(needs), "{tool} {args}: {message}");
        assert!(!message.contains("usize") && !message.contains("i64") && !message.contains("sequence"), "{message}");
    }
}

#[test]
fn a_k_below_one_says_at_least_1_as_the_cli_does_negative_or_zero() {
    // `"k": -1` said "expected a whole number, 0 or more", yet 0 is refused
    // ("k must be at least 1"), as `kebab ask -k 0` and `-k -1` are.
    let env = home();
    cargo_and_tea_notes(&env);
    let (mut client, _) = Client::start(&env, &[]);
    for (tool, args) in [
        ("ask", json!({ "question": "What is tea?", "k": -1 })),
        ("ask", json!({ "question": "What is tea?", "k": 0 })),
        ("search", json!({ "query": "tea", "k": -1 })),
    ] {
        let err = client.tool_error(tool, args.clone());
        assert_eq!(err["code"], "bad_input", "{tool} {args}: {err}");
        assert_eq!(err["message"], "k must be at least 1", "{tool} {args}: {err}");
        assert!(err["hint"].as_str().unwrap().contains("leave k out"), "{tool} {args}: {err}");
    }
    // Past what a signed 64-bit number holds it said "expected a whole number", of a whole number.
    for k in [json!(10_001), json!(u64::MAX)] {
        let err = client.tool_error("search", json!({ "query": "tea", "k": k }));
        assert_eq!(err["message"], "k must be at most 10000", "{k}: {err}");
    }
    let cli = String::from_utf8_lossy(&env.run(&["ask", "-k", "-1", "What is tea?"]).stderr).into_owned();
    assert!(cli.contains("error: -k must be at least 1"), "{cli}");
    // The schema the client sees stays a whole number (its range: tests/mcp_schema.rs).
    let tools = client.request("tools/list", json!({}));
    let ask = tools["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "ask").unwrap().clone();
    assert_eq!(ask["inputSchema"]["properties"]["k"]["format"], "uint", "{ask}");
}

#[test]
fn cite_given_part_of_a_form_names_what_is_missing_or_extra() {
    // Each was "cite takes either chunk_id, or session with turn and n",
    // which left the client to guess which argument was wrong.
    let env = home();
    cargo_and_tea_notes(&env);
    let (mut client, _) = Client::start(&env, &[]);
    let no_n = client.tool_error("cite", json!({ "session": "work", "turn": 1 }));
    assert!(no_n["message"].as_str().unwrap().contains("`n` is missing"), "{no_n}");
    let no_session = client.tool_error("cite", json!({ "turn": 1, "n": 2 }));
    assert!(no_session["message"].as_str().unwrap().contains("`session` is missing"), "{no_session}");
    let both = client.tool_error("cite", json!({ "chunk_id": 1, "turn": 1 }));
    assert!(both["message"].as_str().unwrap().contains("not both: leave out `turn`"), "{both}");
    let none = client.tool_error("cite", json!({}));
    assert!(none["message"].as_str().unwrap().contains("either chunk_id"), "{none}");
}

#[test]
fn sessions_list_takes_no_arguments_and_names_one_given() {
    let env = home();
    cargo_and_tea_notes(&env);
    let (mut client, _) = Client::start(&env, &[]);
    let bogus = client.tool_error("sessions_list", json!({ "bogus": 1 }));
    assert_eq!(bogus["code"], "bad_input", "{bogus}");
    assert!(bogus["message"].as_str().unwrap().contains("unknown field `bogus`"), "{bogus}");
    assert!(bogus["hint"].as_str().unwrap().contains("sessions_list"), "{bogus}");
    // No arguments, or none at all, is the call it always was.
    assert_eq!(client.ok("sessions_list", json!({}))["schema_version"], "session_list.v1");
    let bare = client.request("tools/call", json!({ "name": "sessions_list" }));
    assert_eq!(bare["result"]["structuredContent"]["schema_version"], "session_list.v1", "{bare}");
}

#[test]
fn calls_succeed_while_another_process_ingests_into_the_same_database() {
    let env = home();
    cargo_and_tea_notes(&env);
    // Enough notes that the other ingest is still writing during the calls.
    for i in 0..150 {
        let body: String = (0..12).map(|s| format!("## Part {s}\n\nBulk note {i} part {s} about lanterns and wicks.\n\n")).collect();
        env.write(&format!("bulk/note-{i}.md"), format!("# Bulk {i}\n\n{body}"));
    }
    let (mut client, _) = Client::start(&env, &[]);
    let mut ingest = env
        .cmd(&["ingest", env.path("bulk").to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn kebab ingest");
    let mut calls = 0;
    // Call until the other ingest has finished, and at least a few times.
    while calls < 6 || ingest.try_wait().expect("try_wait").is_none() {
        let a = client.ok("ask", json!({ "question": "How do I create a new project with cargo?", "session": "busy" }));
        assert_eq!(a["grounded"], true, "call {calls}: {a}");
        let s = client.ok("search", json!({ "query": "green tea" }));
        assert_eq!(s["hits"][0]["citation"]["path"], "notes/tea.md", "call {calls}: {s}");
        calls += 1;
    }
    let done = ingest.wait_with_output().unwrap();
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    let list = client.ok("sessions_list", json!({}));
    assert_eq!(list["sessions"][0]["turns"], calls, "{list}");
    // The bulk notes are visible to the server once the ingest is done.
    let bulk = client.ok("search", json!({ "query": "lanterns wicks" }));
    assert!(bulk["hits"][0]["citation"]["path"].as_str().unwrap().starts_with("bulk/"), "{bulk}");
}

#[test]
fn the_lexical_only_notice_is_given_once_however_many_calls_fall_back() {
    // The default config (local embedder, hybrid) with no model files installed.
    let env = Env::new();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n");
    cargo_and_tea_notes(&env);
    let (mut client, _) = Client::start(&env, &[]);
    for query in ["cargo new", "green tea"] {
        client.ok("search", json!({ "query": query }));
    }
    client.ok("ask", json!({ "question": "How do I create a new project?" }));
    let (code, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stderr.matches("lexical search only").count(), 1, "{stderr}");
}

#[test]
fn a_command_a_tool_error_tells_the_user_to_run_names_the_servers_data_dir() {
    // "run `kebab models install`" from a server started with --data-dir D
    // installed the model under the default data dir, where the server never looks.
    let env = home();
    env.write("config/kebab/config.toml", "[llm]\nprovider = \"extractive\"\n\n[embedding]\nprovider = \"local\"\n");
    env.write("notes/tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n");
    let data = env.path("kb data");
    let (mut client, _) = Client::start(&env, &["--data-dir", data.to_str().unwrap()]);
    client.ok("ingest", json!({ "paths": [env.notes()] }));
    let err = client.tool_error("search", json!({ "query": "tea", "mode": "vector" }));
    let install = format!("run `kebab --data-dir '{}' models install`, then call the `ingest` tool", data.display());
    assert!(err["hint"].as_str().unwrap().starts_with(&install), "{err}");
}
