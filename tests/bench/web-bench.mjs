// Web explorer benchmark (issue 6 item 12). Needs dist/ (trunk build --release).
//   node tests/bench/web-bench.mjs            (or: scripts/bench-web.sh)
// Prints: file selection -> first timeline frame for the sb-scale sample and a
// >= 100 MB generated clustered file (110k entries); canvas frame times while
// panning and zooming those 110k entries; gzipped wasm sizes.
import { existsSync, readFileSync, statSync, readdirSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, DIST, serveDir, launchBrowser, openPage } from "../e2e/harness.mjs";

const BIG = process.env.BIG_DB || join(tmpdir(), "ovsdb-scope-bench-110k.db");
if (!existsSync(BIG)) {
  execFileSync("node", [join(ROOT, "tests/bench/gen-big-log.mjs"), BIG], { stdio: "inherit" });
}
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const pct = (a, p) => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(a.length * p))];

const server = await serveDir();
const browser = await launchBrowser();
const { page, problems } = await openPage(browser.context, server.url);
const canvas = page.getByTestId("timeline");

async function loadAndTime(paths, names, timeout) {
  await page.getByTestId("file-input").setInputFiles(paths);
  await page.locator(`[data-testid=summary][data-files="${names.join(",")}"]`).waitFor({ timeout });
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout });
  await page.waitForFunction(() => document.querySelector("[data-testid=timeline]").dataset.loadMs);
  return Number(await canvas.getAttribute("data-load-ms"));
}

await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 60000 });
const results = {};
const sb = ["s1.db", "s2.db", "s3.db"];
const sbPaths = sb.map((f) => join(ROOT, "static/samples/sb-scale", f));
const sbBytes = sbPaths.reduce((a, p) => a + statSync(p).size, 0);
const sbTimes = [];
for (let i = 0; i < 3; i++) {
  // Alternate with another file so every round is a real new load.
  await loadAndTime([join(ROOT, "static/samples/standalone/nb.db")], ["nb.db"], 60000);
  sbTimes.push(await loadAndTime(sbPaths, sb, 60000));
}
results.sbScale = { bytes: sbBytes, ms: sbTimes, median: median(sbTimes) };

const bigBytes = statSync(BIG).size;
const bigName = BIG.split("/").pop();
const bigMs = await loadAndTime([BIG], [bigName], 15 * 60 * 1000);
const entries = Number(await page.getByTestId("summary-entries").getAttribute("data-value"));
results.big = {
  bytes: bigBytes,
  entries,
  ms: bigMs,
  // Of which: the worker building the model, the page decoding it.
  workerMs: Number(await canvas.getAttribute("data-parse-ms")),
  decodeMs: Number(await canvas.getAttribute("data-decode-ms")),
};

// Frame times: each key press redraws the canvas; data-frame-ms is the draw time.
const frames = [];
const keys = ["+", "ArrowRight", "+", "ArrowLeft", "-", "ArrowRight", "+", "+", "ArrowLeft", "-", "-", "0"];
for (let round = 0; round < 4; round++) {
  for (const k of keys) {
    const before = await canvas.getAttribute("data-view");
    await page.keyboard.press(k);
    await page.waitForFunction((v) => document.querySelector("[data-testid=timeline]").dataset.view !== v, before, { timeout: 10000 }).catch(() => {});
    frames.push(Number(await canvas.getAttribute("data-frame-ms")));
  }
}
// Drag-pan with the mouse at full zoom-out and zoomed in.
const box = await canvas.boundingBox();
for (const zoomKeys of [[], ["+", "+", "+"]]) {
  for (const k of zoomKeys) await page.keyboard.press(k);
  await page.mouse.move(box.x + box.width * 0.6, box.y + 80);
  await page.mouse.down();
  for (let i = 0; i < 10; i++) {
    await page.mouse.move(box.x + box.width * 0.6 - (i + 1) * 25, box.y + 80);
    frames.push(Number(await canvas.getAttribute("data-frame-ms")));
  }
  await page.mouse.up();
}
results.frames = {
  n: frames.length,
  median: median(frames),
  p95: pct(frames, 0.95),
  max: Math.max(...frames),
};

const wasm = {};
for (const f of readdirSync(DIST).filter((f) => f.endsWith(".wasm"))) {
  const raw = readFileSync(join(DIST, f));
  wasm[f] = { bytes: raw.length, gzip: gzipSync(raw, { level: 9 }).length };
}
results.wasm = wasm;
results.problems = problems;
results.userAgent = await page.evaluate(() => navigator.userAgent);
console.log(JSON.stringify(results, null, 2));
await browser.close();
await server.close();
