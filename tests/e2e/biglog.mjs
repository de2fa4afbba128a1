// Large ovsdb-server logs for the e2e tests, generated at test time (never
// committed): a fixture log repeated, each copy shifted in time after the
// one before, so that every line stays a valid, time-ordered log line.
import { createWriteStream } from "node:fs";
import { once } from "node:events";

const STAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)\|/;

/**
 * Writes `lines` lines to `path`, cycling through `src` (the lines of a real
 * log). Copy k of the source is shifted by k times the source's span plus one
 * second. Resolves to { lines, bytes, firstMs, lastMs }.
 */
export async function writeShiftedLog(path, src, lines) {
  const times = src.map((l) => {
    const m = STAMP.exec(l);
    return m ? Date.parse(m[1]) : null;
  });
  const known = times.filter((t) => t !== null);
  const span = Math.max(...known) - Math.min(...known) + 1000;
  const out = createWriteStream(path);
  let bytes = 0;
  let firstMs = null;
  let lastMs = null;
  let buf = [];
  for (let i = 0; i < lines; i++) {
    const k = Math.floor(i / src.length);
    const j = i % src.length;
    let line = src[j];
    if (times[j] !== null) {
      const t = times[j] + k * span;
      line = new Date(t).toISOString() + line.slice(24);
      firstMs ??= t;
      lastMs = t;
    }
    buf.push(line);
    if (buf.length === 20000 || i === lines - 1) {
      const chunk = buf.join("\n") + "\n";
      bytes += Buffer.byteLength(chunk);
      if (!out.write(chunk)) await once(out, "drain");
      buf = [];
    }
  }
  out.end();
  await once(out, "finish");
  return { lines, bytes, firstMs, lastMs };
}
