// Web simulation benchmark (issue 7 item 10). Needs dist/ (trunk build --release).
//   node tests/bench/sim-web-bench.mjs        (or: scripts/bench-sim-web.sh)
// Prints: simulated events per second in the browser's worker (the run plus
// its recording into the trace) for a few runs, each as a tab's first run
// (fresh page and worker) and as later runs in the same page (the Run
// button with seeds 2-4), and the canvas frame time
// during playback with messages drawn (draw cost per frame, and the
// requestAnimationFrame interval), plus the gzipped wasm sizes.
import { readdirSync, readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { join } from "node:path";
import { DIST, serveDir, launchBrowser, openPage } from "../e2e/harness.mjs";

const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const pct = (a, p) => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(a.length * p))];

const server = await serveDir();
const browser = await launchBrowser();

async function run(hash) {
  const { page, problems } = await openPage(browser.context, server.url + hash);
  await page.locator('[data-testid="sim-status"][data-value="ready"]').waitFor({ state: "attached", timeout: 300000 });
  const eps = Number(await page.getByTestId("sim-events-per-s").getAttribute("data-value"));
  const text = await page.getByTestId("sim-events-per-s").innerText();
  return { page, problems, eps, text };
}

// 500 ovn-controllers for one simulated hour (issue 15 item 7), as an
// edited scenario in the link.
const SB_HOUR =
  "#sim=sb-bringup&text=" +
  encodeURIComponent(readFileSync(new URL("../../crates/raft-sim/benches/sb-hour.scn", import.meta.url), "utf8"));
// SIM_BENCH_ONLY=sb-hour: just that run; any other value: the runs whose
// link contains it (e.g. SIM_BENCH_ONLY=leader-kill).
const only = process.env.SIM_BENCH_ONLY;
const picked = (h) => !only || (only === "sb-hour" ? h.startsWith(SB_HOUR) : !h.startsWith(SB_HOUR) && h.includes(only));
const runs = [
  "#sim=ls-add-follower&profile=v2.12-pre-sync&t=0",
  "#sim=acl-portgroup&set=n:400&t=0",
  "#sim=ls-add-leader&set=n:5000&t=0",
  "#sim=leader-kill&until=3600000&t=0",
  SB_HOUR + "&t=0",
].filter(picked);
const label = (h) => (h.startsWith(SB_HOUR) ? "sb-hour (500 chassis, 1 h)" + h.slice(SB_HOUR.length) : h);
// A later run in the same page (the Run button, another seed): the page
// keeps its worker, whose wasm V8 has by then compiled with its optimizing
// tier. A first run pays for that compilation as its code gets hot.
async function rerun(page, seed) {
  await page.evaluate(() => {
    for (const d of document.querySelectorAll("details")) d.open = true;
  });
  const cell = page.getByTestId("sim-events-per-s");
  const before = await cell.innerText();
  await page.getByTestId("sim-seed").fill(String(seed));
  await page.getByTestId("sim-seed").dispatchEvent("change");
  await page.getByTestId("sim-apply").click();
  await page.waitForFunction(
    (b) => {
      const c = document.querySelector('[data-testid="sim-events-per-s"]');
      return c && c.innerText !== b && document.querySelector('[data-testid="sim-status"][data-value="ready"]');
    },
    before,
    { timeout: 300000 },
  );
  return { eps: Number(await cell.getAttribute("data-value")), text: await cell.innerText() };
}

console.log("simulated events per second in the worker (run + trace recording):");
for (const h of runs) {
  const eps = [];
  const later = [];
  let text = "";
  let laterText = "";
  let extra = "";
  for (let i = 0; i < 3; i++) {
    const t0 = Date.now();
    const r = await run(h);
    const wall = Date.now() - t0;
    eps.push(r.eps);
    text = r.text;
    const bar = r.page.getByTestId("sim-controllers");
    if (await bar.count()) {
      extra = `; page ready ${wall} ms after the link opened; controllers lane: ${await bar.getAttribute("data-chassis")} chassis, ` +
        `${await bar.getAttribute("data-updates")} updates, ${await bar.getAttribute("data-deliveries")} deliveries`;
    }
    if (i === 2) {
      for (const seed of [2, 3, 4]) {
        const x = await rerun(r.page, seed);
        later.push(x.eps);
        laterText = x.text;
      }
    }
    await r.page.close();
  }
  console.log(`  ${label(h).padEnd(52)} first run: median ${Math.round(median(eps))} events/s   (${text}${extra})`);
  console.log(`  ${"".padEnd(52)} later runs (seeds 2-4, same page): median ${Math.round(median(later))} events/s   (${laterText})`);
}

// Frame time during playback on busy runs (speeds chosen so that playback
// lasts the whole 4 s sample).
console.log("playback frame time (draw = wasm+canvas per frame; interval = rAF period):");
for (const [h, speed, zoomOut, expand] of [
  ["#sim=acl-portgroup&set=n:400&t=1700", "0.25", 0],
  ["#sim=ls-add-leader&set=n:5000&t=1700", "4", 2],
  ["#sim=leader-kill&until=3600000&t=5000", "64", 5],
  [SB_HOUR + "&t=600000", "64", 5],
  [SB_HOUR + "&t=600000", "64", 5, "7"],
].filter(([h]) => picked(h))) {
  const { page, problems } = await run(h);
  await page.getByTestId("sim-speed").selectOption(speed);
  if (expand) {
    await page.getByTestId("sim-expand-chassis").fill(expand);
    await page.getByTestId("sim-expand-chassis").dispatchEvent("change");
    await page.getByTestId("sim-chassis-lane").waitFor();
  }
  for (let i = 0; i < zoomOut; i++) await page.getByRole("button", { name: "−" }).first().click();
  await page.getByTestId("sim-play").click();
  const samples = await page.evaluate(
    () =>
      new Promise((done) => {
        const out = { draw: [], interval: [], messages: [] };
        const el = document.querySelector('[data-testid="sim-frame-ms"]');
        let last = performance.now();
        let frames = el.dataset.frames;
        const t0 = last;
        function tick(ts) {
          out.interval.push(ts - last);
          last = ts;
          // Only frames that redrew the canvas (playback still running).
          if (el.dataset.frames !== frames) {
            frames = el.dataset.frames;
            out.draw.push(Number(el.dataset.last));
            out.messages.push(Number(el.dataset.messages));
          }
          if (ts - t0 < 4000) requestAnimationFrame(tick);
          else done(out);
        }
        requestAnimationFrame(tick);
      }),
  );
  const d = samples.draw.filter((x) => x > 0);
  console.log(
    `  ${(label(h) + (expand ? ", chassis " + expand + " expanded" : "")).padEnd(44)} ${speed}x: draw median ${median(d).toFixed(2)} ms, p95 ${pct(d, 0.95).toFixed(2)} ms, ` +
      `max ${Math.max(...d).toFixed(2)} ms; rAF interval median ${median(samples.interval).toFixed(1)} ms, ` +
      `p95 ${pct(samples.interval, 0.95).toFixed(1)} ms; messages drawn per frame median ${median(samples.messages)}, ` +
      `max ${Math.max(...samples.messages)} (${samples.draw.length} redrawn frames)`,
  );
  if (problems.consoleErrors.length || problems.pageErrors.length) console.log("  problems:", problems);
  await page.close();
}

console.log("wasm sizes (gzip -9):");
let total = 0;
for (const f of readdirSync(DIST).filter((f) => f.endsWith(".wasm") || f.endsWith(".js"))) {
  const gz = gzipSync(readFileSync(join(DIST, f)), { level: 9 }).length;
  total += gz;
  console.log(`  ${f.padEnd(32)} ${gz} bytes`);
}
console.log(`  total (wasm + js)                ${total} bytes`);
await browser.close();
await server.close();
