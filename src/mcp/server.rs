//! The MCP side: the six tools as `rmcp` declares them (names, descriptions,
//! input schemas from the argument types), each sent to the worker thread,
//! a failed call turned into a tool error carrying `error.v1`. What rmcp
//! cannot read or would stop on is answered before it (`lines`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::{RequestContext, ServerInitializeError};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde_json::Value;

use super::lines::Pipes;
use super::tools::{self, AskArgs, Checked, CiteArgs, IngestArgs, NoArgs, SearchArgs, SessionArgs};
use super::worker::Worker;

/// What the client is told about the server as a whole.
const INSTRUCTIONS: &str = "kebab is a local knowledge base over the user's notes. `search` finds passages; \
`ask` answers a question only from the notes, with [#n] citations checked against them, or refuses (grounded: \
false, refusal_reason) when the notes do not hold the answer; `cite` shows the exact text behind a citation. \
`ask` with a `session` name keeps a conversation the user can also open in `kebab repl`.";

#[derive(Clone)]
pub struct Server {
    worker: Arc<Worker>,
    /// `Setup::kebab`.
    kebab: Arc<str>,
    tool_router: ToolRouter<Server>,
}

/// Serves on stdin/stdout until the client closes the connection.
pub async fn run(worker: Worker, kebab: String) -> Result<()> {
    let server = Server { worker: Arc::new(worker), kebab: kebab.into(), tool_router: Server::tool_router() };
    let mut tools: Vec<String> = server.tool_router.list_all().into_iter().map(|t| t.name.to_string()).collect();
    tools.sort();
    let pipes = Pipes::open(tools);
    let served = match server.serve((pipes.to_rmcp, pipes.from_rmcp)).await {
        Ok(service) => service.waiting().await.map(|_| ()).map_err(anyhow::Error::from),
        // The client hung up before the handshake (it gave up, or only pinged):
        // the end of a session like any other, not a failure of the server.
        Err(ServerInitializeError::ConnectionClosed(_)) => Ok(()),
        Err(e) => Err(e.into()),
    };
    // Stdin may still be open; what rmcp wrote is printed to the end, even
    // when the handshake failed (its error reply included).
    pipes.reader.abort();
    let _ = pipes.printer.await;
    served
}

#[tool_router]
impl Server {
    #[tool(description = "Search the indexed notes. Returns search_response.v1: ranked search_hit.v1 hits, each with \
        chunk_id, a snippet (matched terms between « and ») and a citation {path, start, end, section}.")]
    async fn search(&self, params: Parameters<Checked<SearchArgs>>) -> Result<CallToolResult, ErrorData> {
        Ok(self.result(self.worker.call(move |state| tools::search(state, params.0.get("search")?)).await))
    }

    #[tool(description = "Ask a question answered only from the notes. Returns answer.v1: the answer with [#n] \
        markers and their citations, grounded true; or a refusal (grounded false, refusal_reason) when the notes do \
        not hold the answer. Pass a session name to ask a follow-up in a saved conversation; on read-only data the \
        turn is not saved, and not_saved says so.")]
    async fn ask(&self, params: Parameters<Checked<AskArgs>>, context: RequestContext<RoleServer>) -> Result<CallToolResult, ErrorData> {
        // A client's cancellation stops the model as Ctrl-C does on the command line.
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = cancel.clone();
        let ct = context.ct.clone();
        let watch = tokio::spawn(async move {
            ct.cancelled().await;
            flag.store(true, Ordering::SeqCst);
        });
        let outcome = self.worker.call(move |state| tools::ask(state, params.0.get("ask")?, &cancel)).await;
        watch.abort();
        Ok(self.result(outcome))
    }

    #[tool(description = "The exact evidence text behind a citation, with its path, lines and heading, and whether \
        the note changed since (evidence.v1). Give chunk_id (from a search hit or an answer's citation), or session, \
        turn (from 1) and n (the [#n] of that turn's answer).")]
    async fn cite(&self, params: Parameters<Checked<CiteArgs>>) -> Result<CallToolResult, ErrorData> {
        Ok(self.result(self.worker.call(move |state| tools::cite(state, params.0.get("cite")?)).await))
    }

    #[tool(description = "The saved conversations, most recently used first (session_list.v1).")]
    async fn sessions_list(&self, params: Parameters<Checked<NoArgs>>) -> Result<CallToolResult, ErrorData> {
        Ok(self.result(self.worker.call(move |state| tools::sessions_list(state, params.0.get("sessions_list")?)).await))
    }

    #[tool(description = "One saved conversation with every turn's question and answer.v1 answer (session.v1).")]
    async fn session_show(&self, params: Parameters<Checked<SessionArgs>>) -> Result<CallToolResult, ErrorData> {
        Ok(self.result(self.worker.call(move |state| tools::session_show(state, params.0.get("session_show")?)).await))
    }

    #[tool(description = "Index notes (Markdown, plain text, HTML, PDF, JSONL) from files or folders: changed files are \
        re-chunked and embedded, unchanged ones skipped. Returns the ingest summary. Refused when the server runs \
        with --readonly.")]
    async fn ingest(&self, params: Parameters<Checked<IngestArgs>>) -> Result<CallToolResult, ErrorData> {
        Ok(self.result(self.worker.call(move |state| tools::ingest(state, params.0.get("ingest")?)).await))
    }
}

impl Server {
    /// A call's result: its document, or the `error.v1` of its failure as a
    /// tool error (the client shows it; a protocol error it would hide), its
    /// hint naming the tool to call where the command line would run a command
    /// (and a command with no tool, `kebab models install`, the server's --config and --data-dir).
    fn result(&self, outcome: Result<Value>) -> CallToolResult {
        match outcome {
            Ok(doc) => CallToolResult::structured(doc),
            Err(err) => {
                let mut doc = crate::render::failure::classify_for(&err, crate::render::hint::FrontEnd::Mcp).doc;
                doc.hint = doc.hint.map(|h| crate::render::hint::as_run(&h, &self.kebab));
                // An `ErrorDoc` always serializes; the fallback keeps the message if not.
                let value = serde_json::to_value(&doc).unwrap_or_else(|_| serde_json::json!({ "message": doc.message }));
                CallToolResult::structured_error(value)
            }
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("kebab", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}
