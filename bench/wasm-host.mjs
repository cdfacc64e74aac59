// The filter's own work per request in V8, without Envoy: a minimal proxy-wasm (ABI 0.2.1) host
// in Node.js that loads the built .wasm in both positions (client and upstream roots of one
// VM, as the shipped config runs it) and drives healthy requests through every callback Envoy
// would call: the client's request, one attempt, its 200 JSON answer, the client's answer.
//
//   node bench/wasm-host.mjs FILTER.wasm CONFIG.json [requests] [body bytes]
//   node --cpu-prof --cpu-prof-dir DIR bench/wasm-host.mjs ...   (then bench/cpu-profile.mjs DIR)
//
// What it measures is V8 running the filter's code plus this host's (cheap) JavaScript for
// each host call: a precise, noise-free A/B for changes to the filter's code, not Envoy's cost
// per request (Envoy's host calls do more, between Envoy's own work, with cold caches). Host
// calls are counted per request, by name.
import { readFile } from "node:fs/promises";
import { WASI } from "node:wasi";

const [, , file, configFile, requestsArg = "20000", bytesArg = "900"] = process.argv;
const REQUESTS = Number(requestsArg);
const OK = 0, NOT_FOUND = 1, BAD_ARGUMENT = 2, CAS_MISMATCH = 8;
const enc = new TextEncoder(), dec = new TextDecoder();

const config = await readFile(configFile);
const wasi = new WASI({ version: "preview1", args: [], env: {}, preopens: {} });
let instance, memory, current = 0, now = 1_796_121_000_000n * 1_000_000n;
// Host calls by name, counted over one request (not in the timed loop: counting costs more
// than most calls).
const calls = new Map();
let counting = false;
const count = (name) => { if (counting) calls.set(name, (calls.get(name) ?? 0) + 1); };

// Contexts: root ids, the root of each HTTP context, and each HTTP context's stream.
const roots = new Map(); // root context id -> root_id
const parentOf = new Map(); // http context id -> root context id
const streams = new Map(); // http context id -> stream
const shared = new Map(); // key -> { value: Uint8Array, cas: number }
let metrics = 0;

const bytes = (ptr, len) => new Uint8Array(memory.buffer, ptr, len);
const str = (ptr, len) => dec.decode(bytes(ptr, len));
const view = () => new DataView(memory.buffer);
// Returns data the proxy-wasm way: allocated in the VM, its pointer and size written back.
function give(data, dataPtr, sizePtr) {
  const ptr = data.length ? instance.exports.proxy_on_memory_allocate(data.length) : 0;
  if (data.length) bytes(ptr, data.length).set(data);
  view().setUint32(dataPtr, ptr, true);
  view().setUint32(sizePtr, data.length, true);
  return OK;
}
// Header maps are serialized once per change (a cache on the map), so that the host's own
// work stays small beside the filter's.
const utf8 = new Map();
const encoded = (text) => {
  let b = utf8.get(text);
  if (!b) { b = enc.encode(text); if (utf8.size < 10000) utf8.set(text, b); }
  return b;
};
function serializeMap(pairs) {
  if (pairs.serialized) return pairs.serialized;
  const parts = pairs.map(([k, v]) => [encoded(k), encoded(v)]);
  let size = 4 + parts.length * 8;
  for (const [k, v] of parts) size += k.length + v.length + 2;
  const out = new Uint8Array(size), dv = new DataView(out.buffer);
  dv.setUint32(0, parts.length, true);
  parts.forEach(([k, v], i) => { dv.setUint32(4 + i * 8, k.length, true); dv.setUint32(8 + i * 8, v.length, true); });
  let p = 4 + parts.length * 8;
  for (const [k, v] of parts) { out.set(k, p); p += k.length + 1; out.set(v, p); p += v.length + 1; }
  pairs.serialized = out;
  return out;
}
const stream = () => streams.get(current);
const mapOf = (type) => {
  const s = stream();
  if (!s) return null;
  return type === 0 ? s.requestHeaders : type === 2 ? s.responseHeaders : null;
};

const env = {
  proxy_log: (level, ptr, len) => { count("log"); return OK; },
  proxy_get_log_level: (ptr) => { view().setUint32(ptr, 2, true); return OK; },
  proxy_get_current_time_nanoseconds: (ptr) => { count("now"); now += 1_000_000n; view().setBigUint64(ptr, now, true); return OK; },
  proxy_set_tick_period_milliseconds: () => OK,
  proxy_get_buffer_bytes: (type, start, max, dataPtr, sizePtr) => {
    count(`get_buffer ${type}`);
    let buf;
    if (type === 7) buf = config;
    else if (type === 0) buf = stream()?.requestBody;
    else if (type === 1) buf = stream()?.responseBody;
    if (!buf) return NOT_FOUND;
    return give(buf.subarray(start, start + max), dataPtr, sizePtr);
  },
  proxy_set_buffer_bytes: () => { count("set_buffer"); return OK; },
  proxy_get_header_map_pairs: (type, dataPtr, sizePtr) => {
    count(`get_header_map_pairs ${type}`);
    const map = mapOf(type);
    return map ? give(serializeMap(map), dataPtr, sizePtr) : BAD_ARGUMENT;
  },
  proxy_set_header_map_pairs: () => { count("set_header_map_pairs"); return OK; },
  proxy_get_header_map_value: (type, kp, ks, dataPtr, sizePtr) => {
    count(`get_header_map_value ${type}`);
    const map = mapOf(type);
    if (!map) return BAD_ARGUMENT;
    const key = str(kp, ks), found = map.find(([k]) => k === key);
    return found ? give(encoded(found[1]), dataPtr, sizePtr) : NOT_FOUND;
  },
  proxy_replace_header_map_value: (type, kp, ks, vp, vs) => {
    count(`replace_header_map_value ${type}`);
    const map = mapOf(type);
    if (!map) return BAD_ARGUMENT;
    const key = str(kp, ks), value = str(vp, vs), i = map.findIndex(([k]) => k === key);
    if (i >= 0) map[i] = [key, value]; else map.push([key, value]);
    map.serialized = null;
    return OK;
  },
  proxy_add_header_map_value: (type, kp, ks, vp, vs) => {
    count("add_header_map_value");
    const map = mapOf(type);
    if (!map) return BAD_ARGUMENT;
    map.push([str(kp, ks), str(vp, vs)]);
    map.serialized = null;
    return OK;
  },
  proxy_remove_header_map_value: (type, kp, ks) => {
    count(`remove_header_map_value ${type}`);
    const map = mapOf(type);
    if (!map) return BAD_ARGUMENT;
    const key = str(kp, ks), i = map.findIndex(([k]) => k === key);
    if (i >= 0) { map.splice(i, 1); map.serialized = null; }
    return OK;
  },
  proxy_get_property: (pp, ps, dataPtr, sizePtr) => {
    const path = str(pp, ps).split("\0").join(".");
    count(`get_property ${path}`);
    if (path === "plugin_root_id") {
      const root = roots.get(current) ?? roots.get(parentOf.get(current));
      return give(encoded(root ?? ""), dataPtr, sizePtr);
    }
    if (path === "xds.cluster_name") return give(encoded("llm"), dataPtr, sizePtr);
    const value = stream()?.request.state.get(path);
    return value ? give(value, dataPtr, sizePtr) : NOT_FOUND;
  },
  proxy_set_property: (pp, ps, vp, vs) => {
    count(`set_property ${str(pp, ps)}`);
    stream()?.request.state.set(str(pp, ps).split("\0").join("."), bytes(vp, vs).slice());
    return OK;
  },
  proxy_get_shared_data: (kp, ks, dataPtr, sizePtr, casPtr) => {
    count("get_shared_data");
    const entry = shared.get(str(kp, ks));
    if (!entry) return NOT_FOUND;
    view().setUint32(casPtr, entry.cas, true);
    return give(entry.value, dataPtr, sizePtr);
  },
  proxy_set_shared_data: (kp, ks, vp, vs, cas) => {
    count("set_shared_data");
    const key = str(kp, ks), entry = shared.get(key);
    if (cas && entry && entry.cas !== cas) return CAS_MISMATCH;
    shared.set(key, { value: bytes(vp, vs).slice(), cas: (entry?.cas ?? 0) + 1 });
    return OK;
  },
  proxy_define_metric: (type, np, ns, idPtr) => { view().setUint32(idPtr, ++metrics, true); return OK; },
  proxy_increment_metric: () => { count("increment_metric"); return OK; },
  proxy_record_metric: () => { count("record_metric"); return OK; },
  proxy_send_local_response: () => { count("send_local_response"); return OK; },
  proxy_continue_stream: () => { count("continue_stream"); return OK; },
  proxy_close_stream: () => OK,
  proxy_register_shared_queue: (np, ns, idPtr) => { view().setUint32(idPtr, 1, true); return OK; },
  proxy_resolve_shared_queue: (vp, vs, np, ns, idPtr) => { view().setUint32(idPtr, 1, true); return OK; },
  proxy_enqueue_shared_queue: () => OK,
  proxy_dequeue_shared_queue: () => 7,
  proxy_set_effective_context: (id) => { current = id; return OK; },
  proxy_done: () => OK,
  proxy_call_foreign_function: () => { count("call_foreign_function"); return NOT_FOUND; },
};
const imports = { ...wasi.getImportObject(), env: new Proxy(env, {
  get: (target, name) => target[name] ?? (() => { count(`unimplemented ${String(name)}`); return NOT_FOUND; }),
}) };
instance = (await WebAssembly.instantiate(await WebAssembly.compile(await readFile(file)), imports));
memory = instance.exports.memory;
const x = instance.exports;
wasi.initialize({ exports: { memory, _initialize: x._initialize } });

// Two roots of one VM, as Envoy configures them.
const rootIds = { client: 1, upstream: 2 };
for (const [name, id] of Object.entries(rootIds)) {
  roots.set(id, name);
  current = id;
  x.proxy_on_context_create(id, 0);
  if (!x.proxy_on_vm_start(id, 0) || !x.proxy_on_configure(id, config.length)) throw new Error(`${name}: not configured`);
}

const text = "x".repeat(Math.max(0, Number(bytesArg)));
const body = enc.encode(JSON.stringify({ messages: [{ role: "user", content: text }], max_tokens: 64, model: "gpt-4o" }));
const answer = enc.encode(JSON.stringify({ id: "chatcmpl-1", object: "chat.completion", model: "gpt-4o",
  choices: [{ index: 0, message: { role: "assistant", content: "Hello there." }, finish_reason: "stop" }],
  usage: { prompt_tokens: 230, completion_tokens: 3, total_tokens: 233 } }));
const answerHeaders = () => [[":status", "200"], ["content-type", "application/json"], ["content-length", String(answer.length)],
  ["date", "Thu, 03 Dec 2026 10:30:00 GMT"], ["server", "mock"], ["x-envoy-upstream-service-time", "3"]];

let next = 10;
const ACTIONS = ["Continue", "Pause"];
function call(id, fn, ...args) { current = id; return fn(id, ...args); }
function request() {
  const state = new Map();
  const client = next++, upstream = next++;
  const c = { request: { state }, requestBody: body, responseBody: null, responseHeaders: null,
    requestHeaders: [[":method", "POST"], [":path", "/v1/chat/completions"], [":authority", "llm"], [":scheme", "http"],
      ["content-type", "application/json"], ["content-length", String(body.length)], ["user-agent", "OpenAI/Python 2.8.1"],
      ["accept", "application/json"], ["x-request-id", "9f0c1c1e-7b1a-4d8e-9a57-5d5c2b1f9e11"], ["x-forwarded-proto", "http"]] };
  streams.set(client, c);
  parentOf.set(client, rootIds.client);
  current = client;
  x.proxy_on_context_create(client, rootIds.client);
  const held = call(client, x.proxy_on_request_headers, c.requestHeaders.length, 0);
  const sent = call(client, x.proxy_on_request_body, body.length, 1);
  if (ACTIONS[held] !== "Pause" || ACTIONS[sent] !== "Continue") throw new Error(`client: ${held} ${sent}`);
  // The router's attempt: the request as the client filter left it.
  const u = { request: { state }, requestBody: body, responseBody: answer, responseHeaders: null,
    requestHeaders: c.requestHeaders.map(([k, v]) => [k, v]).concat([["x-envoy-attempt-count", "1"]]) };
  streams.set(upstream, u);
  parentOf.set(upstream, rootIds.upstream);
  current = upstream;
  x.proxy_on_context_create(upstream, rootIds.upstream);
  call(upstream, x.proxy_on_request_headers, u.requestHeaders.length, 0);
  call(upstream, x.proxy_on_request_body, body.length, 1);
  u.responseHeaders = answerHeaders();
  call(upstream, x.proxy_on_response_headers, u.responseHeaders.length, 0);
  call(upstream, x.proxy_on_response_body, answer.length, 1);
  call(upstream, x.proxy_on_log);
  call(upstream, x.proxy_on_done);
  call(upstream, x.proxy_on_delete);
  // The client's view of the answer.
  c.responseHeaders = u.responseHeaders.map(([k, v]) => [k, v]);
  c.responseBody = answer;
  call(client, x.proxy_on_response_headers, c.responseHeaders.length, 0);
  call(client, x.proxy_on_response_body, answer.length, 1);
  call(client, x.proxy_on_log);
  call(client, x.proxy_on_done);
  call(client, x.proxy_on_delete);
  streams.delete(client);
  streams.delete(upstream);
  parentOf.delete(client);
  parentOf.delete(upstream);
  return c;
}

// Warm up (V8 tiers the code up), count one request's host calls, then measure.
for (let i = 0; i < 2000; i++) request();
counting = true;
const sample = request();
counting = false;
const explained = sample.responseHeaders.filter(([k]) => k.startsWith("x-llm-")).map(([k, v]) => `${k}: ${v}`);
const start = process.hrtime.bigint();
for (let i = 0; i < REQUESTS; i++) request();
const elapsed = Number(process.hrtime.bigint() - start) / 1000 / REQUESTS;
const perRequest = [...calls].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${v} ${k}`);
console.log(JSON.stringify({ us_per_request: Number(elapsed.toFixed(2)), requests: REQUESTS, body_bytes: body.length,
  host_calls_per_request: [...calls.values()].reduce((a, b) => a + b, 0),
  answer_headers: explained, calls: perRequest }, null, 1));
