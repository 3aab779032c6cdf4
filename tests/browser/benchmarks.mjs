#!/usr/bin/env node
// Drives the dashboard's cluster benchmarks panel and OSD list in Debian's
// headless Chromium, against a daemon that ran real `rados bench` and
// `ceph tell osd.N bench` on the Ceph sandbox (tests/sandbox_bench.rs).
// What the page must show is read from the daemon's API, never assumed:
//
//   OSDKEEPER_TOKEN=... node benchmarks.mjs BASE_URL SCREENSHOT.png RUNS [OUTLIER_OSD]
//
// RUNS is how many finished runs the daemon holds (so an empty page cannot
// pass); OUTLIER_OSD the OSD its per-OSD benches name as the slow one.
// Checks: the token form; the chart has a point per run and pass at the
// API's figure (MB/s, then IOPS and latency on demand) with its label and
// the ⚠ of a run with methodology warnings; the table lists each run's
// label, MB/s and warnings; the comparison of the two newest runs shows
// the API's % change, and again after A and B are swapped; the OSD list
// shows each OSD's bench rate and the outlier's verdict; at 1440 and 800
// px nothing overlaps or scrolls sideways. Screenshots: SCREENSHOT (the
// page), SCREENSHOT-panel (the benchmarks panel), SCREENSHOT-osds (the OSD
// list), SCREENSHOT-800px (the benchmarks panel in an 800 px window).
import {
  boxes, check, checkFits, log, overlapping, runChecks, shotPath, step, until,
} from './harness.mjs';

const [baseUrl, screenshotPath, runsArg, outlierArg] = process.argv.slice(2);
const token = process.env.OSDKEEPER_TOKEN || '';
if (!baseUrl || !screenshotPath || !runsArg || !token) {
  console.error('usage: OSDKEEPER_TOKEN=... node benchmarks.mjs BASE_URL SCREENSHOT.png RUNS [OUTLIER_OSD]');
  process.exit(2);
}
const expectedRuns = Number(runsArg);
const outlierOsd = outlierArg === undefined ? null : Number(outlierArg);

async function apiGet(path) {
  const res = await fetch(`${baseUrl}${path}`, { headers: { Authorization: `Bearer ${token}` } });
  check(res.ok, `GET ${path} answered ${res.status}`);
  return res.json();
}

const PASSES = ['write', 'seq', 'rand'];
// Read at once (no waiting for the element): `until` polls.
const text = async (loc) => (await loc.evaluateAll((els) => els.map((e) => e.innerText).join(' '))).replace(/\s+/g, ' ').trim();
const sign = (p) => `${p >= 0 ? '+' : ''}${p.toFixed(1)} %`;

/** Every point's (run, pass, value) as drawn, and its tooltip. */
async function chartPoints(page) {
  return page.locator('#bench-chart [data-testid="bench-point"]').evaluateAll((els) => els.map((e) => ({
    id: Number(e.dataset.benchId), pass: e.dataset.pass, value: Number(e.dataset.value), title: e.querySelector('title').textContent,
  })));
}

async function checkPoints(page, runs, field, written) {
  const expected = runs.flatMap((r) => r.results.map((p) => ({ id: r.bench_id, pass: p.pass, value: p[field] })));
  const shown = await until(`a point per run and pass (${expected.length})`, async () => {
    const pts = await chartPoints(page);
    return pts.length === expected.length ? pts : null;
  });
  for (const e of expected) {
    const p = shown.find((s) => s.id === e.id && s.pass === e.pass);
    check(p, `no point for run #${e.id}'s ${e.pass} pass`);
    check(p.value === e.value, `run #${e.id} ${e.pass}: the chart draws ${p.value}, the API says ${e.value} (${field})`);
    check(p.title.includes(written(e.value)), `run #${e.id} ${e.pass}: the tooltip should say ${written(e.value)}: ${p.title}`);
  }
}

/** One panel alone, cut from the whole page (where the sticky header stays at the top). */
async function panelScreenshot(page, file, selector = '#benchmarks-panel') {
  await page.evaluate(() => window.scrollTo(0, 0));
  const clip = await page.locator(selector).boundingBox();
  await page.screenshot({ path: file, fullPage: true, clip });
  log(`screenshot: ${file}`);
}

async function checkNoSidewaysScroll(page, width) {
  await checkFits(page, width, 'bench-table', 'runs table');
  const labels = await boxes(page, '#bench-chart [data-testid="bench-label"] text');
  check(!overlapping(labels), `at ${width} px the chart's labels ${overlapping(labels)} overlap`);
  const values = await boxes(page, '#bench-chart [data-testid="bench-value"]');
  check(!overlapping(values), `at ${width} px the chart's figures ${overlapping(values)} overlap`);
  const chart = (await boxes(page, '#bench-chart svg'))[0];
  for (const b of [...labels, ...values]) {
    check(b.right <= chart.right + 0.5 && b.left >= chart.left - 0.5, `at ${width} px "${b.text}" is cut off by the chart's edge`);
  }
}

async function benchmarks({ page }) {
  const runs = (await apiGet('/api/v1/benchmarks/cluster')).filter((r) => r.results.length > 0).reverse();
  check(runs.length === expectedRuns, `the daemon should hold ${expectedRuns} runs with results, it holds ${runs.length}`);
  const panel = page.locator('#benchmarks-panel');

  let osdList = null;
  page.on('response', async (res) => {
    if (new URL(res.url()).pathname === '/api/v1/osds' && res.ok()) osdList = await res.json();
  });

  await step('the token form, then the live page', async () => {
    await page.goto(baseUrl, { waitUntil: 'load' });
    await until('the token form to open', () => page.locator('#token-dialog').evaluate((d) => d.open));
    await page.fill('#token-input', token);
    await page.click('#token-submit');
    await until('the live indicator to say Live', async () => (await page.getAttribute('#live-status', 'data-state')) === 'live');
    await panel.scrollIntoViewIfNeeded();
  });

  await step('the chart: each run\'s MB/s per pass, with its label and figures', async () => {
    await checkPoints(page, runs, 'bandwidth_mb_s', (v) => `${v.toFixed(1)} MB/s`);
    const slots = await page.locator('#bench-chart [data-testid="bench-slot"]').evaluateAll((els) => els.map((e) => Number(e.dataset.benchId)));
    check(slots.join(',') === runs.map((r) => r.bench_id).join(','), `one slot per run, oldest first: ${slots} (API: ${runs.map((r) => r.bench_id)})`);
    for (const r of runs.filter((x) => x.label)) {
      const group = page.locator(`#bench-chart [data-testid="bench-label"][data-label="${r.label}"]`);
      check((await group.count()) === 1, `one label "${r.label}" under the axis`);
      check((await group.getAttribute('data-runs')).split(',').includes(String(r.bench_id)), `"${r.label}" should span run #${r.bench_id}`);
      // The text drawn (its tooltip aside), cut with … only when it does not fit.
      const drawn = await group.locator('text').evaluate((t) => t.firstChild.nodeValue);
      check(drawn === r.label, `the label reads "${drawn}", not "${r.label}"`);
    }
    // With few runs the figures stand beside the points, as written in the table.
    const values = await page.locator('#bench-chart [data-testid="bench-value"]').allTextContents();
    for (const r of runs) for (const p of r.results) check(values.includes(p.bandwidth_mb_s.toFixed(1)), `${p.bandwidth_mb_s.toFixed(1)} (run #${r.bench_id} ${p.pass}) beside its point: ${values}`);
    for (const r of runs) {
      const warned = await page.locator(`#bench-chart [data-testid="bench-slot"][data-bench-id="${r.bench_id}"] [data-testid="bench-slot-warning"]`).count();
      check(warned === (r.warnings.length ? 1 : 0), `run #${r.bench_id} has ${r.warnings.length} warnings: the chart marks it ${warned ? 'with' : 'without'} ⚠`);
    }
  });

  await step('IOPS and latency on demand', async () => {
    await panel.locator('.seg', { hasText: 'IOPS' }).click();
    await until('the chart to show IOPS', async () => (await page.getAttribute('#bench-chart svg', 'data-metric')) === 'iops');
    await checkPoints(page, runs, 'iops', (v) => `${v.toFixed(0)} IOPS`);
    await panel.locator('.seg', { hasText: 'Avg latency' }).click();
    await until('the chart to show the average latency', async () => (await page.getAttribute('#bench-chart svg', 'data-metric')) === 'avg');
    await checkPoints(page, runs, 'avg_latency_s', (v) => `${v.toFixed(4)} s`);
    await panel.locator('.seg', { hasText: 'MB/s' }).click();
    await until('the chart back on MB/s', async () => (await page.getAttribute('#bench-chart svg', 'data-metric')) === 'mb');
  });

  await step('the table: each run\'s label, MB/s per pass and warnings', async () => {
    // The whole table in one read: each round trip to the browser counts on a busy machine.
    const shown = await page.locator('tr[data-testid="bench-run"]').evaluateAll((rows) => rows.map((tr) => ({
      id: Number(tr.dataset.benchId),
      label: (tr.querySelector('[data-testid="bench-run-label"]') || {}).textContent || null,
      mb: Object.fromEntries([...tr.querySelectorAll('[data-testid="bench-mb"]')].map((td) => [td.dataset.pass, td.textContent.trim()])),
      summary: (tr.querySelector('[data-testid="bench-warnings"] summary') || {}).textContent || '',
    })));
    check(shown.map((r) => r.id).join() === runs.map((r) => r.bench_id).reverse().join(), `one row per run, newest first: ${shown.map((r) => r.id)}`);
    for (const r of runs) {
      const row = shown.find((x) => x.id === r.bench_id);
      check(row.label === r.label, `run #${r.bench_id}'s label: "${row.label}", not "${r.label}"`);
      for (const p of r.results) {
        check(row.mb[p.pass] === p.bandwidth_mb_s.toFixed(1), `run #${r.bench_id} ${p.pass}: "${row.mb[p.pass]}", the API says ${p.bandwidth_mb_s}`);
      }
      if (!r.warnings.length) continue;
      check(new RegExp(`${r.warnings.length} warnings?`).test(row.summary), `run #${r.bench_id} counts its ${r.warnings.length} warnings: "${row.summary}"`);
      const warnings = page.locator(`tr[data-bench-id="${r.bench_id}"] [data-testid="bench-warnings"]`);
      await warnings.locator('summary').click();
      const listed = await warnings.locator('li').allTextContents();
      check(listed.join('\n') === r.warnings.join('\n'), `run #${r.bench_id}'s warnings as the API words them: ${listed}`);
      check(r.warnings.some((w) => /too short|too small|of so little data/.test(w)), `a run this short is warned about: ${r.warnings}`);
    }
  });

  const compareShows = async (a, b) => {
    const cmp = await apiGet(`/api/v1/benchmarks/compare?a=${a.bench_id}&b=${b.bench_id}`);
    await until(`the comparison of #${a.bench_id} (A) and #${b.bench_id} (B)`, async () => {
      const heads = await Promise.all(['a', 'b'].map((w) => text(page.locator(`[data-testid="compare-run-${w}"]`))));
      return heads[0].includes(`#${a.bench_id}`) && heads[1].includes(`#${b.bench_id}`);
    });
    const rows = await page.locator('tr[data-testid="compare-row"]').evaluateAll((trs) => trs.map((tr) => ({
      key: `${tr.dataset.pass} ${tr.dataset.metric}`,
      ...Object.fromEntries(['a', 'b', 'change'].map((k) => [k, tr.querySelector(`[data-testid="compare-${k}"]`).textContent.trim()])),
    })));
    check(rows.length === cmp.passes.reduce((n, p) => n + p.metrics.length, 0), `a row per pass and metric: ${rows.map((r) => r.key)}`);
    for (const p of cmp.passes) {
      for (const m of p.metrics) {
        const row = rows.find((r) => r.key === `${p.pass} ${m.name}`);
        check(row, `no row for ${p.pass} ${m.name}`);
        if (m.change_percent === null) check(row.change === '—', `${p.pass} ${m.name}: no change to show, it shows ${row.change}`);
        else check(row.change.endsWith(sign(m.change_percent)), `${p.pass} ${m.name}: "${row.change}", the API says ${m.change_percent} %`);
        if (m.name === 'MB/s') check(row.a === m.a.toFixed(1) && row.b === m.b.toFixed(1), `${p.pass} MB/s: ${row.a} and ${row.b}, the API says ${m.a} and ${m.b}`);
      }
    }
    const differences = page.locator('[data-testid="compare-differences"]');
    if (cmp.differences.length) for (const d of cmp.differences) check((await text(differences)).includes(d), `the clusters' difference "${d}" is shown`);
    else check((await differences.count()) === 0, 'no difference is shown between like clusters');
    return cmp;
  };

  await step('the two newest runs compared: the % change as the API computes it', async () => {
    const [a, b] = runs.slice(-2);
    const cmp = await compareShows(a, b);
    for (const [k, r] of [['a', a], ['b', b]]) {
      const tagged = await page.locator(`#bench-chart [data-testid="bench-slot-${k}"]`).evaluateAll((els) => els.map((e) => e.closest('[data-bench-id]').dataset.benchId));
      check(tagged.join() === String(r.bench_id), `the chart tags run #${r.bench_id} as ${k.toUpperCase()}: ${tagged}`);
    }
    log(`write: ${cmp.passes[0].metrics[0].a} → ${cmp.passes[0].metrics[0].b} MB/s (${sign(cmp.passes[0].metrics[0].change_percent)})`);
    await panelScreenshot(page, shotPath(screenshotPath, 'panel'));
    await checkNoSidewaysScroll(page, 1440);
  });

  await step('A and B swapped in the table: the change turns round', async () => {
    const [older, newer] = runs.slice(-2);
    await page.locator(`tr[data-bench-id="${newer.bench_id}"] [data-testid="bench-pick-a"]`).check();
    await page.locator(`tr[data-bench-id="${older.bench_id}"] [data-testid="bench-pick-b"]`).check();
    await compareShows(newer, older);
    const unfolded = await page.locator('[data-testid="bench-warnings"]').evaluateAll((els) => els.filter((d) => d.open).length);
    check(unfolded === runs.filter((r) => r.warnings.length).length, `the warnings unfolded stay unfolded when the table is redrawn: ${unfolded} open`);
  });

  await step('the OSD list: each OSD\'s bench rate, and the outlier\'s verdict', async () => {
    // The OSDs as the page itself got them (reading the cluster again takes seconds).
    const osds = await until('the page\'s OSD list', async () => osdList && (await page.locator('tr[data-testid="osd-row"]').count()) === osdList.length && osdList);
    const benched = osds.filter((o) => o.bench_bytes_per_sec !== null);
    check(benched.length === osds.length, `every OSD was benched: ${benched.length} of ${osds.length}`);
    for (const o of benched) {
      const mb = o.bench_bytes_per_sec / 1048576;
      const cell = await text(page.locator(`tr[data-testid="osd-row"][data-osd-id="${o.id}"] [data-testid="osd-bench"]`));
      check(cell.startsWith(`${mb >= 10 ? mb.toFixed(0) : mb.toFixed(1)} MB/s`), `osd.${o.id}'s bench: "${cell}", the API says ${o.bench_bytes_per_sec} B/s`);
    }
    const flagged = osds.filter((o) => o.bench_outlier).map((o) => o.id);
    check(flagged.join(',') === (outlierOsd === null ? '' : String(outlierOsd)), `the API's outliers ${flagged} should be osd.${outlierOsd}`);
    const rows = await page.locator('tr[data-testid="osd-outlier"]').evaluateAll((els) => els.map((e) => [Number(e.dataset.osdId), e.innerText.trim()]));
    check(rows.length === flagged.length, `one verdict row per outlier: ${JSON.stringify(rows)}`);
    for (const id of flagged) {
      const o = osds.find((x) => x.id === id);
      check(rows.some(([rid, t]) => rid === id && t.includes(o.bench_outlier)), `osd.${id}'s verdict "${o.bench_outlier}" under its row: ${JSON.stringify(rows)}`);
      check(/Outlier/.test(await text(page.locator(`tr[data-testid="osd-row"][data-osd-id="${id}"] [data-testid="osd-bench"]`))), `osd.${id} is marked as an outlier`);
    }
    await panelScreenshot(page, shotPath(screenshotPath, 'osds'), '#osds-panel');
  });

  await step('an 800 px window: nothing overlaps or scrolls sideways', async () => {
    await page.setViewportSize({ width: 800, height: 900 });
    await page.waitForTimeout(300);
    await checkNoSidewaysScroll(page, 800);
    await panelScreenshot(page, shotPath(screenshotPath, '800px'));
    // The page's screenshot, taken last, is of the wide window.
    await page.setViewportSize({ width: 1440, height: 900 });
  });
}

await runChecks(screenshotPath, benchmarks);
