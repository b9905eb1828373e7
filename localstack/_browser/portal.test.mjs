// The portal end to end in headless Chromium (Debian's, driven by
// playwright-core), against make dev's runner: this file starts the dev
// binary on free ports with a fresh data directory, a receiver that always
// answers 500, and walks through the portal as a customer would. Run it with
// `make portal-test` (which builds the binary and installs what is missing).
// Screenshots of the main screens go to SCREENSHOTS (make portal-screenshots: docs/).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { freePort, startDev, until } from './dev.mjs';

const root = resolve(import.meta.dirname, '../..');
const devBin = process.env.DEV_BIN || join(root, '.cache/bin/dev');
const shots = process.env.SCREENSHOTS || join(root, 'docs');
const browserPath = process.env.CHROMIUM || '/usr/bin/chromium';
const apiKey = 'gifq_portaltest_' + Math.random().toString(36).slice(2, 14);

let dev, api, browser, failing;

async function call(method, path, body, bearer = apiKey) {
  const res = await fetch(api + path, {
    method, headers: { Authorization: 'Bearer ' + bearer, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function session(opts = {}) {
  const r = await call('POST', '/v1/portal/sessions', opts);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}

// Reloads the page until the locator shows (the page does not poll by itself).
async function reloadUntil(page, locator, what) {
  await until(what, async () => {
    if (await locator.count() > 0 && await locator.first().isVisible()) return true;
    await page.reload();
    await page.waitForLoadState('networkidle');
    return false;
  });
}

async function newPage(viewport = { width: 1100, height: 820 }) {
  const ctx = await browser.newContext({ viewport, colorScheme: 'light', locale: 'en-GB', timezoneId: 'UTC' });
  const page = await ctx.newPage();
  page.problems = [];
  page.on('console', (m) => { if (m.type() === 'error') page.problems.push(m.text()); });
  page.on('pageerror', (e) => page.problems.push(String(e)));
  return page;
}

before(async () => {
  mkdirSync(shots, { recursive: true });
  failing = createServer((req, res) => {
    req.resume();
    req.on('end', () => { res.writeHead(500, { 'Content-Type': 'application/json' }); res.end('{"error":"ledger database unavailable"}'); });
  });
  await new Promise((r) => failing.listen(0, '127.0.0.1', r));
  dev = await startDev(devBin, {
    DEV_API_KEY: apiKey, RETRY_SCHEDULE: '45s,90s', API_KEY_CACHE_TTL: '0s',
    // The tests poll by reloading the page, far faster than a person clicks.
    PORTAL_RATE_PER_SECOND: '1000', PORTAL_BURST: '1000',
    PORTAL_FRAME_ANCESTORS: "'self' https://dashboard.gifq.example",
    EGRESS_IPS: '203.0.113.7,198.51.100.20', // as a stack with egressStaticIps sets it
  });
  api = dev.api;
  browser = await chromium.launch({
    executablePath: browserPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run'], // playwright gives each launch a fresh profile directory
  });
});

after(async () => {
  if (browser) await browser.close();
  if (dev) await dev.stop();
  if (failing) failing.close();
});

test('the portal page is served with its CSP, from the stack itself', async () => {
  const res = await fetch(api + '/portal/');
  assert.equal(res.status, 200);
  const csp = res.headers.get('content-security-policy');
  assert.match(csp, /script-src 'self';/);
  assert.doesNotMatch(csp, /unsafe-inline/);
  assert.match(csp, /frame-ancestors 'self' https:\/\/dashboard\.gifq\.example$/);
  assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
  const html = await res.text();
  assert.doesNotMatch(html, /<script>|<script [^>]*>[^<]/, 'no inline script');
  assert.doesNotMatch(html, /https?:\/\//, 'nothing fetched from elsewhere');
});

test('a customer works with endpoints, deliveries and attempts in the portal', async (t) => {
  const s = await session();
  const token = new URLSearchParams(new URL(s.url).hash.slice(1)).get('token');
  const failingEp = await call('POST', '/v1/endpoints', {
    url: `http://127.0.0.1:${failing.address().port}/hooks`, description: 'Ledger sync (staging)', event_types: ['payout.*'],
  });
  assert.equal(failingEp.status, 201);
  const page = await newPage();

  // Open the session URL: the demo endpoint is listed, and the token has left the address bar.
  const opened = Date.now();
  await page.goto(s.url);
  const demo = page.locator('.card', { hasText: 'make dev demo receiver' });
  await demo.waitFor();
  t.diagnostic(`measured: session URL to endpoints shown ${Date.now() - opened} ms (cold page, 2 endpoints)`);
  assert.doesNotMatch(page.url(), /token=/, 'the token is taken out of the URL');
  assert.ok(await page.locator('.card', { hasText: 'Ledger sync (staging)' }).count() === 1);
  // The static egress IPs a receiver allowlists.
  assert.match(await page.locator('#egress-ips').textContent(), /sent from 203\.0\.113\.7, 198\.51\.100\.20\./);

  // Post an event (as the producer) and see it delivered to the demo endpoint.
  const posted = await call('POST', '/v1/events', { event: 'payout.fulfilled', payout_type: 'crypto', data: { id: 'po_123' } });
  assert.equal(posted.status, 202);
  await call('POST', '/v1/events', { event: 'payout.fulfilled', payout_type: 'gift_cards', subject_type: 'order', recipient_uuid: '6a1f6c1e-2c1b-4c8e-9a4e-1e2d3c4b5a69', updated_at: '2026-12-01T08:00:00Z' });
  await reloadUntil(page, demo.getByText('Healthy'), 'the demo endpoint to be listed healthy');
  await demo.locator('a.title').click();
  const delivered = page.locator('#deliveries tbody tr', { hasText: 'Delivered' });
  await reloadUntil(page, delivered, 'the event to show as delivered');
  await until('both events delivered', async () => {
    if (await delivered.count() >= 2) return true;
    await page.reload();
    return false;
  });
  await page.goto(s.url.split('#')[0] + '#/endpoints');
  await reloadUntil(page, page.locator('.card', { hasText: 'Ledger sync' }).getByText('Failing'), 'the failing endpoint to show as failing');
  await page.screenshot({ path: join(shots, 'portal-endpoints.png'), fullPage: true });

  // The failing endpoint: its delivery, every attempt with status 500, and when the next one is due.
  await page.locator('.card', { hasText: 'Ledger sync' }).locator('a.title').click();
  const row = page.locator('#deliveries tbody tr', { hasText: 'HTTP 500' });
  await reloadUntil(page, row, 'the failed attempt in the deliveries tab');
  await page.getByLabel('Status').selectOption('pending');
  await page.locator('#deliveries tbody tr', { hasText: 'Pending' }).first().waitFor();
  await page.screenshot({ path: join(shots, 'portal-endpoint.png'), fullPage: true });
  const clicked = Date.now();
  await page.locator('#deliveries tbody tr a').first().click();
  await page.locator('#attempts').waitFor();
  t.diagnostic(`measured: click to a delivery's attempts shown ${Date.now() - clicked} ms`);
  const first = page.locator('#attempts tbody tr', { hasText: '#1' });
  assert.match(await first.innerText(), /HTTP 500/);
  assert.match(await first.innerText(), /ledger database unavailable/);
  assert.match(await page.locator('#next-attempt').innerText(), /\d{2}:\d{2}:\d{2} \(/);
  assert.match(await page.locator('#payload').innerText(), /"payout_type": "(crypto|gift_cards)"/, 'the payload as posted');

  // Resend: one manual attempt now, shown in the attempt list.
  await page.getByRole('button', { name: 'Resend now' }).click();
  await page.getByText(/Resend queued/).waitFor();
  await reloadUntil(page, page.locator('#attempts tbody tr', { hasText: 'Resend' }).filter({ hasText: 'HTTP 500' }), 'the resend in the attempts');
  // Each series apart, with its own count and when it began.
  assert.match(await page.locator('#series').innerText(), /Automatic: \d+ attempts?, began /);
  assert.match(await page.locator('#series').innerText(), /Resent: 1 attempt, began /);
  await page.screenshot({ path: join(shots, 'portal-delivery.png'), fullPage: true });

  // A long log: the page shows the newest 20 attempts; "Older attempts" fetches the rest.
  const dlvID = new URL(page.url()).hash.split('/')[2];
  for (let i = 0; i < 20; i++) assert.equal((await call('POST', '/v1/deliveries/' + dlvID + '/resend')).status, 202);
  await until('more than 20 attempts logged', async () => (await call('GET', '/v1/deliveries/' + dlvID)).body.attempts_next_cursor);
  await page.reload();
  await page.locator('#attempts').waitFor();
  assert.equal(await page.locator('#attempts tbody tr').count(), 20);
  await page.getByRole('button', { name: 'Older attempts' }).click();
  await until('the older attempts shown', async () => await page.locator('#attempts tbody tr', { hasText: '#1' }).count() > 0);
  assert.ok(await page.locator('#attempts tbody tr').count() > 20);
  assert.equal(await page.getByRole('button', { name: 'Older attempts' }).count(), 0, 'no more to fetch');
  const resends = await page.locator('#attempts tbody tr', { hasText: 'Resend' }).count();
  assert.match(await page.locator('#series').innerText(), new RegExp('Resent: ' + resends + ' attempts, began '), 'every resend shown is counted');

  // Rotate the failing endpoint's secret: the new one is shown once, the old one keeps signing.
  await page.getByRole('link', { name: 'Endpoint', exact: true }).click();
  await page.getByLabel('Old secret keeps signing for').selectOption('3600');
  await page.getByRole('button', { name: 'Rotate secret' }).click();
  const secret = await page.locator('#secret-value').innerText();
  assert.match(secret, /^whsec_[A-Za-z0-9+/=]{32,}$/);
  assert.match(await page.locator('.secret').innerText(), /previous secret also signs until/);
  await page.screenshot({ path: join(shots, 'portal-rotate.png'), fullPage: true });

  // Send a test event to it: a new delivery of webhook.test.
  await page.getByRole('button', { name: 'Send test event' }).click();
  await page.getByText(/Test event sent/).waitFor();
  await page.locator('#deliveries tbody tr', { hasText: 'webhook.test' }).first().waitFor();

  // Disable it: the page says so, with the reason, and the API agrees.
  await page.getByRole('button', { name: 'Disable' }).click();
  await page.getByText('Endpoint disabled').waitFor();
  await page.locator('h1 + .badge.disabled').waitFor();
  const after = await call('GET', '/v1/endpoints/' + failingEp.body.id);
  assert.equal(after.body.disabled, true);

  // Disabling stopped its pending deliveries (failed, endpoint disabled) as their messages came
  // in: wait for that before enabling it. Then recover the last hour's failures.
  await until('the disabled endpoint\'s deliveries failed', async () =>
    (await call('GET', `/v1/endpoints/${failingEp.body.id}/deliveries?status=failed`)).body.data.length >= 3);
  await page.getByRole('button', { name: 'Enable' }).click();
  await page.getByText('Endpoint enabled').waitFor();
  assert.equal((await call('GET', '/v1/endpoints/' + failingEp.body.id)).body.disabled, false);
  const failedBefore = (await call('GET', `/v1/endpoints/${failingEp.body.id}/deliveries?status=failed`)).body.data;
  assert.ok(failedBefore.length >= 3, `the disabled endpoint's deliveries failed: ${failedBefore.length}`);
  const hourAgo = new Date(Date.now() - 3600_000).toISOString().slice(0, 19); // datetime-local, in the page's zone (UTC)
  await page.getByLabel('From').fill(hourAgo);
  await page.getByRole('button', { name: 'Recover' }).click();
  await page.getByText(`${failedBefore.length} failed deliveries recovered.`).waitFor();
  const failedAfter = (await call('GET', `/v1/endpoints/${failingEp.body.id}/deliveries?status=failed`)).body.data;
  assert.equal(failedAfter.length, 0, 'recovered deliveries are no longer failed');

  assert.deepEqual(page.problems, [], 'no script errors or CSP violations');
  assert.ok(!dev.log().includes(token.split('.')[1]), 'the token never appears in a log line');
  await page.context().close();
});

test('the events screen lists what was sent, newest first, of one type if asked', async () => {
  const s = await session();
  const tag = 'po_feed_' + Date.now();
  const sent = [];
  for (const event of ['payout.fulfilled', 'order.paid', 'payout.fulfilled']) {
    sent.push((await call('POST', '/v1/events', { event, payout_type: 'crypto', data: { id: tag } })).body.id);
  }
  const page = await newPage();
  await page.goto(s.url);
  await page.locator('#nav-events').click();
  const rows = page.locator('#events tbody tr');
  await rows.first().waitFor();
  assert.equal(await rows.first().locator('.mono').innerText(), sent[2], 'newest first');
  await rows.first().locator('summary').click();
  assert.match(await rows.first().locator('pre').innerText(), new RegExp(tag), 'the body as posted');
  await page.screenshot({ path: join(shots, 'portal-events.png'), fullPage: true });
  await page.locator('#event-type-filter').fill('order.paid');
  await page.getByRole('button', { name: 'Filter' }).click();
  await until('only order.paid', async () => (await rows.first().locator('.mono').innerText().catch(() => '')) === sent[1]);
  for (const t of await rows.locator('summary').allInnerTexts()) assert.equal(t, 'order.paid');
  await page.context().close();
});

test('the deliveries tab pages newest first', async () => {
  const s = await session();
  const list = await call('GET', '/v1/endpoints');
  const demo = list.body.data.find((e) => e.description === 'make dev demo receiver');
  const have = (await call('GET', `/v1/endpoints/${demo.id}/deliveries?limit=100`)).body.data.length;
  let newest;
  for (let i = have; i < 21; i++) {
    newest = (await call('POST', '/v1/events', { event: 'payout.fulfilled', payout_type: 'crypto', data: { id: 'po_page_' + i } })).body;
  }
  const all = (await call('GET', `/v1/endpoints/${demo.id}/deliveries?limit=100`)).body.data;
  assert.equal(all.length, 21);
  const page = await newPage();
  await page.goto(s.url);
  await page.locator('.card', { hasText: 'make dev demo receiver' }).locator('a.title').click();
  const rows = page.locator('#deliveries tbody tr');
  await rows.first().waitFor();
  assert.equal(await rows.count(), 20, 'a page holds 20');
  assert.equal(await rows.first().locator('a').getAttribute('href'), '#/deliveries/' + newest.deliveries.find((d) => d.endpoint_id === demo.id).id, 'newest first');
  await page.getByRole('link', { name: 'Older deliveries' }).click();
  await page.getByRole('link', { name: 'Newest' }).waitFor();
  assert.equal(await rows.count(), 1);
  assert.equal(await rows.first().locator('a').getAttribute('href'), '#/deliveries/' + all[20].id, 'the oldest is last');
  assert.equal(await page.getByRole('link', { name: 'Older deliveries' }).count(), 0, 'no page after the last');
  await page.getByRole('link', { name: 'Newest' }).click();
  await page.getByRole('link', { name: 'Older deliveries' }).waitFor();
  assert.equal(await rows.count(), 20);
  await page.context().close();
});

test('keyboard only: add an endpoint through its labels, and see its secret once', async () => {
  const s = await session();
  const page = await newPage();
  await page.goto(s.url);
  await page.locator('.card').first().waitFor();
  await page.getByRole('button', { name: 'Add endpoint' }).focus();
  await page.keyboard.press('Enter');
  await page.getByLabel('Endpoint URL').waitFor();
  // The new view takes focus; Tab passes the breadcrumb and lands on the first field.
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'f-url');
  await page.keyboard.type('http://127.0.0.1:9/orders');
  await page.keyboard.press('Tab');
  await page.keyboard.type('Orders service');
  await page.keyboard.press('Tab');
  await page.keyboard.type('payout.fulfilled, payout.failed');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Endpoint added' }).waitFor();
  assert.match(await page.locator('#secret-value').innerText(), /^whsec_/);
  const list = await call('GET', '/v1/endpoints');
  const ep = list.body.data.find((e) => e.description === 'Orders service');
  assert.deepEqual(ep.event_types, ['payout.fulfilled', 'payout.failed']);
  assert.equal(ep.secret, undefined, 'the secret is not shown again');

  // Edit it, then delete it (confirming the dialog).
  await page.getByRole('link', { name: 'Go to the endpoint' }).click();
  await page.getByRole('link', { name: 'Edit' }).click();
  await page.getByLabel('Description').fill('Orders service (v2)');
  await page.getByLabel('Event types').fill('payout.*');
  await page.getByLabel('Signatures').selectOption('v1a');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText('Endpoint saved.').waitFor();
  await page.getByText('Orders service (v2)').waitFor();
  const edited = (await call('GET', '/v1/endpoints/' + ep.id)).body;
  assert.equal(edited.description, 'Orders service (v2)');
  assert.deepEqual(edited.event_types, ['payout.*']);
  assert.equal(edited.signature_scheme, 'v1a');
  // A v1a endpoint's page links the account's public keys, fetchable without a key.
  const jwks = await (await fetch(await page.locator('#jwks-link').getAttribute('href'))).json();
  assert.equal(jwks.keys.length, 1);
  assert.equal(jwks.keys[0].crv, 'Ed25519');
  page.once('dialog', (d) => d.accept());
  await page.getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('heading', { name: 'Endpoints' }).waitFor();
  assert.equal((await call('GET', '/v1/endpoints/' + ep.id)).status, 404);
  await page.context().close();
});

test('the portal fits a narrow iframe', async () => {
  const s = await session({ read_only: true, ttl_seconds: 600 });
  const page = await newPage({ width: 380, height: 760 });
  // Opened as /portal (no slash), as behind a gateway that drops it: the page, its files and the API still resolve.
  await page.goto(s.url.replace('/portal/#', '/portal#'));
  await page.locator('.card').first().waitFor();
  await page.getByText('Read-only').waitFor();
  assert.equal(await page.getByRole('button', { name: 'Add endpoint' }).count(), 0, 'a read-only session offers no changes');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
  await page.locator('.card', { hasText: 'make dev demo receiver' }).locator('a.title').click();
  await page.locator('#deliveries').waitFor();
  const overflow2 = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow2 <= 0, `the endpoint page scrolls sideways by ${overflow2}px`);
  await page.screenshot({ path: join(shots, 'portal-narrow.png'), fullPage: false });
  await page.context().close();
});

test('an endpoint that does not answer shows as paused until its next test attempt', async () => {
  // Connections to a port nobody listens on are refused: after 5 in a row the breaker opens.
  const dead = await call('POST', '/v1/endpoints', {
    url: `http://127.0.0.1:${await freePort()}/hooks`, description: 'Warehouse (offline)', event_types: ['stock.*'],
  });
  assert.equal(dead.status, 201);
  for (let i = 0; i < 8; i++) {
    assert.equal((await call('POST', '/v1/events', { event: 'stock.updated', data: { sku: 'sku_' + i } })).status, 202);
  }
  const open = await until('the breaker to open', async () => (await call('GET', '/v1/endpoints/' + dead.body.id)).body.breaker);
  assert.equal(open.state, 'open');
  const s = await session({ read_only: true });
  const page = await newPage();
  await page.goto(s.url);
  const card = page.locator('.card', { hasText: 'Warehouse (offline)' });
  await card.getByText('Not answering').waitFor();
  await card.locator('a.title').click();
  await page.getByText('Deliveries paused until').waitFor();
  // Its health says the same: the breaker open until the probe, and the last failure.
  await page.locator('#health', { hasText: 'Open until' }).waitFor();
  assert.match(await page.locator('#health').innerText(), /Last failure\s+.*connection_refused/);
  await page.screenshot({ path: join(shots, 'portal-paused.png'), fullPage: false });
  assert.deepEqual(page.problems, []);
  await page.context().close();
  assert.equal((await call('DELETE', '/v1/endpoints/' + dead.body.id)).status, 204);
});

test('an endpoint added late replays the events it missed, once, and shows its health', async () => {
  // Three invoices before the endpoint exists: nobody receives them.
  for (let i = 0; i < 3; i++) {
    assert.equal((await call('POST', '/v1/events', { event: 'invoice.paid', data: { invoice: 'in_' + i } })).status, 202);
  }
  assert.equal((await call('POST', '/v1/events', { event: 'refund.created', data: { refund: 're_1' } })).status, 202);
  const late = await call('POST', '/v1/endpoints', {
    url: `http://127.0.0.1:${failing.address().port}/invoices`, description: 'Invoicing (added late)', event_types: ['invoice.*'],
  });
  assert.equal(late.status, 201);
  const s = await session();
  const page = await newPage();
  await page.goto(s.url);
  await page.locator('.card', { hasText: 'Invoicing (added late)' }).locator('a.title').click();
  // A new endpoint's health: breaker closed, nothing failed yet, enabled.
  const health = page.locator('#health');
  await health.waitFor();
  assert.match(await health.innerText(), /Circuit breaker\s+Closed/);
  assert.match(await health.innerText(), /Last failure\s+None/);
  assert.equal((await page.locator('#deliveries tbody tr', { hasText: 'invoice.paid' }).count()), 0);

  // Replay the last hour: the three invoices (not the refund), then nothing more on a second click.
  const hourAgo = new Date(Date.now() - 3600_000).toISOString().slice(0, 19); // datetime-local, in the page's zone (UTC)
  await page.getByLabel('Since').fill(hourAgo);
  await page.getByRole('button', { name: 'Replay' }).click();
  await page.getByText('3 missed events replayed.').waitFor();
  await page.getByRole('button', { name: 'Replay' }).click();
  await page.getByText('0 missed events replayed.').waitFor();
  const rows = page.locator('#deliveries tbody tr', { hasText: 'invoice.paid' });
  await reloadUntil(page, rows, 'the replayed deliveries in the log');
  assert.equal(await rows.count(), 3, 'each missed invoice once');
  assert.equal(await page.locator('#deliveries tbody tr', { hasText: 'refund.created' }).count(), 0);
  const api = (await call('GET', `/v1/endpoints/${late.body.id}/deliveries`)).body.data;
  assert.equal(api.length, 3);

  // The receiver answers 500: the endpoint's health shows the last failure.
  await reloadUntil(page, page.locator('#health', { hasText: 'HTTP 500' }), 'the last failure in the health');
  await page.locator('#health').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(shots, 'portal-endpoint-health.png'), fullPage: true });
  // A window before the retention is refused with the API's message, and replays nothing.
  await page.getByLabel('Since').fill('2020-01-01T00:00:00');
  await page.getByRole('button', { name: 'Replay' }).click();
  await page.getByText(/since is before the retention/).waitFor();
  assert.deepEqual(page.problems.filter((p) => !/status of 422/.test(p)), [], 'no script errors or CSP violations');
  await page.context().close();
  assert.equal((await call('DELETE', '/v1/endpoints/' + late.body.id)).status, 204);
});

test('a forged, revoked or signed-out token is refused and changes nothing', async () => {
  const before = await call('GET', '/v1/endpoints');
  const s = await session();
  const token = new URLSearchParams(new URL(s.url).hash.slice(1)).get('token');
  const [id, secret] = token.split('.');
  const forged = id + '.' + (secret[0] === 'A' ? 'B' : 'A') + secret.slice(1);
  const base = s.url.split('#')[0];

  for (const [name, link] of [['forged', base + '#token=' + forged], ['made up', base + '#token=gifqp_nonsense']]) {
    const page = await newPage();
    await page.goto(link);
    await page.getByRole('heading', { name: 'This portal session has ended' }).waitFor();
    assert.equal(await page.locator('.card').count(), 0, name + ' token shows no data');
    await page.context().close();
  }
  assert.equal((await call('POST', '/v1/endpoints', { url: 'http://127.0.0.1:9/x' }, forged)).status, 401);

  // A real session works until it is revoked with the API key, then the same page is refused.
  const page = await newPage();
  await page.goto(s.url);
  await page.locator('.card').first().waitFor();
  assert.equal((await call('DELETE', '/v1/portal/sessions/' + s.id)).status, 204);
  await page.reload();
  await page.getByRole('heading', { name: 'This portal session has ended' }).waitFor();
  await page.context().close();

  // Signing out ends the session for the API too.
  const s2 = await session();
  const t2 = new URLSearchParams(new URL(s2.url).hash.slice(1)).get('token');
  const p2 = await newPage();
  await p2.goto(s2.url);
  await p2.locator('.card').first().waitFor();
  await p2.getByRole('button', { name: 'Sign out' }).click();
  await p2.getByRole('heading', { name: 'This portal session has ended' }).waitFor();
  assert.equal((await call('GET', '/v1/endpoints', undefined, t2)).status, 401);
  await p2.context().close();

  const afterList = await call('GET', '/v1/endpoints');
  assert.equal(afterList.body.data.length, before.body.data.length, 'refused tokens changed nothing');
});

// Last: it gives the account an event catalog, which changes how every later
// endpoint form looks (the tests above type event types into a text field).
test('with an event catalog, subscriptions are chosen from it, schemas and examples at hand', async () => {
  const types = [
    {
      name: 'payout.sent', description: 'A payout left our account for the recipient.',
      schema: { type: 'object', required: ['event', 'data'], properties: { data: { type: 'object', required: ['id', 'amount'], properties: { id: { type: 'string' }, amount: { type: 'integer', minimum: 0 } } } } },
      example: { event: 'payout.sent', data: { id: 'po_123', amount: 1200 } },
    },
    { name: 'payout.failed', description: 'The recipient’s bank refused the payout.' },
    { name: 'invoice.paid', description: 'Replaced by payout.sent.' },
  ];
  for (const t of types) assert.equal((await call('POST', '/v1/event-types', t)).status, 201);
  assert.equal((await call('PATCH', '/v1/event-types/invoice.paid', { deprecated: true })).status, 200);

  const s = await session();
  const page = await newPage();
  await page.goto(s.url);
  await page.locator('.card').first().waitFor();
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  const picker = page.locator('#f-types');
  await picker.waitFor();
  assert.equal(await picker.getByRole('checkbox').count(), 2, 'a deprecated type is not offered to a new endpoint');
  assert.match(await picker.innerText(), /A payout left our account/);
  assert.doesNotMatch(await picker.innerText(), /invoice\.paid/);

  // The schema and example of a type, on demand.
  const sent = picker.locator('li', { hasText: 'payout.sent' });
  await sent.getByText('Schema and example').click();
  assert.match(await sent.locator('pre.schema').innerText(), /"minimum": 0/);
  assert.match(await sent.locator('pre.example').innerText(), /"amount": 1200/);

  await page.getByLabel('Endpoint URL').fill('http://127.0.0.1:9/payouts');
  await page.getByLabel('Description').fill('Payouts ledger');
  await sent.getByRole('checkbox').check();
  await page.screenshot({ path: join(shots, 'portal-event-types.png'), fullPage: true });
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  await page.getByRole('heading', { name: 'Endpoint added' }).waitFor();
  const ep = (await call('GET', '/v1/endpoints')).body.data.find((e) => e.description === 'Payouts ledger');
  assert.deepEqual(ep.event_types, ['payout.sent']);

  // A prefix the catalog has no live type for is refused, with the reason, and changes nothing.
  await page.goto(s.url.split('#')[0] + '#/endpoints/' + ep.id + '/edit');
  await page.locator('#f-types').waitFor();
  assert.ok(await page.locator('#f-types li', { hasText: 'payout.sent' }).getByRole('checkbox').isChecked(), 'the chosen type is ticked');
  await page.getByLabel('Prefixes').fill('refund.*');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByRole('alert').getByText(/not in the event catalog: refund\.\*/).waitFor();
  assert.deepEqual((await call('GET', '/v1/endpoints/' + ep.id)).body.event_types, ['payout.sent']);
  await page.getByLabel('Prefixes').fill('payout.*');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText('Endpoint saved.').waitFor();
  assert.deepEqual((await call('GET', '/v1/endpoints/' + ep.id)).body.event_types, ['payout.sent', 'payout.*']);

  // The catalog on its own page, deprecated types marked.
  await page.getByRole('link', { name: 'Event types' }).click();
  const catalog = page.locator('#catalog');
  await catalog.waitFor();
  assert.equal(await catalog.locator('li').count(), 3);
  await catalog.locator('li', { hasText: 'invoice.paid' }).getByText('Deprecated').waitFor();

  // The console's one line for the refused save above is expected; nothing else.
  assert.deepEqual(page.problems.filter((p) => !/status of 422/.test(p)), [], 'no script errors or CSP violations');
  await page.context().close();
  assert.equal((await call('DELETE', '/v1/endpoints/' + ep.id)).status, 204);
});

test('endpoint settings: set in the form, shown masked, changed, refused, and sent on every attempt', async () => {
  // A receiver that keeps the headers of what it is sent.
  const got = [];
  const recorder = createServer((req, res) => {
    req.resume();
    req.on('end', () => { got.push(req.headers); res.writeHead(204); res.end(); });
  });
  await new Promise((r) => recorder.listen(0, '127.0.0.1', r));
  const token = 'Bearer portal-gateway-token-7f';
  try {
    const s = await session();
    const page = await newPage();
    await page.goto(s.url);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByLabel('Endpoint URL').fill(`http://127.0.0.1:${recorder.address().port}/gateway`);
    await page.getByLabel('Description').fill('Behind the API gateway');
    await page.getByLabel('Rate limit').fill('2');
    await page.getByLabel('Timeout').fill('5');
    await page.getByLabel('Header name 1').fill('Authorization');
    await page.getByLabel('Header value 1').fill(token);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('heading', { name: 'Endpoint added' }).waitFor();
    const ep = (await call('GET', '/v1/endpoints')).body.data.find((e) => e.description === 'Behind the API gateway');
    assert.deepEqual(ep.settings, { rate_limit: 2, timeout_seconds: 5, headers: { Authorization: '****7f' } });

    // The endpoint page shows the settings, the header masked; the value is nowhere on it.
    await page.getByRole('link', { name: 'Go to the endpoint' }).click();
    await page.locator('#custom-headers').waitFor();
    assert.equal(await page.locator('#custom-headers').innerText(), 'Authorization: ****7f');
    assert.match(await page.locator('.facts').innerText(), /2 a second[\s\S]*5 s/);
    assert.ok(!(await page.content()).includes('portal-gateway-token'), 'the header value is write-only');

    // Edit: add a header, go back to the default timeout; the stored Authorization stays.
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByLabel('Header name 1').fill('X-Tenant');
    await page.getByLabel('Header value 1').fill('acme');
    await page.getByLabel('Timeout').fill('');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Endpoint saved.').waitFor();
    const edited = (await call('GET', '/v1/endpoints/' + ep.id)).body;
    assert.deepEqual(edited.settings, { rate_limit: 2, headers: { Authorization: '****7f', 'X-Tenant': '****' } });

    // Refused: a Host header and a timeout of 11 s, each a clear message that changes nothing.
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByLabel('Header name 1').fill('Host');
    await page.getByLabel('Header value 1').fill('evil.example.com');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.locator('#error', { hasText: 'Host cannot be set' }).waitFor();
    await page.getByLabel('Header name 1').fill('');
    await page.getByLabel('Timeout').fill('11');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.locator('#error', { hasText: 'timeout_seconds must be a whole number from 1 to 10' }).waitFor();
    assert.deepEqual((await call('GET', '/v1/endpoints/' + ep.id)).body.settings, edited.settings);

    // Remove Authorization through its checkbox.
    await page.getByLabel('Timeout').fill('');
    await page.getByLabel('Remove Authorization').check();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Endpoint saved.').waitFor();
    assert.deepEqual((await call('GET', '/v1/endpoints/' + ep.id)).body.settings, { rate_limit: 2, headers: { 'X-Tenant': '****' } });

    // A test event reaches the receiver with the endpoint's header under the signature's.
    const sent = await call('POST', `/v1/endpoints/${ep.id}/test-event`);
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    const h = await until('the test event at the receiver', () => got.find((x) => x['x-gifq-event'] === 'webhook.test'));
    assert.equal(h['x-tenant'], 'acme');
    assert.equal(h.authorization, undefined, 'a removed header is not sent');
    assert.match(h['x-gifq-signature'], /v1=/);
    assert.equal(h['content-type'], 'application/json');

    assert.deepEqual(page.problems.filter((p) => !/status of 422/.test(p)), [], 'no script errors or CSP violations');
    await page.context().close();
  } finally {
    recorder.close();
  }
});

// A self-signed P-256 client certificate and its key (a test fixture, not a secret).
const CLIENT_CERT = `-----BEGIN CERTIFICATE-----
MIIBkjCCATegAwIBAgIUaov2gKnD7tVWIh1fS0XNhVxLFLswCgYIKoZIzj0EAwIw
HTEbMBkGA1UEAwwScG9ydGFsLXRlc3QtY2xpZW50MCAXDTI2MTIwNjA4MDQxMVoY
DzIxMjYxMTEyMDgwNDExWjAdMRswGQYDVQQDDBJwb3J0YWwtdGVzdC1jbGllbnQw
WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAATKuDpgz0HpSzbil93sE99Vv47+Rrr9
PfnNbjCOkoelpsuobgZKQX9nB8rMsPhO9DF40BXYWNbJN0TZc8NoGABmo1MwUTAd
BgNVHQ4EFgQUkA1oBgVvuVky84ei/yp1e8qj1b8wHwYDVR0jBBgwFoAUkA1oBgVv
uVky84ei/yp1e8qj1b8wDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNJADBG
AiEA+M8rw3k8QYVLsJSfp/gt4PVI/cKofoGydxl7hdtj1CcCIQDdr/rslPmHUR4L
fsHjBpfHpcAO5cr2OMwophpV/0JBiA==
-----END CERTIFICATE-----
`;
const CLIENT_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgVPN18IB14FrudCf2
JjkFPr6eZyvL4wjjNXLD+gB6QkOhRANCAATKuDpgz0HpSzbil93sE99Vv47+Rrr9
PfnNbjCOkoelpsuobgZKQX9nB8rMsPhO9DF40BXYWNbJN0TZc8NoGABm
-----END PRIVATE KEY-----
`;

test('receiver auth and filter: OAuth2, mutual TLS and a content filter set in the form, tested against a catalog example, secrets write-only', async () => {
  // A token server that takes the client's Basic credentials, and a receiver that keeps what it is sent.
  const clientSecret = 'portal-oauth-secret-9q';
  const tokenServer = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const [id, secret] = Buffer.from((req.headers.authorization || '').replace(/^Basic /, ''), 'base64').toString().split(':');
      const form = new URLSearchParams(body);
      if (id !== 'gifq-portal' || decodeURIComponent(secret) !== clientSecret || form.get('scope') !== 'hooks.write') {
        res.writeHead(401, { 'Content-Type': 'application/json' });
        res.end('{"error":"invalid_client"}');
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"access_token":"portal-issued-token","token_type":"Bearer","expires_in":3600}');
    });
  });
  const got = [];
  const recorder = createServer((req, res) => {
    req.resume();
    req.on('end', () => { got.push(req.headers); res.writeHead(204); res.end(); });
  });
  await Promise.all([tokenServer, recorder].map((srv) => new Promise((r) => srv.listen(0, '127.0.0.1', r))));
  const typ = 'payout.filter_demo';
  assert.equal((await call('POST', '/v1/event-types', { name: typ, description: 'A payout, for the filter test',
    example: { event: typ, payout_type: 'crypto', amount: 5 } })).status, 201);
  try {
    const s = await session();
    const page = await newPage();
    await page.goto(s.url);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByLabel('Endpoint URL').fill(`http://127.0.0.1:${recorder.address().port}/secured`);
    await page.getByLabel('Description').fill('Behind OAuth2 and mTLS');
    await page.getByLabel('Token URL').fill(`http://127.0.0.1:${tokenServer.address().port}/oauth/token`);
    await page.getByLabel('Client ID').fill('gifq-portal');
    await page.getByLabel('Client secret').fill(clientSecret);
    await page.getByLabel('Scopes').fill('hooks.write');
    await page.getByLabel('Client certificate').fill(CLIENT_CERT);
    await page.getByLabel('Client key').fill(CLIENT_KEY);

    // The filter, tested against the catalog's example before saving.
    await page.locator('#f-filter').fill('{"payout_type": ["gift_cards"]}');
    await page.getByLabel('Catalog example').selectOption(typ);
    await page.getByRole('button', { name: 'Test the filter' }).click();
    await page.locator('#filter-result', { hasText: 'does not match' }).waitFor();
    await page.locator('#f-filter').fill('{"payout_type": ["crypto"], "amount": [{"numeric": [">", 0]}]}');
    await page.getByRole('button', { name: 'Test the filter' }).click();
    await page.locator('#filter-result', { hasText: 'example matches' }).waitFor();
    await page.locator('#f-filter').fill('{"payout_type": "crypto"}');
    await page.getByRole('button', { name: 'Test the filter' }).click();
    await page.locator('#error', { hasText: 'filter' }).waitFor(); // a bad filter: the API's 422, shown
    await page.locator('#f-filter').fill('{"payout_type": ["crypto"], "amount": [{"numeric": [">", 0]}]}');

    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('heading', { name: 'Endpoint added' }).waitFor();
    const ep = (await call('GET', '/v1/endpoints')).body.data.find((e) => e.description === 'Behind OAuth2 and mTLS');
    assert.deepEqual(ep.settings.oauth2, { token_url: `http://127.0.0.1:${tokenServer.address().port}/oauth/token`, client_id: 'gifq-portal',
      client_secret: '****9q', scopes: ['hooks.write'], auth_method: 'client_secret_basic' });
    assert.deepEqual(ep.settings.tls, { client_cert: CLIENT_CERT, client_key: '****' });
    assert.deepEqual(ep.settings.filter, { payout_type: ['crypto'], amount: [{ numeric: ['>', 0] }] });

    // The endpoint page shows them; the secret and the key are nowhere on it.
    await page.getByRole('link', { name: 'Go to the endpoint' }).click();
    await page.locator('#oauth2-fact').waitFor();
    assert.match(await page.locator('#oauth2-fact').innerText(), /gifq-portal at http:\/\/127\.0\.0\.1:\d+\/oauth\/token \(client_secret_basic\)/);
    assert.equal(await page.locator('#tls-fact').innerText(), 'client certificate');
    assert.match(await page.locator('#filter-fact').innerText(), /"crypto"/);
    const keyLine = CLIENT_KEY.split('\n')[1];
    for (const p of [page]) {
      const html = await p.content();
      assert.ok(!html.includes(clientSecret) && !html.includes(keyLine), 'the secret and the key are write-only');
    }

    // A test event (test events are not filtered) reaches the receiver with the issued token.
    assert.equal((await call('POST', `/v1/endpoints/${ep.id}/test-event`)).status, 202);
    const h = await until('the test event at the receiver', () => got.find((x) => x['x-gifq-event'] === 'webhook.test'));
    assert.equal(h.authorization, 'Bearer portal-issued-token');

    // Edit: the form shows what is set, the secrets only as saved; the screenshot; then remove mutual TLS.
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.locator('#f-oauth-url').waitFor();
    assert.equal(await page.locator('#f-oauth-secret').inputValue(), '');
    assert.match(await page.locator('#f-oauth-secret').getAttribute('placeholder'), /saved \(\*\*\*\*9q\)/);
    assert.equal(await page.locator('#f-tls-key').inputValue(), '');
    assert.ok(!(await page.content()).includes(keyLine), 'the key is not in the edit form');
    await page.getByLabel('Catalog example').selectOption(typ);
    await page.getByRole('button', { name: 'Test the filter' }).click();
    await page.locator('#filter-result', { hasText: 'example matches' }).waitFor();
    await page.screenshot({ path: join(shots, 'portal-endpoint-settings.png'), fullPage: true });
    await page.getByLabel('Remove mutual TLS').check();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Endpoint saved.').waitFor();
    const saved = (await call('GET', '/v1/endpoints/' + ep.id)).body.settings;
    assert.equal(saved.tls, undefined);
    assert.equal(saved.oauth2.client_secret, '****9q', 'saving without retyping the secret keeps it');
    assert.deepEqual(saved.filter, ep.settings.filter);

    assert.deepEqual(page.problems.filter((p) => !/status of 422/.test(p)), [], 'no script errors or CSP violations');
    await page.context().close();
    assert.equal((await call('DELETE', '/v1/endpoints/' + ep.id)).status, 204);
  } finally {
    recorder.close();
    tokenServer.close();
  }
});

test('each endpoint shows its success rate, and its page the last day and week in a chart', async () => {
  // Two receivers of invoice events: one always answers 200, the other
  // rejects every third request with a 400 (a rejection fails the delivery at once).
  let n = 0;
  const servers = [
    createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200); res.end('ok'); }); }),
    createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(++n % 3 === 0 ? 400 : 200); res.end(); }); }),
  ];
  await Promise.all(servers.map((s) => new Promise((r) => s.listen(0, '127.0.0.1', r))));
  try {
    // The account has an event catalog by now (an earlier test): filters name its types.
    const type = await call('POST', '/v1/event-types', { name: 'stats.sample', description: 'An event for the stats test' });
    assert.ok(type.status === 201 || type.status === 409, JSON.stringify(type.body));
    const eps = [];
    for (const [i, description] of ['Invoices (steady)', 'Invoices (flaky)'].entries()) {
      const ep = await call('POST', '/v1/endpoints', { url: `http://127.0.0.1:${servers[i].address().port}/hooks`, description, event_types: ['stats.sample'] });
      assert.equal(ep.status, 201, JSON.stringify(ep.body));
      eps.push(ep.body);
    }
    for (let i = 0; i < 6; i++) {
      assert.equal((await call('POST', '/v1/events', { event: 'stats.sample', n: i })).status, 202);
    }
    const s = await session({ read_only: true });
    const page = await newPage();
    await page.goto(s.url);
    const card = (d) => page.locator('.card', { hasText: d });
    await reloadUntil(page, card('Invoices (flaky)').locator('.badge.rate', { hasText: '66.6% delivered' }), 'the flaky endpoint at 4 of 6');
    await reloadUntil(page, card('Invoices (steady)').locator('.badge.rate', { hasText: '100% delivered' }), 'the steady endpoint at 6 of 6');

    // The flaky endpoint's page: the counts (a rejected delivery goes to the
    // DLQ at once), and one hour's bar of 4 delivered under 2 failed.
    await page.goto(s.url.replace(/#.*/, '') + '#/endpoints/' + eps[1].id);
    const stats = page.locator('#stats');
    await reloadUntil(page, page.locator('#stats', { hasText: 'Attempts6Delivered4Failed2Dead-lettered2' }), 'both rejected deliveries dead-lettered');
    assert.match(await stats.textContent(), /2xx: 4, 4xx: 2/);
    const chart = page.locator('#stats-chart');
    assert.equal(await chart.getAttribute('aria-label'), 'Deliveries per hour, last day: 4 delivered, 2 failed');
    assert.equal(await chart.locator('rect.bar-ok').count(), 1);
    assert.equal(await chart.locator('rect.bar-bad').count(), 1);
    await stats.screenshot({ path: join(shots, 'portal-stats.png') });

    // The week: 168 hours, the same counts.
    await page.locator('#stats-window').selectOption('week');
    await page.locator('#stats-chart[aria-label^="Deliveries per hour, last week: 4 delivered"]').waitFor();
    assert.match(page.url(), /window=week/);
    assert.deepEqual(page.problems, [], 'no script errors or CSP violations');
    await page.context().close();
  } finally {
    servers.forEach((s) => s.close());
  }
});
