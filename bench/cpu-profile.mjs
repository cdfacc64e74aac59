// Summarizes a V8 CPU profile (`node --cpu-prof --cpu-prof-dir DIR ...`): the functions with
// the most self time and the most inclusive time, by name (a .wasm built without `strip` keeps
// its function names: CARGO_PROFILE_RELEASE_STRIP=false).
//   node bench/cpu-profile.mjs DIR [self rows] [inclusive rows]
import { readFileSync, readdirSync } from "node:fs";
const dir = process.argv[2];
const f = readdirSync(dir).find((n) => n.endsWith(".cpuprofile"));
const p = JSON.parse(readFileSync(`${dir}/${f}`));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map();
const counts = new Map();
for (const s of p.samples) counts.set(s, (counts.get(s) ?? 0) + 1);
let total = 0;
for (const [id, c] of counts) {
  const n = byId.get(id);
  const name = n.callFrame.functionName || `(${n.callFrame.url.split("/").pop()}:${n.callFrame.lineNumber})`;
  self.set(name, (self.get(name) ?? 0) + c);
  total += c;
}
// inclusive: walk parents
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const incl = new Map();
for (const [id, c] of counts) {
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const n = byId.get(cur);
    const name = n.callFrame.functionName || "(anon)";
    if (seen.has(name)) continue;
    seen.add(name);
    incl.set(name, (incl.get(name) ?? 0) + c);
  }
}
const top = (m, k) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([n, c]) => `${(100 * c / total).toFixed(1).padStart(5)}%  ${n.slice(0, 150)}`).join("\n");
console.log("SELF\n" + top(self, Number(process.argv[3] ?? 35)));
console.log("\nINCLUSIVE\n" + top(incl, Number(process.argv[4] ?? 45)));
