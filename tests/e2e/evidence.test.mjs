// Operator evidence (issue "Operator evidence"): the page reads .db files,
// ovsdb-server logs, cluster/status and memory/show output (and archives)
// through the evidence core in its worker, and must agree with
// `ovsdb-scope diagnose --json` on the same inputs.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, mkdtempSync, copyFileSync, writeFileSync, readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join, basename } from "node:path";
import { existsSync } from "node:fs";
import { ROOT, serveDir, launchBrowser, openPage, screenshot, useBrowser, inkedPixels, hoverChart } from "./harness.mjs";

let server;
let browser;
useBrowser((s, b) => ([server, browser] = [s, b]));

const INCIDENT = join(ROOT, "tests/fixtures/incidents/leader-pause");
const BUNDLED = join(ROOT, "static/samples/incidents/leader-pause");
const MUST_GATHER = join(ROOT, "tests/fixtures/incidents/must-gather");

/** `ovsdb-scope diagnose --json FILE...`, the reference. */
function diagnoseJson(...files) {
  const target = process.env.CARGO_TARGET_DIR || join(ROOT, "target");
  const bin = process.env.OVSDB_SCOPE_BIN || join(target, "debug", "ovsdb-scope");
  if (!existsSync(bin)) {
    execFileSync("cargo", ["build", "-q", "-p", "ovsdb-scope"], { cwd: ROOT, stdio: "inherit" });
  }
  let out;
  try {
    out = execFileSync(bin, ["diagnose", "--json", ...files], { cwd: ROOT, encoding: "utf8" });
  } catch (e) {
    // Exit status 1 means "a warning was found"; the JSON is still printed.
    if (!e.stdout) throw e;
    out = e.stdout;
  }
  return JSON.parse(out);
}

const key = (f) => `${f.time_ms ?? ""}|${f.kind}|${f.server ?? ""}|${f.cause ?? ""}|${f.severity}`;

function refFindings(ref) {
  return ref.findings.map(key).sort();
}

async function pageFindings(page) {
  return (
    await page.getByTestId("finding").evaluateAll((els) =>
      els.map((e) => ({
        kind: e.dataset.kind,
        server: e.dataset.server || null,
        time_ms: e.dataset.timeMs === "" ? null : Number(e.dataset.timeMs),
        cause: e.dataset.cause || null,
        severity: e.dataset.severity,
      })),
    )
  )
    .map(key)
    .sort();
}

const value = (page, id) => page.getByTestId(id).getAttribute("data-value");

async function diagnosed(page) {
  await page.getByTestId("findings-count").waitFor({ timeout: 60000 });
}

function noProblems(problems) {
  assert.deepEqual(problems.consoleErrors, []);
  assert.deepEqual(problems.pageErrors, []);
  assert.deepEqual(problems.foreignRequests, []);
}

async function assertMatches(page, ref) {
  assert.equal(Number(await value(page, "inputs-found")), ref.inputs.length);
  assert.equal(Number(await value(page, "inputs-ignored")), ref.ignored.length);
  assert.equal(Number(await value(page, "findings-count")), ref.findings.length);
  assert.deepEqual(await pageFindings(page), refFindings(ref));
  // One row per input, with the server the CLI gives it.
  const pageRows = await page
    .getByTestId("input-row")
    .evaluateAll((els) => els.map((e) => `${e.dataset.path.split("/").pop()}|${e.dataset.kind}|${e.dataset.server}`));
  assert.deepEqual(
    pageRows.sort(),
    ref.inputs.map((i) => `${i.path.split("/").pop()}|${i.kind}|${i.server ?? ""}`).sort(),
  );
}

/** The incident's evidence files (what an operator collects). */
function incidentFiles(dir) {
  return readdirSync(dir)
    .filter((f) => /^s\d\.(db|ovsdb-server\.log|cluster-status\.txt|memory-show\.txt)$/.test(f))
    .sort()
    .map((f) => join(dir, f));
}

test("the bundled leader-pause incident: inputs and findings match diagnose --json", async () => {
  const files = readdirSync(BUNDLED).map((f) => join(BUNDLED, f));
  const ref = diagnoseJson(...files);
  assert.ok(ref.findings.length > 0, "the CLI finds something in leader-pause");
  const { page, problems } = await openPage(browser.context, `${server.url}#sample=leader-pause`);
  await page.locator('[data-testid=summary][data-files="s1.db,s2.db,s3.db"]').waitFor({ timeout: 60000 });
  await diagnosed(page);
  await assertMatches(page, ref);
  // Each finding names its cluster as the CLI does (short ID, database).
  const clusters = await page.getByTestId("finding-cluster").allInnerTexts();
  assert.deepEqual(
    clusters.sort(),
    ref.findings.map((f) => (f.cluster ? `${f.cluster.slice(0, 4)} ${f.database}` : "")).sort(),
  );
  assert.ok(clusters.every((c) => / OVN_Northbound$/.test(c)), clusters.join("|"));
  // The explorer still works as before on the files.
  await page.locator("[data-testid=check-results][data-state=done]").waitFor({ timeout: 60000 });
  assert.equal(await page.getByTestId("sample-picker").inputValue(), "leader-pause");
  // Every server with a log has a track under the lanes.
  const withLogs = ref.inputs.filter((i) => i.kind === "log").length;
  assert.equal(Number(await page.getByTestId("timeline").getAttribute("data-tracks")), withLogs);
  assert.ok(Number(await page.getByTestId("timeline").getAttribute("data-marks")) > 0);
  await screenshot(page, "evidence-leader-pause");
  noProblems(problems);
  await page.close();
});

test("memory over time: a plotters line per server from the memory reports in its log", async () => {
  const dir = join(ROOT, "tests/fixtures/incidents/sb-memory");
  const files = incidentFiles(dir);
  // The reports, counted in the logs themselves (ovsdb-server's "peak
  // resident set size" lines).
  const reports = files
    .filter((f) => f.endsWith(".log"))
    .map((f) => (readFileSync(f, "utf8").match(/peak resident set size/g) || []).length);
  assert.ok(reports.every((n) => n > 0));
  const { page, problems } = await openPage(browser.context, server.url);
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 60000 });
  await page.getByTestId("file-input").setInputFiles(files);
  await diagnosed(page);
  const chart = page.getByTestId("memory-chart");
  await chart.waitFor();
  assert.equal(Number(await chart.getAttribute("data-lines")), reports.length);
  assert.equal(Number(await chart.getAttribute("data-points")), reports.reduce((a, b) => a + b, 0));
  assert.ok((await inkedPixels(page, "memory-chart")) > 1000);
  assert.match(await hoverChart(page, "memory-chart"), /^\w+: [\d.]+ [KMG]i?B at \d{4}-\d\d-\d\d .* UTC$/);
  await screenshot(page, "evidence-memory");
  noProblems(problems);
  await page.close();
});

test("opening the incident's files: findings, inputs and servers match diagnose --json", async () => {
  const files = incidentFiles(INCIDENT);
  const ref = diagnoseJson(...files);
  const { page, problems } = await openPage(browser.context, server.url);
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 60000 });
  await page.getByTestId("file-input").setInputFiles(files);
  await page.locator('[data-testid=summary][data-files="s1.db,s2.db,s3.db"]').waitFor({ timeout: 60000 });
  await diagnosed(page);
  await page.waitForFunction(
    (n) => document.querySelectorAll("[data-testid=input-row]").length === n,
    ref.inputs.length,
  );
  await assertMatches(page, ref);
  const roles = await page
    .getByTestId("server-status")
    .evaluateAll((els) => els.map((e) => `${e.dataset.server}|${e.dataset.role}|${e.dataset.term}`).sort());
  assert.deepEqual(roles, ref.servers.map((s) => `${s.short}|${s.role ?? ""}|${s.term ?? ""}`).sort());
  noProblems(problems);
  await page.close();
});

test("dropping the incident's files on the page gives the same findings", async () => {
  const files = incidentFiles(INCIDENT);
  const ref = diagnoseJson(...files);
  const { page, problems } = await openPage(browser.context, server.url);
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 60000 });
  const payload = files.map((f) => ({ name: basename(f), b64: readFileSync(f).toString("base64") }));
  await page.evaluate((payload) => {
    const dt = new DataTransfer();
    for (const { name, b64 } of payload) {
      const bin = atob(b64);
      const bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      dt.items.add(new File([bytes], name));
    }
    const target = document.querySelector(".app");
    for (const type of ["dragenter", "dragover", "drop"]) {
      target.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    }
  }, payload);
  await page.locator('[data-testid=summary][data-files="s1.db,s2.db,s3.db"]').waitFor({ timeout: 60000 });
  await diagnosed(page);
  await page.waitForFunction(
    (n) => document.querySelectorAll("[data-testid=input-row]").length === n,
    ref.inputs.length,
  );
  await assertMatches(page, ref);
  noProblems(problems);
  await page.close();
});

test("a binary file named x.log next to good files is listed as ignored and the rest loads", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ovsdb-scope-evidence-"));
  const good = incidentFiles(INCIDENT).map((f) => {
    const to = join(dir, basename(f));
    copyFileSync(f, to);
    return to;
  });
  const junk = Buffer.alloc(8192);
  for (let i = 0; i < junk.length; i++) junk[i] = (i * 7919 + 13) & 0xff;
  const bad = join(dir, "x.log");
  writeFileSync(bad, junk);
  const files = [...good, bad];
  const ref = diagnoseJson(...files);
  assert.ok(ref.ignored.some((i) => i.path.endsWith("x.log")), "the CLI ignores x.log");
  const { page, problems } = await openPage(browser.context, server.url);
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 60000 });
  await page.getByTestId("file-input").setInputFiles(files);
  await page.locator('[data-testid=summary][data-files="s1.db,s2.db,s3.db"]').waitFor({ timeout: 60000 });
  await diagnosed(page);
  await page.locator('[data-testid=ignored-row][data-path="x.log"]').waitFor();
  await assertMatches(page, ref);
  assert.equal(await page.getByTestId("load-error").count(), 0);
  noProblems(problems);
  await page.close();
});

test("clicking a finding moves the timeline there and opens the log at its evidence line", async () => {
  const { page, problems } = await openPage(browser.context, `${server.url}#sample=leader-pause`);
  await page.locator('[data-testid=summary][data-files="s1.db,s2.db,s3.db"]').waitFor({ timeout: 60000 });
  await diagnosed(page);
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor();
  // Zoom in so that moving is visible.
  for (let i = 0; i < 4; i++) await page.keyboard.press("+");
  const finding = page.locator("[data-testid=finding][data-index]:not([data-index=''])").first();
  const index = Number(await finding.getAttribute("data-index"));
  await finding.click();
  await page.locator("[data-testid=timeline][data-focus]:not([data-focus=''])").waitFor();
  const [start, end] = (await page.getByTestId("timeline").getAttribute("data-view")).split(",").map(Number);
  assert.ok(start <= index && index <= end, `index ${index} in view ${start},${end}`);
  assert.equal(Number(await page.getByTestId("timeline").getAttribute("data-focus")), index);
  // The log panel shows the first evidence line, highlighted.
  const ev = await finding.getByTestId("finding-evidence").first().innerText();
  const [, line] = ev.match(/^\S+:(\d+)/);
  await page.getByTestId("log-panel").waitFor();
  const focused = page.locator(".log-line.focus");
  await focused.waitFor({ timeout: 10000 });
  assert.equal(await focused.getAttribute("data-line"), line);
  assert.equal(await page.locator("[data-testid=finding][data-selected=true]").count(), 1);
  // n / p step through the findings in time order.
  await page.keyboard.press("n");
  await page.locator("[data-testid=finding][data-selected=true]").waitFor();
  noProblems(problems);
  await page.close();
});

test("the log panel filters by server, level and text and renders only the visible rows", async () => {
  const logs = readdirSync(BUNDLED).filter((f) => f.endsWith(".log"));
  const lines = logs.map((f) => readFileSync(join(BUNDLED, f), "utf8").split("\n").filter((l) => l !== "").length);
  const all = lines.reduce((a, b) => a + b, 0);
  const { page, problems } = await openPage(browser.context, `${server.url}#sample=leader-pause`);
  await diagnosed(page);
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor();
  await page.keyboard.press("l");
  const total = () => page.getByTestId("log-total").getAttribute("data-value");
  await page.waitForFunction((n) => document.querySelector("[data-testid=log-total]")?.dataset.value === String(n), all);
  const rows = await page.getByTestId("log-line").count();
  assert.ok(rows > 0 && rows <= 40, `${rows} rows in the DOM`);
  // One server.
  await page.getByTestId("log-server").selectOption({ index: 1 });
  await page.waitForFunction((n) => document.querySelector("[data-testid=log-total]")?.dataset.value === String(n), lines[0]);
  // Text: every line containing "raft" (any case).
  await page.getByTestId("log-server").selectOption("-1");
  await page.getByTestId("log-text").fill("RAFT");
  const raft = logs
    .map((f) => readFileSync(join(BUNDLED, f), "utf8").split("\n").filter((l) => /raft/i.test(l)).length)
    .reduce((a, b) => a + b, 0);
  await page.waitForFunction((n) => document.querySelector("[data-testid=log-total]")?.dataset.value === String(n), raft);
  // Level WARN and worse: only |WARN|, |ERR| and |EMER| lines.
  await page.getByTestId("log-text").fill("");
  await page.getByTestId("log-level").selectOption("warn");
  const warn = logs
    .map((f) => readFileSync(join(BUNDLED, f), "utf8").split("\n").filter((l) => /\|(WARN|ERR|EMER)\|/.test(l)).length)
    .reduce((a, b) => a + b, 0);
  await page.waitForFunction((n) => document.querySelector("[data-testid=log-total]")?.dataset.value === String(n), warn);
  assert.equal(Number(await total()), warn);
  noProblems(problems);
  await page.close();
});

test("a large log stays virtualized: only the visible rows are in the page", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ovsdb-scope-biglog-"));
  const src = readFileSync(join(INCIDENT, "s1.ovsdb-server.log"), "utf8").split("\n").filter((l) => l);
  const n = 200000;
  const out = [];
  for (let i = 0; i < n; i++) out.push(src[i % src.length]);
  const big = join(dir, "s1.ovsdb-server.log");
  writeFileSync(big, out.join("\n") + "\n");
  const { page, problems } = await openPage(browser.context, server.url);
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 60000 });
  const t0 = Date.now();
  await page.getByTestId("file-input").setInputFiles([join(INCIDENT, "s1.db"), big]);
  await diagnosed(page);
  await page.keyboard.press("l");
  await page.waitForFunction((n) => document.querySelector("[data-testid=log-total]")?.dataset.value === String(n), n, {
    timeout: 60000,
  });
  const loadMs = Date.now() - t0;
  // Scroll to the middle: the rows there are served, and few are in the DOM.
  await page.locator(".logscroll").evaluate((el) => (el.scrollTop = el.scrollHeight / 2));
  // Rows are in time order over all servers; the generated log repeats the
  // same timestamps, so a row's line number differs from its row number.
  await page.waitForFunction(() =>
    [...document.querySelectorAll("[data-testid=log-line]")].some((e) => Number(e.dataset.row) > 90000),
  );
  const rows = await page.getByTestId("log-line").count();
  assert.ok(rows <= 40, `${rows} rows in the DOM`);
  console.log(`# ${n}-line log: loaded and listed in ${loadMs} ms`);
  noProblems(problems);
  await page.close();
});

for (const archive of ["cluster.tar.gz", "sosreport-like.tar.xz"]) {
  // Needs the archive reader of crates/evidence (collect.rs): until it lands
  // the CLI and the page both see one unrecognized file, and this fails on
  // the first assertion.
  test(`the must-gather archive ${archive} gives the same findings as the CLI`, async () => {
    const file = join(MUST_GATHER, archive);
    const ref = diagnoseJson(file);
    assert.ok(
      ref.inputs.some((i) => i.kind === "database"),
      `the CLI finds a database file inside ${archive} (needs the archive reader)`,
    );
    const { page, problems } = await openPage(browser.context, server.url);
    await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 60000 });
    await page.getByTestId("file-input").setInputFiles(file);
    await page.waitForFunction(
      (n) => document.querySelector("[data-testid=inputs-found]")?.dataset.value === String(n),
      ref.inputs.length,
      { timeout: 60000 },
    );
    await diagnosed(page);
    await assertMatches(page, ref);
    noProblems(problems);
    await page.close();
  });
}

test("above the timeline, a button counts the findings and the most severe, and goes to the first of those", async () => {
  const { page, problems } = await openPage(browser.context, `${server.url}#sample=leader-pause`);
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.locator('[data-testid=summary][data-files="s1.db,s2.db,s3.db"]').waitFor({ timeout: 60000 });
  await diagnosed(page);
  const count = await page.getByTestId("findings-count").getAttribute("data-value");
  // leader-pause: its worst findings are warnings.
  const warnings = page.locator("[data-testid=finding][data-severity=warning]");
  assert.equal(await page.locator("[data-testid=finding][data-severity=error]").count(), 0);
  const first = warnings.first();
  const inView = () => first.evaluate((e) => {
    const r = e.getBoundingClientRect();
    return r.top >= 0 && r.bottom <= innerHeight;
  });
  // Below the summary and the timeline: out of sight after a load.
  assert.equal(await inView(), false);
  const button = page.getByTestId("to-findings");
  assert.equal(await button.innerText(), `Findings: ${count} · ${await warnings.count()} warnings ↓`);
  await button.click();
  assert.equal(await inView(), true);
  assert.equal(await first.evaluate((e) => e === document.activeElement), true);
  // Selected: on the timeline and in the log, as a click on it does.
  assert.equal(await first.getAttribute("data-selected"), "true");
  await page.getByTestId("log-panel").waitFor();
  // Not on the Contents page, where the findings are not shown.
  await page.keyboard.press("v");
  await page.getByTestId("view-contents").and(page.locator(".active")).waitFor();
  assert.equal(await button.count(), 0);
  // Back to the timeline, which the page remembers.
  await page.keyboard.press("v");
  await button.waitFor();
  noProblems(problems);
  await page.close();
});

test("the servers' status boxes sit beside the timeline, never over its newest entries", async () => {
  const { page, problems } = await openPage(browser.context, `${server.url}#sample=leader-pause`);
  await page.locator('[data-testid=summary][data-files="s1.db,s2.db,s3.db"]').waitFor({ timeout: 60000 });
  await diagnosed(page);
  const boxes = page.getByTestId("lane-status");
  await boxes.first().waitFor();
  assert.equal(await boxes.count(), 3);
  const canvas = page.getByTestId("timeline");
  const plotRight = async () => {
    const r = await canvas.boundingBox();
    const [gutter, width] = (await canvas.getAttribute("data-plot")).split(",").map(Number);
    return { right: r.x + gutter + width, width };
  };
  const shown = await plotRight();
  for (const box of await boxes.all()) {
    const b = await box.boundingBox();
    assert.ok(b.x >= shown.right, `status box at x ${b.x}, the plot ends at ${shown.right}`);
  }
  // Without the boxes (c), the plot takes their room back.
  await page.keyboard.press("c");
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=lane-status]").length === 0);
  await page.waitForFunction((w) => Number(document.querySelector("[data-testid=timeline]").dataset.plot.split(",")[1]) > w, shown.width);
  noProblems(problems);
  await page.close();
});

test("the lane labels of an archive's files tell them apart and name the file", async () => {
  const page = await browser.context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  // Every line of the lanes' name labels (bold, at the gutter's left edge).
  await page.addInitScript(() => {
    window.__labels = [];
    const fill = CanvasRenderingContext2D.prototype.fillText;
    CanvasRenderingContext2D.prototype.fillText = function (t, x, y, ...rest) {
      if (x === 6 && this.font.startsWith("bold") && this.canvas.dataset.testid === "timeline") {
        window.__labels.push({ t: String(t), y, w: this.measureText(String(t)).width });
      }
      return fill.call(this, t, x, y, ...rest);
    };
  });
  await page.goto(server.url);
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 60000 });
  await page.evaluate(() => { window.__labels = []; });
  await page.getByTestId("file-input").setInputFiles(join(MUST_GATHER, "cluster.tar.gz"));
  const files = ["s1", "s2", "s3"].map((s) => `cluster.tar.gz/${s}/var/lib/ovn/etc/ovnnb_db.db`);
  await page.locator(`[data-testid=summary][data-files="${files.join(",")}"]`).waitFor({ timeout: 60000 });
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor();
  const labels = await page.evaluate(() => window.__labels);
  const canvas = page.getByTestId("timeline");
  const gutter = Number((await canvas.getAttribute("data-plot")).split(",")[0]);
  // Layout: axis 34 px, lanes 108 px apart by 14 px.
  for (let lane = 0; lane < 3; lane++) {
    const top = 34 + lane * 122;
    const lines = [...new Set(labels.filter((l) => l.y > top && l.y < top + 108).map((l) => l.t))];
    const text = lines.join(" ");
    assert.ok(text.includes(`s${lane + 1}/`), `lane ${lane}: ${JSON.stringify(lines)}`);
    assert.ok(text.includes("ovnnb_db.db"), `lane ${lane}: ${JSON.stringify(lines)}`);
    for (const l of labels.filter((l) => l.y > top && l.y < top + 108)) {
      assert.ok(l.w <= gutter - 10, `"${l.t}" is ${l.w}px wide in a ${gutter}px gutter`);
    }
    // The whole path is the label's tooltip.
    const box = await canvas.boundingBox();
    await page.mouse.move(box.x + 20, box.y + top + 10);
    await page.waitForFunction((f) => document.querySelector("[data-testid=tooltip]")?.innerText === f, files[lane]);
  }
  assert.deepEqual(errors, []);
  await page.close();
});
