// The explorer (issue 6): bundled samples against `ovsdb-scope inspect --json`,
// storage modes, damage banner, URL-hash sharing, keys, inspector, exports,
// privacy (CSP, no foreign requests) and a screenshot of every sample.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, mkdtempSync, statSync, readdirSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, serveDir, launchBrowser, openPage, screenshot, docScreenshot, inspectJson, useBrowser } from "./harness.mjs";

let server;
let browser;
useBrowser((s, b) => ([server, browser] = [s, b]));

const SAMPLES = {
  "leader-failover": ["s1.db", "s2.db", "s3.db"],
  "ls-add-follower": ["s1.db", "s2.db", "s3.db"],
  "acl-portgroup-diff": ["s1.db", "s2.db", "s3.db"],
  "acl-portgroup-full": ["s1.db", "s2.db", "s3.db"],
  "election-timer": ["s1.db", "s2.db", "s3.db"],
  compacted: ["s1.db", "s2.db", "s3.db"],
  membership: ["s1.db", "s2.db", "s3.db"],
  "sb-scale": ["s1.db", "s2.db", "s3.db"],
  standalone: ["nb.db"],
};

const value = (page, id) => page.getByTestId(id).getAttribute("data-value");

async function ready(page, files) {
  await page.locator(`[data-testid=summary][data-files="${files.join(",")}"]`).waitFor({ timeout: 30000 });
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 30000 });
}

function noProblems(problems) {
  assert.deepEqual(problems.consoleErrors, []);
  assert.deepEqual(problems.pageErrors, []);
  assert.deepEqual(problems.foreignRequests, []);
}

test("first open shows the bundled leader-failover cluster, with a CSP", async () => {
  const { page, problems } = await openPage(browser.context, server.url);
  await ready(page, SAMPLES["leader-failover"]);
  assert.equal(await page.getByTestId("sample-picker").inputValue(), "leader-failover");
  assert.equal(await value(page, "cluster-servers"), "3");
  await page.locator("[data-testid=check-results][data-state=done]").waitFor({ timeout: 30000 });
  assert.equal(await page.getByTestId("check-results").getAttribute("data-value"), "0");
  const csp = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute("content");
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /connect-src 'self'/);
  assert.doesNotMatch(csp, /'unsafe-eval'|script-src[^;]*'unsafe-inline'/);
  assert.match(page.url(), /#sample=leader-failover&mode=stored/);
  noProblems(problems);
  await page.close();
});

for (const [sample, files] of Object.entries(SAMPLES)) {
  test(`sample ${sample}: figures match inspect --json in every storage mode`, async () => {
    const ref = inspectJson(...files.map((f) => join("static/samples", sample, f)));
    const first = ref.files[0];
    const { page, problems } = await openPage(browser.context, `${server.url}#sample=${sample}`);
    await ready(page, files);
    assert.equal(await value(page, "summary-format"), first.format);
    assert.equal(await value(page, "summary-database"), first.database);
    assert.equal(Number(await value(page, "summary-records")), first.records);
    const entries = first.format === "clustered" ? first.record_kinds.entry : first.record_kinds.txn;
    assert.equal(Number(await value(page, "summary-entries")), entries);
    assert.equal(await value(page, "summary-terms"), first.terms.join(","));
    assert.equal(await value(page, "summary-last-index"), first.last_index === null ? "" : String(first.last_index));
    assert.equal(await value(page, "summary-commit-index"), first.commit_index === null ? "" : String(first.commit_index));
    if (ref.cluster) {
      assert.equal(Number(await value(page, "cluster-servers")), ref.cluster.servers.length);
      const perServer = await page.getByTestId("server-commit-index").evaluateAll((els) => els.map((e) => e.dataset.value));
      for (const f of ref.files) {
        assert.ok(perServer.includes(f.commit_index === null ? "" : String(f.commit_index)), `${f.path} commit index`);
      }
      const terms = await page.getByTestId("term").evaluateAll((els) => els.map((e) => Number(e.dataset.value)));
      assert.deepEqual(terms, ref.cluster.terms);
    }
    if (first.format === "standalone") {
      // No servers, terms or invariant check claimed for a standalone file.
      assert.match(await page.getByTestId("cluster-servers").innerText(), /No Raft cluster/);
      assert.equal(await page.getByText("cluster invariants hold").count(), 0);
    }
    for (const mode of ["full", "diff", "stored"]) {
      await page.getByTestId(`storage-${mode}`).click();
      assert.equal(await page.getByTestId(`storage-${mode}`).getAttribute("aria-pressed"), "true");
      const want = first.entry_bytes[mode];
      assert.equal(await value(page, "summary-entry-bytes"), want === null ? "" : String(want), mode);
      const total = ref.files.every((f) => f.entry_bytes[mode] !== null)
        ? String(ref.files.reduce((a, f) => a + f.entry_bytes[mode], 0))
        : "";
      assert.equal(await value(page, `total-${mode}`), total, `total ${mode}`);
    }
    await screenshot(page, `sample-${sample}`);
    noProblems(problems);
    await page.close();
  });
}

test("a corrupt copy in a cluster shows the banner and the valid prefix", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ovsdb-scope-corrupt-"));
  const paths = [];
  for (const f of SAMPLES["leader-failover"]) {
    const bytes = readFileSync(join(ROOT, "static/samples/leader-failover", f));
    const p = join(dir, f);
    // Flip one byte in the middle of s2.db: its SHA-1 no longer matches.
    if (f === "s2.db") bytes[Math.floor(bytes.length / 2)] ^= 0x20;
    writeFileSync(p, bytes);
    paths.push(p);
  }
  // A damaged record in the middle is stepped over (salvage): the CLI
  // reports it in `skipped`, and the records after it are still read.
  const ref = inspectJson(...paths).files[1];
  assert.equal(ref.truncated, null);
  assert.equal(ref.skipped.length, 1);
  const span = ref.skipped[0];
  const { page, problems } = await openPage(browser.context, server.url);
  await ready(page, SAMPLES["leader-failover"]);
  await page.getByTestId("file-input").setInputFiles(paths);
  await page.locator("[data-testid=damage-banner]").waitFor({ timeout: 20000 });
  const banner = page.getByTestId("damage-banner");
  assert.equal(await banner.getAttribute("data-kind"), "skipped");
  assert.equal(Number(await banner.getAttribute("data-record")), span.record);
  assert.equal(Number(await banner.getAttribute("data-offset")), span.offset);
  assert.equal(Number(await banner.getAttribute("data-bytes")), span.bytes);
  assert.match(await banner.innerText(), /s2\.db is damaged at record \d+ \(byte offset \d+\).*bytes were skipped/);
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor();
  assert.equal(await value(page, "cluster-servers"), "3");
  await screenshot(page, "corrupt-s2");
  assert.deepEqual(problems.pageErrors, []);
  assert.deepEqual(problems.foreignRequests, []);
  await page.close();
});

test("a database with a schema and no transactions: the axis starts at 0 and the page says so", async () => {
  const file = join(ROOT, "tests/fixtures/schema-only/vswitch.db");
  const { page, problems } = await openPage(browser.context, server.url);
  await ready(page, SAMPLES["leader-failover"]);
  await page.getByTestId("file-input").setInputFiles(file);
  await ready(page, ["vswitch.db"]);
  const ticks = (await page.getByTestId("timeline").getAttribute("data-ticks")).split(",");
  assert.equal(ticks[0], "0", `ticks ${ticks}`);
  assert.ok(ticks.every((t) => !t.startsWith("-")), `ticks ${ticks}`);
  assert.match(await page.getByTestId("no-entries").innerText(), /^vswitch\.db: no transactions to draw/);
  noProblems(problems);
  await page.close();
});

test("a file with CRLF line ends is listed as unreadable, with record and offset, and leaves no empty card", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ovsdb-scope-crlf-"));
  const crlf = join(dir, "nb-crlf.db");
  const text = readFileSync(join(ROOT, "static/samples/standalone/nb.db"), "latin1");
  writeFileSync(crlf, text.replace(/\n/g, "\r\n"), "latin1");
  const { page, problems } = await openPage(browser.context, server.url);
  await ready(page, SAMPLES["leader-failover"]);
  await page.getByTestId("file-input").setInputFiles(crlf);
  const row = page.locator('[data-testid=ignored-row][data-path="nb-crlf.db"]');
  await row.waitFor({ timeout: 20000 });
  assert.match(await row.innerText(), /damaged, unreadable: record 0 at byte offset 0: .*CR before LF/);
  assert.equal(await page.locator('[data-testid=input-row][data-path="nb-crlf.db"]').count(), 0);
  assert.equal(await value(page, "inputs-found"), "0");
  // No timeline: no empty card where it would be.
  assert.equal(await page.locator("section.plot").isVisible(), false);
  noProblems(problems);
  await page.close();
});

test("lanes of files from an archive are labelled by what tells them apart, the whole path in the tooltip", async () => {
  const page = await browser.context.newPage();
  // Record what the page writes on its canvases.
  await page.addInitScript(() => {
    window.__texts = new Set();
    const fill = CanvasRenderingContext2D.prototype.fillText;
    CanvasRenderingContext2D.prototype.fillText = function (t, ...rest) {
      window.__texts.add(String(t));
      return fill.call(this, t, ...rest);
    };
  });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(server.url);
  await ready(page, SAMPLES["leader-failover"]);
  await page.getByTestId("file-input").setInputFiles(join(ROOT, "tests/fixtures/incidents/must-gather/cluster.tar.gz"));
  const names = ["s1", "s2", "s3"].map((s) => `cluster.tar.gz/${s}/var/lib/ovn/etc/ovnnb_db.db`);
  await ready(page, names);
  await page.waitForTimeout(300);
  const texts = await page.evaluate(() => [...window.__texts]);
  for (const s of ["s1", "s2", "s3"]) {
    assert.ok(texts.some((t) => t.startsWith(`${s}/…`)), `a label of ${s} in ${texts.filter((t) => t.includes("/"))}`);
  }
  assert.ok(!texts.some((t) => t.startsWith("cluster.tar.gz/")), "no label cut after the archive's name");
  // Hovering a label shows the whole path.
  await page.getByTestId("timeline").hover({ position: { x: 30, y: 45 } });
  assert.equal(await page.getByTestId("tooltip").innerText(), names[0]);
  assert.deepEqual(errors, []);
  await page.close();
});

test("a second worker checks the cluster while the first loads it, with the same result as one worker", async () => {
  // With a second worker (`#workers=2`; by default from three cores on)
  // the load's own walk leaves the check out and that worker runs it;
  // `#workers=1` checks in the load's walk. Same files, same check: the
  // sample, and a copy with s2.db damaged.
  const dir = mkdtempSync(join(tmpdir(), "ovsdb-scope-checkworker-"));
  const sets = [[], []];
  for (const f of SAMPLES["leader-failover"]) {
    const bytes = readFileSync(join(ROOT, "static/samples/leader-failover", f));
    sets[0].push(join(ROOT, "static/samples/leader-failover", f));
    if (f === "s2.db") bytes[Math.floor(bytes.length / 3)] ^= 0x20;
    const p = join(dir, f);
    writeFileSync(p, bytes);
    sets[1].push(p);
  }
  const checkOf = async (hash, paths) => {
    const { page, problems } = await openPage(browser.context, server.url + hash);
    await ready(page, SAMPLES["leader-failover"]);
    await page.getByTestId("file-input").setInputFiles(paths);
    // The second load of the page (the sample was the first), checked.
    await page.locator("[data-testid=check-results][data-state=done][data-loads='2']").waitFor({ timeout: 30000 });
    const el = page.getByTestId("check-results");
    const got = {
      worker: await el.getAttribute("data-worker"),
      ms: await el.getAttribute("data-ms"),
      violations: await el.getAttribute("data-value"),
      text: await el.innerText(),
      cores: await page.evaluate(() => navigator.hardwareConcurrency),
    };
    assert.deepEqual(problems.pageErrors, []);
    assert.deepEqual(problems.consoleErrors, []);
    await page.close();
    return got;
  };
  for (const paths of sets) {
    const two = await checkOf("#workers=2", paths);
    const one = await checkOf("#workers=1", paths);
    assert.equal(one.worker, "load");
    assert.equal(two.worker, "own");
    assert.ok(Number(two.ms) >= 0, two.ms);
    assert.equal(two.violations, one.violations);
    assert.equal(two.text, one.text);
    assert.match(one.text, /^check: /m);
  }
});

test("the URL hash reopens a sample with its zoom and storage mode; keys navigate", async () => {
  const { page, problems } = await openPage(browser.context, `${server.url}#sample=sb-scale&mode=diff&zoom=2&at=20`);
  await ready(page, SAMPLES["sb-scale"]);
  const canvas = page.getByTestId("timeline");
  assert.equal(await page.getByTestId("storage-diff").getAttribute("aria-pressed"), "true");
  assert.ok(Math.abs(Number(await canvas.getAttribute("data-zoom")) - 2) < 0.01);
  const view0 = await canvas.getAttribute("data-view");
  await page.keyboard.press("ArrowRight");
  await page.waitForFunction((v) => document.querySelector("[data-testid=timeline]").dataset.view !== v, view0);
  await page.keyboard.press("+");
  await page.waitForFunction(() => Number(document.querySelector("[data-testid=timeline]").dataset.zoom) > 2.9);
  // Pans and zooms reach the URL at most every 150 ms.
  await page.waitForURL(/zoom=3\.000/, { timeout: 5000 });
  await page.keyboard.press("0");
  await page.waitForFunction(() => Number(document.querySelector("[data-testid=timeline]").dataset.zoom) === 1);
  await page.keyboard.press("f");
  assert.equal(await page.getByTestId("storage-full").getAttribute("aria-pressed"), "true");
  assert.match(page.url(), /mode=full/);
  await page.keyboard.press("?");
  await page.getByTestId("help").waitFor();
  await page.keyboard.press("?");
  assert.equal(await page.getByTestId("help").count(), 0);
  noProblems(problems);
  await page.close();
});

test("wheel zooms, hovering shows a tooltip, clicking an entry opens the inspector", async () => {
  const { page, problems } = await openPage(browser.context, server.url);
  await ready(page, SAMPLES["leader-failover"]);
  const canvas = page.getByTestId("timeline");
  const box = await canvas.boundingBox();
  // Lane 0's entry row (layout: axis 34 px, band 16 px, ticks 22 px).
  const y = box.y + 34 + 16 + 11;
  const x = box.x + 120 + (box.width - 120) * 0.5;
  await page.mouse.move(x, y);
  await page.getByTestId("tooltip").waitFor();
  assert.match(await page.getByTestId("tooltip").innerText(), /index \d+ · term \d/);
  await page.mouse.click(x, y);
  await page.locator("[data-testid=inspector][data-state=entry]").waitFor();
  const term = Number(await page.getByTestId("inspector-term").innerText());
  assert.ok(term === 1 || term === 2);
  // The entry's _date as a full UTC date and time, checked against the
  // browser's own Date; Raft-internal entries have none.
  const dateMs = await page.getByTestId("inspector-date").getAttribute("data-value");
  const kind = await page.getByTestId("inspector-kind").innerText();
  if (kind === "entry with data") {
    const iso = new Date(Number(dateMs)).toISOString().replace("T", " ").replace("Z", "");
    assert.ok((await page.getByTestId("inspector-date").innerText()).startsWith(`${iso} UTC`), iso);
  } else {
    assert.equal(dateMs, "");
    assert.equal(await page.getByTestId("inspector-date").innerText(), "—");
  }
  await page.locator("[data-testid=inspector] .changes").waitFor();
  await page.mouse.move(x, y);
  await page.mouse.wheel(0, -300);
  await page.waitForFunction(() => Number(document.querySelector("[data-testid=timeline]").dataset.zoom) > 1);
  noProblems(problems);
  await page.close();
});

// Per record of `ovsdb-tool -m show-log` (recorded from the real tool when
// the samples were made): its log index and the rows it changed per table.
function showLogRows(sample, file = "s1") {
  const text = readFileSync(join(ROOT, "tests/fixtures/samples", sample, `${file}.show-log.txt`), "utf8");
  const out = new Map();
  for (const rec of text.split(/^record (?=\d+:)/m).slice(1)) {
    const index = rec.match(/^ index: (\d+)/m);
    if (!index) continue;
    const tables = {};
    for (const [, t] of rec.matchAll(/^  table (\S+) /gm)) tables[t] = (tables[t] || 0) + 1;
    out.set(Number(index[1]), tables);
  }
  return out;
}

async function inspectorTables(page) {
  await page.locator("[data-testid=inspector-changes]").waitFor();
  return page.$$eval("[data-testid=inspector-table]", (els) =>
    Object.fromEntries(els.map((e) => [e.dataset.table, Number(e.dataset.rows)])),
  );
}

test("the inspector of a large entry stays readable: tables collapsed with counts, rows a page at a time, long values folded", async () => {
  const rows = showLogRows("sb-scale");
  // The entry that changes the most rows (100 Port_Binding inserts).
  const [index, tables] = [...rows].sort((a, b) =>
    Object.values(b[1]).reduce((x, y) => x + y, 0) - Object.values(a[1]).reduce((x, y) => x + y, 0))[0];
  const total = Object.values(tables).reduce((x, y) => x + y, 0);
  assert.ok(total >= 100, `${total}`);
  const { page, problems } = await openPage(browser.context, `${server.url}#sample=sb-scale&entry=0:${index}`);
  await ready(page, SAMPLES["sb-scale"]);
  // The link opened the inspector on that entry, and the hash keeps it.
  await page.locator(`[data-testid=inspector][data-index="${index}"]`).waitFor();
  assert.deepEqual(await inspectorTables(page), tables);
  assert.match(await page.evaluate(() => location.hash), new RegExp(`entry=0:${index}`));
  // Collapsed: the inspector is a screenful, not thousands of pixels.
  const box = await page.getByTestId("inspector").boundingBox();
  assert.ok(box.height < 900, `inspector ${box.height} px tall`);
  const table = page.locator("[data-testid=inspector-table]").first();
  assert.equal(await table.evaluate((e) => e.open), false);
  // A table lists its rows 50 at a time.
  await table.locator("summary").first().click();
  const listed = () => table.locator("[data-testid=inspector-row]").count();
  assert.equal(await listed(), 50);
  await table.getByTestId("inspector-more").click();
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=inspector-row]").length === 100);
  assert.equal(await table.getByTestId("inspector-more").count(), 0);
  const uuids = await table.locator("[data-testid=inspector-row]").evaluateAll((els) => els.map((e) => e.dataset.uuid));
  assert.equal(new Set(uuids).size, 100);
  // The long ovn-sbctl comment is folded to its first characters.
  const comment = page.getByTestId("inspector-comment").getByTestId("folded");
  const length = Number(await comment.getAttribute("data-length"));
  assert.ok(length > 160);
  assert.ok((await comment.locator("summary").innerText()).length < 160);
  await comment.locator("summary").click();
  assert.equal((await comment.locator("pre.whole").innerText()).length, length);

  // An entry of several tables: each with the rows show-log lists for it.
  const [multi, multiTables] = [...rows].find(([, t]) => Object.keys(t).length > 1);
  await page.goto(`${server.url}#sample=sb-scale&entry=0:${multi}`);
  await ready(page, SAMPLES["sb-scale"]);
  await page.locator(`[data-testid=inspector][data-index="${multi}"]`).waitFor();
  assert.deepEqual(await inspectorTables(page), multiTables);
  noProblems(problems);
  await page.close();
});

test("the README's screenshot of the explorer: leader-failover with an entry inspected", async () => {
  const rows = showLogRows("leader-failover");
  const [index] = [...rows].find(([, t]) => t.Logical_Switch);
  const { page, problems } = await openPage(browser.context, `${server.url}#sample=leader-failover&entry=0:${index}`);
  await page.setViewportSize({ width: 1280, height: 1500 });
  await ready(page, SAMPLES["leader-failover"]);
  await page.locator("[data-testid=inspector-changes]").waitFor();
  await page.waitForTimeout(300);
  await docScreenshot(page, "explorer");
  noProblems(problems);
  await page.close();
});

test("a long set value is folded in the inspector and opens whole", async () => {
  const rows = showLogRows("acl-portgroup-full");
  const [index] = [...rows].find(([, t]) => t.Port_Group && t.ACL >= 10);
  const { page, problems } = await openPage(browser.context, `${server.url}#sample=acl-portgroup-full&entry=0:${index}`);
  await ready(page, SAMPLES["acl-portgroup-full"]);
  assert.deepEqual(await inspectorTables(page), rows.get(index));
  // Small entry: tables and rows open; the Port_Group's acls set is folded.
  const pg = page.locator("[data-testid=inspector-table][data-table=Port_Group]");
  assert.equal(await pg.evaluate((e) => e.open), true);
  const folded = pg.getByTestId("folded").first();
  const length = Number(await folded.getAttribute("data-length"));
  assert.ok(length > 160, `${length}`);
  await folded.locator("summary").click();
  const whole = await folded.locator("pre.whole").innerText();
  assert.equal(whole.length, length);
  assert.ok(whole.startsWith('["set",'), whole.slice(0, 20));
  noProblems(problems);
  await page.close();
});

test("exports: JSON in the shape of inspect --json, and a PNG of the timeline", async () => {
  const { page, problems } = await openPage(browser.context, `${server.url}#sample=election-timer`);
  await ready(page, SAMPLES["election-timer"]);
  const [jsonDl] = await Promise.all([page.waitForEvent("download"), page.getByTestId("export-json").click()]);
  const exported = JSON.parse(readFileSync(await jsonDl.path(), "utf8"));
  const ref = inspectJson(...SAMPLES["election-timer"].map((f) => join("static/samples/election-timer", f)));
  for (const f of ref.files) f.path = f.path.split("/").pop();
  assert.deepEqual(exported, ref);
  const [pngDl] = await Promise.all([page.waitForEvent("download"), page.getByTestId("export-png").click()]);
  const png = readFileSync(await pngDl.path());
  assert.deepEqual([...png.subarray(1, 4)], [0x50, 0x4e, 0x47]);
  assert.ok(png.length > 5000);
  noProblems(problems);
  await page.close();
});

test("a long parse shows progress in bytes and can be cancelled; the page keeps working", async () => {
  const big = join(mkdtempSync(join(tmpdir(), "ovsdb-scope-big-")), "big.db");
  execFileSync("node", [join(ROOT, "tests/bench/gen-big-log.mjs"), big, "40000"], { stdio: "ignore" });
  const { page, problems } = await openPage(browser.context, server.url);
  await ready(page, SAMPLES["leader-failover"]);
  await page.getByTestId("file-input").setInputFiles(big);
  const progress = page.getByTestId("progress");
  await progress.waitFor();
  assert.equal(Number(await progress.getAttribute("data-total")), statSync(big).size);
  // The page stays responsive while the worker parses: the help toggles.
  await page.keyboard.press("?");
  await page.getByTestId("help").waitFor({ timeout: 2000 });
  await page.keyboard.press("?");
  await page.getByTestId("cancel").click();
  await page.getByTestId("notice").waitFor();
  assert.match(await page.getByTestId("notice").innerText(), /cancelled/i);
  assert.equal(await progress.count(), 0);
  // Still the previous view, and a new load works.
  await page.getByTestId("sample-picker").selectOption("membership");
  await ready(page, SAMPLES.membership);
  noProblems(problems);
  await page.close();
});

test("a Rust panic is reported in the page, not a dead page", async () => {
  const { page, problems } = await openPage(browser.context, `${server.url}#debug-panic`);
  const banner = page.getByTestId("panic");
  await banner.waitFor({ timeout: 20000 });
  assert.match(await banner.innerText(), /Internal error: ovsdb-scope crashed \(.*debug-panic requested/s);
  assert.equal(await banner.getAttribute("role"), "alert");
  // The panic is logged as an error, and nothing else went wrong.
  assert.ok(problems.consoleErrors.some((e) => /debug-panic/.test(e)));
  assert.deepEqual(problems.foreignRequests, []);
  await page.close();
});

test("opened files can be kept in this browser and reopened after a reload, then forgotten", async () => {
  const dir = join(ROOT, "static", "samples", "ls-add-follower");
  const names = readdirSync(dir).filter((f) => f.endsWith(".db")).sort();
  const { page, problems } = await openPage(browser.context, server.url);
  await ready(page, SAMPLES["leader-failover"]);
  // Both clusters name their files s1..s3: tell them apart by record count.
  const recordsText = () => page.getByTestId("summary-records").innerText();
  const waitRecords = (want) =>
    page.waitForFunction((w) => document.querySelector("[data-testid=summary-records]")?.innerText === w, want);
  const bundled = await recordsText();
  // Off by default: nothing is kept.
  assert.equal(await page.getByTestId("keep-files").isChecked(), false);
  await page.getByTestId("keep-files").check();
  await page.getByTestId("file-input").setInputFiles(names.map((n) => join(dir, n)));
  await page.waitForFunction((b) => {
    const r = document.querySelector("[data-testid=summary-records]")?.innerText;
    return r && r !== b;
  }, bundled);
  await ready(page, names);
  const records = await recordsText();
  assert.notEqual(records, bundled);
  await page.locator(`[data-testid=reopen-kept][data-files="${names.join(",")}"]`).waitFor();
  // A reload shows the bundled sample again, and offers the kept files.
  await page.reload();
  await ready(page, SAMPLES["leader-failover"]);
  await waitRecords(bundled);
  assert.equal(await page.getByTestId("keep-files").isChecked(), true);
  await page.getByTestId("reopen-kept").click();
  await waitRecords(records);
  await ready(page, names);
  // Forget deletes them; unticking stops keeping.
  await page.getByTestId("forget-kept").click();
  await page.getByTestId("keep-files").uncheck();
  await page.reload();
  await ready(page, SAMPLES["leader-failover"]);
  assert.equal(await page.getByTestId("reopen-kept").count(), 0);
  assert.equal(await page.getByTestId("keep-files").isChecked(), false);
  noProblems(problems);
  await page.close();
});

test("the Timeline / Contents tabs and the Contents page keep the page's margins", async () => {
  const { page, problems } = await openPage(browser.context, server.url);
  await page.setViewportSize({ width: 1280, height: 800 });
  await ready(page, SAMPLES["leader-failover"]);
  await page.keyboard.press("v");
  await page.locator("[data-testid=contents][data-state=ready]").waitFor({ timeout: 60000 });
  const box = (sel) => page.locator(sel).first().evaluate((e) => {
    const r = e.getBoundingClientRect();
    return { left: r.left, right: r.right };
  });
  const summary = await box("[data-testid=summary]");
  assert.ok(summary.left >= 16, `summary at ${summary.left}`);
  for (const sel of ["nav.views", "[data-testid=contents]"]) {
    const b = await box(sel);
    assert.ok(Math.abs(b.left - summary.left) < 1, `${sel} starts at ${b.left}, the summary at ${summary.left}`);
    assert.ok(Math.abs(b.right - summary.right) < 1, `${sel} ends at ${b.right}, the summary at ${summary.right}`);
  }
  // Back to the timeline, which the page remembers for the next tests.
  await page.keyboard.press("v");
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor();
  noProblems(problems);
  await page.close();
});

test("tabbing onto the timeline shows its focus ring inside the plot, which clips what is outside", async () => {
  const { page, problems } = await openPage(browser.context, server.url);
  await ready(page, SAMPLES["leader-failover"]);
  // The last of the Timeline / Contents buttons, then the timeline.
  await page.locator("nav.views button").last().focus();
  await page.keyboard.press("Tab");
  const ring = await page.evaluate(() => {
    const e = document.activeElement;
    const s = getComputedStyle(e);
    return { id: e.dataset.testid, style: s.outlineStyle, width: parseFloat(s.outlineWidth), offset: parseFloat(s.outlineOffset) };
  });
  assert.equal(ring.id, "timeline");
  assert.notEqual(ring.style, "none");
  assert.ok(ring.width >= 2, `ring ${ring.width}px wide`);
  assert.ok(ring.offset + ring.width <= 0, `ring drawn ${ring.offset + ring.width}px outside the canvas`);
  noProblems(problems);
  await page.close();
});

test("a file the app cannot use: its error and why it was ignored, no empty findings, inspector or table", async () => {
  const { page, problems } = await openPage(browser.context, server.url);
  await ready(page, SAMPLES["leader-failover"]);
  await page.getByTestId("file-input").setInputFiles(join(ROOT, "README.md"));
  await page.locator('[data-testid=ignored-row][data-path="README.md"]').waitFor({ timeout: 20000 });
  assert.match(await page.getByTestId("load-error").innerText(), /^README\.md is not an OVSDB database file/);
  assert.equal(await value(page, "inputs-found"), "0");
  // Nothing was read: no "Findings: 0", no inspector asking for a click on
  // a timeline that is not there, no table of inputs with no rows.
  assert.equal(await page.getByTestId("findings-count").count(), 0);
  assert.equal(await page.getByTestId("inspector").count(), 0);
  assert.equal(await page.locator("section.inputs table").count(), 1, "only the table of ignored inputs");
  noProblems(problems);
  await page.close();
});

test("on the focused timeline the keys point at entries and inspect them, as hovering and clicking do", async () => {
  const { page, problems } = await openPage(browser.context, server.url);
  await ready(page, SAMPLES["leader-failover"]);
  const canvas = page.getByTestId("timeline");
  const tooltip = page.getByTestId("tooltip");
  const view0 = await canvas.getAttribute("data-view");
  // Tab onto the timeline (after the Timeline / Contents buttons).
  await page.locator("nav.views button").last().focus();
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), "timeline");
  // The first key points at the first entry of the first lane in view: its
  // tooltip is the one hovering it shows.
  await page.keyboard.press("ArrowRight");
  await tooltip.waitFor();
  const tip = async () => {
    const m = (await tooltip.innerText()).match(/^(\S+) · index (\d+) · term (\d+)/);
    assert.ok(m, await tooltip.innerText());
    return { lane: m[1], index: Number(m[2]), term: Number(m[3]) };
  };
  const first = await tip();
  assert.equal(first.lane, "s1.db");
  await page.keyboard.press("ArrowRight");
  await page.waitForFunction((i) => !document.querySelector("[data-testid=tooltip]")?.innerText.includes(`index ${i} `), first.index);
  const second = await tip();
  assert.equal(second.lane, "s1.db");
  assert.ok(second.index > first.index, `${second.index} after ${first.index}`);
  // The arrows moved the pointer, not the view; nothing is inspected yet.
  assert.equal(await canvas.getAttribute("data-view"), view0);
  assert.equal(await page.getByTestId("inspector").getAttribute("data-state"), "empty");
  // Enter inspects the entry pointed at, as a click on it does.
  await page.keyboard.press("Enter");
  await page.locator(`[data-testid=inspector][data-index="${second.index}"]`).waitFor();
  assert.equal(Number(await page.getByTestId("inspector-term").getAttribute("data-value")), second.term);
  await page.locator("[data-testid=inspector] .changes").waitFor();
  // Down: the entry of the next lane nearest to it; Space inspects it.
  await page.keyboard.press("ArrowDown");
  await page.waitForFunction(() => document.querySelector("[data-testid=tooltip]")?.innerText.startsWith("s2.db "));
  const below = await tip();
  await page.keyboard.press(" ");
  await page.locator(`[data-testid=inspector][data-index="${below.index}"]`).waitFor();
  assert.match(await page.getByTestId("inspector").locator("h2").innerText(), /^s2\.db · index /);
  assert.ok(Math.abs(below.index - second.index) <= 2, `${below.index} near ${second.index}`);
  // Away from the timeline, the arrows pan as before.
  await page.locator("nav.views button").last().focus();
  await page.keyboard.press("+");
  await page.waitForFunction(() => Number(document.querySelector("[data-testid=timeline]").dataset.zoom) > 1);
  const zoomed = await canvas.getAttribute("data-view");
  await page.keyboard.press("ArrowRight");
  await page.waitForFunction((v) => document.querySelector("[data-testid=timeline]").dataset.view !== v, zoomed);
  noProblems(problems);
  await page.close();
});

test("the keys' help lists Esc, and Esc closes it", async () => {
  const { page, problems } = await openPage(browser.context, server.url);
  await ready(page, SAMPLES["leader-failover"]);
  await page.keyboard.press("?");
  const help = page.getByTestId("help");
  await help.waitFor();
  const rows = await help.locator("tr").evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((c) => c.innerText)));
  const esc = rows.find(([keys]) => keys.split(/\s+/).includes("Esc"));
  assert.ok(esc, JSON.stringify(rows));
  assert.match(esc[1], /Esc closes/);
  // The timeline keys are listed too.
  assert.ok(rows.some(([, what]) => /Enter or Space inspects/.test(what)));
  await page.keyboard.press("Escape");
  await help.waitFor({ state: "detached" });
  noProblems(problems);
  await page.close();
});
