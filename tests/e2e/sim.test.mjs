// The simulation pages (issue 7) in real Chromium: the simulator runs in its
// Web Worker, the figures carry their raw values in data-value, and the
// checks compare the page with itself (permalinks, forks) and with the known
// effects the simulator reproduces.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, mkdtempSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { serveDir, launchBrowser, openPage, screenshot, docScreenshot, useBrowser, inkedPixels, hoverChart, cliBin } from "./harness.mjs";

let server;
let browser;
useBrowser((s, b) => ([server, browser] = [s, b]));

function clean(problems) {
  assert.deepEqual(problems.consoleErrors, [], "console errors");
  assert.deepEqual(problems.pageErrors, [], "page errors");
  assert.deepEqual(problems.foreignRequests, [], "requests to other origins");
}

/** Waits until the test id carries a non-empty data-value and returns it. */
async function value(page, id, timeout = 60000) {
  const el = page.locator(`[data-testid="${id}"]:not([data-value=""])`);
  await el.first().waitFor({ timeout });
  return el.first().getAttribute("data-value");
}

/** Waits for a finished run (no progress bar) and returns its figures. */
async function figures(page) {
  await page.locator('[data-testid="sim-status"][data-value="ready"]').waitFor({ state: "attached", timeout: 60000 });
  return {
    total: Number(await value(page, "sim-total-ms")),
    txns: Number(await value(page, "sim-txns")),
    terms: Number(await value(page, "sim-terms")),
    leaderless: Number(await value(page, "sim-leaderless-ms")),
  };
}

test("the commit-sync A/B shows the pre-sync follower at least 50 times slower", async () => {
  const { page, problems } = await openPage(browser.context, server.url + "#ab=commit-sync");
  const ratio = Number(await value(page, "ab-ratio"));
  const a = Number(await value(page, "ab-a-head"));
  const b = Number(await value(page, "ab-b-head"));
  assert.equal(await page.getByTestId("ab-headline").getAttribute("data-name"), "txns.total_ms");
  assert.match(await page.getByTestId("ab-headline").innerText(), /Ratio A\/B of Total write time/);
  assert.ok(ratio >= 50, `ratio ${ratio}`);
  assert.ok(Math.abs(ratio - a / b) < 1e-6 * ratio, "the ratio is A/B of the shown totals");
  assert.ok(a > 20000 && a < 60000, `A total ${a} ms (about 34 s expected)`);
  assert.ok(b < 1000, `B total ${b} ms (under 1 s expected)`);
  // The metrics table and both timelines are there.
  assert.ok((await page.getByTestId("ab-table").locator("tbody tr").count()) >= 8);
  // The latency distribution is a plotters chart of both runs' writes,
  // and hovering a bin names its range and counts.
  const hist = page.getByTestId("ab-histogram");
  assert.ok(Number(await hist.getAttribute("data-writes-a")) > 0);
  assert.ok(Number(await hist.getAttribute("data-writes-b")) > 0);
  assert.ok((await inkedPixels(page, "ab-histogram")) > 2000);
  assert.match(await hoverChart(page, "ab-histogram"), /^[\d.]+–[\d.]+ ms: A \d+ writes, B \d+ writes$/);
  await page.waitForTimeout(300);
  await screenshot(page, "sim-ab-commit-sync");
  await page.setViewportSize({ width: 1280, height: 1400 });
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.waitForTimeout(300);
  await docScreenshot(page, "ab");
  clean(problems);
  await page.close();
});

test("an A/B without writes headlines a figure both runs have, by its label", async () => {
  const { page, problems } = await openPage(browser.context, server.url + "#ab=election-timer");
  const ratio = Number(await value(page, "ab-ratio"));
  const head = page.getByTestId("ab-headline");
  const text = await head.innerText();
  // The failover writes nothing: no "total write time 0 ms", and no
  // internal figure name such as time_to_leader_ms.
  assert.doesNotMatch(text, /write time|[a-z]_[a-z]|txns\./i, text);
  assert.match(text, /Ratio A\/B of Time to leader \(mean\)/);
  const [a, b] = [Number(await value(page, "ab-a-head")), Number(await value(page, "ab-b-head"))];
  assert.ok(a > 0 && b > 0 && Math.abs(ratio - a / b) < 1e-6 * ratio, `${a} / ${b} = ${ratio}`);
  clean(problems);
  await page.close();
});

test("the issue's permalink starts the pre-sync run, and a copied link reproduces it", async () => {
  const { page, problems } = await openPage(
    browser.context,
    server.url + "#sim=ls-add-follower&profile=v2.12-pre-sync",
  );
  const first = await figures(page);
  assert.equal(first.txns, 100);
  assert.ok(first.total > 20000, `pre-sync total ${first.total} ms`);
  // Pause somewhere, take the link the page now shows, and open it afresh.
  await page.getByTestId("sim-play").click();
  const hash = await page.evaluate(() => location.hash);
  assert.match(hash, /^#sim=ls-add-follower&profile=v2.12-pre-sync&seed=1/);
  assert.match(hash, /&t=/);
  const again = await openPage(browser.context, server.url + hash);
  const second = await figures(again.page);
  assert.deepEqual(second, first);
  // The position travels with the link.
  const pos = Number(await value(again.page, "sim-position-ms"));
  const t = Number(new URLSearchParams(hash.slice(1)).get("t"));
  assert.ok(Math.abs(pos - t) < 0.01, `position ${pos} vs link t=${t}`);
  await screenshot(page, "sim-ls-add-follower-pre-sync");
  clean(problems);
  clean(again.problems);
  await page.close();
  await again.page.close();
});

test("a second run in the same tab reproduces the first, and only the first is marked as such", async () => {
  const { page, problems } = await openPage(browser.context, server.url + "#sim=ls-add-follower");
  const first = await figures(page);
  const rate = page.getByTestId("sim-events-per-s");
  // The first run pays for the browser's compilation of the simulator.
  assert.equal(await rate.getAttribute("data-first-run"), "true");
  assert.match(await rate.innerText(), /first run in this tab/);
  const events = Number((await rate.innerText()).split(" ")[0]);
  assert.ok(events > 1000, `events ${events}`);
  // Run it again from the editor, same seed: the worker is the same one.
  await page.evaluate(() => {
    for (const d of document.querySelectorAll("details")) d.open = true;
  });
  await page.getByTestId("sim-apply").click();
  await page.locator('[data-testid="sim-events-per-s"][data-first-run="false"]').waitFor({ timeout: 60000 });
  const again = await figures(page);
  assert.deepEqual(again, first);
  assert.doesNotMatch(await rate.innerText(), /first run/);
  assert.equal(Number((await rate.innerText()).split(" ")[0]), events);
  clean(problems);
  await page.close();
});

test("killing the leader forks the run and a new term starts on the timeline", async () => {
  const { page, problems } = await openPage(browser.context, server.url + "#sim=ls-add-leader&t=2000");
  const before = await figures(page);
  const leader = await value(page, "sim-leader-now");
  assert.match(leader, /^s\d$/);
  const termBefore = Number(await value(page, "sim-term-now"));
  await page.getByTestId("iv-kill-leader").click();
  await page.getByTestId("sim-interventions").waitFor({ state: "attached" });
  const after = await figures(page);
  assert.ok(after.terms > before.terms, `terms ${before.terms} -> ${after.terms}`);
  // At the fork moment the old leader is down; at the end another server leads a higher term.
  const end = await page.getByTestId("sim-scrub").getAttribute("max");
  await page.getByTestId("sim-scrub").fill(end);
  await page.waitForFunction(
    (end) => Number(document.querySelector('[data-testid="sim-position-ms"]').dataset.value) * 1000 >= Number(end) - 1000,
    end,
  );
  const termAfter = Number(await value(page, "sim-term-now"));
  const newLeader = await value(page, "sim-leader-now");
  assert.ok(termAfter > termBefore, `term at the playhead ${termBefore} -> ${termAfter}`);
  assert.notEqual(newLeader, leader);
  // The fork's link carries the intervention and reproduces the fork.
  const hash = await page.evaluate(() => location.hash);
  assert.match(hash, /&iv=at%202000%20kill%20s\d/);
  const again = await openPage(browser.context, server.url + hash);
  assert.deepEqual(await figures(again.page), after);
  // Back to the run before the intervention.
  await page.getByTestId("iv-undo").click();
  assert.deepEqual(await figures(page), before);
  await screenshot(page, "sim-kill-leader");
  clean(problems);
  clean(again.problems);
  await page.close();
  await again.page.close();
});

test("every visible button, select and field says what it does in a tooltip", async () => {
  for (const [hash, ready] of [
    ["", "[data-testid=timeline][data-ready=true]"],
    ["#sim=ls-add-follower", '[data-testid="sim-status"][data-value="ready"]'],
    ["#ab=commit-sync", '[data-testid="ab-ratio"]:not([data-value=""])'],
    ["#tour=2", '[data-testid="sim-status"][data-value="ready"]'],
    ["#idl=write-changed-only", '[data-testid="idl-run"]'],
  ]) {
    const { page, problems } = await openPage(browser.context, server.url + hash);
    await page.locator(ready).first().waitFor({ state: "attached", timeout: 60000 });
    // Its own title, or that of the label (or group) around it.
    const missing = await page.evaluate(() =>
      [...document.querySelectorAll("button, select, input")]
        .filter((el) => el.offsetParent !== null && el.type !== "file" && el.type !== "checkbox")
        .filter((el) => !el.closest("[title]"))
        .map((el) => `${el.tagName} ${el.dataset.testid || ""} ${el.textContent.slice(0, 30)}`),
    );
    assert.deepEqual(missing, [], `controls without a tooltip at '${hash}'`);
    clean(problems);
    await page.close();
  }
});

test("tour step 4 draws the growing entry bars without the messages over them", async () => {
  const { page, problems } = await openPage(browser.context, server.url + "#tour=4");
  const frame = page.locator('[data-testid="sim-frame-ms"]:not([data-value=""])');
  await frame.waitFor({ timeout: 60000 });
  assert.equal(await frame.getAttribute("data-messages"), "0");
  // The step before draws its messages.
  await page.getByTestId("tour-back").click();
  await page.waitForFunction(() => document.querySelector('[data-testid="tour-step"]').dataset.value === "3");
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="sim-frame-ms"]')?.dataset.messages) > 0, null, { timeout: 60000 });
  clean(problems);
  await page.close();
});

test("the tour goes forward and back with buttons and clicker keys", async () => {
  const { page, problems } = await openPage(browser.context, server.url + "#tour=1");
  const step = async () => Number(await value(page, "tour-step"));
  assert.equal(await step(), 1);
  const titles = new Set([await page.getByTestId("tour-title").innerText()]);
  await page.keyboard.press("Space");
  await page.waitForFunction(() => document.querySelector('[data-testid="tour-step"]').dataset.value === "2");
  titles.add(await page.getByTestId("tour-title").innerText());
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("PageDown");
  await page.getByTestId("tour-next").click();
  assert.equal(await step(), 5);
  titles.add(await page.getByTestId("tour-title").innerText());
  assert.ok(await page.getByTestId("tour-next").isDisabled());
  await page.keyboard.press("PageUp");
  await page.keyboard.press("ArrowLeft");
  assert.equal(await step(), 3);
  await page.getByTestId("tour-back").click();
  assert.equal(await step(), 2);
  assert.equal(await page.evaluate(() => location.hash), "#tour=2");
  // Each step shows its own run with figures.
  await figures(page);
  assert.equal(titles.size, 3);
  await screenshot(page, "sim-tour-step-2");
  clean(problems);
  await page.close();
});

test("the metrics of a run download as JSON in the shape of `simulate --json`", async () => {
  const { page, problems } = await openPage(browser.context, server.url + "#sim=ls-add-leader&t=100");
  const figs = await figures(page);
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByTestId("sim-export-json").click(),
  ]);
  const path = await download.path();
  const json = JSON.parse(readFileSync(path, "utf8"));
  assert.equal(json.scenario, "ls-add-leader");
  assert.equal(json.seed, 1);
  assert.equal(json.txns.count, figs.txns);
  assert.equal(json.txns.total_ms, figs.total);
  assert.equal(json.terms, figs.terms);
  assert.match(json.trace_hash, /^[0-9a-f]{16}$/);
  assert.equal(json.invariants.violations, 0);
  clean(problems);
  await page.close();
});

test("the IDL panel runs both experiments in the worker and charts them", async () => {
  const { page, problems } = await openPage(browser.context, server.url + "#idl=write-changed-only&rows=500");
  const ratio = Number(await value(page, "idl-ratio"));
  // 500 rows x 6 columns rewritten, one really changed: write-changed-only sends far less.
  assert.ok(ratio > 10, `default / write-changed-only request bytes = ${ratio}`);
  assert.equal(await page.getByTestId("idl-table").locator("tbody tr").count(), 3);
  // Its figures as plotters small multiples, one panel per column of the
  // table; hovering a bar names the mode, the figure and its value.
  const cols = await page.getByTestId("idl-table").locator("thead th").count();
  assert.equal(Number(await page.getByTestId("idl-chart").getAttribute("data-panels")), cols - 1);
  assert.ok((await inkedPixels(page, "idl-chart")) > 2000);
  assert.match(await hoverChart(page, "idl-chart"), /^\S.*: .+ = [\d.]+[kMG]?$/);
  // Changing a knob and running again changes the figures.
  await page.getByTestId("idl-knob-changed").fill("250");
  await page.getByTestId("idl-knob-changed").dispatchEvent("change");
  await page.getByTestId("idl-run").click();
  await page.waitForFunction(
    (r) => {
      const v = document.querySelector('[data-testid="idl-ratio"]').dataset.value;
      return v !== "" && Number(v) !== r;
    },
    ratio,
  );
  assert.ok(Number(await value(page, "idl-ratio")) < ratio);
  await page.getByTestId("idl-index-vs-hash").click();
  const crossover = Number(await value(page, "idl-crossover"));
  assert.ok(crossover > 0, `crossover ${crossover}`);
  assert.equal(await page.getByTestId("idl-table").locator("tbody tr").count(), 4);
  await screenshot(page, "sim-idl-index-vs-hash");
  clean(problems);
  await page.close();
});

test("an exported run's .db files pass ovsdb-tool check-cluster and load in the explorer", async () => {
  const { page, problems } = await openPage(browser.context, server.url + "#sim=ls-add-follower&set=n:10&t=100");
  const figs = await figures(page);
  assert.equal(figs.txns, 10);
  const downloads = [];
  page.on("download", (d) => downloads.push(d));
  await page.getByTestId("sim-export-db").click();
  const deadline = Date.now() + 60000;
  while (downloads.length < 3 && Date.now() < deadline) await page.waitForTimeout(100);
  assert.equal(downloads.length, 3);
  const dir = mkdtempSync(join(tmpdir(), "ovsdb-scope-export-"));
  const paths = [];
  for (const d of downloads) {
    const p = join(dir, d.suggestedFilename());
    await d.saveAs(p);
    paths.push(p);
  }
  const names = paths.map((p) => p.split("/").pop());
  assert.deepEqual(names, ["s1.db", "s2.db", "s3.db"]);
  for (const p of paths) assert.equal(readFileSync(p).subarray(0, 14).toString(), "OVSDB CLUSTER ");
  // The real ovsdb-tool reads them as one consistent cluster.
  if (existsSync("/usr/bin/ovsdb-tool")) {
    execFileSync("/usr/bin/ovsdb-tool", ["check-cluster", ...paths], { stdio: "pipe" });
  }
  // The explorer opens them like any other cluster.
  await page.getByTestId("tab-explorer").click();
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 30000 });
  await page.getByTestId("file-input").setInputFiles(paths);
  await page.locator(`[data-testid=summary][data-files="${names.join(",")}"]`).waitFor({ timeout: 30000 });
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 30000 });
  const v = (id) => page.getByTestId(id).getAttribute("data-value");
  assert.equal(await v("cluster-servers"), "3");
  assert.equal(await v("summary-format"), "clustered");
  assert.equal(await v("summary-database"), "OVN_Northbound");
  assert.ok(Number(await v("summary-entries")) >= figs.txns, "every write is an entry");
  assert.deepEqual(problems.pageErrors, []);
  assert.deepEqual(problems.consoleErrors, []);
  assert.deepEqual(problems.foreignRequests, []);
  await screenshot(page, "sim-export-in-explorer");
  rmSync(dir, { recursive: true, force: true });
  await page.close();
});

test("every intervention button forks the run, and the fork is listed in the scenario", async () => {
  const { page, problems } = await openPage(browser.context, server.url + "#sim=ls-add-leader&t=1700");
  await figures(page);
  const steps = [
    ["iv-drop-next", /^at 1700 loss 1\nat [\d.]+ loss 0$/],
    ["iv-pause", /\nat 1700 pause s1 2000$/],
    ["iv-cut", /\nat 1700 cut s1 -> s2$/],
    ["iv-heal", /\nat 1700 heal$/],
    ["iv-timer", /\nat 1700 election_timer 2000$/],
    ["iv-partition", /\nat 1700 partition s1 \| s2,s3$/],
    ["iv-kill", /\nat 1700 kill s1$/],
    ["iv-restart", /\nat 1700 restart s1$/],
  ];
  for (const [id, re] of steps) {
    await page.getByTestId(id).click();
    await page.waitForFunction(
      (re) => new RegExp(re).test(document.querySelector('[data-testid="sim-interventions"]')?.textContent || ""),
      re.source,
    );
    await figures(page);
  }
  // All eight forks stack up; Back walks them off one by one.
  assert.match(await page.getByTestId("iv-undo").innerText(), /\(8 intervention/);
  await page.getByTestId("iv-undo").click();
  assert.match(await page.getByTestId("iv-undo").innerText(), /\(7 intervention/);
  assert.deepEqual(problems.pageErrors, []);
  assert.deepEqual(problems.consoleErrors, []);
  await page.close();
});

test("a relay can be cut off from its source: its writes wait two probe intervals, then it moves on", async () => {
  // ls-add-follower through one relay (r1, source s1): the target list
  // holds the relay after the members, and the cut is a relay hop.
  const { page, problems } = await openPage(browser.context, server.url + "#sim=ls-add-follower&set=relays:1,via:relay&t=1500");
  const before = await figures(page);
  assert.equal(before.txns, 100);
  const options = await page.getByTestId("iv-target").locator("option").allInnerTexts();
  assert.deepEqual(options, ["s1", "s2", "s3", "r1"]);
  await page.getByTestId("iv-target").selectOption("3");
  await page.getByTestId("iv-peer").selectOption("0");
  await page.getByTestId("iv-cut").click();
  await page.waitForFunction(
    () => /(^|\n)at 1500 cut r1 -> s1$/.test(document.querySelector('[data-testid="sim-interventions"]')?.textContent || ""),
  );
  const after = await figures(page);
  // Every write still lands; the one caught by the cut waited about
  // 10 s (two 5 s probes) before r1 gave up on s1 and moved to s2.
  assert.equal(after.txns, 100);
  assert.ok(after.total - before.total > 9000, `${before.total} -> ${after.total}`);
  assert.ok(after.total - before.total < 11000, `${before.total} -> ${after.total}`);
  // Pause acts on members only.
  assert.equal(await page.getByTestId("iv-pause").isDisabled(), true);
  assert.deepEqual(problems.pageErrors, []);
  assert.deepEqual(problems.consoleErrors, []);
  await page.close();
});

test("one run shows its log in both storage modes, and entry sizes redraw as full values or diffs", async () => {
  // Every record is sized in both modes from the same commit of the
  // server's database model, so a diff run also knows its full-value log.
  const open = async (sets) => {
    const { page, problems } = await openPage(browser.context, server.url + `#sim=acl-portgroup&set=${sets}&t=30000`);
    await figures(page);
    return {
      page,
      problems,
      storage: await value(page, "sim-storage"),
      own: Number(await value(page, "sim-log-bytes")),
      other: Number(await value(page, "sim-log-bytes-other")),
    };
  };
  const diff = await open("n:60");
  const full = await open("n:60,column_diff:false");
  assert.equal(diff.storage, "diff");
  assert.equal(full.storage, "full");
  assert.ok(diff.other > 2 * diff.own, `${diff.other} vs ${diff.own}`);
  // The two runs differ only in timing: cross-mode figures agree closely.
  assert.ok(Math.abs(diff.other - full.own) / full.own < 0.02, `${diff.other} vs ${full.own}`);
  assert.ok(Math.abs(full.other - diff.own) / diff.own < 0.02, `${full.other} vs ${diff.own}`);

  const page = diff.page;
  const pixels = () => page.getByTestId("sim-timeline").evaluate((c) => c.toDataURL());
  const select = page.getByTestId("sim-sizes-as");
  assert.equal(await select.inputValue(), "stored");
  const stored = await pixels();
  await page.getByTestId("sim-page").press("d");
  await page.waitForFunction(() => document.querySelector('[data-testid="sim-sizes-as"]').value === "full");
  await page.waitForFunction((before) => document.querySelector('[data-testid="sim-timeline"]').toDataURL() !== before, stored);
  await screenshot(page, "sim-entry-sizes-as-full");
  await select.selectOption("stored");
  await page.waitForFunction((before) => document.querySelector('[data-testid="sim-timeline"]').toDataURL() === before, stored);
  clean(diff.problems);
  clean(full.problems);
  await diff.page.close();
  await full.page.close();
});

test("a Southbound run draws its controllers as one lane, and any chassis expands to a lane of its own", async () => {
  // The same run on the command line: its figures are what the lane counts.
  const bin = cliBin();
  const cli = JSON.parse(execFileSync(bin, ["simulate", "sb-bringup", "--json"], { encoding: "utf8" }));

  const { page, problems } = await openPage(browser.context, server.url + "#sim=sb-bringup&t=3400000");
  await figures(page);
  const bar = page.getByTestId("sim-controllers");
  await bar.waitFor();
  assert.equal(Number(await bar.getAttribute("data-chassis")), cli.sb.chassis);
  assert.equal(Number(await bar.getAttribute("data-updates")), cli.sb.txns);
  // The leader dies after the writes: every controller got every update.
  assert.equal(Number(await bar.getAttribute("data-deliveries")), cli.sb.chassis * cli.sb.txns);
  assert.equal(Number(await bar.getAttribute("data-downloads")), cli.reconnect.clients);

  // The lane itself: pixels below the client lane, and deliveries in view.
  const timeline = page.getByTestId("sim-timeline");
  const before = await timeline.evaluate((c) => c.height);
  await page.getByTestId("sim-page").press("-");
  await page.getByTestId("sim-page").press("-");
  await page.getByTestId("sim-page").press("-");
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="sim-controllers"]').getAttribute("data-in-view")) > 0);

  // Chassis 2 (the model binds port k to chassis k mod 60, counted from
  // 0, the page counts from 1) holds ports 1 and 61: its lane shows both.
  await page.getByTestId("sim-expand-chassis").fill("2");
  await page.getByTestId("sim-expand-chassis").press("Enter");
  await page.getByTestId("sim-expand-chassis").dispatchEvent("change");
  const lane = page.getByTestId("sim-chassis-lane");
  await lane.waitFor();
  assert.equal(await lane.getAttribute("data-chassis"), "2");
  assert.equal(await lane.getAttribute("data-bindings"), "2");
  assert.equal(await lane.getAttribute("data-seen"), "2");
  await page.waitForFunction((h) => document.querySelector('[data-testid="sim-timeline"]').height > h, before);
  // The new band has ink (the two bring-up bars).
  const ink = await timeline.evaluate((c) => {
    const band = 44;
    const d = c.getContext("2d").getImageData(90, c.height - band - 4, c.width - 100, band - 4).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i + 1] > 100 && d[i] < 100 && d[i + 2] < 100) n++;
    return n;
  });
  assert.ok(ink > 10, `green pixels in the chassis lane: ${ink}`);
  await screenshot(page, "sim-sb-controllers");
  // c closes it again.
  await page.getByTestId("sim-page").press("c");
  await lane.waitFor({ state: "detached" });
  clean(problems);
  await page.close();
});

test("an A/B preset over several seeds gives the figures of `compare --seeds` on the command line", async () => {
  const bin = cliBin();
  const cli = JSON.parse(execFileSync(bin, ["compare", "commit-sync", "--seeds", "10", "--json"], { encoding: "utf8" }));

  const { page, problems } = await openPage(browser.context, server.url + "#ab=commit-sync&seed=1");
  await value(page, "ab-ratio");
  await page.getByTestId("ab-seeds-10").click();
  const table = page.getByTestId("ab-seeds-table");
  await table.waitFor({ timeout: 120000 });
  assert.equal(await table.getAttribute("data-seeds"), "10");
  assert.equal(await table.getAttribute("data-violations"), "0");
  for (const [name, pick] of [
    ["txns.total_ms", (side) => side.txns.total_ms.mean],
    ["leaderless_ms", (side) => side.leaderless_ms.mean],
    ["elections", (side) => side.elections.mean],
  ]) {
    const row = table.locator(`tr[data-name="${name}"]`);
    const a = Number(await row.getAttribute("data-a"));
    const b = Number(await row.getAttribute("data-b"));
    const [ca, cb] = [pick(cli.a), pick(cli.b)];
    assert.ok(Math.abs(a - ca) <= 1e-3 * Math.max(1, Math.abs(ca)), `${name} A: page ${a}, cli ${ca}`);
    assert.ok(Math.abs(b - cb) <= 1e-3 * Math.max(1, Math.abs(cb)), `${name} B: page ${b}, cli ${cb}`);
  }
  await table.scrollIntoViewIfNeeded();
  await screenshot(page, "sim-ab-seeds");
  clean(problems);
  await page.close();
});

test("the editor shows each preset's own file, and a text edited in it runs as a custom scenario", async () => {
  const { page, problems } = await openPage(browser.context, server.url + "#sim=ls-add-follower");
  await figures(page);
  await page.evaluate(() => {
    for (const d of document.querySelectorAll("details")) d.open = true;
  });
  const text = page.getByTestId("sim-text");
  const file = (n) => readFileSync(new URL(`../../scenarios/${n}.scn`, import.meta.url), "utf8");
  // The page holds no preset texts: the run brings its own.
  assert.equal(await text.inputValue(), file("ls-add-follower"));
  // Choosing another preset runs it, and its file fills the editor.
  await page.getByTestId("sim-preset").selectOption("leader-kill");
  await page.waitForFunction(() => location.hash.startsWith("#sim=leader-kill"));
  await figures(page);
  await page.waitForFunction((want) => document.querySelector("[data-testid=sim-text]").value === want, file("leader-kill"));
  // An edited text runs as it stands (typed while the run plays: the
  // playback's redraws keep what was typed).
  const edited = file("leader-kill").replace(/^name = .*$/m, "name = edited-in-the-page");
  assert.notEqual(edited, file("leader-kill"));
  await text.fill(edited);
  await page.waitForTimeout(300);
  assert.equal(await text.inputValue(), edited);
  await page.getByTestId("sim-apply").click();
  await page.waitForFunction(() => location.hash.startsWith("#sim=custom"));
  await figures(page);
  await page.getByText("Simulate: edited-in-the-page").waitFor();
  assert.equal(await text.inputValue(), edited);
  clean(problems);
  await page.close();
});

test("every tour step shows its diagram at 1024×700, and at 1280×800 its whole client lane", async () => {
  const { page, problems } = await openPage(browser.context, server.url + "#tour=1");
  for (const [width, height] of [[1024, 700], [1280, 800]]) {
    await page.setViewportSize({ width, height });
    if (width !== 1024) {
      await page.evaluate(() => { location.hash = "#tour=1"; });
      await page.reload();
    }
    for (let step = 1; step <= 5; step++) {
      if (step > 1) await page.getByTestId("tour-next").click();
      await page.waitForFunction((s) => document.querySelector('[data-testid="tour-step"]')?.dataset.value === String(s), step);
      await figures(page);
      await page.evaluate(() => window.scrollTo(0, 0));
      const canvas = await page.getByTestId("sim-timeline").evaluate((e) => {
        const r = e.getBoundingClientRect();
        return { top: r.top, bottom: r.bottom };
      });
      // The caption and the diagram it describes, on one screen.
      const visible = Math.min(canvas.bottom, height) - canvas.top;
      const need = width === 1024 ? 0.6 : 1;
      assert.ok(visible >= need * (canvas.bottom - canvas.top),
        `${width}×${height} step ${step}: diagram ${canvas.top}–${canvas.bottom}, ${visible}px in view`);
    }
  }
  clean(problems);
  await page.close();
});

test("a scenario that does not start says why in view of the editor's Run button", async () => {
  const { page, problems } = await openPage(browser.context, server.url + "#sim=ls-add-follower");
  await page.setViewportSize({ width: 1024, height: 700 });
  await figures(page);
  await page.locator(".editor > summary").click();
  await page.getByTestId("sim-sets").fill("electon_timer=2000");
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  await page.getByTestId("sim-apply").click();
  const error = page.getByTestId("sim-error");
  await error.waitFor();
  assert.match(await error.innerText(), /unknown knob 'electon_timer'; did you mean 'election_timer'\?/);
  const box = (id) => page.getByTestId(id).evaluate((e) => {
    const r = e.getBoundingClientRect();
    return { top: r.top, bottom: r.bottom };
  });
  const [err, run] = [await box("sim-error"), await box("sim-apply")];
  const height = 700;
  assert.ok(err.top >= 0 && err.bottom <= height, `the error at ${err.top}–${err.bottom}`);
  assert.ok(run.top >= 0 && run.bottom <= height, `the Run button at ${run.top}–${run.bottom}`);
  assert.ok(run.bottom <= err.top || run.top >= err.bottom, "the error does not cover the Run button");
  clean(problems);
  await page.close();
});

test("each preset says under its name what it shows, from its scenario's description", async () => {
  const { page, problems } = await openPage(browser.context, server.url + "#sim=leader-kill");
  await figures(page);
  assert.equal(await page.getByTestId("sim-about").innerText(), "idle leader killed at a random moment; time to a new leader");
  await page.locator('.presets a[href="#sim=relay-write"]').click();
  await page.waitForFunction(() => document.querySelector("[data-testid=sim-about]")?.innerText.startsWith("100 sequential ls-add through one relay"), null, { timeout: 60000 });
  clean(problems);
  await page.close();
});

test("the IDL charts' value labels fit in the canvas, log scale too", async () => {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 1024, height: 700 });
  // Where each value label ends, in canvas pixels.
  await page.addInitScript(() => {
    window.__labels = [];
    const fill = CanvasRenderingContext2D.prototype.fillText;
    CanvasRenderingContext2D.prototype.fillText = function (t, x, y, ...rest) {
      if (/^[\d.]+[kMG]?$/.test(String(t)) && this.canvas.dataset.testid === "idl-chart") {
        const w = this.measureText(String(t)).width;
        const left = this.textAlign === "right" || this.textAlign === "end" ? x - w : this.textAlign === "center" ? x - w / 2 : x;
        const m = this.getTransform();
        window.__labels.push({ t: String(t), right: m.a * (left + w) + m.e, width: this.canvas.width });
      }
      return fill.call(this, t, x, y, ...rest);
    };
  });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(server.url + "#idl=write-changed-only");
  await value(page, "idl-ratio");
  await page.waitForFunction(() => window.__labels.some((l) => l.t.endsWith("k")));
  const labels = await page.evaluate(() => window.__labels);
  const cut = labels.filter((l) => l.right > l.width);
  assert.deepEqual(cut, [], "value labels past the canvas's right edge");
  assert.deepEqual(errors, []);
  await page.close();
});

test("each simulation page has one h1, and the Simulate page shows its focus ring", async () => {
  for (const [hash, heading] of [
    ["#sim=leader-kill", /^Simulate: leader-kill/],
    ["#ab=commit-sync", /\S/],
    ["#tour=1", /^1\. Election$/],
    ["#idl=write-changed-only", /^IDL experiment: write-changed-only$/],
  ]) {
    const { page, problems } = await openPage(browser.context, server.url + hash);
    await page.locator("h1").first().waitFor({ timeout: 60000 });
    const h1 = await page.locator("h1").allInnerTexts();
    assert.equal(h1.length, 1, `${hash}: ${JSON.stringify(h1)}`);
    assert.match(h1[0], heading, hash);
    if (hash.startsWith("#sim=")) {
      // The page takes the keys: Tab from the last tab reaches it, ring shown.
      await figures(page);
      await page.getByTestId("tab-idl").focus();
      await page.keyboard.press("Tab");
      const ring = await page.evaluate(() => {
        const e = document.activeElement;
        const s = getComputedStyle(e);
        return { id: e.dataset.testid, style: s.outlineStyle, width: parseFloat(s.outlineWidth) };
      });
      assert.equal(ring.id, "sim-page");
      assert.notEqual(ring.style, "none");
      assert.ok(ring.width >= 2, `ring ${ring.width}px wide`);
    }
    clean(problems);
    await page.close();
  }
});

test("a run that fails marks the results left from the run before as not its own", async () => {
  const { page, problems } = await openPage(browser.context, server.url + "#sim=ls-add-follower");
  const before = await figures(page);
  const simPage = page.getByTestId("sim-page");
  const dim = () => page.evaluate(() => [
    Number(getComputedStyle(document.querySelector("dl.figures")).opacity),
    Number(getComputedStyle(document.querySelector("[data-testid=sim-timeline]")).opacity),
  ]);
  assert.deepEqual(await dim(), [1, 1]);
  await page.locator(".editor > summary").click();
  await page.getByTestId("sim-sets").fill("no_such_knob=1");
  await page.getByTestId("sim-apply").click();
  const error = page.getByTestId("sim-error");
  await error.waitFor();
  assert.match(await error.innerText(), /unknown knob 'no_such_knob'.*previous run's, not this one's/s);
  // The old figures are still there, marked as the previous run's.
  assert.equal(Number(await value(page, "sim-txns")), before.txns);
  assert.match(await simPage.getAttribute("class"), /\bstale\b/);
  for (const o of await dim()) assert.ok(o < 1, `opacity ${o}`);
  // A run that works is its own again.
  await page.getByTestId("sim-sets").fill("");
  await page.getByTestId("sim-apply").click();
  await error.waitFor({ state: "detached", timeout: 60000 });
  await figures(page);
  assert.doesNotMatch(await simPage.getAttribute("class"), /\bstale\b/);
  assert.deepEqual(await dim(), [1, 1]);
  clean(problems);
  await page.close();
});

test("the editor lists every knob, name, kind and description, as simulate --list-knobs", async () => {
  const ref = JSON.parse(execFileSync(cliBin(), ["simulate", "--list-knobs", "--json"], { encoding: "utf8" })).knobs;
  assert.ok(ref.length > 40);
  const { page, problems } = await openPage(browser.context, server.url + "#sim=leader-kill");
  await figures(page);
  await page.locator(".editor > summary").click();
  const knobs = page.getByTestId("sim-knobs");
  await knobs.locator("summary").click();
  await knobs.locator("td").first().waitFor();
  const rows = await knobs.locator("tr").evaluateAll((trs) =>
    trs.filter((tr) => tr.cells[0].tagName === "TD").map((tr) => [...tr.cells].map((c) => c.innerText)),
  );
  assert.deepEqual(rows, ref.map((k) => [k.name, k.kind, k.about]));
  // Text, not figures: the descriptions read from the left.
  const align = await knobs.locator("td").nth(2).evaluate((td) => getComputedStyle(td).textAlign);
  assert.equal(align, "left");
  clean(problems);
  await page.close();
});

test("tour step 5 shows the client's writes around the failover in its window", async () => {
  const page = await browser.context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  // Counts the write bars of the client lane in each frame: they are drawn
  // after its label, in green (done) or orange (waiting).
  await page.addInitScript(() => {
    window.__frames = 0;
    window.__bars = 0;
    const text = CanvasRenderingContext2D.prototype.fillText;
    CanvasRenderingContext2D.prototype.fillText = function (t, ...rest) {
      if (t === "clients") {
        window.__frames++;
        window.__bars = 0;
      }
      return text.call(this, t, ...rest);
    };
    const rect = CanvasRenderingContext2D.prototype.fillRect;
    CanvasRenderingContext2D.prototype.fillRect = function (...args) {
      if (this.fillStyle === "#2c8a3e" || this.fillStyle === "#e0a030") window.__bars++;
      return rect.apply(this, args);
    };
  });
  await page.goto(server.url + "#tour=5");
  await figures(page);
  assert.equal(await page.getByTestId("tour-title").innerText(), "5. Leader failover");
  assert.match(await page.getByTestId("tour-caption").innerText(), /writes wait there/);
  await page.waitForFunction(() => window.__frames > 0);
  const bars = await page.evaluate(() => window.__bars);
  assert.ok(bars >= 3, `${bars} client writes drawn in the step's window`);
  assert.deepEqual(errors, []);
  await page.close();
});
