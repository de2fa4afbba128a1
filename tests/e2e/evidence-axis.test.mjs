// Operator evidence on one timeline (issue "Operator evidence", section 3):
// the wall-time axis beside the log-index axis, the hover link between a
// term band and that term's elections in the logs, and each server's last
// cluster/status on its lane. Runs on the bundled leader-pause incident.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, serveDir, launchBrowser, openPage, screenshot, useBrowser } from "./harness.mjs";

let server;
let browser;
useBrowser((s, b) => ([server, browser] = [s, b]));

const BUNDLED = join(ROOT, "static/samples/incidents/leader-pause");
const files = readdirSync(BUNDLED).sort();
const dbs = files.filter((f) => f.endsWith(".db"));
const logs = files.filter((f) => f.endsWith(".log"));
const read = (f) => readFileSync(join(BUNDLED, f), "utf8");

// timeline::Layout::new: axis 34 px, lanes of 16 + 22 + 70 px, 14 px apart.
const AXIS = 34;
const BAND = 16;
const TICKS = 22;
const LANE = 16 + 22 + 70;
const GAP = 14;
const laneTop = (i) => AXIS + i * (LANE + GAP);

/** A log line's time as the page prints it: `2026-12-01 19:17:56.028`. */
const lineTime = (line) => line.slice(0, 23).replace("T", " ");
const lineMs = (line) => Date.parse(line.slice(0, 24));

function noProblems(problems) {
  assert.deepEqual(problems.consoleErrors, []);
  assert.deepEqual(problems.pageErrors, []);
  assert.deepEqual(problems.foreignRequests, []);
}

async function openIncident(hash = "") {
  const { page, problems } = await openPage(browser.context, `${server.url}#sample=leader-pause${hash}`);
  await page.locator('[data-testid=summary][data-files="s1.db,s2.db,s3.db"]').waitFor({ timeout: 60000 });
  await page.getByTestId("findings-count").waitFor({ timeout: 60000 });
  await page.locator("[data-testid=check-results][data-state=done]").waitFor({ timeout: 60000 });
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor();
  return { page, problems };
}

/** The canvas's test hooks: axis, view, plot geometry, track rows. */
async function canvas(page) {
  const c = page.getByTestId("timeline");
  await c.evaluate((e) => e.scrollIntoView({ block: "start" }));
  const a = await c.evaluate((e) => ({ ...e.dataset }));
  const [start, end] = a.view.split(",").map(Number);
  const [gutter, width] = a.plot.split(",").map(Number);
  const box = await c.boundingBox();
  return {
    axis: a.axis,
    start,
    end,
    gutter,
    width,
    box,
    ticks: a.ticks ? a.ticks.split(",") : [],
    tracks: a.trackRows ? a.trackRows.split(",").map(Number) : [],
    term: a.highlightTerm,
    bands: Number(a.highlightBands),
    marks: Number(a.highlightMarks),
  };
}

/** Canvas x of axis position `pos` (an index, or UTC ms on the time axis). */
const xOf = (c, pos) => c.gutter + ((pos - c.start) / (c.end - c.start)) * c.width;

/** Hovers canvas point (x, y) and returns the tooltip's text ("" if none). */
async function hover(page, c, x, y) {
  await page.mouse.move(c.box.x + x, c.box.y + y);
  await page.waitForTimeout(60);
  const tip = page.getByTestId("tooltip");
  return (await tip.count()) ? await tip.innerText() : "";
}

/** Hovers the log tracks at x until one shows a tooltip containing `text`. */
async function hoverTracks(page, c, x, text) {
  for (const top of c.tracks) {
    const tip = await hover(page, c, x, top + 17);
    if (tip.includes(text)) return tip;
  }
  return "";
}

/** The UTC ms of the first time a tooltip prints. */
function tipMs(tip) {
  const m = tip.match(/(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) UTC/);
  return m ? Date.parse(m[1].replace(" ", "T") + "Z") : NaN;
}

/**
 * Hovers the log tracks at the x of time `ms` until a tooltip shows an event
 * within 3 px of that time (marks closer than a pixel cannot be told apart)
 * for which `ok(tip)` holds.
 */
async function hoverTracksAt(page, c, ms, ok = () => true) {
  const tol = (3 * (c.end - c.start)) / c.width;
  for (const top of c.tracks) {
    const tip = await hover(page, c, xOf(c, ms), top + 17);
    if (tip && Math.abs(tipMs(tip) - ms) <= tol && ok(tip)) return tip;
  }
  return "";
}

async function pressed(page, id) {
  return page.getByTestId(id).getAttribute("aria-pressed");
}

/** `term N` election lines of every log: started, won, "is leader for term". */
function electionLines(term, dir = BUNDLED) {
  const re = new RegExp(`term ${term}: .*starting election|term ${term}: elected leader|is leader for term ${term}$`);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".log"))
    .flatMap((f) => readFileSync(join(dir, f), "utf8").split("\n").filter((l) => re.test(l)));
}

/** How many of `dir`'s database files saw term N (have a record of it). */
function lanesWithTerm(term, dir = BUNDLED) {
  const re = new RegExp(`"term":${term}[,}]`);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".db"))
    .filter((f) => re.test(readFileSync(join(dir, f), "utf8"))).length;
}

test("the time axis places entries by _date and log events at their time; t switches back to the index axis", async () => {
  const { page, problems } = await openIncident();
  let c = await canvas(page);
  assert.equal(c.axis, "index");
  assert.equal(await pressed(page, "axis-index"), "true");
  assert.equal(await pressed(page, "axis-time"), "false");
  assert.match(await page.getByTestId("axis-time").getAttribute("title"), /wall time.*\(t/);
  assert.ok(c.ticks.every((t) => /^\d+$/.test(t)), `index ticks ${c.ticks}`);
  const indexView = [c.start, c.end];

  // An entry on the index axis: its index and date from its tooltip.
  const tickY = laneTop(0) + BAND + TICKS / 2;
  const tip = await hover(page, c, xOf(c, 15), tickY);
  const [, index] = tip.match(/index (\d+)/);
  const [, date] = tip.match(/(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) UTC/);
  const dateMs = Date.parse(date.replace(" ", "T") + "Z");

  await page.getByTestId("axis-time").click();
  await page.locator("[data-testid=timeline][data-axis=time]").waitFor();
  c = await canvas(page);
  assert.equal(await pressed(page, "axis-time"), "true");
  assert.equal(await pressed(page, "axis-index"), "false");
  assert.match(page.url(), /axis=time/);
  // UTC clock ticks, in order.
  assert.ok(c.ticks.length >= 3, `ticks ${c.ticks}`);
  assert.ok(c.ticks.every((t) => /^\d\d:\d\d(:\d\d(\.\d{3})?)?$/.test(t)), `time ticks ${c.ticks}`);
  assert.deepEqual([...c.ticks].sort(), c.ticks);
  // The axis spans the logs and the files' dates.
  const allLines = logs.flatMap((f) => read(f).split("\n").filter((l) => /^\d{4}-/.test(l)));
  const firstLog = Math.min(...allLines.map(lineMs));
  const lastLog = Math.max(...allLines.map(lineMs));
  const dates = dbs.flatMap((f) => [...read(f).matchAll(/"_date":(\d+)/g)].map((m) => Number(m[1])));
  assert.ok(c.start <= Math.min(firstLog, ...dates), `view starts ${c.start}`);
  assert.ok(c.end >= Math.max(lastLog, ...dates), `view ends ${c.end}`);

  // The same entry now sits at its _date.
  const at = await hover(page, c, xOf(c, dateMs), tickY);
  assert.match(at, new RegExp(`index \\d+`));
  assert.ok(at.includes(date), `the entry at ${date} (index ${index}) is under x(_date): ${at}`);

  // Log events at their own time: the first election (s1) and the one
  // after the pause (s2), later and so further right.
  const won1 = read("s1.ovsdb-server.log").split("\n").find((l) => /term 1: elected leader/.test(l));
  const won2 = read("s2.ovsdb-server.log").split("\n").find((l) => /term 2: elected leader/.test(l));
  const x1 = xOf(c, lineMs(won1));
  const x2 = xOf(c, lineMs(won2));
  assert.ok(x2 > x1 + 50, `later event further right: ${x1} < ${x2}`);
  assert.ok((await hoverTracksAt(page, c, lineMs(won1))) !== "", `an event at ${lineTime(won1)} under x=${x1}`);
  assert.ok((await hoverTracksAt(page, c, lineMs(won2))) !== "", `an event at ${lineTime(won2)} under x=${x2}`);
  // A long poll is a span ending at its line's time.
  const poll = logs
    .flatMap((f) => read(f).split("\n"))
    .find((l) => /Unreasonably long (\d+)ms poll interval/.test(l));
  if (poll) {
    const wall = Number(poll.match(/long (\d+)ms/)[1]);
    const mid = xOf(c, lineMs(poll) - wall / 2);
    assert.match(await hoverTracks(page, c, mid, lineTime(poll)), /long-poll/);
  }
  await screenshot(page, "evidence-time-axis");

  // t: back to the index axis, as it was.
  await page.mouse.move(c.box.x + 5, c.box.y + 5);
  await page.keyboard.press("t");
  await page.locator("[data-testid=timeline][data-axis=index]").waitFor();
  c = await canvas(page);
  assert.deepEqual([c.start, c.end], indexView);
  assert.equal(await pressed(page, "axis-index"), "true");
  assert.ok(c.ticks.every((t) => /^\d+$/.test(t)));
  assert.doesNotMatch(page.url(), /axis=time/);
  assert.match(await hover(page, c, xOf(c, Number(index)), tickY), new RegExp(`index ${index} `));
  noProblems(problems);
  await page.close();

  // The URL keeps the axis.
  const again = await openIncident("&axis=time");
  assert.equal((await canvas(again.page)).axis, "time");
  assert.equal(await pressed(again.page, "axis-time"), "true");
  noProblems(again.problems);
  await again.page.close();
});

test("hovering a term band highlights its elections in the logs and its findings, and back", async () => {
  const { page, problems } = await openIncident();
  let c = await canvas(page);
  assert.equal(c.term, "");
  // The band row of s1's lane, right end: the last term.
  const bandY = laneTop(0) + BAND / 2;
  const tip = await hover(page, c, c.gutter + c.width - 20, bandY);
  const [, term] = tip.match(/^term (\d+)/);
  c = await canvas(page);
  assert.equal(c.term, term);
  const lines = electionLines(term);
  assert.ok(lines.length >= 2, `election lines of term ${term}: ${lines}`);
  assert.equal(c.marks, lines.length, "every election event of the term is highlighted");
  assert.equal(c.bands, lanesWithTerm(term), "the term's band in every lane that has it");
  // Findings of the term are marked, the others not.
  const findings = await page
    .getByTestId("finding")
    .evaluateAll((els) => els.map((e) => ({ term: e.dataset.term, linked: e.dataset.linked })));
  assert.ok(findings.some((f) => f.term === term), `a finding of term ${term}`);
  for (const f of findings) assert.equal(f.linked, String(f.term === term));
  await screenshot(page, "evidence-term-link");
  // Leaving the band clears the link.
  await page.mouse.move(c.box.x + 5, c.box.y + 5);
  await page.locator("[data-testid=timeline][data-highlight-term='']").waitFor();
  assert.equal(await page.locator("[data-testid=finding][data-linked=true]").count(), 0);

  // The other way: an election in a log highlights that term's bands.
  await page.keyboard.press("t");
  await page.locator("[data-testid=timeline][data-axis=time]").waitFor();
  c = await canvas(page);
  // s2 wins term 2 after the pause; s1 and s3 log its leadership.
  const won = read("s2.ovsdb-server.log").split("\n").find((l) => /term 2: elected leader/.test(l));
  const t1 = await hoverTracksAt(page, c, lineMs(won), (tip) => / · term \d+/.test(tip));
  assert.match(t1, /election|leader/);
  const termOf = t1.match(/ · term (\d+)/)[1];
  assert.equal(termOf, "2");
  c = await canvas(page);
  assert.equal(c.term, termOf);
  assert.ok(lanesWithTerm(termOf) >= 1);
  assert.equal(c.bands, lanesWithTerm(termOf));
  assert.equal(c.marks, electionLines(termOf).length);
  noProblems(problems);
  await page.close();
});

/** The fields of a `cluster/status` text the lane box shows. */
function parseStatus(text) {
  const get = (re) => text.match(re)?.[1];
  const log = text.match(/^Log: \[(\d+), (\d+)\]/m);
  return {
    sid: get(/^Server ID: (\w{4})/m),
    role: get(/^Role: (\w+)/m),
    term: get(/^Term: (\d+)/m),
    leader: get(/^Leader: (\S+)/m),
    log: log ? `${log[1]},${log[2]}` : "—,—",
    notCommitted: get(/^Entries not yet committed: (\d+)/m),
    notApplied: get(/^Entries not yet applied: (\d+)/m),
    peers: [...text.matchAll(/^\s+(\w{4}) \(\w+ at \S+\)(.*)$/gm)]
      .filter((m) => !m[2].includes("(self)"))
      .map((m) => ({
        sid: m[1],
        next: m[2].match(/next_index=(\d+)/)?.[1] ?? "",
        match: m[2].match(/match_index=(\d+)/)?.[1] ?? "",
      })),
  };
}

test("each server's last cluster/status is on its lane: role, term, leader, log range, peers' next/match", async () => {
  const statuses = files.filter((f) => f.endsWith(".cluster-status.txt")).map((f) => [f, parseStatus(read(f))]);
  const { page, problems } = await openIncident();
  const boxes = page.getByTestId("lane-status");
  await boxes.first().waitFor();
  assert.equal(await boxes.count(), statuses.length);
  const c = await canvas(page);
  for (const [file, st] of statuses) {
    const box = page.locator(`[data-testid=lane-status][data-server="${st.sid}"]`);
    assert.equal(await box.count(), 1, `a box for ${st.sid} (${file})`);
    const d = await box.evaluate((e) => ({ ...e.dataset }));
    assert.equal(d.role, st.role, file);
    assert.equal(d.term, st.term, file);
    assert.equal(d.leader, st.leader, file);
    assert.equal(d.log, st.log, file);
    assert.equal(d.notCommitted, st.notCommitted, file);
    assert.equal(d.notApplied, st.notApplied, file);
    // On the lane of the server's own file (the same sN prefix here).
    assert.equal(d.lane, file.replace(".cluster-status.txt", ".db"));
    const li = dbs.indexOf(d.lane);
    const r = await box.boundingBox();
    const top = r.y - c.box.y;
    assert.ok(top >= laneTop(li) && top + r.height <= laneTop(li) + LANE + 1, `${file}: box at ${top}, lane ${li}`);
    const text = await box.innerText();
    assert.match(text, new RegExp(`${st.role}`, "i"));
    assert.match(text, new RegExp(`term ${st.term}`));
    // Each peer, with the next/match index a leader prints.
    const peers = await box
      .getByTestId("lane-status-peer")
      .evaluateAll((els) => els.map((e) => ({ sid: e.dataset.sid, next: e.dataset.next, match: e.dataset.match })));
    assert.deepEqual(
      peers.sort((a, b) => a.sid.localeCompare(b.sid)),
      st.peers.sort((a, b) => a.sid.localeCompare(b.sid)),
      file,
    );
  }
  // The leader's box says leader, with the term of its cluster/status.
  const [, leader] = statuses.find(([, s]) => s.role === "leader");
  const lb = page.locator("[data-testid=lane-status][data-role=leader]");
  assert.equal(await lb.count(), 1);
  assert.equal(await lb.getAttribute("data-server"), leader.sid);
  assert.equal(await lb.getAttribute("data-term"), leader.term);
  assert.match(await lb.innerText(), new RegExp(`leader · term ${leader.term}`, "i"));
  assert.ok(leader.peers.every((p) => p.next !== "" && p.match !== ""), "the leader prints next/match");
  // c hides and shows them.
  assert.equal(await pressed(page, "lane-status-toggle"), "true");
  await page.keyboard.press("c");
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=lane-status]").length === 0);
  assert.equal(await pressed(page, "lane-status-toggle"), "false");
  await page.getByTestId("lane-status-toggle").click();
  await boxes.first().waitFor();
  // In time mode they stay on their lanes.
  await page.keyboard.press("t");
  await page.locator("[data-testid=timeline][data-axis=time]").waitFor();
  assert.equal(await boxes.count(), statuses.length);
  // A finding clicked on the time axis is shown at its own time.
  const f = page.locator("[data-testid=finding][data-time-ms]:not([data-time-ms=''])").first();
  const ms = await f.getAttribute("data-time-ms");
  await f.click();
  await page.locator(`[data-testid=timeline][data-focus-ms="${ms}"]`).waitFor();
  assert.equal(Number(await page.getByTestId("timeline").getAttribute("data-focus")), Number(ms));
  noProblems(problems);
  await page.close();
});

test("election storm: every term band links exactly that term's elections in the three logs", async () => {
  const dir = join(ROOT, "tests/fixtures/incidents/election-storm");
  const inputs = readdirSync(dir)
    .filter((f) => /^s\d\.(db|ovsdb-server\.log|cluster-status\.txt)$/.test(f))
    .map((f) => join(dir, f));
  const { page, problems } = await openPage(browser.context, server.url);
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 60000 });
  await page.getByTestId("file-input").setInputFiles(inputs);
  await page.locator('[data-testid=summary][data-files="s1.db,s2.db,s3.db"]').waitFor({ timeout: 60000 });
  await page.getByTestId("findings-count").waitFor({ timeout: 60000 });
  await page.locator("[data-testid=check-results][data-state=done]").waitFor({ timeout: 60000 });
  await page.locator("[data-testid=timeline][data-tracks='3']").waitFor();
  const c = await canvas(page);
  const seen = new Map();
  for (let lane = 0; lane < 3; lane++) {
    for (let x = c.gutter + 2; x < c.gutter + c.width; x += 4) {
      await page.mouse.move(c.box.x + x, c.box.y + laneTop(lane) + BAND / 2);
      const tip = page.getByTestId("tooltip");
      const m = (await tip.count()) ? (await tip.innerText()).match(/^term (\d+)/) : null;
      if (!m || seen.has(m[1])) continue;
      const now = await canvas(page);
      seen.set(m[1], now);
      assert.equal(now.term, m[1]);
      assert.equal(now.marks, electionLines(m[1], dir).length, `term ${m[1]}: its election events`);
      assert.equal(now.bands, lanesWithTerm(m[1], dir), `term ${m[1]}: its bands`);
    }
  }
  const terms = new Set(
    readdirSync(dir)
      .filter((f) => f.endsWith(".log"))
      .flatMap((f) => [...readFileSync(join(dir, f), "utf8").matchAll(/is leader for term (\d+)/g)].map((m) => m[1])),
  );
  for (const t of terms) assert.ok(seen.has(t), `the band of term ${t} (led, per the logs) was found; seen ${[...seen.keys()]}`);
  noProblems(problems);
  await page.close();
});
