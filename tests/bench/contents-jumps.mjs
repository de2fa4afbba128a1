// Time travel in Chromium on a big file: the Contents page's jumps to
// random indexes and `]` steps, timed from the keystroke to the new
// index and the open table's rows read at it on screen (the worker's
// walk and landing, the replies, the render).
//   trunk build --release && [PAUSE_MS=1000] node tests/bench/contents-jumps.mjs FILE [JUMPS=20]
// FILE: e.g. s1.db of `ovsdb-scope generate southbound DIR --size-mb 1000`.
// Prints JSON; figures are measured, never asserted (BENCHMARKS.md).
import { basename } from "node:path";
import { statSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { serveDir, launchBrowser, openPage } from "../e2e/harness.mjs";

const FILE = process.argv[2];
if (!FILE) {
  console.error("usage: node tests/bench/contents-jumps.mjs FILE [JUMPS]");
  process.exit(2);
}
const JUMPS = Number(process.argv[3] || 20);
const LONG = 30 * 60 * 1000;
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const max = (a) => Math.max(...a);

const server = await serveDir();
const browser = await launchBrowser();
// The worker's own time for each reply (its `ms`), beside the page's.
await browser.context.addInitScript(() => {
  const Real = window.Worker;
  window.__workerMs = [];
  window.Worker = class extends Real {
    constructor(...a) {
      super(...a);
      this.addEventListener("message", (e) => {
        const d = e.data;
        if (d && typeof d.type === "string" && d.type.startsWith("contents-") && typeof d.json === "string") {
          try {
            const v = JSON.parse(d.json);
            if (typeof v.ms === "number") window.__workerMs.push([d.type, v.ms]);
          } catch {}
        }
      });
    }
  };
});
const { page, problems } = await openPage(browser.context, server.url);
await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 120000 });

let t = performance.now();
await page.getByTestId("file-input").setInputFiles([FILE]);
await page.locator(`[data-testid=summary][data-files="${basename(FILE)}"]`).waitFor({ timeout: LONG });
await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: LONG });
const loadMs = performance.now() - t;

t = performance.now();
await page.getByTestId("view-contents").click();
await page.locator(`[data-testid=contents][data-state=ready][data-file="${basename(FILE)}"]`).waitFor({ timeout: LONG });
const openMs = performance.now() - t;
const contents = page.getByTestId("contents");
const first = Number(await contents.getAttribute("data-first"));
const last = Number(await contents.getAttribute("data-last"));

const worker = { jumps: [], steps: [], rows: [] };
// PAUSE_MS: a reader's pause before each move (the worker frees the
// database a jump replaced after its reply, before the next message).
const PAUSE = Number(process.env.PAUSE_MS || 0);
async function goTo(i, how) {
  if (PAUSE) await page.waitForTimeout(PAUSE);
  await page.evaluate(() => (window.__workerMs.length = 0));
  // Timed in the page, from the keystroke to the first frame after the
  // new index and a ready view are in the DOM: Playwright's own waits
  // poll (up to 500 ms apart) and would round the figure up.
  const shown = page.evaluate(
    (i) =>
      new Promise((resolve) => {
        let key = null;
        const onKey = (e) => {
          if (e.key === "]" || e.key === "Enter") key ??= performance.now();
        };
        document.addEventListener("keydown", onKey, true);
        const done = () => {
          const a = document.querySelector("[data-testid=at-index]");
          const c = document.querySelector("[data-testid=contents]");
          // The rows shown too, when a table is open (the grid says the
          // index they were read at).
          const g = document.querySelector("[data-testid=row-grid]");
          return key !== null && a?.dataset.value === String(i) && c?.dataset.state === "ready"
            && (!g || g.dataset.at === String(i));
        };
        const mo = new MutationObserver(() => {
          if (!done()) return;
          mo.disconnect();
          document.removeEventListener("keydown", onKey, true);
          requestAnimationFrame(() => resolve(performance.now() - key));
        });
        mo.observe(document.body, { subtree: true, attributes: true, childList: true });
      }),
    i,
  );
  // Let the observer start before the key goes down.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(r)));
  if (how === "step") {
    await page.keyboard.press("]");
  } else {
    await page.getByTestId("at-index").fill(String(i));
    await page.getByTestId("at-index").press("Enter");
  }
  const took = await shown;
  await page.waitForTimeout(50);
  for (const [type, ms] of await page.evaluate(() => window.__workerMs)) {
    if (type === "contents-opened") worker[how === "step" ? "steps" : "jumps"].push(ms);
    if (type === "contents-rows") worker.rows.push(ms);
  }
  return took;
}

// xorshift, as checkpoint_bench picks its indexes.
let seed = 0x2545f491;
const rand = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 2 ** 32;
};
const jumps = [];
for (let k = 0; k < JUMPS; k++) {
  jumps.push(await goTo(first + Math.floor(rand() * (last - first)), "jump"));
}
// 5 × 5 steps forward, each from where the last one landed.
const steps = [];
for (let k = 0; k < 5; k++) {
  const start = first + Math.floor(rand() * (last - first - 10));
  await goTo(start, "jump");
  await page.getByTestId("row-grid").focus();
  for (let i = start + 1; i <= start + 5; i++) steps.push(await goTo(i, "step"));
}
const memory = await page.evaluate(() => document.body.dataset.workerMemory || null);
console.log(
  JSON.stringify(
    {
      file: FILE,
      bytes: statSync(FILE).size,
      indexes: [first, last],
      loadMs: Math.round(loadMs),
      contentsOpenMs: Math.round(openMs),
      jumps: { n: jumps.length, medianMs: Math.round(median(jumps)), maxMs: Math.round(max(jumps)) },
      steps: { n: steps.length, medianMs: Math.round(median(steps)), maxMs: Math.round(max(steps)) },
      workerMs: Object.fromEntries(
        Object.entries(worker).map(([k, a]) => [k, a.length ? { n: a.length, medianMs: Math.round(median(a)), maxMs: Math.round(max(a)) } : null]),
      ),
      workerMemory: memory,
      consoleErrors: problems.consoleErrors,
      pageErrors: problems.pageErrors,
    },
    null,
    2,
  ),
);
await browser.close();
await server.close();
