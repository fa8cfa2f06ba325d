//! The tools' input schemas as `tools/list` gives them, spoken over the
//! protocol to the real binary: what a schema says a numeric argument may
//! be is what the tool accepts, so a client that follows the schema is never
//! refused, and one that checks against it catches what would be.

mod common;

use std::collections::BTreeMap;

use common::cargo_and_tea_notes;
use common::mcp_client::{Client, home};
use serde_json::{Value, json};

#[test]
fn every_numeric_argument_in_tools_list_allows_just_the_numbers_its_tool_accepts() {
    // `k` said "minimum": 0, yet `"k": 0` is refused (k must be at least 1),
    // and said no maximum, yet 10001 is refused; cite's `turn` and `n`,
    // numbered from 1, said 0 too, and its `chunk_id`, from 1 too, no minimum.
    let env = home();
    cargo_and_tea_notes(&env);
    let (mut client, _) = Client::start(&env, &[]);
    let list = client.request("tools/list", json!({}));
    let mut ranges = BTreeMap::new();
    for tool in list["result"]["tools"].as_array().unwrap_or_else(|| panic!("{list}")) {
        // sessions_list takes no arguments: its schema has no properties.
        for (arg, schema) in tool["inputSchema"]["properties"].as_object().into_iter().flatten() {
            if schema["type"].to_string().contains("integer") {
                let range = (schema["minimum"].clone(), schema["maximum"].clone());
                ranges.insert(format!("{}.{arg}", tool["name"].as_str().unwrap()), range);
            }
        }
    }
    let expected = [
        ("ask.k", (json!(1), json!(10_000))),
        ("cite.chunk_id", (json!(1), Value::Null)),
        ("cite.n", (json!(1), Value::Null)),
        ("cite.turn", (json!(1), Value::Null)),
        ("search.k", (json!(1), json!(10_000))),
    ];
    assert_eq!(ranges, expected.into_iter().map(|(a, r)| (a.to_string(), r)).collect(), "{list}");
    // The tools take the bounds and refuse what lies past them.
    client.ok("ask", json!({ "question": "How do I create a new project with cargo?", "session": "s" }));
    for k in [1, 10_000] {
        client.ok("search", json!({ "query": "tea", "k": k }));
        client.ok("ask", json!({ "question": "What is green tea?", "k": k }));
    }
    for (k, says) in [(0, "k must be at least 1"), (10_001, "k must be at most 10000")] {
        assert_eq!(client.tool_error("search", json!({ "query": "tea", "k": k }))["message"], says);
        assert_eq!(client.tool_error("ask", json!({ "question": "What is green tea?", "k": k }))["message"], says);
    }
    let cited = client.ok("cite", json!({ "session": "s", "turn": 1, "n": 1 }));
    assert_eq!(cited["schema_version"], "evidence.v1", "{cited}");
    for (turn, n) in [(0, 1), (1, 0)] {
        let err = client.tool_error("cite", json!({ "session": "s", "turn": turn, "n": n }));
        assert_eq!(err["code"], "not_found", "turn {turn}, n {n}: {err}");
    }
    let first = cited["chunk_id"].as_i64().unwrap();
    assert_eq!(client.ok("cite", json!({ "chunk_id": first }))["chunk_id"], first);
    for id in [0, -1] {
        assert_eq!(client.tool_error("cite", json!({ "chunk_id": id }))["code"], "not_found", "chunk_id {id}");
    }
}
