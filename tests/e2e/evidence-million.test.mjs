// The log panel at a million lines (issue "Operator evidence": "stays
// smooth at a million lines"). The log is generated here, in a temp folder,
// from a real fixture log repeated with shifted times (tests/e2e/biglog.mjs);
// it is never committed. Timings are printed, not asserted (they go to
// BENCHMARKS.md); what is asserted is what the page shows.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, openPage, useBrowser } from "./harness.mjs";
import { writeShiftedLog } from "./biglog.mjs";

let server;
let browser;
useBrowser((s, b) => ([server, browser] = [s, b]));

const INCIDENT = join(ROOT, "tests/fixtures/incidents/leader-pause");
const LINES = 1_000_000;
// A text the filter is asked for, and how many generated lines hold it
// (any case, as the panel matches).
const NEEDLE = "unreasonably LONG";

let dir;
let big;
let gen;
let src;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "ovsdb-scope-million-"));
  big = join(dir, "s1.ovsdb-server.log");
  src = readFileSync(join(INCIDENT, "s1.ovsdb-server.log"), "utf8")
    .split("\n")
    .filter((l) => l);
  gen = await writeShiftedLog(big, src, LINES);
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Line `n` (0-based) of the generated log, read back from the file's source lines. */
function generatedLines() {
  return readFileSync(big, "utf8").split("\n").slice(0, LINES);
}

const totalIs = (page, n, timeout = 120000) =>
  page.waitForFunction((n) => document.querySelector("[data-testid=log-total]")?.dataset.value === String(n), n, {
    timeout,
  });

/** The rendered rows: { row, line, text } (text without the "name:line" prefix). */
const renderedRows = (page) =>
  page.getByTestId("log-line").evaluateAll((els) =>
    els.map((e) => ({
      row: Number(e.dataset.row),
      line: Number(e.dataset.line),
      text: e.textContent.slice(e.querySelector(".ln").textContent.length),
    })),
  );

/**
 * Scrolls the panel to `frac` of its height and waits until the row at the
 * top is rendered; resolves to the milliseconds that took (in the page).
 */
const scrollTo = (page, frac) =>
  page.locator(".logscroll").evaluate(
    (el, frac) =>
      new Promise((done) => {
        const t0 = performance.now();
        el.scrollTop = (el.scrollHeight - el.clientHeight) * frac;
        const want = Math.floor(el.scrollTop / 18);
        const check = () => {
          const rows = [...el.querySelectorAll("[data-testid=log-line]")].map((e) => Number(e.dataset.row));
          if (rows.includes(want)) done(performance.now() - t0);
          else requestAnimationFrame(check);
        };
        requestAnimationFrame(check);
      }),
    frac,
  );

/** Milliseconds between animation frames while the panel scrolls by `step` px per frame. */
const frameTimes = (page, frames, step) =>
  page.locator(".logscroll").evaluate(
    (el, [frames, step]) =>
      new Promise((done) => {
        const out = [];
        let last = performance.now();
        const tick = () => {
          const now = performance.now();
          out.push(now - last);
          last = now;
          if (out.length > frames) return done(out.slice(1));
          el.scrollTop += step;
          requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
      }),
    [frames, step],
  );

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

test("a million-line log: the panel lists every line, renders a window, scrolls to the end and filters", async () => {
  assert.equal(gen.lines, LINES);
  const lines = generatedLines();
  assert.equal(lines.length, LINES);
  const needle = NEEDLE.toLowerCase();
  const matching = [];
  lines.forEach((l, i) => l.toLowerCase().includes(needle) && matching.push(i));
  assert.ok(matching.length > 1000, `${matching.length} lines hold "${NEEDLE}"`);

  const { page, problems } = await openPage(browser.context, server.url);
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 60000 });
  const t0 = Date.now();
  await page.getByTestId("file-input").setInputFiles([join(INCIDENT, "s1.db"), big]);
  // The page opened on a sample: wait for the summary of this file alone.
  await page.locator('[data-testid=summary][data-files="s1.db"]').waitFor({ timeout: 600000 });
  await page.getByTestId("findings-count").waitFor();
  const diagnosedMs = Date.now() - t0;
  await page.keyboard.press("l");
  await totalIs(page, LINES);
  const listedMs = Date.now() - t0;

  // Only a window of rows is in the page, not a million.
  const first = await renderedRows(page);
  assert.ok(first.length > 0 && first.length <= 40, `${first.length} rows in the DOM`);
  assert.equal(first[0].row, 0);
  assert.equal(first[0].text, lines[0]);

  // To the end: the last rows are the log's last lines.
  await scrollTo(page, 1);
  await page.waitForFunction(
    (n) => [...document.querySelectorAll("[data-testid=log-line]")].some((e) => Number(e.dataset.row) === n - 1),
    LINES,
  );
  const end = await renderedRows(page);
  assert.ok(end.length <= 40, `${end.length} rows in the DOM at the end`);
  const last = end.find((r) => r.row === LINES - 1);
  assert.equal(last.line, LINES);
  assert.equal(last.text, lines[LINES - 1]);
  for (const r of end) assert.equal(r.text, lines[r.line - 1], `row ${r.row}`);

  // Jumps to places in the middle: each shows its rows.
  const jumps = [];
  for (const f of [0.5, 0.25, 0.75, 0.1, 0.9, 0.33, 0.66, 0.05]) jumps.push(await scrollTo(page, f));
  const mid = await renderedRows(page);
  for (const r of mid) assert.equal(r.text, lines[r.line - 1], `row ${r.row}`);
  // Smooth scrolling: frames while the panel scrolls 3 rows a frame.
  const frames = await frameTimes(page, 120, 54);

  // A text filter: exactly the matching lines, in order.
  const tf = Date.now();
  await page.getByTestId("log-text").fill(NEEDLE);
  await totalIs(page, matching.length);
  const filterMs = Date.now() - tf;
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=log-line]").length > 0);
  const hits = await renderedRows(page);
  assert.ok(hits.length <= 40);
  for (const r of hits) {
    assert.equal(r.line - 1, matching[r.row], `filtered row ${r.row}`);
    assert.ok(r.text.toLowerCase().includes(needle));
  }
  await scrollTo(page, 1);
  await page.waitForFunction(
    (n) => [...document.querySelectorAll("[data-testid=log-line]")].some((e) => Number(e.dataset.row) === n - 1),
    matching.length,
  );
  const hitEnd = (await renderedRows(page)).find((r) => r.row === matching.length - 1);
  assert.equal(hitEnd.line - 1, matching[matching.length - 1]);
  // And back to every line.
  const tc = Date.now();
  await page.getByTestId("log-text").fill("");
  await totalIs(page, LINES);
  const clearMs = Date.now() - tc;

  let wasm = 0;
  for (const w of page.workers()) {
    const v = await w.evaluate(() => self.ovsdbScopeWasmBytes);
    if (typeof v === "number") wasm = Math.max(wasm, v);
  }
  const heap = await page.evaluate(() => performance.memory?.usedJSHeapSize ?? 0);
  const mb = (b) => (b / 1048576).toFixed(0);
  console.log(
    `# ${LINES}-line log (${mb(gen.bytes)} MB): diagnosed in ${diagnosedMs} ms, listed in ${listedMs} ms; ` +
      `filter "${NEEDLE}" (${matching.length} rows) ${filterMs} ms, cleared ${clearMs} ms; ` +
      `jump-and-render median ${pct(jumps, 0.5).toFixed(1)} ms, max ${Math.max(...jumps).toFixed(1)} ms; ` +
      `scroll frames median ${pct(frames, 0.5).toFixed(1)} ms, p95 ${pct(frames, 0.95).toFixed(1)} ms, max ${Math.max(...frames).toFixed(1)} ms; ` +
      `worker wasm memory ${mb(wasm)} MB, page JS heap ${mb(heap)} MB`,
  );
  assert.deepEqual(problems.consoleErrors, []);
  assert.deepEqual(problems.pageErrors, []);
  assert.deepEqual(problems.foreignRequests, []);
  await page.close();
});
