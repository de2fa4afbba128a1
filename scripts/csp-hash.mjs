// Trunk post_build hook: fill the Content-Security-Policy placeholder in the
// staged index.html. Inline scripts (trunk's wasm loader) are allowed by their
// SHA-256 hashes only; everything else must come from the page's own origin.
import { readFileSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";

const dir = process.env.TRUNK_STAGING_DIR || process.argv[2];
if (!dir) {
  console.error("csp-hash: TRUNK_STAGING_DIR not set");
  process.exit(1);
}
const file = join(dir, "index.html");
let html = readFileSync(file, "utf8");
const hashes = [];
for (const m of html.matchAll(/<script\b(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)) {
  const digest = createHash("sha256").update(m[1], "utf8").digest("base64");
  hashes.push(`'sha256-${digest}'`);
}
const policy = [
  "default-src 'self'",
  `script-src 'self' 'wasm-unsafe-eval' ${hashes.join(" ")}`.trim(),
  "worker-src 'self' blob:",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");
if (!html.includes("__CSP__")) {
  console.error("csp-hash: no __CSP__ placeholder in index.html");
  process.exit(1);
}
html = html.replace("__CSP__", policy);
writeFileSync(file, html);
console.log(`csp-hash: ${hashes.length} inline script hash(es) pinned`);
