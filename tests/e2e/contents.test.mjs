// The Contents page (issue 13): the tables and rows of a clustered
// Northbound at an index, checked against the real tools. A standalone copy
// made by `ovsdb-tool cluster-to-standalone` is served by a real
// ovsdb-server on a unix socket; `ovsdb-client dump` gives the row counts,
// `ovn-nbctl find` the rows of a condition; `ovsdb-scope find/history/dump
// --json` (the CLI on the same core) the rest.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, existsSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, openPage, screenshot, useBrowser, hoverChart, inkedPixels } from "./harness.mjs";

let server;
let browser;
useBrowser((s, b) => {
  server = s;
  browser = b;
});

const SAMPLE = "compacted";

function cli() {
  const target = process.env.CARGO_TARGET_DIR || join(ROOT, "target");
  const bin = process.env.OVSDB_SCOPE_BIN || join(target, "release", "ovsdb-scope");
  if (!existsSync(bin)) {
    execFileSync("cargo", ["build", "-q", "--release", "-p", "ovsdb-scope"], { cwd: ROOT, stdio: "inherit" });
  }
  return bin;
}

function scope(...args) {
  return JSON.parse(execFileSync(cli(), args, { cwd: ROOT, encoding: "utf8", maxBuffer: 1 << 28 }));
}

/** A real ovsdb-server serving a standalone copy of `file` on a unix socket. */
async function realServer(file) {
  const dir = mkdtempSync(join(tmpdir(), "ovsdb-scope-contents-"));
  const db = join(dir, "standalone.db");
  execFileSync("ovsdb-tool", ["cluster-to-standalone", db, file]);
  const sock = join(dir, "db.sock");
  const proc = spawn(
    "ovsdb-server",
    [`--remote=punix:${sock}`, `--pidfile=${join(dir, "pid")}`, `--unixctl=${join(dir, "ctl")}`, `--log-file=${join(dir, "log")}`, db],
    { stdio: "ignore" },
  );
  for (let i = 0; i < 100 && !existsSync(sock); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(existsSync(sock), "ovsdb-server did not open its socket");
  return {
    db: `unix:${sock}`,
    dump() {
      // One JSON object per table: {caption: "T table", data, headings}.
      const out = execFileSync("ovsdb-client", ["dump", "--format=json", `unix:${sock}`], { encoding: "utf8", maxBuffer: 1 << 28 });
      const counts = {};
      for (const line of out.split("\n").filter((l) => l.trim())) {
        const t = JSON.parse(line);
        counts[t.caption.replace(/ table$/, "")] = t.data.length;
      }
      return counts;
    },
    find(table, ...conds) {
      const out = execFileSync("ovn-nbctl", [`--db=unix:${sock}`, "--format=json", "find", table, ...conds], { encoding: "utf8" });
      return JSON.parse(out).data.map((r) => r[0][1]).sort();
    },
    close() {
      proc.kill("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function openContents(hash = "") {
  const { page, problems } = await openPage(browser.context, `${server.url}#sample=${SAMPLE}&view=contents${hash}`);
  await page.locator("[data-testid=contents][data-state=ready]").waitFor({ timeout: 60000 });
  return { page, problems };
}

async function rowCounts(page) {
  return page.evaluate(() =>
    Object.fromEntries(
      [...document.querySelectorAll("[data-testid=table-row-count]")].map((e) => [e.dataset.table, Number(e.dataset.value)]),
    ),
  );
}

async function search(page, table, query) {
  await page.locator(`[data-testid=table-row-count][data-table=${table}]`).click();
  await page.getByTestId("search").fill(query);
  await page.waitForFunction(
    ([q, t]) => {
      const c = document.querySelector("[data-testid=search-count]");
      const rows = document.querySelectorAll("[data-testid=row]");
      return c?.dataset.query === q && c.dataset.table === t && (rows.length > 0) === Number(c.dataset.value) > 0;
    },
    [query, table],
  );
  return page.evaluate(() => ({
    total: Number(document.querySelector("[data-testid=search-count]").dataset.value),
    mode: document.querySelector("[data-testid=search-count]").dataset.mode,
    uuids: [...document.querySelectorAll("[data-testid=row]")].map((r) => r.dataset.uuid).sort(),
  }));
}

test("Contents: row counts at the last index equal ovsdb-client dump of a real ovsdb-server; search equals find; history equals history --json", async () => {
  const { page, problems } = await openContents();
  const name = await page.getByTestId("contents").getAttribute("data-file");
  const file = join(ROOT, "static/samples", SAMPLE, name);
  const real = await realServer(file);
  try {
    // The default position is the last committed entry.
    const at = Number(await page.getByTestId("at-index").getAttribute("data-value"));
    assert.equal(at, Number(await page.getByTestId("contents").getAttribute("data-committed")));
    // Row counts per table.
    const want = real.dump();
    const got = await rowCounts(page);
    assert.equal(Number(await page.getByTestId("tables").getAttribute("data-value")), Object.keys(want).length);
    assert.deepEqual(got, want);
    assert.ok(Object.values(want).some((n) => n > 0));

    // A find condition: the same rows as ovn-nbctl find and ovsdb-scope find.
    const lsps = scope("find", "--json", file, "Logical_Switch_Port").data;
    assert.ok(lsps.length > 1);
    const nameCol = scope("find", "--json", file, "Logical_Switch_Port").headings.indexOf("name");
    const one = lsps[0][nameCol];
    for (const cond of [`name=${one}`, `name!=${one}`, `addresses{>=}"${lsps[0][1]}"`]) {
      const s = await search(page, "Logical_Switch_Port", cond);
      assert.equal(s.mode, "conditions", cond);
      const tool = real.find("Logical_Switch_Port", cond);
      const ours = scope("find", "--json", file, "Logical_Switch_Port", cond).data.map((r) => r[0][1]).sort();
      assert.deepEqual(ours, tool, cond);
      assert.equal(s.total, tool.length, cond);
      // The grid shows the first rows, in UUID order as the tools list them.
      assert.ok(s.uuids.length > 0 || tool.length === 0);
      assert.deepEqual(s.uuids, tool.slice(0, s.uuids.length), cond);
    }
    // A substring: every row shown holds it somewhere (UUID or a cell).
    const text = await search(page, "Logical_Switch_Port", one.slice(0, 4).toUpperCase());
    assert.equal(text.mode, "text");
    assert.ok(text.total >= 1);
    const cells = await page.evaluate(() => [...document.querySelectorAll("[data-testid=row]")].map((r) => r.innerText + r.dataset.uuid));
    assert.ok(cells.every((c) => c.toLowerCase().includes(one.slice(0, 4).toLowerCase())));

    // A row's history lists the entries that ovsdb-scope history --json lists.
    const s = await search(page, "Logical_Switch_Port", `name=${one}`);
    const uuid = s.uuids[0];
    await page.locator(`[data-testid=row][data-uuid="${uuid}"]`).click();
    await page.locator("[data-testid=row-history]").first().waitFor();
    const hist = scope("history", "--json", file, uuid).entries;
    const shown = await page.evaluate(() =>
      [...document.querySelectorAll("[data-testid=row-history]")].map((e) => [e.dataset.index, e.dataset.record, e.dataset.change]),
    );
    assert.deepEqual(shown, hist.map((e) => [String(e.index ?? ""), String(e.record), e.change]));
    assert.ok(hist.length >= 1);

    // A reference is a link to its row; the target lists its referrer.
    await search(page, "Logical_Switch", "");
    const link = page.locator("[data-testid=row] a.ref[data-ref-table=Logical_Switch_Port]").first();
    const switchUuid = await link.evaluate((a) => a.closest("[data-testid=row]").dataset.uuid);
    const target = await link.getAttribute("data-ref-uuid");
    await link.click();
    await page.locator(`[data-testid=row-panel][data-uuid="${target}"]`).waitFor();
    await page.locator(`[data-testid=row][data-uuid="${target}"].selected`).waitFor();
    await page.locator(`[data-testid=referrer][data-table=Logical_Switch][data-uuid="${switchUuid}"]`).waitFor();
    assert.ok(await page.locator(".contents ul.tables button.active[data-table=Logical_Switch_Port]").count());

    // Overview: ovsdb-scope show's text.
    const show = execFileSync(cli(), ["show", file], { encoding: "utf8" });
    // (Built by the worker once the panel, open for a small database, shows it.)
    const shownAt = await page.getByTestId("at-index").getAttribute("data-value");
    await page.locator(`[data-testid=overview][data-at="${shownAt}"]`).waitFor();
    assert.equal((await page.getByTestId("overview").innerText()).trim(), show.trim());

    assert.deepEqual(problems.consoleErrors, []);
    assert.deepEqual(problems.pageErrors, []);
    await screenshot(page, "contents");
  } finally {
    real.close();
  }
});

test("Contents: another index, from the field or the URL hash, shows the database dump --at gives", async () => {
  const { page, problems } = await openContents();
  const name = await page.getByTestId("contents").getAttribute("data-file");
  const file = join(ROOT, "static/samples", SAMPLE, name);
  const first = Number(await page.getByTestId("contents").getAttribute("data-first"));
  const last = Number(await page.getByTestId("contents").getAttribute("data-last"));
  assert.ok(last > first);
  const pick = Math.floor((first + last) / 2);
  const counts = (i) =>
    Object.fromEntries(Object.entries(scope("dump", "--json", "--at", String(i), file)).map(([t, rows]) => [t, Object.keys(rows).length]));
  // Count the page's requests to the worker: Enter and the field's
  // change event must ask for the index once.
  await page.evaluate(() => {
    window.__opens = 0;
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (m, ...rest) {
      if (m && m.type === "contents-open") window.__opens++;
      return post.call(this, m, ...rest);
    };
  });
  await page.getByTestId("at-index").fill(String(pick));
  await page.getByTestId("at-index").press("Enter");
  await page.locator(`[data-testid=at-index][data-value="${pick}"]`).waitFor();
  await page.locator("[data-testid=contents][data-state=ready]").waitFor();
  // The rows shown are read at the new index (what the jumps bench waits for).
  await page.locator(`[data-testid=row-grid][data-at="${pick}"]`).waitFor();
  await page.getByTestId("row-grid").focus();
  assert.equal(await page.evaluate(() => window.__opens), 1, "one request for one index");
  assert.deepEqual(await rowCounts(page), counts(pick));
  assert.match(page.url(), new RegExp(`ci=${pick}`));
  // ] steps on (each step from where the last one landed: the worker
  // reads only the records in between). The rows read at the index before
  // stay on screen until the new ones come: the grid never empties.
  await page.getByTestId("row-grid").focus();
  assert.ok((await page.getByTestId("row").count()) > 0, "rows shown before the steps");
  await page.evaluate(() => {
    window.__fewestRows = Infinity;
    const mo = new MutationObserver(() => {
      const n = document.querySelectorAll("[data-testid=row-grid] [data-testid=row]").length;
      window.__fewestRows = Math.min(window.__fewestRows, n);
    });
    mo.observe(document.body, { subtree: true, childList: true });
    window.__stopCounting = () => mo.disconnect();
  });
  for (let at = pick + 1; at <= Math.min(pick + 3, last); at++) {
    await page.keyboard.press("]");
    await page.locator(`[data-testid=at-index][data-value="${at}"]`).waitFor();
    await page.locator("[data-testid=contents][data-state=ready]").waitFor();
    await page.locator(`[data-testid=row-grid][data-at="${at}"]`).waitFor();
    assert.deepEqual(await rowCounts(page), counts(at));
  }
  const fewest = await page.evaluate(() => {
    window.__stopCounting();
    return window.__fewestRows;
  });
  assert.ok(fewest > 0, `the grid emptied during a step (fewest rows seen: ${fewest})`);
  // A link with the index reopens it.
  const again = await openContents(`&lane=0&ci=${first}`);
  await again.page.locator(`[data-testid=at-index][data-value="${first}"]`).waitFor();
  assert.deepEqual(await rowCounts(again.page), counts(first));
  // An index out of range is clamped, never an error.
  await again.page.getByTestId("at-index").fill("999999999");
  await again.page.getByTestId("at-index").press("Enter");
  await again.page.locator(`[data-testid=at-index][data-value="${last}"]`).waitFor();
  for (const p of [problems, again.problems]) {
    assert.deepEqual(p.consoleErrors, []);
    assert.deepEqual(p.pageErrors, []);
  }
});

test("Contents: what made it big equals sizes --by table --json; the compaction what-if equals sizes --at", async () => {
  const { page, problems } = await openContents();
  const name = await page.getByTestId("contents").getAttribute("data-file");
  const file = join(ROOT, "static/samples", SAMPLE, name);
  await page.getByTestId("sizes-measure").click();
  await page.locator("[data-testid=size-by-table]").first().waitFor({ timeout: 60000 });
  const at = Number(await page.getByTestId("at-index").getAttribute("data-value"));
  const [ref] = scope("sizes", "--by", "table", "--at", String(at), "--json", file);
  const rows = await page.evaluate(() =>
    Object.fromEntries(
      [...document.querySelectorAll("[data-testid=size-by-table]")].map((r) => [
        r.dataset.table,
        { stored: Number(r.dataset.bytesStored), full: Number(r.dataset.bytesFull), diff: Number(r.dataset.bytesDiff) },
      ]),
    ),
  );
  assert.deepEqual(rows, ref.by_table);
  const c = page.getByTestId("compaction-whatif");
  assert.equal(Number(await c.getAttribute("data-snapshot-bytes")), ref.compaction.snapshot_bytes);
  assert.equal(Number(await c.getAttribute("data-log-bytes")), ref.compaction.log_bytes);
  assert.equal(await page.locator("[data-testid=largest-entry]").count(), ref.largest.length);
  // The chart was drawn (plotters on the canvas): some pixels are not white.
  const inked = await inkedPixels(page, "size-chart");
  assert.ok(inked > 500, `chart pixels: ${inked}`);
  // The snapshot at this index by table, and the growth over time, as
  // `sizes --json` gives them.
  const snapshotRows = () =>
    page.evaluate(() =>
      Object.fromEntries(
        [...document.querySelectorAll("[data-testid=snapshot-by-table]")].map((r) => [r.dataset.table, Number(r.dataset.bytes)]),
      ),
    );
  const [all] = scope("sizes", "--at", String(at), "--json", file);
  assert.deepEqual(await snapshotRows(), all.compaction.by_table);
  const growth = page.getByTestId("growth-chart");
  assert.equal(Number(await growth.getAttribute("data-points")), all.growth.length);
  assert.ok(all.growth.length > 1);
  const growthInk = await inkedPixels(page, "growth-chart");
  assert.ok(growthInk > 500, `growth chart pixels: ${growthInk}`);
  // Hovering names the values: a table's three sizes, the growth at a point.
  assert.match(await hoverChart(page, "size-chart"), /^\S+: .+ as stored, .+ with full values, .+ with diffs$/);
  assert.match(await hoverChart(page, "growth-chart"), /^index \d+: \S+ [\d.]+ (B|KiB|MiB)/);
  // Another index: the what-if follows it.
  const first = Number(await page.getByTestId("contents").getAttribute("data-first"));
  await page.getByTestId("at-index").fill(String(first));
  await page.getByTestId("at-index").press("Enter");
  await page.locator(`[data-testid=compaction-whatif][data-at="${first}"]`).waitFor();
  const [ref2] = scope("sizes", "--at", String(first), "--json", file);
  assert.equal(Number(await c.getAttribute("data-snapshot-bytes")), ref2.compaction.snapshot_bytes);
  assert.equal(Number(await c.getAttribute("data-log-bytes")), ref2.compaction.log_bytes);
  assert.deepEqual(await snapshotRows(), ref2.compaction.by_table);
  await screenshot(page, "contents-sizes");
  assert.deepEqual(problems.consoleErrors, []);
  assert.deepEqual(problems.pageErrors, []);
});

// Measured, not asserted (BENCHMARKS.md): a generated Southbound with 100k
// Logical_Flow rows (made here, never committed), opened in Contents.
// CONTENTS_BENCH_DIR names a folder where the same command already wrote
// its files (kept), to skip the minutes it takes.
test("Contents: a table of 100k rows opens, scrolls and filters (figures printed)", { timeout: 1800000 }, async () => {
  const reuse = process.env.CONTENTS_BENCH_DIR;
  const dir = reuse || mkdtempSync(join(tmpdir(), "ovsdb-scope-contents-big-"));
  try {
    const t0 = Date.now();
    if (!reuse) execFileSync(cli(), ["generate", "southbound", dir, "--datapaths", "500", "--flows-per-datapath", "200", "--entries", "200"], { stdio: "ignore" });
    const genMs = Date.now() - t0;
    const file = join(dir, "s1.db");
    // Start from another sample, so the big s1.db is told apart by name.
    const { page, problems } = await openPage(browser.context, `${server.url}#sample=standalone&view=contents`);
    await page.locator("[data-testid=contents][data-state=ready][data-file='nb.db']").waitFor({ timeout: 60000 });
    const tLoad = Date.now();
    await page.getByTestId("file-input").setInputFiles(file);
    await page.locator("[data-testid=contents][data-state=ready][data-file='s1.db']").waitFor({ timeout: 900000 });
    const openMs = Date.now() - tLoad;
    const flows = Number(await page.locator("[data-testid=table-row-count][data-table=Logical_Flow]").getAttribute("data-value"));
    assert.ok(flows >= 100000, `Logical_Flow rows: ${flows}`);
    // A database this large has its overview built only when its panel
    // opens, and again at each index while it is open.
    const overview = page.locator("details.overview-box");
    assert.equal(await overview.evaluate((d) => d.open), false);
    assert.match(await overview.locator("summary").innerText(), /^Overview \(OVN_Southbound, \d+ rows\)$/);
    assert.equal(await page.getByTestId("overview").innerText(), "");
    const builtAt = async (at) => {
      await page.locator(`[data-testid=overview][data-at="${at}"]`).waitFor({ timeout: 120000 });
      const want = execFileSync(cli(), ["show", "--at", String(at), file], { encoding: "utf8", maxBuffer: 1 << 28 });
      assert.equal((await page.getByTestId("overview").innerText()).trim(), want.trim());
    };
    const lastAt = Number(await page.getByTestId("at-index").getAttribute("data-value"));
    await overview.locator("summary").click();
    await builtAt(lastAt);
    await page.getByTestId("at-index").fill(String(lastAt - 100));
    await page.getByTestId("at-index").press("Enter");
    await builtAt(lastAt - 100);
    await overview.locator("summary").click();
    assert.equal(await overview.evaluate((d) => d.open), false);
    await page.getByTestId("at-index").fill(String(lastAt));
    await page.getByTestId("at-index").press("Enter");
    await page.locator(`[data-testid=at-index][data-value="${lastAt}"]`).waitFor({ timeout: 120000 });
    await page.locator("[data-testid=contents][data-state=ready]").waitFor({ timeout: 120000 });
    const measure = (fn, ...args) => page.evaluate(fn, args);
    // Opening the table: click to the first rows on screen.
    const tableMs = await measure(async () => {
      const t = performance.now();
      document.querySelector("[data-testid=table-row-count][data-table=Logical_Flow]").click();
      await new Promise((ok) => {
        const check = () => {
          const c = document.querySelector("[data-testid=search-count]");
          if (c?.dataset.table === "Logical_Flow" && document.querySelector("[data-testid=row]")) ok();
          else requestAnimationFrame(check);
        };
        check();
      });
      return performance.now() - t;
    });
    const workerTableMs = Number((await page.getByTestId("search-count").innerText()).match(/([\d.]+) ms/)[1]);
    // Only the visible window is in the DOM.
    const inDom = await page.locator("[data-testid=row]").count();
    assert.ok(inDom > 0 && inDom < 100, `rows in the DOM: ${inDom}`);
    // Scrolling: 60 steps over the whole table, one per frame; the frame
    // times and the time until the rows of the last position are shown.
    const scroll = await measure(async () => {
      const g = document.querySelector("[data-testid=row-grid]");
      const frames = [];
      let last = performance.now();
      for (let i = 1; i <= 60; i++) {
        g.scrollTop = (g.scrollHeight * i) / 61;
        await new Promise((ok) => requestAnimationFrame(ok));
        const now = performance.now();
        frames.push(now - last);
        last = now;
      }
      const t = performance.now();
      const want = Math.floor(g.scrollTop / 24);
      await new Promise((ok) => {
        const check = () => {
          const rows = [...document.querySelectorAll("[data-testid=row]")].map((r) => Number(r.dataset.pos));
          if (rows.some((p) => Math.abs(p - want) < 30)) ok();
          else requestAnimationFrame(check);
        };
        check();
      });
      frames.sort((a, b) => a - b);
      return { medianFrameMs: frames[30], maxFrameMs: frames[59], settleMs: performance.now() - t };
    });
    // Filters: a find condition and a substring.
    const filter = async (q) =>
      measure(async ([q]) => {
        const box = document.querySelector("[data-testid=search]");
        const t = performance.now();
        box.value = q;
        box.dispatchEvent(new InputEvent("input", { bubbles: true }));
        await new Promise((ok) => {
          const check = () => {
            const c = document.querySelector("[data-testid=search-count]");
            if (c?.dataset.query === q) ok();
            else requestAnimationFrame(check);
          };
          check();
        });
        const c = document.querySelector("[data-testid=search-count]");
        return { query: q, rows: Number(c.dataset.value), mode: c.dataset.mode, pageMs: performance.now() - t, workerMs: Number(c.innerText.match(/([\d.]+) ms/)[1]) };
      }, q);
    const filters = [await filter("priority=100"), await filter("ct_next"), await filter("")];
    const cond = filters[0];
    const ref = scope("find", "--json", file, "Logical_Flow", "priority=100").data.length;
    assert.equal(cond.rows, ref);
    // One row's history.
    const hist = await measure(async () => {
      const r = document.querySelector("[data-testid=row]");
      const t = performance.now();
      r.click();
      await new Promise((ok) => {
        const check = () => (document.querySelector("[data-testid=row-history]") ? ok() : requestAnimationFrame(check));
        check();
      });
      return performance.now() - t;
    });
    const figures = { fileBytes: statSync(file).size, flows, genMs, openMs, tableMs, workerTableMs, inDom, scroll, filters, historyMs: hist };
    console.log("contents-bench", JSON.stringify(figures));
    assert.deepEqual(problems.consoleErrors, []);
    assert.deepEqual(problems.pageErrors, []);
  } finally {
    if (!reuse) rmSync(dir, { recursive: true, force: true });
  }
});

test("Contents: comparing two indexes lists the rows diff --json lists", async () => {
  const { page, problems } = await openContents();
  const name = await page.getByTestId("contents").getAttribute("data-file");
  const file = join(ROOT, "static/samples", SAMPLE, name);
  const first = Number(await page.getByTestId("contents").getAttribute("data-first"));
  const at = Number(await page.getByTestId("at-index").getAttribute("data-value"));
  await page.getByTestId("diff-from").fill(String(first));
  await page.getByTestId("diff-from").press("Enter");
  await page.locator(`[data-testid=diff][data-from="${first}"][data-to="${at}"]`).waitFor({ timeout: 60000 });
  const ref = scope("diff", "--from", String(first), "--to", String(at), "--json", file);
  const shown = await page.evaluate(() =>
    [...document.querySelectorAll("[data-testid=diff-table]")].map((t) => [t.dataset.table, Number(t.dataset.added), Number(t.dataset.removed), Number(t.dataset.changed)]),
  );
  assert.deepEqual(shown, ref.tables.map((t) => [t.table, t.added.length, t.removed.length, t.changed.length]));
  assert.ok(shown.length > 0);
  const added = await page.evaluate(() => [...document.querySelectorAll("[data-testid=diff] a.ref")].map((a) => a.dataset.refUuid).sort());
  assert.deepEqual(added, ref.tables.flatMap((t) => t.added).sort());
  assert.deepEqual(problems.consoleErrors, []);
  assert.deepEqual(problems.pageErrors, []);
});

test("Contents: its keys work as soon as v opens it, before any click", async () => {
  const { page, problems } = await openPage(browser.context, `${server.url}#sample=${SAMPLE}`);
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 30000 });
  await page.keyboard.press("v");
  await page.locator("[data-testid=contents][data-state=ready]").waitFor({ timeout: 60000 });
  const at = Number(await page.getByTestId("at-index").getAttribute("data-value"));
  const first = Number(await page.getByTestId("contents").getAttribute("data-first"));
  assert.ok(at > first, `${at} > ${first}`);
  await page.keyboard.press("[");
  await page.locator(`[data-testid=at-index][data-value="${at - 1}"]`).waitFor({ timeout: 20000 });
  await page.keyboard.press("]");
  await page.locator(`[data-testid=at-index][data-value="${at}"]`).waitFor({ timeout: 20000 });
  assert.deepEqual(problems.consoleErrors, []);
  assert.deepEqual(problems.pageErrors, []);
});

test("Contents: the table list puts the tables with rows first, then the empty ones, each by name", async () => {
  const { page, problems } = await openContents();
  const list = await page.$$eval("[data-testid=table-row-count]", (els) => els.map((e) => [e.dataset.table, Number(e.dataset.value)]));
  const full = list.filter(([, n]) => n > 0);
  const empty = list.filter(([, n]) => n === 0);
  assert.ok(full.length > 0 && empty.length > 0, JSON.stringify(list));
  assert.deepEqual(list, [...full, ...empty]);
  const names = (l) => l.map(([t]) => t);
  const byName = (l) => [...names(l)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  assert.deepEqual(names(full), byName(full));
  assert.deepEqual(names(empty), byName(empty));
  // The counts are the database's (the first test checks them against a real server).
  assert.deepEqual(Object.fromEntries(list), await rowCounts(page));
  assert.deepEqual(problems.pageErrors, []);
  assert.deepEqual(problems.consoleErrors, []);
  await page.close();
});
