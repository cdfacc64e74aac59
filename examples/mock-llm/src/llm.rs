//! LLM API routing and deterministic response generation (OpenAI, Anthropic,
//! Gemini shapes).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::http::query_param;

/// Fixed `created` timestamp so responses are deterministic.
const CREATED: u64 = 1_700_000_000;
/// Model name used when a request does not name one.
const FALLBACK_MODEL: &str = "mock-model";
/// Content chunks in a generated stream unless a step sets `chunks`.
pub const DEFAULT_CHUNKS: usize = 3;
/// Models always listed by `GET /v1/models`.
const DEFAULT_MODELS: &[&str] = &[
    "gpt-4o",
    "gpt-4o-mini",
    "claude-3-5-sonnet-latest",
    "gemini-1.5-flash",
];

/// Which API a request addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    OpenAiChat,
    OpenAiCompletions,
    OpenAiEmbeddings,
    AnthropicMessages,
    /// `:generateContent` (stream false) or `:streamGenerateContent`.
    Gemini {
        stream: bool,
        sse: bool,
    },
    Models,
    NotFound,
}

impl Api {
    fn family(self) -> Family {
        match self {
            Api::AnthropicMessages => Family::Anthropic,
            Api::Gemini { .. } => Family::Gemini,
            _ => Family::OpenAi,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    OpenAi,
    Anthropic,
    Gemini,
}

/// What the mock needs to know about a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteInfo {
    pub api: Api,
    pub model: Option<String>,
    pub stream: bool,
    pub include_usage: bool,
    /// Number of inputs for embeddings (1 otherwise).
    pub inputs: usize,
    /// Set when a JSON body was expected but could not be parsed.
    pub body_error: Option<String>,
}

impl RouteInfo {
    /// True when [`generate`] answers this request with a stream.
    pub fn streams(&self) -> bool {
        self.stream
            && self.body_error.is_none()
            && matches!(
                self.api,
                Api::OpenAiChat
                    | Api::OpenAiCompletions
                    | Api::AnthropicMessages
                    | Api::Gemini { .. }
            )
    }
}

/// Only the fields the mock reads; everything else is skipped.
#[derive(Deserialize)]
struct BodyFields {
    model: Option<Value>,
    stream: Option<Value>,
    stream_options: Option<StreamOptions>,
    input: Option<Value>,
}

#[derive(Deserialize)]
struct StreamOptions {
    include_usage: Option<Value>,
}

/// Classifies a request by method and path and reads the model and stream
/// flags (from the JSON body, or from the path for Gemini).
pub fn classify(method: &str, path: &str, query: &str, body: &[u8]) -> RouteInfo {
    let mut info = RouteInfo {
        api: Api::NotFound,
        model: None,
        stream: false,
        include_usage: false,
        inputs: 1,
        body_error: None,
    };
    if method == "GET" {
        if path == "/v1/models" {
            info.api = Api::Models;
        }
        return info;
    }
    if method != "POST" {
        return info;
    }
    info.api = match path {
        "/v1/chat/completions" => Api::OpenAiChat,
        "/v1/completions" => Api::OpenAiCompletions,
        "/v1/embeddings" => Api::OpenAiEmbeddings,
        "/v1/messages" => Api::AnthropicMessages,
        _ => {
            if let Some((model, stream)) = gemini_target(path) {
                info.model = Some(model.to_string());
                info.stream = stream;
                info.api = Api::Gemini {
                    stream,
                    sse: stream && query_param(query, "alt") == Some("sse"),
                };
            } else if let Ok(BodyFields {
                model: Some(Value::String(model)),
                ..
            }) = serde_json::from_slice::<BodyFields>(body)
            {
                // Other endpoints (assistants, batches, ...) answer 404 unless scripted; their
                // top-level `model`, when there is one, selects the script.
                info.model = Some(model);
            }
            return info;
        }
    };
    match serde_json::from_slice::<BodyFields>(body) {
        Ok(fields) => {
            if let Some(Value::String(model)) = fields.model {
                info.model = Some(model);
            }
            info.stream = matches!(fields.stream, Some(Value::Bool(true)));
            info.include_usage = info.stream
                && matches!(
                    fields.stream_options.and_then(|o| o.include_usage),
                    Some(Value::Bool(true))
                );
            if info.api == Api::OpenAiEmbeddings {
                if let Some(Value::Array(items)) = &fields.input {
                    // An array of strings (or of token arrays) is a batch.
                    if items.iter().all(|i| i.is_string() || i.is_array()) {
                        info.inputs = items.len();
                    }
                }
            }
        }
        Err(e) => info.body_error = Some(format!("invalid JSON body: {e}")),
    }
    info
}

/// `/v1beta/models/{model}:{action}` (or `/v1/...`) → (model, stream).
fn gemini_target(path: &str) -> Option<(&str, bool)> {
    let rest = path
        .strip_prefix("/v1beta/models/")
        .or_else(|| path.strip_prefix("/v1/models/"))?;
    let (model, action) = rest.rsplit_once(':')?;
    if model.is_empty() || model.contains('/') {
        return None;
    }
    match action {
        "generateContent" => Some((model, false)),
        "streamGenerateContent" => Some((model, true)),
        _ => None,
    }
}

/// A response body ready to be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// Sent with `content-length`.
    Full {
        content_type: &'static str,
        bytes: Vec<u8>,
    },
    /// Sent with `transfer-encoding: chunked`, one chunk per frame.
    Stream {
        content_type: &'static str,
        frames: Vec<Vec<u8>>,
    },
}

/// A generated response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    pub status: u16,
    pub body: Body,
}

/// Inputs to response generation.
#[derive(Debug, Clone, Copy)]
pub struct GenParams<'a> {
    pub seq: u64,
    /// Content chunks for generated streams.
    pub chunks: usize,
    /// Request body length, for token counts.
    pub body_len: usize,
    pub method: &'a str,
    pub path: &'a str,
    /// Prompt tokens reported as cached (OpenAI `prompt_tokens_details.cached_tokens`,
    /// Anthropic `cache_read_input_tokens`, which is counted beside `input_tokens`).
    pub cached_tokens: u64,
}

/// The reply text split into `n` stream pieces: "Hello", " from",
/// " <model>", then " more" repeated; fewer than 3 pieces merge the tail.
pub fn reply_pieces(model: &str, n: usize) -> Vec<String> {
    let mut words = vec![
        "Hello".to_string(),
        " from".to_string(),
        format!(" {model}"),
    ];
    while words.len() < n {
        words.push(" more".to_string());
    }
    if n == 0 {
        return Vec::new();
    }
    if n < words.len() {
        let tail: String = words.drain(n - 1..).collect();
        words.push(tail);
    }
    words
}

/// Serializes `value` as JSON. Serializing these plain data types cannot
/// fail; an empty body would be the (unreachable) fallback.
fn to_json<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_default()
}

fn json_body<T: Serialize + ?Sized>(status: u16, value: &T) -> Generated {
    Generated {
        status,
        body: Body::Full {
            content_type: "application/json",
            bytes: to_json(value),
        },
    }
}

fn sse_data<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut frame = b"data: ".to_vec();
    frame.extend_from_slice(&to_json(value));
    frame.extend_from_slice(b"\n\n");
    frame
}

fn sse_event<T: Serialize + ?Sized>(event: &str, value: &T) -> Vec<u8> {
    let mut frame = format!("event: {event}\ndata: ").into_bytes();
    frame.extend_from_slice(&to_json(value));
    frame.extend_from_slice(b"\n\n");
    frame
}

fn event_stream(frames: Vec<Vec<u8>>) -> Generated {
    Generated {
        status: 200,
        body: Body::Stream {
            content_type: "text/event-stream",
            frames,
        },
    }
}

/// Generates the normal response for a request. `models` is the list for
/// `GET /v1/models` (ignored otherwise).
pub fn generate(info: &RouteInfo, p: &GenParams<'_>, models: &[String]) -> Generated {
    if let Some(err) = &info.body_error {
        return error_response(info.api, 400, err);
    }
    let model = info.model.as_deref().unwrap_or(FALLBACK_MODEL);
    let prompt_tokens = (p.body_len / 4).max(1) as u64;
    match info.api {
        Api::OpenAiChat => openai_chat(info, p, model, prompt_tokens),
        Api::OpenAiCompletions => openai_completions(info, p, model, prompt_tokens),
        Api::OpenAiEmbeddings => openai_embeddings(info, model, prompt_tokens),
        Api::AnthropicMessages => anthropic_messages(info, p, model, prompt_tokens),
        Api::Gemini { stream, sse } => gemini(stream, sse, p, model, prompt_tokens),
        Api::Models => models_list(models),
        Api::NotFound => json_body(
            404,
            &json!({"error": {
                "message": format!("mock-llm: no route for {} {}", p.method, p.path),
                "type": "invalid_request_error",
                "code": "not_found",
            }}),
        ),
    }
}

#[derive(Serialize)]
struct OpenAiUsage {
    prompt_tokens: u64,
    completion_tokens: u64,
    total_tokens: u64,
    /// As the real API sends it on every answer (zeros when nothing was cached).
    prompt_tokens_details: PromptDetails,
}

#[derive(Serialize)]
struct PromptDetails {
    cached_tokens: u64,
    audio_tokens: u64,
}

fn openai_usage(prompt: u64, completion: u64, cached: u64) -> OpenAiUsage {
    OpenAiUsage {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
        prompt_tokens_details: PromptDetails {
            cached_tokens: cached.min(prompt),
            audio_tokens: 0,
        },
    }
}

#[derive(Serialize)]
struct ChatCompletion<'a> {
    id: &'a str,
    object: &'static str,
    created: u64,
    model: &'a str,
    choices: [ChatChoice<'a>; 1],
    usage: OpenAiUsage,
}

#[derive(Serialize)]
struct ChatChoice<'a> {
    index: u32,
    message: ChatMessage<'a>,
    logprobs: (),
    finish_reason: &'static str,
}

#[derive(Serialize)]
struct ChatMessage<'a> {
    role: &'static str,
    content: &'a str,
}

#[derive(Serialize)]
struct ChatChunk<'a> {
    id: &'a str,
    object: &'static str,
    created: u64,
    model: &'a str,
    choices: &'a [ChunkChoice<'a>],
    /// Absent without include_usage; null on ordinary chunks with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<Option<OpenAiUsage>>,
}

#[derive(Serialize)]
struct ChunkChoice<'a> {
    index: u32,
    delta: Delta<'a>,
    logprobs: (),
    finish_reason: Option<&'static str>,
}

#[derive(Serialize)]
struct Delta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<&'a str>,
}

fn openai_chat(info: &RouteInfo, p: &GenParams<'_>, model: &str, prompt: u64) -> Generated {
    let id = format!("chatcmpl-mock-{}", p.seq);
    if !info.stream {
        let pieces = reply_pieces(model, DEFAULT_CHUNKS);
        return json_body(
            200,
            &ChatCompletion {
                id: &id,
                object: "chat.completion",
                created: CREATED,
                model,
                choices: [ChatChoice {
                    index: 0,
                    message: ChatMessage {
                        role: "assistant",
                        content: &pieces.concat(),
                    },
                    logprobs: (),
                    finish_reason: "stop",
                }],
                usage: openai_usage(prompt, pieces.len() as u64, p.cached_tokens),
            },
        );
    }
    let pieces = reply_pieces(model, p.chunks);
    let chunk = |choices: &[ChunkChoice<'_>], usage: Option<Option<OpenAiUsage>>| {
        sse_data(&ChatChunk {
            id: &id,
            object: "chat.completion.chunk",
            created: CREATED,
            model,
            choices,
            usage,
        })
    };
    let null_usage = || info.include_usage.then_some(None);
    let choice = |role, content, finish_reason| ChunkChoice {
        index: 0,
        delta: Delta { role, content },
        logprobs: (),
        finish_reason,
    };
    let mut frames = Vec::with_capacity(pieces.len() + 4);
    frames.push(chunk(
        &[choice(Some("assistant"), Some(""), None)],
        null_usage(),
    ));
    for piece in &pieces {
        frames.push(chunk(&[choice(None, Some(piece), None)], null_usage()));
    }
    frames.push(chunk(&[choice(None, None, Some("stop"))], null_usage()));
    if info.include_usage {
        let usage = openai_usage(prompt, pieces.len() as u64, p.cached_tokens);
        frames.push(chunk(&[], Some(Some(usage))));
    }
    frames.push(b"data: [DONE]\n\n".to_vec());
    event_stream(frames)
}

fn openai_completions(info: &RouteInfo, p: &GenParams<'_>, model: &str, prompt: u64) -> Generated {
    let id = format!("cmpl-mock-{}", p.seq);
    let object = |choices: Value| json!({"id": id, "object": "text_completion", "created": CREATED, "model": model, "choices": choices});
    if !info.stream {
        let pieces = reply_pieces(model, DEFAULT_CHUNKS);
        let mut v = object(json!([{
            "text": pieces.concat(), "index": 0, "logprobs": null, "finish_reason": "stop",
        }]));
        v["usage"] = json!(openai_usage(prompt, pieces.len() as u64, p.cached_tokens));
        return json_body(200, &v);
    }
    let pieces = reply_pieces(model, p.chunks);
    let mut frames = Vec::with_capacity(pieces.len() + 3);
    for piece in &pieces {
        frames.push(sse_data(&object(json!([{
            "text": piece, "index": 0, "logprobs": null, "finish_reason": null,
        }]))));
    }
    frames.push(sse_data(&object(json!([{
        "text": "", "index": 0, "logprobs": null, "finish_reason": "stop",
    }]))));
    if info.include_usage {
        let mut v = object(json!([]));
        v["usage"] = json!(openai_usage(prompt, pieces.len() as u64, p.cached_tokens));
        frames.push(sse_data(&v));
    }
    frames.push(b"data: [DONE]\n\n".to_vec());
    event_stream(frames)
}

fn openai_embeddings(info: &RouteInfo, model: &str, prompt: u64) -> Generated {
    let data: Vec<Value> = (0..info.inputs)
        .map(|i| {
            let embedding: Vec<f64> = (0..8)
                .map(|k| ((i * 8 + k) % 16) as f64 / 16.0 - 0.5)
                .collect();
            json!({"object": "embedding", "index": i, "embedding": embedding})
        })
        .collect();
    json_body(
        200,
        &json!({
            "object": "list",
            "data": data,
            "model": model,
            "usage": {"prompt_tokens": prompt, "total_tokens": prompt},
        }),
    )
}

#[derive(Serialize)]
struct AnthropicMessage<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    role: &'static str,
    model: &'a str,
    content: [TextBlock<'a>; 1],
    stop_reason: &'static str,
    stop_sequence: (),
    usage: AnthropicUsage,
}

#[derive(Serialize)]
struct TextBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

#[derive(Serialize)]
struct AnthropicUsage {
    input_tokens: u64,
    output_tokens: u64,
    cache_creation_input_tokens: u64,
    cache_read_input_tokens: u64,
}

/// Anthropic counts cache reads beside `input_tokens`, not in it.
fn anthropic_usage(prompt: u64, output: u64, cached: u64) -> AnthropicUsage {
    let cached = cached.min(prompt);
    AnthropicUsage {
        input_tokens: prompt - cached,
        output_tokens: output,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: cached,
    }
}

fn anthropic_messages(info: &RouteInfo, p: &GenParams<'_>, model: &str, prompt: u64) -> Generated {
    let id = format!("msg_mock_{}", p.seq);
    if !info.stream {
        let pieces = reply_pieces(model, DEFAULT_CHUNKS);
        return json_body(
            200,
            &AnthropicMessage {
                id: &id,
                kind: "message",
                role: "assistant",
                model,
                content: [TextBlock {
                    kind: "text",
                    text: &pieces.concat(),
                }],
                stop_reason: "end_turn",
                stop_sequence: (),
                usage: anthropic_usage(prompt, pieces.len() as u64, p.cached_tokens),
            },
        );
    }
    let pieces = reply_pieces(model, p.chunks);
    let mut frames = Vec::with_capacity(pieces.len() + 5);
    frames.push(sse_event(
        "message_start",
        &MessageStart {
            kind: "message_start",
            message: StartMessage {
                id: &id,
                kind: "message",
                role: "assistant",
                model,
                content: [],
                stop_reason: (),
                stop_sequence: (),
                usage: anthropic_usage(prompt, 1, p.cached_tokens),
            },
        },
    ));
    frames.push(sse_event(
        "content_block_start",
        &BlockEvent {
            kind: "content_block_start",
            index: 0,
            content_block: Some(TextBlock {
                kind: "text",
                text: "",
            }),
            delta: None,
        },
    ));
    for piece in &pieces {
        frames.push(sse_event(
            "content_block_delta",
            &BlockEvent {
                kind: "content_block_delta",
                index: 0,
                content_block: None,
                delta: Some(TextBlock {
                    kind: "text_delta",
                    text: piece,
                }),
            },
        ));
    }
    frames.push(sse_event(
        "content_block_stop",
        &BlockEvent {
            kind: "content_block_stop",
            index: 0,
            content_block: None,
            delta: None,
        },
    ));
    frames.push(sse_event(
        "message_delta",
        &MessageDelta {
            kind: "message_delta",
            delta: StopDelta {
                stop_reason: "end_turn",
                stop_sequence: (),
            },
            usage: OutputUsage {
                output_tokens: pieces.len() as u64,
            },
        },
    ));
    frames.push(sse_event(
        "message_stop",
        &MessageStop {
            kind: "message_stop",
        },
    ));
    event_stream(frames)
}

#[derive(Serialize)]
struct MessageStart<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    message: StartMessage<'a>,
}

#[derive(Serialize)]
struct StartMessage<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    role: &'static str,
    model: &'a str,
    content: [(); 0],
    stop_reason: (),
    stop_sequence: (),
    usage: AnthropicUsage,
}

/// content_block_start / content_block_delta / content_block_stop.
#[derive(Serialize)]
struct BlockEvent<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    index: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    content_block: Option<TextBlock<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delta: Option<TextBlock<'a>>,
}

#[derive(Serialize)]
struct MessageDelta {
    #[serde(rename = "type")]
    kind: &'static str,
    delta: StopDelta,
    usage: OutputUsage,
}

#[derive(Serialize)]
struct StopDelta {
    stop_reason: &'static str,
    stop_sequence: (),
}

#[derive(Serialize)]
struct OutputUsage {
    output_tokens: u64,
}

#[derive(Serialize)]
struct MessageStop {
    #[serde(rename = "type")]
    kind: &'static str,
}

fn gemini(stream: bool, sse: bool, p: &GenParams<'_>, model: &str, prompt: u64) -> Generated {
    let candidate = |text: &str, last: bool| {
        let mut c = json!({"content": {"parts": [{"text": text}], "role": "model"}, "index": 0});
        if last {
            c["finishReason"] = json!("STOP");
        }
        c
    };
    let usage = |completion: usize| {
        json!({"promptTokenCount": prompt, "candidatesTokenCount": completion,
               "totalTokenCount": prompt + completion as u64})
    };
    if !stream {
        let pieces = reply_pieces(model, DEFAULT_CHUNKS);
        return json_body(
            200,
            &json!({
                "candidates": [candidate(&pieces.concat(), true)],
                "usageMetadata": usage(pieces.len()),
                "modelVersion": model,
            }),
        );
    }
    let mut pieces = reply_pieces(model, p.chunks);
    if pieces.is_empty() {
        pieces.push(String::new());
    }
    let completion = pieces.len();
    // Like Gemini, every chunk carries usageMetadata (running totals), so a
    // stream cut short still reports the prompt tokens.
    let objects = pieces.iter().enumerate().map(|(i, piece)| {
        let last = i + 1 == completion;
        json!({"candidates": [candidate(piece, last)], "usageMetadata": usage(i + 1),
               "modelVersion": model})
    });
    if sse {
        return event_stream(objects.map(|v| sse_data(&v)).collect());
    }
    // Without alt=sse Gemini streams one JSON array, element by element.
    let mut frames: Vec<Vec<u8>> = objects
        .enumerate()
        .map(|(i, v)| format!("{}{v}", if i == 0 { "[" } else { ",\r\n" }).into_bytes())
        .collect();
    frames.push(b"]".to_vec());
    Generated {
        status: 200,
        body: Body::Stream {
            content_type: "application/json",
            frames,
        },
    }
}

#[derive(Serialize)]
struct ModelList<'a> {
    object: &'static str,
    data: Vec<ModelEntry<'a>>,
}

#[derive(Serialize)]
struct ModelEntry<'a> {
    id: &'a str,
    object: &'static str,
    created: u64,
    owned_by: &'static str,
}

fn models_list(models: &[String]) -> Generated {
    let mut names: Vec<&str> = DEFAULT_MODELS.to_vec();
    names.extend(models.iter().map(String::as_str));
    names.sort_unstable();
    names.dedup();
    let data = names
        .into_iter()
        .map(|id| ModelEntry {
            id,
            object: "model",
            created: CREATED,
            owned_by: "mock-llm",
        })
        .collect();
    json_body(
        200,
        &ModelList {
            object: "list",
            data,
        },
    )
}

/// Frames before the first content chunk of a generated stream (OpenAI chat:
/// the role chunk; Anthropic: message_start and content_block_start).
fn content_offset(api: Api) -> usize {
    match api {
        Api::OpenAiChat => 1,
        Api::AnthropicMessages => 2,
        _ => 0,
    }
}

/// Default mid-stream error objects: OpenAI's from fixture
/// openai-sse-200-chat-stream-server-error (without its stray `)`),
/// Anthropic's streaming docs example, Gemini's 503 overload.
const OPENAI_STREAM_ERROR: &[u8] = br#"{"message":"The server experienced an error while processing your request. We apologize for the inconvenience!","type":"server_error","param":null,"code":null}"#;
const ANTHROPIC_STREAM_ERROR: &[u8] = br#"{"type":"overloaded_error","message":"Overloaded"}"#;
const GEMINI_STREAM_ERROR: &[u8] =
    br#"{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}"#;

/// Cuts a generated stream of `chunks` content pieces after `after` of them
/// (0: before the very first event) and ends it with an error event in the
/// endpoint family's form, carrying `error` (a serialized error object; the
/// family's overload error when None). Nothing follows the error: no
/// `[DONE]`, no `message_stop` (only Gemini's JSON array is still closed
/// with `]` after its error element).
pub fn cut_stream(
    api: Api,
    frames: &mut Vec<Vec<u8>>,
    chunks: usize,
    after: usize,
    error: Option<&[u8]>,
) {
    let content = match api {
        Api::Gemini { .. } => chunks.max(1),
        _ => chunks,
    };
    let keep = if after == 0 {
        0
    } else {
        content_offset(api) + after.min(content)
    };
    frames.truncate(keep);
    let frame = |prefix: &[u8], object: &[u8], suffix: &[u8]| [prefix, object, suffix].concat();
    match api {
        Api::AnthropicMessages => frames.push(frame(
            b"event: error\ndata: {\"type\":\"error\",\"error\":",
            error.unwrap_or(ANTHROPIC_STREAM_ERROR),
            b"}\n\n",
        )),
        Api::Gemini { sse: false, .. } => {
            let sep: &[u8] = if frames.is_empty() { b"[" } else { b",\r\n" };
            frames.push(frame(
                &[sep, b"{\"error\":"].concat(),
                error.unwrap_or(GEMINI_STREAM_ERROR),
                b"}",
            ));
            frames.push(b"]".to_vec());
        }
        Api::Gemini { sse: true, .. } => frames.push(frame(
            b"data: {\"error\":",
            error.unwrap_or(GEMINI_STREAM_ERROR),
            b"}\n\n",
        )),
        _ => frames.push(frame(
            b"data: {\"error\":",
            error.unwrap_or(OPENAI_STREAM_ERROR),
            b"}\n\n",
        )),
    }
}

/// A provider-shaped JSON error body for `status`, used for scripted error
/// statuses without a body and for unparseable request bodies.
pub fn error_response(api: Api, status: u16, message: &str) -> Generated {
    let value = match api.family() {
        Family::OpenAi => {
            let (kind, code) = match status {
                401 => ("invalid_request_error", json!("invalid_api_key")),
                403 => ("permission_error", Value::Null),
                404 => ("invalid_request_error", json!("not_found")),
                429 => ("requests", json!("rate_limit_exceeded")),
                500..=599 => ("server_error", Value::Null),
                _ => ("invalid_request_error", Value::Null),
            };
            json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
        }
        Family::Anthropic => {
            let kind = match status {
                401 => "authentication_error",
                403 => "permission_error",
                404 => "not_found_error",
                413 => "request_too_large",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                500..=599 => "api_error",
                _ => "invalid_request_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
        Family::Gemini => {
            let kind = match status {
                400 => "INVALID_ARGUMENT",
                401 => "UNAUTHENTICATED",
                403 => "PERMISSION_DENIED",
                404 => "NOT_FOUND",
                429 => "RESOURCE_EXHAUSTED",
                499 => "CANCELLED",
                501 => "UNIMPLEMENTED",
                503 => "UNAVAILABLE",
                504 => "DEADLINE_EXCEEDED",
                500..=599 => "INTERNAL",
                _ => "FAILED_PRECONDITION",
            };
            json!({"error": {"code": status, "message": message, "status": kind}})
        }
    };
    json_body(status, &value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(chunks: usize) -> GenParams<'static> {
        GenParams {
            seq: 7,
            chunks,
            body_len: 40,
            method: "POST",
            path: "/x",
            cached_tokens: 0,
        }
    }

    fn full_json(g: &Generated) -> Value {
        match &g.body {
            Body::Full { bytes, .. } => serde_json::from_slice(bytes).unwrap(),
            Body::Stream { .. } => panic!("expected a full body"),
        }
    }

    fn frames(g: &Generated) -> Vec<String> {
        match &g.body {
            Body::Stream { frames, .. } => frames
                .iter()
                .map(|f| String::from_utf8(f.clone()).unwrap())
                .collect(),
            Body::Full { .. } => panic!("expected a stream"),
        }
    }

    #[test]
    fn classify_reads_body_fields() {
        let info = classify(
            "POST",
            "/v1/chat/completions",
            "",
            br#"{"messages":[{"role":"user","content":"hi"}],"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"extra":{"model":"no"}}"#,
        );
        assert_eq!(info.api, Api::OpenAiChat);
        assert_eq!(info.model.as_deref(), Some("gpt-4o"));
        assert!(info.stream && info.include_usage);
        let info = classify("POST", "/v1/messages", "", b"not json");
        assert!(info.body_error.is_some());
        let info = classify(
            "POST",
            "/v1beta/models/gemini-1.5-pro:streamGenerateContent",
            "alt=sse",
            b"",
        );
        assert_eq!(
            info.api,
            Api::Gemini {
                stream: true,
                sse: true
            }
        );
        assert_eq!(info.model.as_deref(), Some("gemini-1.5-pro"));
        assert!(info.stream && info.body_error.is_none());
        assert_eq!(classify("GET", "/v1/models", "", b"").api, Api::Models);
        assert_eq!(
            classify("GET", "/v1/chat/completions", "", b"").api,
            Api::NotFound
        );
        let info = classify(
            "POST",
            "/v1/embeddings",
            "",
            br#"{"model":"e","input":["a","b"]}"#,
        );
        assert_eq!(info.inputs, 2);
    }

    #[test]
    fn pieces() {
        assert_eq!(reply_pieces("m", 3), vec!["Hello", " from", " m"]);
        assert_eq!(reply_pieces("m", 1), vec!["Hello from m"]);
        assert_eq!(reply_pieces("m", 2), vec!["Hello", " from m"]);
        assert_eq!(reply_pieces("m", 5).concat(), "Hello from m more more");
        assert!(reply_pieces("m", 0).is_empty());
    }

    #[test]
    fn chat_non_stream_and_stream() {
        let mut info = classify("POST", "/v1/chat/completions", "", br#"{"model":"gpt-4o"}"#);
        let v = full_json(&generate(&info, &params(3), &[]));
        assert_eq!(v["object"], "chat.completion");
        assert_eq!(v["model"], "gpt-4o");
        assert_eq!(v["choices"][0]["message"]["content"], "Hello from gpt-4o");
        assert_eq!(v["usage"]["prompt_tokens"], 10);
        info.stream = true;
        info.include_usage = true;
        let f = frames(&generate(&info, &params(4), &[]));
        assert_eq!(f.len(), 1 + 4 + 1 + 1 + 1);
        assert!(f[0].starts_with("data: {") && f[0].ends_with("}\n\n"));
        let last_json: Value = serde_json::from_str(&f[6]["data: ".len()..]).unwrap();
        assert_eq!(last_json["usage"]["completion_tokens"], 4);
        assert_eq!(f[7], "data: [DONE]\n\n");
    }

    #[test]
    fn anthropic_stream_sequence() {
        let info = classify(
            "POST",
            "/v1/messages",
            "",
            br#"{"model":"claude","stream":true}"#,
        );
        let f = frames(&generate(&info, &params(2), &[]));
        let events: Vec<&str> = f
            .iter()
            .map(|s| s.lines().next().unwrap().trim_start_matches("event: "))
            .collect();
        assert_eq!(
            events,
            vec![
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
    }

    #[test]
    fn streams_predicts_generate() {
        let cases: &[(&str, &str, &str, &[u8])] = &[
            ("POST", "/v1/chat/completions", "", br#"{"stream":true}"#),
            ("POST", "/v1/chat/completions", "", br#"{"stream":false}"#),
            ("POST", "/v1/completions", "", br#"{"stream":true}"#),
            (
                "POST",
                "/v1/embeddings",
                "",
                br#"{"stream":true,"input":"x"}"#,
            ),
            ("POST", "/v1/messages", "", br#"{"stream":true}"#),
            ("POST", "/v1/messages", "", b"{bad json"),
            (
                "POST",
                "/v1beta/models/g:streamGenerateContent",
                "alt=sse",
                b"",
            ),
            ("POST", "/v1beta/models/g:streamGenerateContent", "", b""),
            ("POST", "/v1beta/models/g:generateContent", "", b""),
            ("GET", "/v1/models", "", b""),
            ("POST", "/v1/assistants", "", br#"{"stream":true}"#),
        ];
        for (method, path, query, body) in cases {
            let info = classify(method, path, query, body);
            let is_stream = matches!(generate(&info, &params(3), &[]).body, Body::Stream { .. });
            assert_eq!(info.streams(), is_stream, "{method} {path} {query}");
        }
    }

    fn cut(
        path: &str,
        query: &str,
        body: &[u8],
        after: usize,
        error: Option<&[u8]>,
    ) -> Vec<String> {
        let info = classify("POST", path, query, body);
        let mut g = generate(&info, &params(3), &[]);
        let Body::Stream { frames, .. } = &mut g.body else {
            panic!("expected a stream");
        };
        cut_stream(info.api, frames, 3, after, error);
        self::frames(&g)
    }

    #[test]
    fn stream_errors_in_each_family() {
        let anthropic = cut("/v1/messages", "", br#"{"stream":true}"#, 2, None);
        assert_eq!(anthropic.len(), 5);
        assert!(
            anthropic[0].contains(r#""input_tokens":10"#),
            "{}",
            anthropic[0]
        );
        assert!(anthropic[3].contains("content_block_delta"));
        assert_eq!(
            anthropic[4],
            "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
        );
        let first = cut(
            "/v1/messages",
            "",
            br#"{"stream":true}"#,
            0,
            Some(br#"{"x":1}"#),
        );
        assert_eq!(
            first,
            vec!["event: error\ndata: {\"type\":\"error\",\"error\":{\"x\":1}}\n\n"]
        );
        let chat = cut("/v1/chat/completions", "", br#"{"stream":true}"#, 1, None);
        assert_eq!(chat.len(), 3, "{chat:?}");
        assert!(chat[1].contains(r#""content":"Hello""#));
        let v: Value = serde_json::from_str(chat[2].strip_prefix("data: ").unwrap()).unwrap();
        assert_eq!(v["error"]["type"], "server_error");
        // More than there are: error after all content, before the end.
        let chat = cut("/v1/chat/completions", "", br#"{"stream":true}"#, 99, None);
        assert_eq!(chat.len(), 5);
        assert!(!chat
            .iter()
            .any(|f| f.contains("[DONE]") || f.contains("\"stop\"")));
        let gem = cut(
            "/v1beta/models/g:streamGenerateContent",
            "alt=sse",
            b"",
            1,
            None,
        );
        assert_eq!(gem.len(), 2);
        assert!(gem[0].contains("usageMetadata"));
        assert!(gem[1].starts_with("data: {\"error\":{\"code\":503"));
        let arr = cut("/v1beta/models/g:streamGenerateContent", "", b"", 2, None).concat();
        let v: Value = serde_json::from_str(&arr).unwrap();
        assert_eq!(v.as_array().unwrap().len(), 3);
        assert_eq!(v[2]["error"]["status"], "UNAVAILABLE");
        let arr = cut("/v1beta/models/g:streamGenerateContent", "", b"", 0, None).concat();
        let v: Value = serde_json::from_str(&arr).unwrap();
        assert_eq!(v[0]["error"]["code"], 503);
    }

    #[test]
    fn gemini_json_array_stream() {
        let info = classify("POST", "/v1beta/models/g:streamGenerateContent", "", b"{}");
        let f = frames(&generate(&info, &params(3), &[])).concat();
        let v: Value = serde_json::from_str(&f).unwrap();
        assert_eq!(v.as_array().unwrap().len(), 3);
        assert_eq!(v[2]["candidates"][0]["finishReason"], "STOP");
    }

    #[test]
    fn errors_and_models() {
        let g = error_response(Api::AnthropicMessages, 529, "busy");
        assert_eq!(full_json(&g)["error"]["type"], "overloaded_error");
        let g = error_response(
            Api::Gemini {
                stream: false,
                sse: false,
            },
            429,
            "q",
        );
        assert_eq!(full_json(&g)["error"]["status"], "RESOURCE_EXHAUSTED");
        let info = classify("GET", "/v1/models", "", b"");
        let v = full_json(&generate(&info, &params(3), &["zz-model".to_string()]));
        assert!(v["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["id"] == "zz-model"));
        let info = classify("DELETE", "/nope", "", b"");
        let g = generate(&info, &params(3), &[]);
        assert_eq!(g.status, 404);
        assert_eq!(full_json(&g)["error"]["code"], "not_found");
    }
}
