// Writes a large, valid clustered OVSDB file for the web benchmark: the real
// header and first Raft records of static/samples/leader-failover/s1.db, then
// ENTRIES transactions (each inserts a Logical_Switch with a padded
// external_ids value) with a commit-index record after each, framed with
// correct lengths and SHA-1s.
//   node tests/bench/gen-big-log.mjs OUT [ENTRIES=110000] [PAD=560]
import { readFileSync, openSync, writeSync, closeSync } from "node:fs";
import { createHash } from "node:crypto";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const [out, entriesArg, padArg] = process.argv.slice(2);
if (!out) {
  console.error("usage: gen-big-log.mjs OUT [ENTRIES] [PAD]");
  process.exit(2);
}
const ENTRIES = Number(entriesArg || 110000);
const PAD = Number(padArg || 560);

function record(json) {
  const body = Buffer.from(json + "\n");
  const sha = createHash("sha1").update(body).digest("hex");
  return Buffer.concat([Buffer.from(`OVSDB CLUSTER ${body.length} ${sha}\n`), body]);
}

// Keep the sample's records up to its first commit-index record.
const src = readFileSync(join(ROOT, "static/samples/leader-failover/s1.db"));
let pos = 0;
let prefixEnd = 0;
while (pos < src.length) {
  const nl = src.indexOf(10, pos);
  const len = Number(src.subarray(pos, nl).toString().split(" ")[2]);
  const body = src.subarray(nl + 1, nl + 1 + len).toString();
  pos = nl + 1 + len;
  if (body.startsWith('{"commit_index"')) {
    prefixEnd = pos;
    break;
  }
}
const uuid = (n, tag) =>
  `${(n >>> 0).toString(16).padStart(8, "0")}-${tag}-4000-8000-${n.toString(16).padStart(12, "0")}`;
const fd = openSync(out, "w");
writeSync(fd, src.subarray(0, prefixEnd));
let bytes = prefixEnd;
const pad = "x".repeat(PAD);
const t0 = 1764450000000;
let chunk = [];
for (let i = 0; i < ENTRIES; i++) {
  const index = i + 3;
  const row = uuid(i + 1, "5157");
  const txn =
    `{"Logical_Switch":{"${row}":{"external_ids":["map",[["bench","${pad}"],["n","${i}"]]],"name":"bench-ls-${i}"}},` +
    `"_comment":"bench ${i}","_date":${t0 + i * 10},"_is_diff":true}`;
  chunk.push(record(`{"term":1,"index":${index},"data":[null,${txn}],"eid":"${uuid(i + 1, "e1d0")}"}`));
  chunk.push(record(`{"commit_index":${index}}`));
  if (chunk.length >= 2000) {
    const b = Buffer.concat(chunk);
    writeSync(fd, b);
    bytes += b.length;
    chunk = [];
  }
}
const b = Buffer.concat(chunk);
writeSync(fd, b);
bytes += b.length;
closeSync(fd);
console.log(`${out}: ${bytes} bytes, ${ENTRIES} entries (last index ${ENTRIES + 2})`);
