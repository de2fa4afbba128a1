// Web explorer benchmark (issues 6 and 12). Needs dist/ (trunk build --release).
//   node tests/bench/web-bench.mjs            (or: scripts/bench-web.sh)
// Prints: file selection -> first timeline frame for the sb-scale sample and a
// >= 100 MB generated clustered file (110k entries; BIG_DB=FILE for another,
// e.g. the 1M-entry file of `gen-big-log.mjs OUT 1000000 560`); canvas frame
// times while panning and zooming its entries; then three generated
// Southbound files of CLUSTER_MB MB each (default 1000; CLUSTER_MB=0 skips;
// CLUSTER_DIR keeps them between runs) loaded together: first frame (the
// preview), the whole load, the worker's wasm memory, next to the native
// `ovsdb-scope inspect` and `check` of the same files in the same run;
// gzipped wasm sizes. ONLY_CLUSTER=1 runs only the three big files.
// WORKERS=1 or 2 loads with one worker (`#workers=1`: the check in the
// load's walk) or two (a second worker checks beside it; the page's default
// depends on the cores); SKIP_NATIVE=1 leaves out the native runs (a second
// variant of the same files).
import { existsSync, readFileSync, statSync, readdirSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { execFileSync, spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, DIST, serveDir, launchBrowser, openPage } from "../e2e/harness.mjs";

const BIG = process.env.BIG_DB || join(tmpdir(), "ovsdb-scope-bench-110k.db");
if (!existsSync(BIG) && !process.env.ONLY_CLUSTER) {
  execFileSync("node", [join(ROOT, "tests/bench/gen-big-log.mjs"), BIG], { stdio: "inherit" });
}
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const pct = (a, p) => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(a.length * p))];

const server = await serveDir();
const browser = await launchBrowser();
const { page, problems } = await openPage(
  browser.context,
  server.url + (process.env.WORKERS ? `#workers=${process.env.WORKERS}` : ""),
);
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
if (!process.env.ONLY_CLUSTER) {
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

}
console.log(JSON.stringify({ sbScale: results.sbScale, big: results.big, frames: results.frames }));

// Three big files of one cluster, as a must-gather brings them.
const CLUSTER_MB = Number(process.env.CLUSTER_MB ?? 1000);
if (CLUSTER_MB > 0) {
  const target = process.env.CARGO_TARGET_DIR || join(ROOT, "target");
  const cli = process.env.OVSDB_SCOPE_BIN || join(target, "release", "ovsdb-scope");
  if (!existsSync(cli)) {
    execFileSync("cargo", ["build", "--release", "-q", "-p", "ovsdb-scope"], { cwd: ROOT, stdio: "inherit" });
  }
  const dir = process.env.CLUSTER_DIR || join(tmpdir(), `ovsdb-scope-bench-sb${CLUSTER_MB}`);
  const paths = sb.map((f) => join(dir, f));
  if (!paths.every(existsSync)) {
    execFileSync(cli, ["generate", "southbound", dir, "--size-mb", String(CLUSTER_MB)], { stdio: "inherit" });
  }
  const bytes = paths.map((p) => statSync(p).size);
  // Native, same files, same run: wall and CPU seconds, peak RSS.
  const native = {};
  for (const cmd of process.env.SKIP_NATIVE ? [] : ["inspect", "check"]) {
    const r = spawnSync("/usr/bin/time", ["-f", "%e %U %S %M", cli, cmd, ...paths], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    const out = r.stderr.toString().trim().split("\n").pop().split(" ").map(Number);
    native[cmd] = { wallS: out[0], cpuS: +(out[1] + out[2]).toFixed(2), peakKB: out[3] };
  }
  // This load's number (the check panel says which load it shows).
  const loads = Number(await page.getByTestId("check-results").getAttribute("data-loads")) + 1;
  const t0 = Date.now();
  await page.getByTestId("file-input").setInputFiles(paths);
  const long = { timeout: 60 * 60 * 1000 };
  await page.locator("[data-testid=timeline][data-preview=true]").waitFor(long).catch(() => {});
  const firstPreviewMs = Date.now() - t0;
  await page.locator(`[data-testid=summary-bytes][data-value="${bytes[0]}"]`).waitFor(long);
  await page.locator(`[data-testid=summary][data-files="${sb.join(",")}"]`).waitFor(long);
  await page.locator(`[data-testid=check-results][data-state=done][data-loads="${loads}"]`).waitFor(long);
  const loadMs = Date.now() - t0;
  const checkWorker = await page.getByTestId("check-results").getAttribute("data-worker");
  const checkMs = Number(await page.getByTestId("check-results").getAttribute("data-ms")) || null;
  let wasmBytes;
  for (const w of page.workers()) {
    const v = await w.evaluate(() => self.ovsdbScopeWasmBytes);
    if (typeof v === "number") wasmBytes = v;
  }
  results.cluster = {
    mb: CLUSTER_MB,
    bytes,
    entries: Number(await page.getByTestId("summary-entries").getAttribute("data-value")),
    firstFrameMs: Number(await canvas.getAttribute("data-first-frame-ms")),
    firstPreviewMs,
    loadMs,
    checkWorker,
    checkMs,
    wasmBytes,
    error: await page.getByTestId("load-error").textContent({ timeout: 100 }).catch(() => null),
    native,
    vsNative: native.inspect
      ? +(loadMs / 1000 / (native.inspect.wallS + native.check.wallS)).toFixed(2)
      : null,
  };
}

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
