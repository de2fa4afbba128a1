// Where a timeline frame's time goes at 1M entries: loads the file of
// tests/bench/timeline-renderers.mjs (generate it with that script first),
// presses its 48 pan and zoom keys under the CDP sampling profiler and prints
// the frames' times and the self time per function. Build dist/ with
// function names for a readable profile:
//   KEEP_WASM_NAMES=1 trunk build --release --dist /tmp/dist-names
//   DIST_DIR=/tmp/dist-names node tests/bench/frame-profile.mjs
import { join } from "node:path";
import { tmpdir } from "node:os";
import { ROOT, serveDir, launchBrowser, openPage } from "../e2e/harness.mjs";
const file = join(tmpdir(), `ovsdb-scope-renderers-1000000.db`);
const server = await serveDir();
const browser = await launchBrowser();
const { page } = await openPage(browser.context, server.url);
const canvas = page.getByTestId("timeline");
await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 60000 });
await page.getByTestId("file-input").setInputFiles([file]);
const name = file.split("/").pop();
await page.locator(`[data-testid=summary][data-files="${name}"]`).waitFor({ timeout: 1800000 });
await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 1800000 });
await page.waitForTimeout(1000);
const cdp = await page.context().newCDPSession(page);
await cdp.send("Profiler.enable");
await cdp.send("Profiler.setSamplingInterval", { interval: 100 });
await cdp.send("Profiler.start");
const keys = ["+", "ArrowRight", "+", "ArrowLeft", "-", "ArrowRight", "+", "+", "ArrowLeft", "-", "-", "0"];
const frames = [];
for (let r = 0; r < 4; r++) for (const k of keys) {
  const before = await canvas.getAttribute("data-view");
  await page.keyboard.press(k);
  await page.waitForFunction((v) => document.querySelector("[data-testid=timeline]").dataset.view !== v, before, { timeout: 10000 }).catch(() => {});
  frames.push(Number(await canvas.getAttribute("data-frame-ms")));
}
const { profile } = await cdp.send("Profiler.stop");
const self = new Map();
const dt = profile.timeDeltas; const byId = new Map(profile.nodes.map((n) => [n.id, n]));
for (let i = 0; i < profile.samples.length; i++) {
  const n = byId.get(profile.samples[i]); const k = n.callFrame.functionName || `(${n.callFrame.url.split("/").pop()})`;
  self.set(k, (self.get(k) || 0) + (dt[i] || 0));
}
const tot = [...self.values()].reduce((a, b) => a + b, 0);
console.log("frames", JSON.stringify(frames));
for (const [k, v] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log((v / 1000).toFixed(1).padStart(8), "ms", (100 * v / tot).toFixed(1).padStart(5), "%", k);
await browser.close(); await server.close();
