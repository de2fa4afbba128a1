// Shared harness for the end-to-end tests: a static file server for dist/ on
// 127.0.0.1 and the system Chromium driven through playwright-core.
import { createServer } from "node:http";
import { readFile, stat, mkdtemp, rm, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, normalize, extname, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { before, after } from "node:test";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const DIST = process.env.DIST_DIR || join(ROOT, "dist");
export const ARTIFACTS = join(ROOT, "tests", "artifacts");

const MIME = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".db": "application/octet-stream",
  ".ovsschema": "application/json",
};

/** Serves `root` on 127.0.0.1 (random port). Resolves to { url, close, requests }. */
export async function serveDir(root = DIST) {
  const requests = [];
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    requests.push(path);
    let file = normalize(join(root, path));
    if (!file.startsWith(normalize(root))) {
      res.writeHead(403).end();
      return;
    }
    try {
      if ((await stat(file)).isDirectory()) file = join(file, "index.html");
      const body = await readFile(file);
      res.writeHead(200, {
        "content-type": MIME[extname(file)] || "application/octet-stream",
        "cache-control": "no-store",
      });
      res.end(body);
    } catch {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
    }
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    close: () => new Promise((ok) => server.close(ok)),
  };
}

/** Launches Debian's Chromium headless with a fresh, empty profile. */
export async function launchBrowser() {
  const profile = await mkdtemp(join(tmpdir(), "ovsdb-scope-e2e-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Opens `url` in a new page and records what must never happen: console
 * errors, uncaught page errors and requests to any origin but the page's own.
 */
export async function openPage(context, url) {
  const page = await context.newPage();
  const origin = new URL(url).origin;
  const problems = { consoleErrors: [], pageErrors: [], foreignRequests: [] };
  page.on("console", (msg) => {
    if (msg.type() === "error") problems.consoleErrors.push(msg.text());
  });
  page.on("pageerror", (err) => problems.pageErrors.push(String(err)));
  page.on("request", (req) => {
    const u = req.url();
    if (u.startsWith("data:") || u.startsWith("blob:")) return;
    if (new URL(u).origin !== origin) problems.foreignRequests.push(u);
  });
  await page.goto(url);
  return { page, problems };
}

export async function screenshot(page, name) {
  await mkdir(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * A screenshot for the README (`docs/screenshots/NAME.png`, the visible
 * viewport): written there when UPDATE_SCREENSHOTS=1, else into the
 * artifacts beside the others. Fails when the README's copy is missing.
 */
export async function docScreenshot(page, name) {
  const committed = join(ROOT, "docs", "screenshots", `${name}.png`);
  const dir = process.env.UPDATE_SCREENSHOTS ? dirname(committed) : ARTIFACTS;
  await mkdir(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`) });
  if (!existsSync(committed)) throw new Error(`${committed} is missing: run with UPDATE_SCREENSHOTS=1`);
}

/**
 * The debug `ovsdb-scope` binary built from the same core (OVSDB_SCOPE_BIN
 * overrides it); builds it when it is missing.
 */
export function cliBin() {
  const target = process.env.CARGO_TARGET_DIR || join(ROOT, "target");
  const bin = process.env.OVSDB_SCOPE_BIN || join(target, "debug", "ovsdb-scope");
  if (!existsSync(bin)) {
    execFileSync("cargo", ["build", "-q", "-p", "ovsdb-scope"], { cwd: ROOT, stdio: "inherit" });
  }
  return bin;
}

/**
 * `ovsdb-scope inspect --json FILE...` from the CLI built from the same core:
 * the reference the page must agree with. Builds the CLI when it is missing.
 */
export function inspectJson(...files) {
  const bin = cliBin();
  let out;
  try {
    out = execFileSync(bin, ["inspect", "--json", ...files], { cwd: ROOT, encoding: "utf8" });
  } catch (e) {
    // A damaged file makes inspect exit non-zero; its JSON report is still printed.
    if (!e.stdout) throw e;
    out = e.stdout;
  }
  return JSON.parse(out);
}

/**
 * The suite's server and browser: started before the first test, closed
 * after the last; `set(server, browser)` receives them.
 */
export function useBrowser(set) {
  let server;
  let browser;
  before(async () => {
    server = await serveDir();
    browser = await launchBrowser();
    set(server, browser);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
}

/** Pixels of a canvas that are not near-white: a drawn chart has many. */
export async function inkedPixels(page, testId) {
  return page.evaluate((id) => {
    const cv = document.querySelector(`[data-testid="${id}"]`);
    const d = cv.getContext("2d").getImageData(0, 0, cv.width, cv.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] < 200 || d[i + 1] < 200 || d[i + 2] < 200) n++;
    return n;
  }, testId);
}

/**
 * Moves the pointer across a chart's canvas (rows of points over its
 * plotting area) until the chart names a value under it (data-hover), and
 * returns that text; "" when none was found.
 */
export async function hoverChart(page, testId) {
  const el = page.getByTestId(testId);
  await el.scrollIntoViewIfNeeded();
  const box = await el.boundingBox();
  for (const fy of [0.5, 0.7, 0.3, 0.85, 0.15]) {
    for (let fx = 0.1; fx < 0.95; fx += 0.04) {
      await page.mouse.move(box.x + box.width * fx, box.y + box.height * fy);
      // The page renders the hover text on its next tick.
      await page.waitForTimeout(30);
      const h = await el.getAttribute("data-hover");
      if (h) return h;
    }
  }
  return "";
}
