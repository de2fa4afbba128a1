// Where the load worker's time goes: loads FILES (comma-separated paths) in
// the page under the CDP sampling profiler attached to the worker (a raw CDP
// connection: playwright's sessions do not reach a dedicated worker), then
// prints the worker's self time per function. Build dist/ with names:
//   KEEP_WASM_NAMES=1 trunk build --release --dist /tmp/dist-names
//   DIST_DIR=/tmp/dist-names FILES=a.db,b.db WORKERS=1 \
//     node --experimental-websocket tests/bench/worker-profile.mjs
// INTERVAL_US sets the sampling interval (default 1000); PROFILE_OUT
// writes the .cpuprofile. With SIM set to a simulation link's hash (for
// example SIM='#sim=leader-kill&until=3600000&t=0') it profiles that run
// instead of loading FILES.
import { writeFileSync } from "node:fs";
import { chromium } from "playwright-core";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serveDir, openPage } from "../e2e/harness.mjs";

const sim = process.env.SIM;
const files = sim ? [] : process.env.FILES.split(",");
const port = 9300 + Math.floor(Math.random() * 500);
const profileDir = await mkdtemp(join(tmpdir(), "ovsdb-scope-wprof-"));
const context = await chromium.launchPersistentContext(profileDir, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  viewport: { width: 1400, height: 900 },
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", `--remote-debugging-port=${port}`],
});
const server = await serveDir();
const { page } = await openPage(context, server.url + (process.env.WORKERS ? `#workers=${process.env.WORKERS}` : ""));
await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 60000 });

const ver = await (await fetch(`http://127.0.0.1:${port}/json/version`)).json();
const interval = Number(process.env.INTERVAL_US || 1000);
const ws = new WebSocket(ver.webSocketDebuggerUrl);
await new Promise((ok) => ws.addEventListener("open", ok));
let id = 0;
const pending = new Map();
const workers = [];
ws.addEventListener("message", (ev) => {
  const m = JSON.parse(ev.data);
  if (m.id && pending.has(m.id)) { pending.get(m.id)(m); pending.delete(m.id); return; }
  if (m.method === "Target.attachedToTarget") {
    const t = m.params.targetInfo;
    const sid = m.params.sessionId;
    if (t.type === "worker") {
      // Each load may start a new worker: profile it from its first line.
      const w = { session: sid, url: t.url, alive: true };
      workers.push(w);
      (async () => {
        await send("Profiler.enable", {}, sid);
        await send("Profiler.setSamplingInterval", { interval }, sid);
        await send("Profiler.start", {}, sid);
        await send("Runtime.runIfWaitingForDebugger", {}, sid);
      })().catch((e) => console.log("attach", e.message));
    } else send("Runtime.runIfWaitingForDebugger", {}, sid).catch(() => {});
  }
  if (m.method === "Target.detachedFromTarget") {
    for (const w of workers) if (w.session === m.params.sessionId) w.alive = false;
  }
});
function send(method, params = {}, sessionId) {
  const mid = ++id;
  ws.send(JSON.stringify({ id: mid, method, params, ...(sessionId ? { sessionId } : {}) }));
  return new Promise((ok, bad) => pending.set(mid, (m) => (m.error ? bad(new Error(method + ": " + JSON.stringify(m.error))) : ok(m.result))));
}
const { targetInfos } = await send("Target.getTargets");
const pt = targetInfos.find((t) => t.type === "page" && t.url.startsWith(server.url));
const { sessionId: pageSession } = await send("Target.attachToTarget", { targetId: pt.targetId, flatten: true });
await send("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: true, flatten: true }, pageSession);
await new Promise((ok) => setTimeout(ok, 1000));
const t0 = Date.now();
if (sim) {
  await page.evaluate((h) => { location.hash = h; }, sim);
  await page.locator('[data-testid="sim-status"][data-value="ready"]').waitFor({ state: "attached", timeout: 600000 });
  console.log("run wall ms", Date.now() - t0, await page.getByTestId("sim-events-per-s").innerText());
} else {
  await page.getByTestId("file-input").setInputFiles(files);
  const names = files.map((f) => f.split("/").pop());
  await page.locator(`[data-testid=summary][data-files="${names.join(",")}"]`).waitFor({ timeout: 1800000 });
  await page.locator("[data-testid=timeline][data-ready=true]").waitFor({ timeout: 1800000 });
  const wall = Date.now() - t0;
  const canvas = page.getByTestId("timeline");
  console.log("load wall ms", wall, "data-load-ms", await canvas.getAttribute("data-load-ms"), "parse-ms", await canvas.getAttribute("data-parse-ms"));
}
console.log("workers", workers.map((w) => `${w.url} ${w.alive ? "alive" : "gone"}`));
for (const w of workers.filter((w) => w.alive)) {
  const { profile } = await send("Profiler.stop", {}, w.session);
  if (process.env.PROFILE_OUT) writeFileSync(`${process.env.PROFILE_OUT}-${workers.indexOf(w)}.cpuprofile`, JSON.stringify(profile));
  const self = new Map();
  const incl = new Map();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children || []) parent.set(c, n.id);
  const dt = profile.timeDeltas;
  const name = (n) => n.callFrame.functionName || `(${n.callFrame.url.split("/").pop()})`;
  for (let i = 0; i < profile.samples.length; i++) {
    const n = byId.get(profile.samples[i]);
    const d = dt[i + 1] ?? 0;
    self.set(name(n), (self.get(name(n)) || 0) + d);
    const seen = new Set();
    for (let x = n.id; x !== undefined; x = parent.get(x)) {
      const k = name(byId.get(x));
      if (!seen.has(k)) { seen.add(k); incl.set(k, (incl.get(k) || 0) + d); }
    }
  }
  const tot = [...self.values()].reduce((a, b) => a + b, 0);
  console.log(`worker ${w.url} total ${(tot / 1e6).toFixed(1)} s sampled`);
  console.log("-- self");
  for (const [k, v] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP || 40)))
    console.log((v / 1e6).toFixed(2).padStart(8), "s", (100 * v / tot).toFixed(1).padStart(5), "%", k.slice(0, 150));
  console.log("-- inclusive");
  for (const [k, v] of [...incl.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP || 40)))
    console.log((v / 1e6).toFixed(2).padStart(8), "s", (100 * v / tot).toFixed(1).padStart(5), "%", k.slice(0, 150));
}
ws.close();
await context.close();
await rm(profileDir, { recursive: true, force: true });
await server.close();
