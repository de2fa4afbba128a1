// Small preferences kept across reloads (web/src/prefs.rs, gloo-storage's
// LocalStorage): the explorer's storage mode and its view (timeline or
// Contents). A reload keeps them, a bare URL opens them, and a link's own
// mode and view win over them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { openPage, useBrowser } from "./harness.mjs";

let server;
let browser;
useBrowser((s, b) => ([server, browser] = [s, b]));

const FILES = "s1.db,s2.db,s3.db"; // the default sample, leader-failover

async function loaded(page) {
  await page.locator(`[data-testid=summary][data-files="${FILES}"]`).waitFor({ timeout: 30000 });
}

async function shown(page) {
  const pressed = [];
  for (const m of ["stored", "full", "diff"]) {
    if ((await page.getByTestId(`storage-${m}`).getAttribute("aria-pressed")) === "true") pressed.push(m);
  }
  const contents = /\bactive\b/.test((await page.getByTestId("view-contents").getAttribute("class")) || "");
  const timeline = /\bactive\b/.test((await page.getByTestId("view-timeline").getAttribute("class")) || "");
  assert.notEqual(contents, timeline, "exactly one view is active");
  return { mode: pressed.join(","), view: contents ? "contents" : "timeline" };
}

test("the storage mode and the view survive a reload and a bare URL; a link's own win", async () => {
  const { page, problems } = await openPage(browser.context, server.url);
  await loaded(page);
  assert.deepEqual(await shown(page), { mode: "stored", view: "timeline" });

  await page.getByTestId("storage-diff").click();
  await page.getByTestId("view-contents").click();
  await page.locator("[data-testid=contents][data-state=ready]").waitFor({ timeout: 30000 });
  assert.deepEqual(await shown(page), { mode: "diff", view: "contents" });

  await page.reload();
  await loaded(page);
  assert.deepEqual(await shown(page), { mode: "diff", view: "contents" });

  // No hash at all: only the stored preferences can say diff and Contents.
  await page.goto("about:blank");
  await page.goto(server.url);
  await loaded(page);
  assert.deepEqual(await shown(page), { mode: "diff", view: "contents" });
  await page.locator("[data-testid=contents][data-state=ready]").waitFor({ timeout: 30000 });
  assert.match(page.url(), /mode=diff/);
  assert.match(page.url(), /view=contents/);

  // A link names its mode and shows its view (the timeline, no view=).
  await page.goto("about:blank");
  await page.goto(`${server.url}#sample=leader-failover&mode=full`);
  await loaded(page);
  assert.deepEqual(await shown(page), { mode: "full", view: "timeline" });
  // Following a link is not a choice: the preferences stay.
  await page.goto("about:blank");
  await page.goto(server.url);
  await loaded(page);
  assert.deepEqual(await shown(page), { mode: "diff", view: "contents" });

  // Choosing again replaces them, keys too (f: full values, v: the view).
  await page.getByTestId("view-timeline").click();
  await page.getByTestId("timeline").focus();
  await page.keyboard.press("f");
  assert.deepEqual(await shown(page), { mode: "full", view: "timeline" });
  await page.goto("about:blank");
  await page.goto(server.url);
  await loaded(page);
  assert.deepEqual(await shown(page), { mode: "full", view: "timeline" });
  assert.deepEqual(
    await page.evaluate(() => [localStorage.getItem("ovsdb-scope.mode"), localStorage.getItem("ovsdb-scope.view")]),
    ['"full"', '"timeline"'],
  );

  assert.deepEqual(problems.consoleErrors, []);
  assert.deepEqual(problems.pageErrors, []);
  assert.deepEqual(problems.foreignRequests, []);
  await page.close();
});
