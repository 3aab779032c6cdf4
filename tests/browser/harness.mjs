// What the browser scripts share (dashboard.mjs against the demo,
// benchmarks.mjs against a daemon on the real Ceph sandbox): Debian's
// headless Chromium through playwright-core, checks that fail with what
// the page showed, named steps, screenshots, and the run around them.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const CHROMIUM = '/usr/bin/chromium';
export const WAIT_MS = 60_000;
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];
const NAME = path.basename(process.argv[1] || 'browser', '.mjs');

export function log(msg) {
  console.log(`[${NAME} ${new Date().toISOString().slice(11, 23)}] ${msg}`);
}

export class CheckFailed extends Error {}

export function check(cond, msg) {
  if (!cond) throw new CheckFailed(msg);
}

/**
 * Polls `probe` (async, returns a truthy value when satisfied) every 100 ms
 * for up to `ms`; fails with `what` and the last value seen.
 */
export async function until(what, probe, ms = WAIT_MS) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    try {
      last = await probe();
      if (last) return last;
    } catch (e) {
      last = `error: ${e.message}`;
    }
    if (Date.now() > deadline) {
      throw new CheckFailed(`timed out after ${ms / 1000} s waiting for ${what} (last seen: ${JSON.stringify(last)})`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

let currentStep = '';
export async function step(name, fn) {
  currentStep = name;
  const t0 = Date.now();
  log(`▶ ${name}`);
  await fn();
  log(`✔ ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
}

/** A full-page screenshot from the top, so the sticky header sits where it belongs. */
export async function fullScreenshot(page, file) {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: file, fullPage: true });
  log(`screenshot: ${file}`);
}

/** `shot.png` with a suffix: `shot-SUFFIX.png`. */
export function shotPath(screenshotPath, suffix) {
  const ext = path.extname(screenshotPath) || '.png';
  return `${screenshotPath.slice(0, screenshotPath.length - path.extname(screenshotPath).length)}-${suffix}${ext}`;
}

/** Opens a fresh Chromium profile with one page; collects the page's errors. */
export async function openBrowser() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'osdkeeper-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1440, height: 900 },
    timeout: WAIT_MS,
  });
  const page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(WAIT_MS);
  const problems = [];
  page.on('pageerror', (e) => problems.push(`uncaught exception in the page: ${e.message}`));
  // The browser logs every 4xx answer as a console error; the expected
  // ones (a 422 for an invalid spec) are checked in the page instead.
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console error: ${m.text()}`);
  });
  page.on('response', (r) => {
    const api = new URL(r.url()).pathname.startsWith('/api/');
    if (r.status() >= 500 || (!api && r.status() >= 400)) problems.push(`HTTP ${r.status()} for ${r.request().method()} ${r.url()}`);
  });
  const close = async () => {
    await context.close().catch(() => {});
    fs.rmSync(profile, { recursive: true, force: true });
  };
  return { context, page, problems, close };
}

/** Records the API requests the page makes (path and query), to check how it asks. */
export function recordApiRequests(page) {
  const seen = [];
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith('/api/')) seen.push({ path: u.pathname, params: u.searchParams, at: Date.now() });
  });
  return seen;
}

/**
 * The boxes of the elements of each of `selectors` (name → CSS selector),
 * in page coordinates, found and measured in one task of the page. Not
 * through locator.evaluateAll: it finds the elements in one call to the
 * page and measures them in a second, and the page's own tasks run in
 * between. The removals and their chart are drawn anew every second, so
 * under load that gap let a redraw detach the nodes found, which then
 * measured all zeros, or set labels of one drawing against the chart of
 * the next. In one task every box is of the same drawing, as painted.
 */
export async function layout(page, selectors) {
  return page.evaluate((sels) => Object.fromEntries(Object.entries(sels).map(([name, sel]) => [name,
    [...document.querySelectorAll(sel)].map((e) => {
      const r = e.getBoundingClientRect();
      // One rectangle per line the text runs over.
      const range = document.createRange();
      range.selectNodeContents(e);
      const lines = new Set([...range.getClientRects()].map((q) => Math.round(q.top))).size;
      return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, lines, text: e.textContent };
    })])), selectors);
}

/** The boxes of `selector`'s elements (CSS), in page coordinates: see `layout`. */
export async function boxes(page, selector) {
  return (await layout(page, { all: selector })).all;
}

/** The first two of `list` (boxes) that overlap, named by their text; null when none do. */
export function overlapping(list) {
  for (let i = 0; i < list.length; i += 1) {
    for (let j = i + 1; j < list.length; j += 1) {
      const a = list[i];
      const b = list[j];
      if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) return `${a.text} and ${b.text}`;
    }
  }
  return null;
}

/** At `width`: the table in `#wrapId` (`what`) and the page fit; neither scrolls sideways. */
export async function checkFits(page, width, wrapId, what) {
  const fit = await page.evaluate((id) => {
    const wrap = document.getElementById(id);
    return { wrap: wrap.clientWidth, table: wrap.scrollWidth, page: document.documentElement.scrollWidth, view: window.innerWidth };
  }, wrapId);
  check(fit.table <= fit.wrap, `at ${width} px the ${what} is ${fit.table} px wide in ${fit.wrap} px: it scrolls sideways`);
  check(fit.page <= fit.view, `at ${width} px the page is ${fit.page} px wide in a ${fit.view} px window`);
}

/**
 * Opens the browser, runs `body(browser)`, fails on any error the page
 * reported, saves a screenshot (`-failure` when a check failed), and ends
 * the process: status 0 when every check passed.
 */
export async function runChecks(screenshotPath, body) {
  const browser = await openBrowser();
  let failed = null;
  try {
    await body(browser);
    check(browser.problems.length === 0, `the page reported errors:\n  ${browser.problems.join('\n  ')}`);
  } catch (e) {
    failed = e;
  }
  try {
    fs.mkdirSync(path.dirname(path.resolve(screenshotPath)), { recursive: true });
    if (!failed) {
      // Dismiss the confirmations of what the test did, as a user would.
      await browser.page.evaluate(() => document.querySelectorAll('.notice-close').forEach((b) => b.click()));
    }
    await fullScreenshot(browser.page, failed ? shotPath(screenshotPath, 'failure') : screenshotPath);
  } catch (e) {
    console.error(`could not save the screenshot: ${e.message}`);
  }
  await browser.close();
  if (failed) {
    console.error(`\nFAILED at step "${currentStep}": ${failed.message}`);
    if (!(failed instanceof CheckFailed)) console.error(failed.stack);
    if (browser.problems.length) console.error(`page errors:\n  ${browser.problems.join('\n  ')}`);
    console.error(`screenshot of the page: ${shotPath(screenshotPath, 'failure')}`);
    process.exit(1);
  }
  log(`all checks passed; screenshot: ${screenshotPath}`);
}
