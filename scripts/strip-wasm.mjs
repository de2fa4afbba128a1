// Trunk post_build hook: drop the "name" custom section (function names for
// stack traces, 7-14 % of each wasm's bytes) and the "producers" and
// "target_features" sections (toolchain metadata no browser reads) from the
// staged .wasm files, and
// re-pin the page's Subresource Integrity hashes of any file it changed.
// Other sections are copied byte for byte.
import { readFileSync, writeFileSync, readdirSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";

const dir = process.env.TRUNK_STAGING_DIR || process.argv[2];
if (!dir) {
  console.error("strip-wasm: TRUNK_STAGING_DIR not set");
  process.exit(1);
}

/** Custom sections dropped. `KEEP_WASM_NAMES=1 trunk build --release` keeps
 * the function names, for a profile of the release build (BENCHMARKS.md). */
const DROPPED = new Set(["name", "producers", "target_features"]);
if (process.env.KEEP_WASM_NAMES === "1") DROPPED.delete("name");

function leb(buf, pos) {
  let value = 0;
  let shift = 0;
  for (;;) {
    const b = buf[pos++];
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (b < 0x80) return [value, pos];
  }
}

/** The wasm without the custom sections of DROPPED; null when it has none. */
export function stripNames(wasm) {
  if (wasm.readUInt32BE(0) !== 0x0061736d) throw new Error("not a wasm module");
  const keep = [wasm.subarray(0, 8)];
  let pos = 8;
  let dropped = false;
  while (pos < wasm.length) {
    const start = pos;
    const id = wasm[pos++];
    const [size, body] = leb(wasm, pos);
    const end = body + size;
    if (end > wasm.length) throw new Error(`section at ${start} runs past the end`);
    let isName = false;
    if (id === 0) {
      const [n, s] = leb(wasm, body);
      isName = DROPPED.has(wasm.subarray(s, s + n).toString("utf8"));
    }
    if (isName) dropped = true;
    else keep.push(wasm.subarray(start, end));
    pos = end;
  }
  return dropped ? Buffer.concat(keep) : null;
}

const sri = (b) => `sha384-${createHash("sha384").update(b).digest("base64")}`;
const indexFile = join(dir, "index.html");
let html = readFileSync(indexFile, "utf8");
for (const f of readdirSync(dir).filter((f) => f.endsWith(".wasm"))) {
  const path = join(dir, f);
  const before = readFileSync(path);
  const after = stripNames(before);
  if (!after) continue;
  writeFileSync(path, after);
  html = html.split(sri(before)).join(sri(after));
  console.log(`strip-wasm: ${f} ${before.length} -> ${after.length} bytes`);
}
writeFileSync(indexFile, html);
