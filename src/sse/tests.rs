//! The scanner against real and adversarial streams.
use super::frame::head_shows_error;
use super::*;
use wasm_bindgen_test::wasm_bindgen_test;

/// Everything a scanner says about a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    findings: Vec<SseFinding>,
    usage: Usage,
    events: u64,
    malformed: u64,
    parsed: u64,
}

fn run<'a>(chunks: impl IntoIterator<Item = &'a [u8]>, max: usize) -> Outcome {
    let mut scanner = SseScanner::new(max);
    let mut findings = Vec::new();
    for chunk in chunks {
        scanner.feed(chunk, &mut |f| findings.push(f));
    }
    scanner.finish(&mut |f| findings.push(f));
    // `finish` twice changes nothing.
    scanner.finish(&mut |f| findings.push(f));
    Outcome {
        findings,
        usage: scanner.usage(),
        events: scanner.events_seen(),
        malformed: scanner.malformed_frames(),
        parsed: scanner.frames_parsed,
    }
}

use crate::test_support::Rng;

fn random_split<'a>(input: &'a [u8], rng: &mut Rng, max_piece: usize) -> Vec<&'a [u8]> {
    let mut pieces = Vec::new();
    let mut rest = input;
    while !rest.is_empty() {
        let n = (1 + rng.below(max_piece)).min(rest.len());
        let (piece, tail) = rest.split_at(n);
        pieces.push(piece);
        rest = tail;
    }
    pieces
}

/// Feeds `input` whole, in every fixed chunk size, split in two at every byte, and split
/// at random; every way must give `expected`.
fn check_splits(input: &[u8], max: usize, expected: &Outcome) {
    assert_eq!(&run([input], max), expected, "whole input");
    for size in 1..=input.len() {
        assert_eq!(&run(input.chunks(size), max), expected, "chunks of {size}");
    }
    for at in 0..=input.len() {
        let (a, b) = input.split_at(at);
        assert_eq!(&run([a, b], max), expected, "split at {at}");
    }
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ input.len() as u64);
    for round in 0..300 {
        let max_piece = [3, 17, 64, 300][round % 4];
        let pieces = random_split(input, &mut rng, max_piece);
        assert_eq!(
            &run(pieces.iter().copied(), max),
            expected,
            "random round {round}"
        );
    }
}

fn error(event: Option<&str>, payload: &str) -> SseFinding {
    SseFinding::Error {
        event: event.map(str::to_owned),
        payload: payload.as_bytes().to_vec(),
        truncated: false,
    }
}

fn usage(input: u64, output: u64) -> Usage {
    Usage {
        input_tokens: Some(input),
        output_tokens: Some(output),
        cached_input_tokens: None,
    }
}

/// Usage of a real answer that states its cached input (0 in these fixtures).
fn usage_cached(input: u64, output: u64, cached: u64) -> Usage {
    Usage {
        cached_input_tokens: Some(cached),
        ..usage(input, output)
    }
}

const OPENAI_CHAT: &str = concat!(
    "data: {\"id\":\"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_eb9dce56a8\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n",
    "\n",
    "data: {\"id\":\"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_eb9dce56a8\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"The word \\\"error\\\" and \\\"usage\\\": {\\\"x\\\": 1}\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n",
    "\n",
    "data: {\"id\":\"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_eb9dce56a8\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" are just words.\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n",
    "\n",
    "data: {\"id\":\"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_eb9dce56a8\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\": null}\n",
    "\n",
    "data: {\"id\":\"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_eb9dce56a8\",\"choices\":[],\"usage\":{\"prompt_tokens\":19,\"completion_tokens\":10,\"total_tokens\":29,\"prompt_tokens_details\":{\"cached_tokens\":0,\"audio_tokens\":0},\"completion_tokens_details\":{\"reasoning_tokens\":0,\"audio_tokens\":0,\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}}}\n",
    "\n",
    "data: [DONE]\n",
    "\n",
);

#[wasm_bindgen_test(unsupported = test)]
fn openai_chat_stream_with_usage() {
    check_splits(
        OPENAI_CHAT.as_bytes(),
        DEFAULT_MAX_EVENT_BYTES,
        &Outcome {
            findings: vec![],
            usage: usage_cached(19, 10, 0),
            events: 6,
            malformed: 0,
            // Only the usage chunk: `"usage":null` and escaped text are not parsed.
            parsed: 1,
        },
    );
}

const OPENAI_CHAT_ERROR: &str = "{\"error\": {\"message\": \"The server had an error while processing your request. Sorry about that!\", \"type\": \"server_error\", \"param\": null, \"code\": null}}";

#[wasm_bindgen_test(unsupported = test)]
fn openai_chat_error_frame_without_event_name() {
    let input = format!(
        "data: {{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"Hel\"}},\"finish_reason\":null}}]}}\n\ndata: {OPENAI_CHAT_ERROR}\n\n"
    );
    check_splits(
        input.as_bytes(),
        DEFAULT_MAX_EVENT_BYTES,
        &Outcome {
            findings: vec![error(None, OPENAI_CHAT_ERROR)],
            usage: Usage::default(),
            events: 2,
            malformed: 0,
            parsed: 1,
        },
    );
}

const ANTHROPIC: &str = concat!(
    "event: message_start\n",
    "data: {\"type\": \"message_start\", \"message\": {\"id\": \"msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY\", \"type\": \"message\", \"role\": \"assistant\", \"content\": [], \"model\": \"claude-3-5-sonnet-20241022\", \"stop_reason\": null, \"stop_sequence\": null, \"usage\": {\"input_tokens\": 25, \"cache_creation_input_tokens\": 0, \"cache_read_input_tokens\": 0, \"output_tokens\": 1}}}\n",
    "\n",
    "event: content_block_start\n",
    "data: {\"type\": \"content_block_start\", \"index\": 0, \"content_block\": {\"type\": \"text\", \"text\": \"\"}}\n",
    "\n",
    "event: ping\n",
    "data: {\"type\": \"ping\"}\n",
    "\n",
    "event: content_block_delta\n",
    "data: {\"type\": \"content_block_delta\", \"index\": 0, \"delta\": {\"type\": \"text_delta\", \"text\": \"Hello\"}}\n",
    "\n",
    "event: content_block_delta\n",
    "data: {\"type\": \"content_block_delta\", \"index\": 0, \"delta\": {\"type\": \"text_delta\", \"text\": \"!\"}}\n",
    "\n",
    "event: content_block_stop\n",
    "data: {\"type\": \"content_block_stop\", \"index\": 0}\n",
    "\n",
    "event: message_delta\n",
    "data: {\"type\": \"message_delta\", \"delta\": {\"stop_reason\": \"end_turn\", \"stop_sequence\":null}, \"usage\": {\"output_tokens\": 15}}\n",
    "\n",
    "event: message_stop\n",
    "data: {\"type\": \"message_stop\"}\n",
    "\n",
);

#[wasm_bindgen_test(unsupported = test)]
fn anthropic_stream_usage() {
    check_splits(
        ANTHROPIC.as_bytes(),
        DEFAULT_MAX_EVENT_BYTES,
        &Outcome {
            findings: vec![],
            usage: usage_cached(25, 15, 0),
            events: 8,
            malformed: 0,
            parsed: 2,
        },
    );
}

const ANTHROPIC_ERROR: &str = "{\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}";

#[wasm_bindgen_test(unsupported = test)]
fn anthropic_error_after_deltas() {
    let input = concat!(
        "event: message_start\n",
        "data: {\"type\": \"message_start\", \"message\": {\"id\": \"msg_01\", \"type\": \"message\", \"role\": \"assistant\", \"content\": [], \"model\": \"claude-sonnet-4-20250514\", \"stop_reason\": null, \"stop_sequence\": null, \"usage\": {\"input_tokens\": 472, \"output_tokens\": 2}}}\n",
        "\n",
        "event: content_block_start\n",
        "data: {\"type\": \"content_block_start\", \"index\": 0, \"content_block\": {\"type\": \"text\", \"text\": \"\"}}\n",
        "\n",
        "event: content_block_delta\n",
        "data: {\"type\": \"content_block_delta\", \"index\": 0, \"delta\": {\"type\": \"text_delta\", \"text\": \"Once upon\"}}\n",
        "\n",
        "event: content_block_delta\n",
        "data: {\"type\": \"content_block_delta\", \"index\": 0, \"delta\": {\"type\": \"text_delta\", \"text\": \" a time\"}}\n",
        "\n",
        "event: error\n",
        "data: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n",
        "\n",
    );
    check_splits(
        input.as_bytes(),
        DEFAULT_MAX_EVENT_BYTES,
        &Outcome {
            findings: vec![error(Some("error"), ANTHROPIC_ERROR)],
            usage: usage(472, 2),
            events: 5,
            malformed: 0,
            parsed: 2,
        },
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn anthropic_message_delta_with_input_tokens() {
    let input = concat!(
        "event: message_start\n",
        "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_02\",\"usage\":{\"input_tokens\":0,\"output_tokens\":1}}}\n\n",
        "event: message_delta\n",
        "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"input_tokens\":472,\"cache_creation_input_tokens\":null,\"cache_read_input_tokens\":null,\"output_tokens\":89}}\n\n",
    );
    let out = run([input.as_bytes()], DEFAULT_MAX_EVENT_BYTES);
    assert_eq!(out.usage, usage(472, 89));
    assert!(out.findings.is_empty());
}

fn responses_created(kind: &str, seq: u32) -> String {
    format!(
        "event: {kind}\ndata: {{\"type\":\"{kind}\",\"sequence_number\":{seq},\"response\":{{\"id\":\"resp_67c9fdcecf488190bdd9a0409de3a1ec07b8b0ad4e5eb654\",\"object\":\"response\",\"created_at\":1741290958,\"status\":\"in_progress\",\"error\":null,\"incomplete_details\":null,\"instructions\":\"You are a helpful assistant.\",\"max_output_tokens\":null,\"model\":\"gpt-4.1-2025-04-14\",\"output\":[],\"parallel_tool_calls\":true,\"previous_response_id\":null,\"reasoning\":{{\"effort\":null,\"summary\":null}},\"store\":true,\"temperature\":1.0,\"text\":{{\"format\":{{\"type\":\"text\"}}}},\"tool_choice\":\"auto\",\"tools\":[],\"top_p\":1.0,\"truncation\":\"disabled\",\"usage\":null,\"user\":null,\"metadata\":{{}}}}}}\n\n"
    )
}

const RESPONSES_DELTAS: &str = concat!(
    "event: response.output_item.added\n",
    "data: {\"type\":\"response.output_item.added\",\"sequence_number\":2,\"output_index\":0,\"item\":{\"id\":\"msg_67c9fdcf37fc8190ba82116e33fb28c507b8b0ad4e5eb654\",\"type\":\"message\",\"status\":\"in_progress\",\"role\":\"assistant\",\"content\":[]}}\n\n",
    "event: response.output_text.delta\n",
    "data: {\"type\":\"response.output_text.delta\",\"sequence_number\":3,\"item_id\":\"msg_67c9fdcf37fc8190ba82116e33fb28c507b8b0ad4e5eb654\",\"output_index\":0,\"content_index\":0,\"delta\":\"Hi\",\"logprobs\":[]}\n\n",
    "event: response.output_text.delta\n",
    "data: {\"type\":\"response.output_text.delta\",\"sequence_number\":4,\"item_id\":\"msg_67c9fdcf37fc8190ba82116e33fb28c507b8b0ad4e5eb654\",\"output_index\":0,\"content_index\":0,\"delta\":\" there\",\"logprobs\":[]}\n\n",
);

const RESPONSES_FAILED: &str = "{\"type\":\"response.failed\",\"sequence_number\":5,\"response\":{\"id\":\"resp_67c9fdcecf488190bdd9a0409de3a1ec07b8b0ad4e5eb654\",\"object\":\"response\",\"created_at\":1741290958,\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"The model failed to generate a response.\"},\"incomplete_details\":null,\"instructions\":\"You are a helpful assistant.\",\"max_output_tokens\":null,\"model\":\"gpt-4.1-2025-04-14\",\"output\":[],\"parallel_tool_calls\":true,\"previous_response_id\":null,\"reasoning\":{\"effort\":null,\"summary\":null},\"store\":true,\"temperature\":1.0,\"text\":{\"format\":{\"type\":\"text\"}},\"tool_choice\":\"auto\",\"tools\":[],\"top_p\":1.0,\"truncation\":\"disabled\",\"usage\":null,\"user\":null,\"metadata\":{}}}";

#[wasm_bindgen_test(unsupported = test)]
fn responses_stream_ending_in_failed() {
    let input = format!(
        "{}{}{RESPONSES_DELTAS}event: response.failed\ndata: {RESPONSES_FAILED}\n\n",
        responses_created("response.created", 0),
        responses_created("response.in_progress", 1),
    );
    check_splits(
        input.as_bytes(),
        DEFAULT_MAX_EVENT_BYTES,
        &Outcome {
            findings: vec![error(Some("response.failed"), RESPONSES_FAILED)],
            usage: Usage::default(),
            events: 6,
            malformed: 0,
            // `"error":null` and `"usage":null` do not make a frame worth parsing.
            parsed: 1,
        },
    );
    // Without the event name, `"type":"response.failed"` is enough.
    let out = run(
        [format!("data: {RESPONSES_FAILED}\n\n").as_bytes()],
        DEFAULT_MAX_EVENT_BYTES,
    );
    assert_eq!(out.findings, vec![error(None, RESPONSES_FAILED)]);
}

#[wasm_bindgen_test(unsupported = test)]
fn a_stream_exception_named_as_its_event_is_an_error() {
    // Bedrock's ConverseStream exceptions as a relay writes them in SSE: the payload is only a
    // message; the event's name says what failed.
    let payload = r#"{"message":"Too many tokens, please wait before trying again."}"#;
    let input = format!(
        "data: {{\"contentBlockDelta\":{{\"delta\":{{\"text\":\"Hi\"}}}}}}\n\nevent: throttlingException\ndata: {payload}\n\n"
    );
    let out = run([input.as_bytes()], DEFAULT_MAX_EVENT_BYTES);
    assert_eq!(
        out.findings,
        vec![error(Some("throttlingException"), payload)]
    );
    // An event merely named like one of its fields is not.
    let out = run(
        [b"event: message\ndata: {\"text\":\"see the Exception class\"}\n\n".as_slice()],
        DEFAULT_MAX_EVENT_BYTES,
    );
    assert!(out.findings.is_empty());
}

#[wasm_bindgen_test(unsupported = test)]
fn responses_completed_usage_and_incomplete_is_not_an_error() {
    let completed = concat!(
        "event: response.completed\n",
        "data: {\"type\":\"response.completed\",\"sequence_number\":7,\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"completed\",\"error\":null,\"incomplete_details\":null,\"output\":[{\"id\":\"msg_1\",\"type\":\"message\",\"status\":\"completed\",\"content\":[{\"type\":\"output_text\",\"annotations\":[],\"text\":\"Hi there\"}],\"role\":\"assistant\"}],\"usage\":{\"input_tokens\":37,\"input_tokens_details\":{\"cached_tokens\":0},\"output_tokens\":11,\"output_tokens_details\":{\"reasoning_tokens\":0},\"total_tokens\":48},\"user\":null,\"metadata\":{}}}\n\n",
    );
    let input = format!(
        "{}{RESPONSES_DELTAS}{completed}",
        responses_created("response.created", 0)
    );
    check_splits(
        input.as_bytes(),
        DEFAULT_MAX_EVENT_BYTES,
        &Outcome {
            findings: vec![],
            usage: usage_cached(37, 11, 0),
            events: 5,
            malformed: 0,
            parsed: 1,
        },
    );

    let incomplete = concat!(
        "event: response.incomplete\n",
        "data: {\"type\":\"response.incomplete\",\"sequence_number\":9,\"response\":{\"id\":\"resp_2\",\"object\":\"response\",\"status\":\"incomplete\",\"error\":null,\"incomplete_details\":{\"reason\":\"max_output_tokens\"},\"output\":[],\"usage\":{\"input_tokens\":12,\"output_tokens\":16,\"total_tokens\":28},\"user\":null,\"metadata\":{}}}\n\n",
    );
    let out = run([incomplete.as_bytes()], DEFAULT_MAX_EVENT_BYTES);
    assert_eq!(out.findings, vec![]);
    assert_eq!(out.usage, usage(12, 16));
}

#[wasm_bindgen_test(unsupported = test)]
fn responses_error_event() {
    let payload = "{\"type\":\"error\",\"code\":\"ERR_SOMETHING\",\"message\":\"Something went wrong\",\"param\":null,\"sequence_number\":1}";
    let input = format!(
        "{}event: error\ndata: {payload}\n\n",
        responses_created("response.created", 0)
    );
    check_splits(
        input.as_bytes(),
        DEFAULT_MAX_EVENT_BYTES,
        &Outcome {
            findings: vec![error(Some("error"), payload)],
            usage: Usage::default(),
            events: 2,
            malformed: 0,
            parsed: 1,
        },
    );
    // `"type":"error"` alone, without the event name.
    let out = run([format!("data: {payload}\n\n").as_bytes()], 1024);
    assert_eq!(out.findings, vec![error(None, payload)]);
}

const GEMINI: &str = concat!(
    "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"Here you go!\\n\\n1.  **English:** Hi\"}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 5,\"totalTokenCount\": 191,\"promptTokensDetails\": [{\"modality\": \"TEXT\",\"tokenCount\": 5}],\"thoughtsTokenCount\": 186},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"AdVRaMmDCYekqtsPrb_-iAw\"}\r\n",
    "\r\n",
    "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"\\n2.  **Spanish:** Hola\"}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 5,\"candidatesTokenCount\": 39,\"totalTokenCount\": 230,\"promptTokensDetails\": [{\"modality\": \"TEXT\",\"tokenCount\": 5}],\"thoughtsTokenCount\": 186},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"AdVRaMmDCYekqtsPrb_-iAw\"}\r\n",
    "\r\n",
    "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"**Italian:** Ciao\"}],\"role\": \"model\"},\"finishReason\": \"STOP\",\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 5,\"candidatesTokenCount\": 44,\"totalTokenCount\": 235,\"promptTokensDetails\": [{\"modality\": \"TEXT\",\"tokenCount\": 5}],\"thoughtsTokenCount\": 186},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"AdVRaMmDCYekqtsPrb_-iAw\"}\r\n",
    "\r\n",
);

#[wasm_bindgen_test(unsupported = test)]
fn gemini_stream_usage_last_wins() {
    check_splits(
        GEMINI.as_bytes(),
        DEFAULT_MAX_EVENT_BYTES,
        &Outcome {
            findings: vec![],
            usage: usage(5, 44),
            events: 3,
            malformed: 0,
            parsed: 3,
        },
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn gemini_error_frame() {
    let payload = "{\"error\": {\"code\": 429, \"message\": \"Resource has been exhausted (e.g. check quota).\", \"status\": \"RESOURCE_EXHAUSTED\"}}";
    let first_frame = GEMINI.split("\r\n\r\n").next().unwrap_or_default();
    let input = format!("{first_frame}\r\n\r\ndata: {payload}\r\n\r\n");
    check_splits(
        input.as_bytes(),
        DEFAULT_MAX_EVENT_BYTES,
        &Outcome {
            findings: vec![error(None, payload)],
            usage: Usage {
                input_tokens: Some(5),
                output_tokens: None,
                cached_input_tokens: None,
            },
            events: 2,
            malformed: 0,
            parsed: 2,
        },
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn line_endings_are_equivalent() {
    let lf = format!("event: error\ndata: {{\"type\": \"error\",\ndata:  \"error\": {{\"type\": \"api_error\"}}}}\n\n: keep-alive\n\ndata: {OPENAI_CHAT_ERROR}\n\n");
    let expected = Outcome {
        findings: vec![
            error(
                Some("error"),
                "{\"type\": \"error\",\n \"error\": {\"type\": \"api_error\"}}",
            ),
            error(None, OPENAI_CHAT_ERROR),
        ],
        usage: Usage::default(),
        events: 2,
        malformed: 0,
        parsed: 2,
    };
    for ending in ["\n", "\r\n", "\r"] {
        let input = lf.replace('\n', ending);
        check_splits(input.as_bytes(), DEFAULT_MAX_EVENT_BYTES, &expected);
    }
    // Mixed line endings, `\r\n` split across chunks (covered by `check_splits`), and a
    // lone `\r` followed by `\n` later on is two line ends.
    let mixed = format!("data: {OPENAI_CHAT_ERROR}\r\n\rdata: {OPENAI_CHAT_ERROR}\r\r\n");
    let out = run([mixed.as_bytes()], DEFAULT_MAX_EVENT_BYTES);
    assert_eq!(out.findings.len(), 2);
    assert_eq!(out.events, 2);
}

#[wasm_bindgen_test(unsupported = test)]
fn field_syntax_per_spec() {
    let input = concat!(
        "\u{FEFF}: comment line\n",
        "id: 7\n",
        "retry: 1000\n",
        "unknown: field\n",
        "Data: {\"error\": \"ignored: field names are case-sensitive\"}\n",
        "data:{\"error\":\n",
        "data\n",
        "data:  \"bad\"}\n",
        "event:error\n",
        "\n",
        // An event name without data is not dispatched, and is forgotten.
        "event: error\n",
        "\n",
        "data: {\"error\": \"second\"}\n",
        "\n",
    );
    check_splits(
        input.as_bytes(),
        DEFAULT_MAX_EVENT_BYTES,
        &Outcome {
            findings: vec![
                error(Some("error"), "{\"error\":\n\n \"bad\"}"),
                error(None, "{\"error\": \"second\"}"),
            ],
            usage: Usage::default(),
            events: 2,
            malformed: 0,
            parsed: 2,
        },
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn bom_only_at_the_start() {
    let with_bom = format!("\u{FEFF}data: {OPENAI_CHAT_ERROR}\n\n");
    check_splits(
        with_bom.as_bytes(),
        64,
        &run([&with_bom.as_bytes()[3..]], 64),
    );
    assert_eq!(run([with_bom.as_bytes()], 1024).findings.len(), 1);
    // A partial BOM is ordinary bytes: this line's field name is not `data`.
    let partial = format!("\u{EF}data: {OPENAI_CHAT_ERROR}\n\n");
    assert_eq!(run([partial.as_bytes()], 1024).events, 0);
    let bytes = [0xEF, 0xBB, b'd', b'a', b't', b'a', b':', b'1', b'\n', b'\n'];
    assert_eq!(run([&bytes[..]], 1024).events, 0);
    assert_eq!(run([&bytes[..1]], 1024).events, 0);
    // A BOM later in the stream is kept.
    let late = format!("data: 1\n\n\u{FEFF}data: {OPENAI_CHAT_ERROR}\n\n");
    assert_eq!(run([late.as_bytes()], 1024).events, 1);
}

#[wasm_bindgen_test(unsupported = test)]
fn finish_flushes_the_last_event() {
    for tail in ["", "\n", "\r", "\r\n"] {
        let input = format!("data: 1\n\nevent: error\ndata: {ANTHROPIC_ERROR}{tail}");
        check_splits(
            input.as_bytes(),
            DEFAULT_MAX_EVENT_BYTES,
            &Outcome {
                findings: vec![error(Some("error"), ANTHROPIC_ERROR)],
                usage: Usage::default(),
                events: 2,
                malformed: 0,
                parsed: 1,
            },
        );
    }
    // A stream cut inside a field name: `dat` is not `data`.
    let out = run([&b"data: 1\n\ndat"[..]], 64);
    assert_eq!(out.events, 1);
    // `data` without colon at the very end still makes an (empty) event.
    let out = run([&b"data"[..]], 64);
    assert_eq!(out.events, 1);
}

#[wasm_bindgen_test(unsupported = test)]
fn what_is_not_an_error() {
    for data in [
        "{\"error\": null, \"choices\": []}",
        "{\"error\": \"\"}",
        "{\"error\": false}",
        "{\"choices\": [{\"error\": {\"message\": \"nested\"}}]}",
        "{\"type\": \"response.incomplete\", \"response\": {\"error\": null}}",
        "{\"text\": \"\\\"error\\\": {}\"}",
        "[{\"error\": {\"code\": 1}}]",
        "\"error\"",
        "[DONE]",
    ] {
        let input = format!("event: message\ndata: {data}\n\n");
        let out = run([input.as_bytes()], 1024);
        assert_eq!(out.findings, vec![], "{data}");
        assert_eq!(out.malformed, 0, "{data}");
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn malformed_json_is_counted_not_reported() {
    let input = concat!(
        "data: {\"usage\": {\"prompt_tokens\": 3,}}\n\n",
        "data: {\"error\": oops}\n\n",
        "data: {\"error\": {\"message\": \"x\"}} trailing\n\n",
        "data: {\"choices\": [], \"usage\": {\"prompt_tokens\": 4, \"completion_tokens\": 2}}\n\n",
        "data: not json at all\n\n",
        "event: error\n",
        "data: upstream overloaded, retry later\n\n",
    );
    check_splits(
        input.as_bytes(),
        DEFAULT_MAX_EVENT_BYTES,
        &Outcome {
            // An event named `error` is reported whatever its data.
            findings: vec![error(Some("error"), "upstream overloaded, retry later")],
            usage: usage(4, 2),
            events: 6,
            malformed: 4,
            parsed: 5,
        },
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn usage_fields_are_lenient() {
    let input = concat!(
        "data: {\"usage\": {\"prompt_tokens\": 10, \"completion_tokens\": 3}}\n\n",
        // Wrong types are ignored field by field.
        "data: {\"usage\": {\"prompt_tokens\": \"11\", \"completion_tokens\": 4}}\n\n",
        "data: {\"usage\": [1, 2], \"message\": \"text\", \"response\": 5}\n\n",
        "data: {\"usage\": {\"prompt_tokens\": -1, \"completion_tokens\": 4.5}}\n\n",
    );
    let out = run([input.as_bytes()], 1024);
    assert_eq!(out.usage, usage(10, 4));
    assert_eq!(out.malformed, 0);
}

/// An error event longer than the limit is reported cut, with or without an event name.
#[wasm_bindgen_test(unsupported = test)]
fn long_error_events_are_truncated() {
    let long = "x".repeat(3000);
    let cases = [
        (
            Some("error"),
            format!("{{\"type\": \"error\", \"error\": {{\"type\": \"overloaded_error\", \"message\": \"{long}\"}}}}"),
        ),
        (
            None,
            format!("{{\"error\": {{\"message\": \"{long}\", \"type\": \"server_error\"}}}}"),
        ),
        (
            None,
            format!("{{\"id\": \"a\", \"meta\": {{\"k\": [1, \"]}}\"]}}, \"error\": \"{long}\"}}"),
        ),
        (
            None,
            format!("{{\"sequence_number\": 3, \"type\": \"error\", \"message\": \"{long}\"}}"),
        ),
    ];
    for max in [0, 1, 40, 120, 256] {
        for (event, payload) in &cases {
            let input = match event {
                Some(name) => format!("event: {name}\ndata: {payload}\n\n"),
                None => format!("data: {payload}\n\n"),
            };
            let head = &payload.as_bytes()[..max];
            // Whether the cut payload still shows it is an error.
            let visible = event.is_some()
                || (head_shows_error(head) && head.windows(7).any(|w| w == b"\"error\""));
            let expected = Outcome {
                findings: if visible {
                    vec![SseFinding::Error {
                        event: event.map(str::to_owned),
                        payload: head.to_vec(),
                        truncated: true,
                    }]
                } else {
                    vec![]
                },
                usage: Usage::default(),
                events: 1,
                malformed: 0,
                parsed: 0,
            };
            if max == 120 {
                assert!(visible, "{payload:.60}");
            }
            check_splits(input.as_bytes(), max, &expected);
        }
    }
    // Long but not an error.
    let quiet = format!("data: {{\"choices\": [{{\"text\": \"{long}\"}}], \"error\": null}}\n\n");
    assert_eq!(run([quiet.as_bytes()], 100).findings, vec![]);
}

/// Usage placed after a long output is found wherever the limit cuts the event.
#[wasm_bindgen_test(unsupported = test)]
fn usage_after_the_limit_is_found() {
    let text = "lorem ipsum ".repeat(60);
    let responses = format!(
        "event: response.completed\ndata: {{\"type\":\"response.completed\",\"response\":{{\"id\":\"resp_1\",\"status\":\"completed\",\"error\":null,\"instructions\":\"{text}\",\"output\":[{{\"type\":\"message\",\"content\":[{{\"type\":\"output_text\",\"text\":\"{text}\"}}]}}],\"tools\":[{{\"type\":\"function\",\"name\":\"f\",\"parameters\":{{\"type\":\"object\",\"properties\":{{\"usage\":{{\"type\":\"string\"}}}}}}}}],\"usage\":{{\"input_tokens\":1200,\"input_tokens_details\":{{\"cached_tokens\":0}},\"output_tokens\":340,\"total_tokens\":1540}},\"user\":null,\"metadata\":{{\"usage\":\"tag\"}}}}}}\n\n"
    );
    let gemini = format!(
        "data: {{\"candidates\": [{{\"content\": {{\"parts\": [{{\"text\": \"{text}\"}}],\"role\": \"model\"}},\"finishReason\": \"STOP\",\"index\": 0}}],\"usageMetadata\": {{\"promptTokenCount\": 8,\"candidatesTokenCount\": 400,\"totalTokenCount\": 408}},\"modelVersion\": \"gemini-2.5-flash\"}}\r\n\r\n"
    );
    let mut rng = Rng(7);
    for (input, expected) in [
        (responses, usage_cached(1200, 340, 0)),
        (gemini, usage(8, 400)),
    ] {
        let len = input.len();
        for max in 0..len {
            let out = run([input.as_bytes()], max);
            assert_eq!(out.usage, expected, "max {max}");
            assert!(out.findings.is_empty());
            for max_piece in [1, 5, 40] {
                let pieces = random_split(input.as_bytes(), &mut rng, max_piece);
                let out = run(pieces.iter().copied(), max);
                assert_eq!(out.usage, expected, "max {max}, pieces up to {max_piece}");
            }
        }
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn ten_megabyte_line_keeps_memory_bounded() {
    let max = 4096;
    let bound = 2 * max + MAX_EVENT_NAME_BYTES * 2 + USAGE_CAPTURE_BYTES * 2 + 64;
    let piece = vec![b'a'; 64 * 1024];
    for start in [
        &b"data: {\"error\": {\"message\": \""[..],
        b"",
        b"event: ",
        b": ",
    ] {
        let mut scanner = SseScanner::new(max);
        let mut findings = Vec::new();
        scanner.feed(start, &mut |f| findings.push(f));
        for _ in 0..160 {
            scanner.feed(&piece, &mut |f| findings.push(f));
            assert!(
                scanner.retained_bytes() <= bound,
                "{}",
                scanner.retained_bytes()
            );
        }
        scanner.feed(b"\"}}\n\n", &mut |f| findings.push(f));
        scanner.finish(&mut |f| findings.push(f));
        if start.starts_with(b"data") {
            assert_eq!(scanner.events_seen(), 1);
            assert_eq!(findings.len(), 1);
            match &findings[0] {
                SseFinding::Error {
                    payload, truncated, ..
                } => {
                    assert!(*truncated);
                    assert_eq!(payload.len(), max);
                }
            }
        } else {
            assert_eq!(scanner.events_seen(), 0);
            assert!(findings.is_empty());
        }
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn garbage_never_panics_or_grows() {
    let max = 512;
    let bound = 2 * max + MAX_EVENT_NAME_BYTES * 2 + USAGE_CAPTURE_BYTES * 2 + 64;
    let mut rng = Rng(0xDEAD_BEEF);
    let alphabet = b"data:event:error\"usage{}[],: \r\n\n\n\xEF\xBB\xBF\xFF\x00";
    for round in 0..200 {
        let len = rng.below(4000);
        let input: Vec<u8> = (0..len)
            .map(|_| {
                if round % 2 == 0 {
                    rng.next() as u8
                } else {
                    alphabet[rng.below(alphabet.len())]
                }
            })
            .collect();
        let mut scanner = SseScanner::new(max);
        for piece in random_split(&input, &mut rng, 100) {
            scanner.feed(piece, &mut |_| {});
            assert!(scanner.retained_bytes() <= bound);
        }
        scanner.finish(&mut |_| {});
    }
    // Fixtures with random bytes overwritten.
    for fixture in [OPENAI_CHAT, ANTHROPIC, GEMINI] {
        for _ in 0..200 {
            let mut input = fixture.as_bytes().to_vec();
            for _ in 0..1 + rng.below(8) {
                let at = rng.below(input.len());
                input[at] = alphabet[rng.below(alphabet.len())];
            }
            let pieces = random_split(&input, &mut rng, 50);
            let out = run(pieces.iter().copied(), 64);
            assert!(out.events <= 10);
        }
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn event_names() {
    let long_name = "n".repeat(1000);
    let input = format!(
        "event: {long_name}\ndata: {OPENAI_CHAT_ERROR}\n\nevent: \u{FFFD}\ndata: {OPENAI_CHAT_ERROR}\n\nevent: error\nevent:\ndata: {OPENAI_CHAT_ERROR}\n\n"
    );
    let out = run([input.as_bytes()], 1024);
    let names: Vec<Option<String>> = out
        .findings
        .iter()
        .map(|SseFinding::Error { event, .. }| event.clone())
        .collect();
    assert_eq!(
        names,
        vec![
            Some("n".repeat(MAX_EVENT_NAME_BYTES)),
            Some("\u{FFFD}".to_owned()),
            None
        ]
    );
    let mut raw = b"event: \xFF\xFE\ndata: {\"type\":\"error\"}\n\n".to_vec();
    raw.extend_from_slice(b"event: error \ndata: x\n\n");
    let out = run([&raw[..]], 1024);
    assert_eq!(out.findings.len(), 2);
    assert_eq!(
        out.findings[0],
        SseFinding::Error {
            event: Some("\u{FFFD}\u{FFFD}".to_owned()),
            payload: b"{\"type\":\"error\"}".to_vec(),
            truncated: false,
        }
    );
}

#[cfg(not(target_arch = "wasm32"))]
fn synthetic_openai_stream(bytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes + 512);
    let mut i = 0u64;
    while out.len() < bytes {
        out.extend_from_slice(
            format!(
                "data: {{\"id\":\"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_eb9dce56a8\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\" tok{i}\"}},\"logprobs\":null,\"finish_reason\":null}}],\"usage\":null}}\n\n"
            )
            .as_bytes(),
        );
        i += 1;
    }
    out.extend_from_slice(b"data: {\"id\":\"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG\",\"choices\":[],\"usage\":{\"prompt_tokens\":19,\"completion_tokens\":5000,\"total_tokens\":5019}}\n\ndata: [DONE]\n\n");
    out
}

#[cfg(not(target_arch = "wasm32"))]
#[test]
#[ignore = "throughput measurement; run with --release --ignored --nocapture"]
fn throughput() {
    let stream = synthetic_openai_stream(1 << 20);
    for chunk_size in [512, 4096, 16 * 1024] {
        let rounds = 200;
        let start = std::time::Instant::now();
        let mut events = 0;
        for _ in 0..rounds {
            let mut scanner = SseScanner::new(DEFAULT_MAX_EVENT_BYTES);
            for chunk in stream.chunks(chunk_size) {
                scanner.feed(std::hint::black_box(chunk), &mut |_| {});
            }
            scanner.finish(&mut |_| {});
            assert_eq!(scanner.usage(), usage(19, 5000));
            assert_eq!(scanner.frames_parsed, 1);
            events = scanner.events_seen();
        }
        let secs = start.elapsed().as_secs_f64();
        let mb = (stream.len() * rounds) as f64 / 1e6;
        println!(
            "sse throughput: {:.0} MB/s ({chunk_size}-byte chunks, {events} events/MB, {:.0} ns/event)",
            mb / secs,
            secs * 1e9 / (events as f64 * rounds as f64)
        );
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn preludes_are_not_content() {
    let mut scanner = SseScanner::default();
    let mut findings = Vec::new();
    scanner.feed(
        b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":9}}}\n\nevent: ping\ndata: {}\n\n: keep-alive\n\n",
        &mut |f| findings.push(f),
    );
    assert_eq!(scanner.events_seen(), 2);
    assert_eq!(scanner.content_events_seen(), 0);
    assert_eq!(scanner.usage().input_tokens, Some(9));
    scanner.feed(
        b"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n\n",
        &mut |f| findings.push(f),
    );
    assert_eq!(scanner.content_events_seen(), 1);
    assert_eq!(findings.len(), 1);
    assert_eq!(scanner.content_before_first_error(), Some(0));
    let mut openai = SseScanner::default();
    openai.feed(
        b"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n",
        &mut |_| {},
    );
    assert_eq!(openai.content_events_seen(), 1);
    openai.feed(
        b"data: {\"error\":{\"message\":\"Overloaded\"}}\n\n",
        &mut |_| {},
    );
    assert_eq!(openai.content_before_first_error(), Some(1));
}

/// A usage object read key by key gives what reading it as a JSON tree gave, for every
/// provider's shape and for values that are not counts.
#[wasm_bindgen_test(unsupported = test)]
fn usage_read_without_a_tree_matches_the_tree() {
    let objects = [
        r#"{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}"#,
        r#"{"prompt_tokens":12,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":4,"audio_tokens":0}}"#,
        r#"{"input_tokens":7,"output_tokens":3,"cache_read_input_tokens":2,"cache_creation_input_tokens":1}"#,
        r#"{"input_tokens":7,"output_tokens":3,"input_tokens_details":{"cached_tokens":6},"output_tokens_details":{"reasoning_tokens":1}}"#,
        r#"{"promptTokenCount":9,"candidatesTokenCount":4,"cachedContentTokenCount":3,"promptTokensDetails":[{"modality":"TEXT","tokenCount":9}]}"#,
        r#"{"prompt_tokens":12.0,"completion_tokens":"5","prompt_tokens_details":null,"extra":[1,{"a":[]}]}"#,
        r#"{"prompt_tokens":-3,"completion_tokens":true,"input_tokens_details":7,"prompt_tokens_details":{"cached_tokens":-1}}"#,
        r#"{"prompt_tokens":1,"prompt_tokens":2,"completion_tokens":null}"#,
        r#"{"prompt\u005ftokens":5,"cached_tokens":9}"#,
        r#"{}"#,
    ];
    for text in objects {
        let map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(text).unwrap();
        assert_eq!(
            Usage::parse(text.as_bytes()),
            Some(Usage::from_map(&map)),
            "{text}"
        );
    }
    assert_eq!(
        Usage::parse(b"[1]"),
        None,
        "only an object is a usage object"
    );
    assert_eq!(Usage::parse(br#"{"prompt_tokens":1"#), None, "cut short");
}
