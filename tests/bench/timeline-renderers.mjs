// The main timeline hand-painted (draw.rs, the default) against plotters
// (`#renderer=plotters`, web/src/timeline_plotters.rs), issue 14: canvas
// frame times while panning and zooming 1e5 and 1e6 entries. Needs dist/
// built with the web crate's feature `plotters-timeline` (add
// data-cargo-features="plotters-timeline" to the page's rust link in
// index.html, then trunk build --release); without it the page ignores
// `#renderer=plotters` and both rows measure the hand-painted timeline.
//   node tests/bench/timeline-renderers.mjs [ENTRIES...]   (default 100000 1000000)
// The files are generated here (tests/bench/gen-big-log.mjs, PAD=40) and
// kept in the temp directory between runs.
import { existsSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, serveDir, launchBrowser, openPage } from "../e2e/harness.mjs";

const sizes = process.argv.slice(2).map(Number);
const counts = sizes.length ? sizes : [100000, 1000000];
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const pct = (a, p) => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(a.length * p))];

const server = await serveDir();
const browser = await launchBrowser();
const out = [];
for (const n of counts) {
  const file = join(tmpdir(), `ovsdb-scope-renderers-${n}.db`);
  if (!existsSync(file)) execFileSync("node", [join(ROOT, "tests/bench/gen-big-log.mjs"), file, String(n), "40"], { stdio: "inherit" });
  const { page } = await openPage(browser.context, server.url);
  const canvas = page.getByTestId("timeline");
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 60000 });
  await page.getByTestId("file-input").setInputFiles([file]);
  const name = file.split("/").pop();
  await page.locator(`[data-testid=summary][data-files="${name}"]`).waitFor({ timeout: 30 * 60 * 1000 });
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 30 * 60 * 1000 });
  const entries = Number(await page.getByTestId("summary-entries").getAttribute("data-value"));
  for (const renderer of ["hand", "plotters"]) {
    await page.evaluate((r) => {
      const h = location.hash.replace(/&?renderer=plotters/, "");
      location.hash = r === "plotters" ? `${h}&renderer=plotters` : h || "#";
    }, renderer);
    await page.waitForTimeout(500);
    const frames = [];
    const keys = ["+", "ArrowRight", "+", "ArrowLeft", "-", "ArrowRight", "+", "+", "ArrowLeft", "-", "-", "0"];
    for (let round = 0; round < 4; round++) {
      for (const k of keys) {
        const before = await canvas.getAttribute("data-view");
        await page.keyboard.press(k);
        await page
          .waitForFunction((v) => document.querySelector("[data-testid=timeline]").dataset.view !== v, before, { timeout: 10000 })
          .catch(() => {});
        frames.push(Number(await canvas.getAttribute("data-frame-ms")));
      }
    }
    out.push({ entries, renderer, n: frames.length, median: median(frames), p95: pct(frames, 0.95), max: Math.max(...frames) });
    console.log(JSON.stringify(out[out.length - 1]));
  }
  await page.close();
}
await browser.close();
await server.close();
