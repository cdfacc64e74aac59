// Runs a wasm32-wasip1 command module in Node.js's WASI implementation. The crate's proxy-wasm
// shell is linked into the benchmark too; its host imports (module `env`) are never called by
// the benchmarks, so they are stubs that fail loudly if one ever is.
import { readFile } from "node:fs/promises";
import { WASI } from "node:wasi";

const [, , file, ...args] = process.argv;
const wasi = new WASI({ version: "preview1", args: [file, ...args], env: {}, preopens: {} });
const env = new Proxy({}, {
  get: (_, name) => () => { throw new Error(`host call ${String(name)} in a benchmark`); },
});
const module = await WebAssembly.compile(await readFile(file));
const instance = await WebAssembly.instantiate(module, { ...wasi.getImportObject(), env });
// The crate exports `_initialize` (the filter's reactor entry point) beside the benchmark's
// `_start`; Node's WASI runs commands only, so the reactor entry is hidden from it.
const exports = { ...instance.exports };
delete exports._initialize;
process.exitCode = wasi.start({ exports });
