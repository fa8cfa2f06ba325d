//! `kebab mcp` and the database file under it while it runs: the server
//! opens the database on its first call and keeps it open, so what happens
//! to the file meanwhile (removed, replaced by a new index) must reach the
//! calls that follow, not leave them on a file no other kebab sees.

mod common;

use common::mcp_client::{Client, home};
use common::cargo_and_tea_notes;
use serde_json::json;

#[test]
fn a_database_removed_and_built_again_while_the_server_runs_is_the_one_calls_read_and_write() {
    let env = home();
    cargo_and_tea_notes(&env);
    let (mut client, _) = Client::start(&env, &[]);
    let before = client.ok("search", json!({ "query": "green tea" }));
    assert_eq!(before["hits"][0]["citation"]["path"], "notes/tea.md", "{before}");

    // Removed: the calls say nothing is indexed, as they would had the
    // server started now; they went on reading the removed file.
    env.remove_database();
    let gone = client.tool_error("search", json!({ "query": "green tea" }));
    assert_eq!(gone["code"], "no_index", "{gone}");

    // Built again by another process: the server reads the new index, and
    // its ingest writes there, where `kebab docs` sees it.
    env.write("other/coffee.md", "# Coffee\n\nEspresso is brewed under pressure.\n");
    env.ok(&["ingest", env.path("other").to_str().unwrap()]);
    let coffee = client.ok("search", json!({ "query": "espresso" }));
    assert_eq!(coffee["hits"][0]["citation"]["path"], "other/coffee.md", "{coffee}");
    let ingested = client.ok("ingest", json!({ "paths": [env.notes().to_str().unwrap()] }));
    assert_eq!(ingested["added"], 2, "{ingested}");
    let docs = env.ok(&["docs"]);
    assert!(docs.contains("notes/tea.md") && docs.contains("other/coffee.md"), "{docs}");
    let (code, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
}
