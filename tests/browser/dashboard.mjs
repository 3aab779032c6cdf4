#!/usr/bin/env node
// Drives the osdkeeper dashboard in Debian's headless Chromium and checks
// what the page shows, against `osdkeeper demo` (the simulated f5-422
// cluster). Run by tests/dashboard_browser.rs:
//
//   node dashboard.mjs BASE_URL SCREENSHOT.png            the field-report cluster
//   node dashboard.mjs --scale BASE_URL SCREENSHOT.png    a demo with --hosts 2000
//   node dashboard.mjs --many BASE_URL SCREENSHOT.png     15 removals on a small generated cluster
//
// Exit status 0 when every check passed; otherwise the failing step and
// what the page showed are printed, with a screenshot next to SCREENSHOT.
import {
  check, checkFits, fullScreenshot, layout, log, overlapping, recordApiRequests, runChecks, shotPath as shotPathOf, step, until,
} from './harness.mjs';

// ───────────── arguments ─────────────

const args = process.argv.slice(2);
const mode = ['--scale', '--many'].includes(args[0]) ? args.shift().slice(2) : 'field-report';
const scale = mode === 'scale';
const [baseUrl, screenshotPath] = args;
if (!baseUrl || !screenshotPath) {
  console.error('usage: node dashboard.mjs [--scale|--many] BASE_URL SCREENSHOT.png');
  process.exit(2);
}

const shotPath = (suffix) => shotPathOf(screenshotPath, suffix);

/** Every request for a list that can be long (OSDs, hosts) must be bounded. */
function checkListRequestsBounded(seen, osdLimitMax) {
  const osdLists = seen.filter((r) => r.path === '/api/v1/osds');
  for (const r of osdLists) {
    const limit = r.params.get('limit');
    check(limit !== null && Number(limit) > 0 && Number(limit) <= osdLimitMax,
      `the OSD list must be asked for a bounded page (limit ≤ ${osdLimitMax}), not ?${r.params}`);
  }
  for (const r of seen.filter((x) => x.path === '/api/v1/hosts')) {
    check(r.params.get('unreachable') === 'true' && r.params.get('limit') !== null, `the page must not fetch every host: /api/v1/hosts?${r.params}`);
  }
  return osdLists;
}

async function summaryValue(page, testid) {
  return (await page.locator(`[data-testid="${testid}"] dd`).innerText()).trim();
}

// ───────────── page probes (read what is shown, not the API) ─────────────

const hostGroup = (page, host) => page.locator(`tbody[data-testid="host"][data-host="${host}"]`);
const deviceRow = (page, host, devPath) => hostGroup(page, host).locator(`tr[data-testid="device"][data-path="${devPath}"]`);
const removalRow = (page, osd) => page.locator(`tr[data-testid="removal"][data-osd-id="${osd}"]`);

async function eventTexts(page) {
  return page.locator('#event-log li[data-testid="event"] .msg').allTextContents();
}

/** A removal row as one render drew it: read in one task of the page, since the
 *  table is drawn again as the drain moves and separate reads could mix two renders. */
async function removalState(page, osd) {
  const row = removalRow(page, osd);
  if ((await row.count()) === 0) return null;
  return row.first().evaluate((tr) => ({
    state: tr.getAttribute('data-state'),
    left: tr.getAttribute('data-pgs-left'),
    start: tr.getAttribute('data-pgs-start'),
    progress: tr.querySelector('[data-testid="removal-progress"]')?.getAttribute('aria-valuenow') ?? null,
    text: tr.innerText.replace(/\s+/g, ' '),
  })).catch(() => null);
}

async function confirmDialog(page, { expect = [], cancel = false } = {}) {
  const dialog = page.locator('#confirm-dialog');
  await until('the confirmation dialog to open', () => dialog.evaluate((d) => d.open));
  const text = (await dialog.innerText()).replace(/\s+/g, ' ');
  for (const re of expect) check(re.test(text), `the confirmation should match ${re}; it says: ${text}`);
  await page.click(cancel ? '#confirm-cancel' : '#confirm-ok');
  await until('the confirmation dialog to close', async () => !(await dialog.evaluate((d) => d.open)));
  return text;
}

// ───────────── the field-report cluster ─────────────

const HOSTS = ['f5-422-01', 'f5-422-02', 'f5-422-03', 'f5-422-04'];

async function fieldReport(page) {
  const seen = recordApiRequests(page);
  await step('the page loads and the live stream connects', async () => {
    const res = await page.goto(baseUrl, { waitUntil: 'load' });
    check(res && res.ok(), `GET / answered ${res && res.status()}`);
    check((await page.title()) === 'osdkeeper', `unexpected title ${await page.title()}`);
    // A marker that only survives if the page is never reloaded.
    await page.evaluate(() => { window.__sameDocument = 'yes'; });
    await until('the live indicator to say Live', async () => (await page.getAttribute('#live-status', 'data-state')) === 'live');
  });

  await step('the four hosts appear with their devices', async () => {
    for (const host of HOSTS) {
      await until(`${host} with at least one device`, async () => (await hostGroup(page, host).locator('tr[data-testid="device"]').count()) > 0);
    }
    const range = await page.textContent('#host-range');
    check(/Hosts 1–4 of 4/.test(range), `the pager should say "Hosts 1–4 of 4", it says "${range}"`);
    const sdf = deviceRow(page, 'f5-422-01', '/dev/sdf');
    check((await sdf.count()) === 1, 'f5-422-01 should list /dev/sdf');
    check((await sdf.getAttribute('data-type')) === 'ssd', '/dev/sdf on f5-422-01 should be an SSD');
    check(/SSD/.test(await sdf.innerText()), '/dev/sdf on f5-422-01 should show its type as text');
    check((await sdf.getAttribute('data-available')) === 'true' && /Yes/.test(await sdf.innerText()), '/dev/sdf on f5-422-01 should show as available');
    const sdd = deviceRow(page, 'f5-422-03', '/dev/sdd');
    check((await sdd.getAttribute('data-type')) === 'hdd', '/dev/sdd on f5-422-03 should be an HDD');
    check(/osd\.8/.test(await sdd.innerText()), '/dev/sdd on f5-422-03 should show osd.8');
    const rejected = await page.locator('tr[data-testid="device"][data-available="false"] td.reasons').first().innerText();
    check(rejected.trim().length > 2, `an unavailable device should show why, it shows "${rejected}"`);
    for (const host of HOSTS) {
      const head = await hostGroup(page, host).locator('[data-testid="inventory-age"]').innerText();
      check(/inventory from \w+, .* ago/.test(head), `${host} should show its inventory's age, it shows "${head}"`);
    }
  });

  await step('the health strip shows the cluster healthy, every PG active+clean', async () => {
    await until('HEALTH_OK in the health strip', async () => (await page.getAttribute('#health-strip', 'data-health')) === 'HEALTH_OK');
    check(/HEALTH_OK/.test(await page.locator('[data-testid="health-badge"]').innerText()), 'the health is written out, not only coloured');
    check(/\d+ PGs/i.test(await page.locator('[data-testid="health-pgs"]').innerText()), 'the strip counts the PGs (its label is in capitals)');
    check(/16\.2\.15 pacific/.test(await page.locator('[data-testid="health-releases"]').innerText()), 'the strip names the release the cluster runs');
  });

  await step('the header shows the counts from /api/v1/summary', async () => {
    await until('the summary to count 4 hosts', async () => (await summaryValue(page, 'summary-hosts')) === '4');
    check((await summaryValue(page, 'summary-unreachable')) === '0', 'no host is unreachable');
    await until('the summary to count the OSDs up', async () => /^\d+\/\d+$/.test(await summaryValue(page, 'summary-osds')));
    const [up, total] = (await summaryValue(page, 'summary-osds')).split('/').map(Number);
    check(up === total && total >= 8, `every OSD of the demo is up: ${up}/${total}`);
    check((await summaryValue(page, 'summary-removals')) === '0' && (await summaryValue(page, 'summary-specs')) === '0', 'nothing removed or applied yet');
    check(Number(await summaryValue(page, 'summary-devices')) > 0, 'free disks are counted');
    check(seen.some((r) => r.path === '/api/v1/summary'), 'the header should come from /api/v1/summary');
  });

  await step('a probe asked of a simulated disk shows in its host that it failed', async () => {
    const probe = deviceRow(page, 'f5-422-01', '/dev/sdf').locator('[data-testid="device-probe"]');
    check((await probe.innerText()).trim() === '—', 'no probe yet');
    const status = await page.evaluate(async () => {
      const body = JSON.stringify({ host: 'f5-422-01', path: '/dev/sdf', yes_i_really_mean_it: true });
      const r = await fetch('/api/v1/devices/probe', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      return r.status;
    });
    check(status === 200, `the probe was asked for: HTTP ${status}`);
    // The simulator runs no fio and invents no figures: the agent refuses.
    await until('the failed probe of /dev/sdf in its row', async () => /last probe failed/.test(await probe.innerText()));
    const why = await probe.locator('[title]').last().getAttribute('title');
    check(/no disk behind it for fio to measure/.test(why || ''), `the reason is at hand: ${why}`);
  });

  await step('the OSD filter asks the server', async () => {
    await until('the OSD list', async () => (await page.locator('tr[data-testid="osd-row"]').count()) > 0);
    const before = seen.length;
    await page.fill('#osd-filter', 'F5-422-03');
    await until('only f5-422-03\'s OSDs (8 and 15)', async () => {
      const ids = await page.locator('tr[data-testid="osd-row"]').evaluateAll((els) => els.map((e) => e.dataset.osdId));
      return ids.join(',') === '8,15';
    });
    const asked = seen.slice(before).filter((r) => r.path === '/api/v1/osds');
    check(asked.some((r) => r.params.get('q') === 'F5-422-03' && r.params.get('limit')), `the filter should be sent as q with a limit: ${asked.map((r) => r.params).join(' ')}`);
    await page.fill('#osd-filter', '');
    await until('all OSDs back', async () => (await page.locator('tr[data-testid="osd-row"]').count()) > 2);
  });

  await step('the host search asks the server and shows only matching hosts', async () => {
    await page.fill('#host-search', '422-03');
    await until('only f5-422-03 to be listed', async () => {
      const shown = await page.locator('tbody[data-testid="host"]').evaluateAll((els) => els.map((e) => e.dataset.host));
      return shown.length === 1 && shown[0] === 'f5-422-03';
    });
    check(/of 1 matching/.test(await page.textContent('#host-range')), 'the pager should count the matching hosts');
    await page.fill('#host-search', '');
    await until('the four hosts to be back', async () => (await page.locator('tbody[data-testid="host"]').count()) === 4);
  });

  let firstReading;
  await step('schedule the removal of osd.8 (HDD /dev/sdd on f5-422-03) with zap', async () => {
    const row = page.locator('tr[data-testid="osd-row"][data-osd-id="8"]');
    await until('osd.8 in the OSD list', async () => (await row.count()) === 1);
    const text = await row.innerText();
    check(/f5-422-03/.test(text) && /\/dev\/sdd/.test(text), `osd.8's row should name f5-422-03 and /dev/sdd: ${text}`);
    check(await page.isDisabled('#rm-schedule'), 'the remove button should be disabled while nothing is selected');
    await page.check('#osd-select-8');
    await page.check('#rm-zap');
    await page.click('#rm-schedule');
    await confirmDialog(page, { expect: [/osd\.8 will be drained/, /purged/, /\/dev\/sdd wiped/, /Wiping erases all data/, /Moves \d+ PGs \(.+\) onto osd\.\d+/, /ok-to-stop now: yes/] });
  });

  await step('its progress bar appears and moves', async () => {
    await until('the header to count one removal', async () => (await summaryValue(page, 'summary-removals')) === '1');
    firstReading = await until('osd.8 draining with a PG count', async () => {
      const r = await removalState(page, 8);
      return r && r.state === 'draining' && r.left !== '' && Number(r.left) > 0 ? r : null;
    });
    log(`first reading: ${firstReading.left} of ${firstReading.start} PGs left, bar at ${firstReading.progress}%`);
    const second = await until('fewer PGs left on osd.8 than at the first reading', async () => {
      const r = await removalState(page, 8);
      return r && r.left !== '' && Number(r.left) < Number(firstReading.left) ? r : null;
    });
    log(`second reading: ${second.left} PGs left, bar at ${second.progress}%`);
    check(Number(second.progress) > Number(firstReading.progress), 'the progress bar should have grown');
    check(/PGs left/.test(second.text), `the row should say how many PGs are left: ${second.text}`);
    await fullScreenshot(page, shotPath('draining'));
  });

  await step('the chart draws PGs remaining with at least two points', async () => {
    await until('a chart line for osd.8 with two or more points', async () => {
      const series = page.locator('#removal-chart [data-testid="chart-series"][data-osd-id="8"]');
      if ((await series.count()) !== 1) return null;
      const points = (await series.locator('polyline').getAttribute('points')).trim().split(/\s+/);
      return Number(await series.getAttribute('data-points')) >= 2 && points.length >= 2;
    });
    check(/osd\.8/.test(await page.textContent('#removal-chart-legend')), 'the legend should name osd.8');
    // The first fetch takes every sample; later ones only the new ones.
    const details = await until('a fetch of only the new samples', async () => {
      const d = seen.filter((r) => /^\/api\/v1\/osds\/removals\/\d+$/.test(r.path));
      return d.length >= 2 && d.slice(1).some((r) => r.params.has('samples_after')) ? d : null;
    });
    check(!details[0].params.has('samples_after'), 'the first fetch of a removal takes all its samples');
    const grown = await until('the chart line to grow from the new samples', async () => {
      const n = Number(await page.locator('#removal-chart [data-testid="chart-series"][data-osd-id="8"]').getAttribute('data-points'));
      return n >= 4 ? n : null;
    });
    log(`chart: ${grown} points after ${details.length} fetches, ${details.filter((r) => r.params.has('samples_after')).length} of them incremental`);
  });

  await step('the event log shows the scheduling, then the purge, without a reload', async () => {
    await until('"Scheduled OSD(s) for removal" in the event log', async () => (await eventTexts(page)).some((t) => t.includes('Scheduled OSD(s) for removal')));
    await until('"Successfully purged osd.8 on f5-422-03" in the event log', async () => (await eventTexts(page)).some((t) => t.includes('Successfully purged osd.8 on f5-422-03')));
    const texts = await eventTexts(page);
    const purged = texts.findIndex((t) => t.includes('Successfully purged osd.8'));
    const scheduled = texts.findIndex((t) => t.includes('Scheduled OSD(s) for removal'));
    check(purged < scheduled, 'the log should list the newest event first');
  });

  await step('the removal reaches done', async () => {
    const done = await until('osd.8 in state done', async () => {
      const r = await removalState(page, 8);
      return r && r.state === 'done' ? r : null;
    });
    check(done.progress === '100', `a done removal's bar should be full, it is at ${done.progress}%`);
    await until('the header to count no removal', async () => (await summaryValue(page, 'summary-removals')) === '0');
    check((await removalRow(page, 8).locator('[data-testid="removal-stop"]').count()) === 0, 'a finished removal must not offer Stop');
    await until('the wiped disk to be listed as held', async () => (await page.locator('[data-testid="held-device"][data-host="f5-422-03"][data-path="/dev/sdd"]').count()) === 1);
    await until('/dev/sdd on f5-422-03 to show as held in its host', async () => /Held/.test(await deviceRow(page, 'f5-422-03', '/dev/sdd').innerText()));
    // The host's line counts what its rows say: a held disk is not "available".
    const group = hostGroup(page, 'f5-422-03');
    const yes = await group.locator('tr[data-testid="device"]').evaluateAll((rows) => rows.filter((r) => /Yes/.test(r.innerText)).length);
    const counts = await group.locator('.host-counts').innerText();
    check(new RegExp(`· ${yes} available · 1 held`).test(counts), `f5-422-03's line should count the ${yes} disks its rows call available and the held one: ${counts}`);
  });

  await step('release the held disk (behind a confirmation)', async () => {
    await page.click('[data-testid="held-device"][data-host="f5-422-03"][data-path="/dev/sdd"] button');
    await confirmDialog(page, { expect: [/Release \/dev\/sdd on f5-422-03/, /specs may use it again/] });
    await until('the hold to disappear', async () => (await page.locator('[data-testid="held-device"]').count()) === 0);
    await until('"Released /dev/sdd on f5-422-03" in the event log', async () => (await eventTexts(page)).some((t) => t.includes('Released /dev/sdd on f5-422-03')));
  });

  await step('stop a removal while it drains', async () => {
    await until('osd.15 selectable', async () => (await page.locator('#osd-select-15:not([disabled])').count()) === 1);
    await page.check('#osd-select-15');
    await page.click('#rm-schedule');
    await confirmDialog(page, { expect: [/osd\.15 will be drained/, /left as they are/] });
    const stop = removalRow(page, 15).locator('[data-testid="removal-stop"]');
    await until('a Stop button for osd.15', async () => (await stop.count()) === 1);
    await stop.click();
    await confirmDialog(page, { expect: [/Stop the removal of osd\.15/] });
    await until('osd.15 in state cancelled', async () => (await removalState(page, 15) || {}).state === 'cancelled');
    await until('"Removal of osd.15 stopped" in the event log', async () => (await eventTexts(page)).some((t) => t.includes('Removal of osd.15 stopped')));
  });

  await step('a swap asked through the API shows in the swaps panel with its way, disks and state', async () => {
    const r = await page.request.post(`${baseUrl}/api/v1/swaps`, { data: { osds: [15], devices: ['/dev/sdb'] } });
    check(r.status() === 201, `POST /api/v1/swaps answered ${r.status()}: ${await r.text()}`);
    const row = page.locator('[data-testid="swap"][data-host="f5-422-03"]');
    await until('a swap row for f5-422-03', async () => (await row.count()) === 1);
    const text = await row.innerText();
    check(/osd\.15/.test(text) && /\/dev\/sdb/.test(text) && /free-bay/.test(text), `the row should show the OSD out, the disk in and the way: ${text}`);
    await until('"Scheduled swap 1 on f5-422-03" in the event log', async () => (await eventTexts(page)).some((t) => t.includes('Scheduled swap 1 on f5-422-03')));
    // This demo keeps no PG map (no --pg-map): the swap cannot begin; stopped, it ends at once.
    const stop = await page.request.post(`${baseUrl}/api/v1/swaps/1/stop`, { data: {} });
    check(stop.status() === 200, `POST /api/v1/swaps/1/stop answered ${stop.status()}: ${await stop.text()}`);
    await until('the row to show stopped (refreshed by the swap events, no reload)', async () => (await row.getAttribute('data-state')) === 'stopped');
    check(/nothing was handed over/.test(await row.innerText()), `a swap stopped before it began says so: ${await row.innerText()}`);
  });

  await step('an invalid spec shows its validation errors and cannot be applied', async () => {
    const prefilled = await page.inputValue('#spec-editor');
    check(prefilled.includes('service_id: osd_spec_F5-422_SSDs') && prefilled.includes('rotational: 0'), `the editor should hold the field report's spec: ${prefilled}`);
    await page.fill('#spec-editor', prefilled.replace('rotational: 0', "size: 'abc'"));
    await page.click('#spec-dry-run');
    const err = page.locator('#spec-editor-result tr[data-testid="spec-error"][data-field="data_devices.size"]');
    await until('a validation error for data_devices.size', async () => (await err.count()) === 1);
    const text = await err.innerText();
    check(/abc/.test(text) && /cephadm/.test(text), `the error row should show the value and the message: ${text}`);
    check(await page.isDisabled('#spec-apply'), 'Apply must stay disabled for an invalid spec');
    await page.fill('#spec-editor', prefilled);
  });

  await step('apply the field report spec: dry-run first, then confirm', async () => {
    check(await page.isDisabled('#spec-apply'), 'Apply must be disabled before a dry-run');
    await page.click('#spec-dry-run');
    const row = page.locator('#spec-editor-result tr[data-testid="preview-row"][data-host="f5-422-01"][data-path="/dev/sdf"]');
    await until('the preview to list /dev/sdf on f5-422-01', async () => (await row.count()) === 1);
    check(/osd\.osd_spec_F5-422_SSDs/.test(await row.innerText()), 'the preview row should name the service');
    await until('Apply to be enabled after the dry-run', async () => !(await page.isDisabled('#spec-apply')));
    await page.click('#spec-apply');
    await confirmDialog(page, { expect: [/osd\.osd_spec_F5-422_SSDs/, /f5-422-01: new OSDs on .*\/dev\/sdf/] });
    await until('the spec in the stored specs list', async () => (await page.locator('[data-testid="spec-item"][data-service-name="osd.osd_spec_F5-422_SSDs"]').count()) === 1);
    await until('the stored spec selected with its dry-run', async () => (await page.locator('#spec-detail [data-testid="preview"]').count()) === 1);
    await until('"Scheduled osd.osd_spec_F5-422_SSDs update" in the event log', async () => (await eventTexts(page)).some((t) => t.includes('osd.osd_spec_F5-422_SSDs update')));
  });

  await step('still the same document (no reload happened), and every list asked for was bounded', async () => {
    check((await page.evaluate(() => window.__sameDocument)) === 'yes', 'the page was reloaded');
    await until('the header to count the applied spec', async () => (await summaryValue(page, 'summary-specs')) === '1');
    checkListRequestsBounded(seen, 100);
  });
}

// ───────────── the token form (a daemon that wants a token, emulated) ─────────────

async function tokenForm(context, base) {
  // The demo has no token; routing makes every API call without the right
  // bearer token answer 401, as `osdkeeper serve` with a token does.
  const page = await context.newPage();
  const seen = [];
  await page.route('**/api/v1/**', async (route) => {
    const req = route.request();
    seen.push({ url: req.url(), auth: req.headers().authorization || '' });
    if (req.headers().authorization !== 'Bearer s3cret-token') {
      await route.fulfill({ status: 401, contentType: 'application/json', body: JSON.stringify({ error: 'wrong API token' }) });
    } else {
      await route.continue();
    }
  });
  await step('a 401 asks for the token, which is kept in sessionStorage and sent as a header only', async () => {
    await page.goto(base);
    await until('the token form to open', () => page.locator('#token-dialog').evaluate((d) => d.open));
    check(/wrong API token/.test(await page.textContent('#token-reason')), 'the token form should show the daemon\'s message');
    await page.fill('#token-input', 's3cret-token');
    await page.click('#token-submit');
    await until('the hosts to load with the token', async () => (await page.locator('tbody[data-testid="host"]').count()) === 4);
    await until('the live stream to connect with the token', async () => (await page.getAttribute('#live-status', 'data-state')) === 'live');
    check((await page.evaluate(() => sessionStorage.getItem('osdkeeper.token'))) === 's3cret-token', 'the token should be in sessionStorage');
    check(seen.every((r) => !r.url.includes('s3cret')), 'the token must never be in a URL');
    check(seen.some((r) => r.url.endsWith('/api/v1/stream') && r.auth === 'Bearer s3cret-token'), 'the stream should be requested with the token');
  });
  await page.close();
}

// ───────────── unreachable hosts (emulated: the demo's agents always answer) ─────────────

async function unreachableHosts(context, base) {
  const page = await context.newPage();
  const since = Date.now() - 90_000;
  const asked = [];
  await page.route('**/api/v1/summary', async (route) => {
    const res = await route.fetch();
    const body = await res.json();
    await route.fulfill({ response: res, json: { ...body, unreachable_hosts: ['f5-422-02', 'f5-422-04'] } });
  });
  await page.route('**/api/v1/hosts?*', async (route) => {
    const u = new URL(route.request().url());
    asked.push(u.search);
    const rows = ['f5-422-02', 'f5-422-04'].map((name) => ({
      name, addr: `${name}.sim:8741`, labels: [], added_at: since, unreachable_since: since,
      last_error: 'connection refused', consecutive_failures: 3, next_poll_at: Date.now() + 5000,
    }));
    await route.fulfill({ json: rows, headers: { 'x-total-count': '2' } });
  });
  await step('unreachable hosts: counted from the summary, listed from ?unreachable=true', async () => {
    await page.goto(base);
    const box = page.locator('[data-testid="unreachable-hosts"]');
    await until('the unreachable hosts to be listed', async () => (await box.locator('[data-testid="unreachable-host"]').count()) === 2);
    const text = (await box.innerText()).replace(/\s+/g, ' ');
    check(/2 hosts unreachable/.test(text) && /f5-422-02 \(since/.test(text), `the callout should name them: ${text}`);
    check((await summaryValue(page, 'summary-unreachable')) === '2', 'the header should count them');
    check(asked.length > 0 && asked.every((q) => /unreachable=true/.test(q) && /limit=\d+/.test(q)), `only unreachable hosts, a few: ${asked.join(' ')}`);
    await box.locator('[data-testid="unreachable-host"]').first().click();
    await until('the host search to show f5-422-02', async () => (await page.inputValue('#host-search')) === 'f5-422-02');
  });
  await page.close();
}

// ───────────── 2000 hosts ─────────────

async function scaleRun(page) {
  const seen = recordApiRequests(page);
  const deviceQueries = [];
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.pathname === '/api/v1/devices') deviceQueries.push(u.search);
  });
  await step('2000 hosts: the first page renders quickly, never all hosts', async () => {
    const t0 = Date.now();
    await page.goto(baseUrl, { waitUntil: 'load' });
    await until('the first page of hosts', async () => (await page.locator('tbody[data-testid="host"]').count()) > 0);
    const ms = Date.now() - t0;
    log(`first page of hosts shown after ${ms} ms`);
    check(ms < 15_000, `the first page of hosts took ${ms} ms`);
    await until('the pager to count 2000 hosts', async () => /of 2000/.test(await page.textContent('#host-range')));
    const groups = await page.locator('tbody[data-testid="host"]').count();
    check(groups === 20, `one page (20 hosts) should be rendered, not ${groups}`);
    const rows = await page.locator('tr[data-testid="device"]').count();
    check(rows <= 20 * 26, `only the page's devices should be rendered, not ${rows}`);
    check(deviceQueries.length > 0 && deviceQueries.every((q) => /[?&]limit=\d+/.test(q)), `every device query should be paged: ${deviceQueries.join(' ')}`);
    await until('the header to count 2000 hosts', async () => (await summaryValue(page, 'summary-hosts')) === '2000');
  });
  await step('2000 hosts: paging and searching go through the server', async () => {
    const firstHost = await page.locator('tbody[data-testid="host"]').first().getAttribute('data-host');
    await page.click('#host-next');
    await until('hosts 21–40', async () => /Hosts 21–40 of 2000/.test(await page.textContent('#host-range')));
    await until('a different first host', async () => (await page.locator('tbody[data-testid="host"]').first().getAttribute('data-host')) !== firstHost);
    await page.fill('#host-search', 'sim-1999');
    await until('only sim-1999', async () => {
      const shown = await page.locator('tbody[data-testid="host"]').evaluateAll((els) => els.map((e) => e.dataset.host));
      return shown.length === 1 && shown[0] === 'sim-1999';
    });
    check(/Hosts 1–1 of 1/.test(await page.textContent('#host-range')), 'the search should reset to the first page');
  });
  await step('2000 hosts: a host poll refetches the page only when it names a host shown', async () => {
    // Every host is polled every 5 s, so the stream names many hosts a
    // second; only sim-1999's polls concern the page now.
    const t0 = Date.now();
    await new Promise((r) => setTimeout(r, 10_000));
    const fetched = seen.filter((r) => r.path === '/api/v1/devices' && r.at >= t0).length;
    const summaries = seen.filter((r) => r.path === '/api/v1/summary' && r.at >= t0).length;
    log(`in 10 s: ${fetched} host page fetches, ${summaries} summary fetches`);
    check(fetched <= 3, `the host page was fetched ${fetched} times in 10 s although only sim-1999 is shown`);
    check(summaries >= 1 && summaries <= 3, `the summary should be refreshed, throttled: ${summaries} fetches in 10 s`);
  });
  await step('2000 hosts: the OSD list shows a bounded number of rows', async () => {
    await until('the OSD list', async () => (await page.locator('tr[data-testid="osd-row"]').count()) > 0);
    const rows = await page.locator('tr[data-testid="osd-row"]').count();
    check(rows <= 200, `at most 200 OSD rows should be rendered, not ${rows}`);
    check(/Showing \d+ of \d{4} matching OSDs/.test(await page.textContent('#osd-count')), `the count should say how many OSDs match: ${await page.textContent('#osd-count')}`);
    await page.fill('#osd-filter', 'sim-0007');
    await until('only sim-0007\'s OSDs', async () => {
      const texts = await page.locator('tr[data-testid="osd-row"] td:nth-child(3)').allTextContents();
      return texts.length > 0 && texts.every((t) => t === 'sim-0007');
    });
    const osdLists = checkListRequestsBounded(seen, 100);
    check(osdLists.some((r) => r.params.get('q') === 'sim-0007'), 'the OSD filter should be sent to the server');
    log(`OSD list requests: ${osdLists.map((r) => `?${r.params}`).join(' ')}`);
    const [up, total] = (await summaryValue(page, 'summary-osds')).split('/').map(Number);
    check(total > 5000 && up === total, `the header should count every OSD from the summary: ${up}/${total}`);
  });
}

// ───────────── 15 removals at once, and an 800 px window ─────────────

/**
 * What must hold at any width: nothing scrolls sideways, names stay whole,
 * chart labels drawn, apart and inside. Everything is measured at once
 * (`layout`): the chart is redrawn every second, and labels must be held
 * against the chart they are drawn in.
 */
async function checkLayout(page, width) {
  await checkFits(page, width, 'removals-table', 'removals table');
  const seen = await layout(page, {
    names: '[data-testid="removal-host-group"] .host-name, tr[data-testid="osd-row"] td:nth-child(3), tbody[data-testid="host"] .host-name',
    labels: '#removal-chart [data-testid="chart-label"]',
    charts: '#removal-chart svg',
  });
  for (const b of seen.names) {
    check(b.lines === 1, `at ${width} px the host name "${b.text}" is broken over ${b.lines} lines`);
  }
  const { labels } = seen;
  check(seen.charts.length === 1 && labels.length > 0, `at ${width} px the removals chart should be drawn with its labels: ${seen.charts.length} charts, ${labels.length} labels`);
  for (const l of labels) check(l.lines === 1, `at ${width} px the chart label ${l.text} is not drawn on one line (${JSON.stringify(l)})`);
  const clash = overlapping(labels);
  check(!clash, `at ${width} px the chart labels ${clash} overlap`);
  const [chart] = seen.charts;
  for (const l of labels) {
    check(l.right <= chart.right + 0.5 && l.top >= chart.top - 0.5 && l.bottom <= chart.bottom + 0.5, `at ${width} px the chart label ${l.text} is cut off (${JSON.stringify(l)} outside ${JSON.stringify(chart)})`);
  }
}

async function manyRemovals(page) {
  const HOSTS_MANY = 6;
  let picked;
  await step('the health strip shows the cluster as ceph -s does', async () => {
    await page.goto(baseUrl, { waitUntil: 'load' });
    await until('HEALTH_OK in the health strip', async () => (await page.getAttribute('#health-strip', 'data-health')) === 'HEALTH_OK');
    const pgs = await page.locator('[data-testid="health-pgs"]').innerText();
    const total = Number(/(\d+) PGs/i.exec(pgs)[1]);
    check(total > 0 && new RegExp(`${total} active\\+clean`).test(pgs.replace(/\s+/g, ' ')), `every PG should be active+clean before any removal: ${pgs}`);
    check((await page.locator('[data-testid="health-recovery"]').count()) === 0, 'an idle cluster shows no recovery');
  });

  await step('schedule 15 removals over the six hosts', async () => {
    const osds = await (await page.request.get(`${baseUrl}/api/v1/osds?limit=100`)).json();
    const byHost = new Map();
    for (const o of osds) byHost.set(o.host, [...(byHost.get(o.host) || []), o.id]);
    check(byHost.size === HOSTS_MANY, `the demo should have ${HOSTS_MANY} hosts with OSDs: ${[...byHost.keys()]}`);
    check(osds.length >= 15 && osds.every((o) => Number.isInteger(o.id)), `the demo should have 15 OSDs or more: ${osds.length}`);
    // Round-robin over the hosts: every host gets some, none is emptied first.
    picked = [];
    for (let round = 0; picked.length < 15; round += 1) {
      for (const ids of byHost.values()) if (ids[round] !== undefined && picked.length < 15) picked.push(ids[round]);
    }
    const r = await page.request.post(`${baseUrl}/api/v1/osds/removals`, { data: { ids: picked, ignore_preview_blockers: true } });
    check(r.ok(), `scheduling 15 removals answered ${r.status()}: ${await r.text()}`);
    await until('15 removal rows', async () => (await page.locator('[data-testid="removals-live"] tr[data-testid="removal"]').count()) === 15);
  });

  await step('15 removals: grouped per host with totals, compact rows', async () => {
    const live = page.locator('[data-testid="removals-live"]');
    check((await live.getAttribute('data-grouped')) === 'true', 'with 15 removals the rows should be grouped by host');
    const groups = page.locator('[data-testid="removal-host-group"]');
    check((await groups.count()) === HOSTS_MANY, `one group per host: ${await groups.count()}`);
    for (const g of await groups.all()) {
      const host = await g.getAttribute('data-host');
      const n = await g.locator('tr[data-testid="removal"]').count();
      const totals = await g.locator('[data-testid="removal-host-totals"]').innerText();
      check(totals.startsWith(`${n} removal`), `${host}'s totals should count its ${n} removals: ${totals}`);
    }
    await until('some drains with PGs counted in the host totals', async () => /\d+ of \d+ PGs left/.test(await live.innerText()));
    const heights = await page.locator('[data-testid="removals-live"] tr[data-testid="removal"]').evaluateAll((rows) => rows.map((r) => r.getBoundingClientRect().height));
    check(Math.max(...heights) <= 44, `compact rows should be one line each (≤ 44 px), the tallest is ${Math.max(...heights)} px`);
  });

  await step('15 removals: the health strip shows the backfill, misplaced objects and recovery', async () => {
    await until('backfilling PGs in the strip', async () => /backfill/.test(await page.locator('[data-testid="health-pgs"]').innerText()));
    await until('misplaced objects in Ceph\'s words', async () => /\d+\/\d+ objects misplaced \(\d+\.\d{3}%\)/.test(await page.locator('[data-testid="health-objects"]').innerText()));
    await until('a recovery rate', async () => /\/s/.test(await page.locator('[data-testid="health-recovery"]').innerText()));
    check((await page.getAttribute('#health-strip', 'data-health')) === 'HEALTH_OK', 'misplaced objects alone leave the cluster HEALTH_OK, as Ceph reports it');
  });

  await step('15 removals: the chart draws every running drain, up to ten, with readable labels', async () => {
    const draining = async () => page.locator('[data-testid="removals-live"] tr[data-testid="removal"][data-state="draining"]').count();
    await until('ten chart lines', async () => {
      const n = await page.locator('#removal-chart [data-testid="chart-series"]').count();
      return n === Math.min(10, await draining()) && n >= 10;
    });
    check(/10 of \d+ drains|PGs remaining over time/.test(await page.textContent('#removal-chart-caption')), 'the caption names the chart');
    await checkLayout(page, 1440);
  });

  await step('a stopped removal moves below the live ones, with when it finished', async () => {
    const last = picked[picked.length - 1];
    const r = await page.request.post(`${baseUrl}/api/v1/osds/removals/stop`, { data: { ids: [last] } });
    check(r.ok(), `stopping osd.${last} answered ${r.status()}`);
    const row = page.locator(`[data-testid="removals-finished"] tr[data-testid="removal"][data-osd-id="${last}"]`);
    await until(`osd.${last} in the finished table`, async () => (await row.count()) === 1);
    check(/\d\d:\d\d:\d\d/.test(await row.locator('[data-testid="removal-finished-at"]').innerText()), 'a finished row says when it finished');
    const { live: [liveBox], done: [doneBox] } = await layout(page, { live: '[data-testid="removals-live"]', done: '[data-testid="removals-finished"]' });
    check(doneBox.top >= liveBox.bottom, 'finished removals are listed below the live ones');
  });

  await step('an 800 px window: nothing cut, nothing scrolls sideways', async () => {
    await page.setViewportSize({ width: 800, height: 900 });
    // Nothing on the page redraws on a resize (the chart scales by its
    // viewBox), so the layout measured from then on is the 800 px one.
    await until('the window to be 800 px wide', () => page.evaluate(() => window.innerWidth === 800));
    await checkLayout(page, 800);
    await until('the health strip still shown', async () => (await page.locator('[data-testid="health-badge"]').innerText()) === 'HEALTH_OK');
    await fullScreenshot(page, shotPath('800px'));
  });
}

// ───────────── main ─────────────

await runChecks(screenshotPath, async (browser) => {
  if (scale) {
    await scaleRun(browser.page);
  } else if (mode === 'many') {
    await manyRemovals(browser.page);
  } else {
    await fieldReport(browser.page);
    await tokenForm(browser.context, baseUrl);
    await unreachableHosts(browser.context, baseUrl);
  }
});
