// Real sizes in the browser (issue 12): three generated Southbound files of
// BIG_E2E_MB MB each (default 300; written at test time by
// `ovsdb-scope generate southbound`, never committed) load completely in
// Chromium, with summary, timeline and check, and the page's figures agree
// with `ovsdb-scope inspect --json` on the same files. The worker's wasm
// memory stays below WASM_BOUND, less than the files' total: no file is held
// whole (what remains is the replayed database and the view model). While
// the files are read, the page shows the timeline so far (previews), and it
// grows.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, serveDir, launchBrowser, openPage, inspectJson, cliBin } from "./harness.mjs";

const MB = Number(process.env.BIG_E2E_MB || 300);
const names = ["s1.db", "s2.db", "s3.db"];
const WASM_BOUND = Number(process.env.BIG_E2E_WASM_BOUND || 640 * 2 ** 20);
let dir, server, browser;


before(async () => {
  dir = mkdtempSync(join(tmpdir(), "ovsdb-scope-big-"));
  execFileSync(cliBin(), ["generate", "southbound", dir, "--size-mb", String(MB)], { stdio: "inherit" });
  server = await serveDir();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test(`three ${MB} MB Southbound files load with summary, timeline and check`, { timeout: 40 * 60 * 1000 }, async () => {
  const paths = names.map((n) => join(dir, n));
  const bytes = paths.map((p) => statSync(p).size);
  assert.ok(bytes.every((b) => b >= MB * 1e6 * 0.99), `files of ${MB} MB: ${bytes}`);
  const { page, problems } = await openPage(browser.context, server.url);
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 120000 });
  const t0 = Date.now();
  await page.getByTestId("file-input").setInputFiles(paths);
  const long = { timeout: 35 * 60 * 1000 };
  // The page draws the timeline so far while the files are read: a preview
  // comes first, and it grows.
  const canvas = page.getByTestId("timeline");
  await page.locator("[data-testid=timeline][data-preview=true]").waitFor(long);
  const firstPreviewMs = Date.now() - t0;
  const firstFrameMs = Number(await canvas.getAttribute("data-first-frame-ms"));
  const seen = [];
  while ((await canvas.getAttribute("data-preview")) === "true") {
    seen.push(Number(await canvas.getAttribute("data-entries")));
    await page.waitForTimeout(1000);
  }
  const grew = seen.filter((n, i) => i > 0 && n > seen[i - 1]).length;
  assert.ok(seen[0] > 0, `the first preview has entries: ${seen[0]}`);
  assert.ok(grew >= 2, `the preview grew during the load: ${seen.join(",")}`);
  // The default sample has the same file names: wait for these files' size.
  await page.locator(`[data-testid=summary-bytes][data-value="${bytes[0]}"]`).waitFor(long);
  await page.locator(`[data-testid=summary][data-files="${names.join(",")}"]`).waitFor(long);
  const loadMs = Date.now() - t0;
  await page.locator("[data-testid=check-results][data-state=done]").waitFor(long);
  const ref = inspectJson(...paths);
  const value = (id) => page.getByTestId(id).getAttribute("data-value");
  // The first file's summary, and the totals of all three.
  const f = ref.files[0];
  assert.equal(Number(await value("summary-records")), f.records);
  assert.equal(Number(await value("summary-entries")), f.record_kinds.entry);
  assert.equal(Number(await value("summary-last-index")), f.last_index);
  assert.equal(Number(await value("summary-commit-index")), f.commit_index);
  assert.equal(Number(await value("summary-bytes")), bytes[0]);
  const sum = (k) => ref.files.reduce((a, x) => a + x.entry_bytes[k], 0);
  for (const k of ["stored", "full", "diff"]) {
    assert.equal(Number(await value(`total-${k}`)), sum(k), `total ${k}`);
  }
  // The generator writes a consistent cluster: the check finds nothing.
  assert.equal(Number(await value("check-results")), 0);
  // Memory: the worker's wasm heap (it only grows) stayed below one file.
  let wasmBytes;
  for (const w of page.workers()) {
    const v = await w.evaluate(() => self.ovsdbScopeWasmBytes);
    if (typeof v === "number") wasmBytes = v;
  }
  console.log(JSON.stringify({ mb: MB, files: bytes, firstPreviewMs, firstFrameMs, previews: seen.length, loadMs, wasmBytes }));
  assert.ok(wasmBytes > 0, "the worker reports its memory");
  const total = bytes.reduce((a, b) => a + b, 0);
  assert.ok(WASM_BOUND < total, `the bound ${WASM_BOUND} is below the input's ${total} bytes`);
  assert.ok(wasmBytes < WASM_BOUND, `wasm memory ${wasmBytes} is below ${WASM_BOUND} bytes`);
  assert.deepEqual(problems.pageErrors, []);
  assert.deepEqual(problems.consoleErrors, []);
  assert.deepEqual(problems.foreignRequests, []);
  await page.close();
});

// Time travel on a big file: a long jump shows the rows on screen first (its
// preview: counts and order from the net change, the rows shown read and
// built on their own) and lands the rest later. The rows of the preview are
// the landed database's, at the same places, and the tables' row counts and
// the table's order are those of `ovsdb-scope dump --at` on the same file.
test(`a long jump in Contents on a ${MB} MB file shows its rows first, then lands the same`, { timeout: 20 * 60 * 1000 }, async () => {
  const file = join(dir, "s1.db");
  const { page, problems } = await openPage(browser.context, server.url);
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 120000 });
  await page.getByTestId("file-input").setInputFiles([file]);
  const long = { timeout: 15 * 60 * 1000 };
  await page.locator(`[data-testid=summary-bytes][data-value="${statSync(file).size}"]`).waitFor(long);
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor(long);
  await page.getByTestId("view-contents").click();
  await page.locator("[data-testid=contents][data-state=ready][data-file='s1.db']").waitFor(long);
  await page.locator("[data-testid=table-row-count][data-table=Logical_Flow]").click();
  await page.locator("[data-testid=search-count][data-table=Logical_Flow]").waitFor(long);
  const contents = page.getByTestId("contents");
  const first = Number(await contents.getAttribute("data-first"));
  const last = Number(await contents.getAttribute("data-last"));
  // The rows on screen, the first time the grid says index `at`, and once
  // it shows the landed database's.
  const shownAt = (at, preview) =>
    page.evaluate(
      ([at, preview]) =>
        new Promise((resolve) => {
          const look = () => {
            const g = document.querySelector("[data-testid=row-grid]");
            if (g?.dataset.at !== String(at) || (!preview && g.dataset.preview)) return null;
            const rows = [...g.querySelectorAll("[data-testid=row]")].map((r) => [Number(r.dataset.pos), r.dataset.uuid, r.innerText]);
            return { preview: g.dataset.preview === "true", rows };
          };
          const now = look();
          if (now) return resolve(now);
          const mo = new MutationObserver(() => {
            const v = look();
            if (v) {
              mo.disconnect();
              resolve(v);
            }
          });
          mo.observe(document.body, { subtree: true, attributes: true, childList: true });
        }),
      [at, preview],
    );
  let previews = 0;
  for (const frac of [0.31, 0.57, 0.83]) {
    const at = first + Math.floor((last - first) * frac);
    const firstShown = shownAt(at, true);
    await page.getByTestId("at-index").fill(String(at));
    await page.getByTestId("at-index").press("Enter");
    const early = await firstShown;
    const landed = await shownAt(at, false);
    previews += early.preview ? 1 : 0;
    assert.ok(early.rows.length > 0 && landed.rows.length >= early.rows.length, `rows shown at ${at}`);
    const byPos = new Map(landed.rows.map((r) => [r[0], r]));
    for (const r of early.rows) assert.deepEqual(r, byPos.get(r[0]), `index ${at}: the row at ${r[0]}`);
    // Counts and order against the CLI's database at that index.
    const dump = JSON.parse(execFileSync(cliBin(), ["dump", "--json", "--at", String(at), file], { encoding: "utf8", maxBuffer: 1 << 30 }));
    const uuids = Object.keys(dump.Logical_Flow || {}).sort();
    for (const [pos, uuid] of landed.rows) assert.equal(uuid, uuids[pos], `index ${at}: Logical_Flow row ${pos}`);
    for (const [t, rows] of Object.entries(dump)) {
      const shown = page.locator(`[data-testid=table-row-count][data-table="${t}"]`);
      assert.equal(Number(await shown.getAttribute("data-value")), Object.keys(rows).length, `index ${at}: ${t} rows`);
    }
  }
  console.log(JSON.stringify({ longJumps: 3, previews }));
  assert.ok(previews >= 2, `long jumps shown by their preview first: ${previews} of 3`);
  assert.deepEqual(problems.pageErrors, []);
  assert.deepEqual(problems.consoleErrors, []);
  await page.close();
});
