// An AWS endpoint in the portal, in headless Chromium, against make dev's
// runner delivering AWS endpoints to LocalStack (LOCALSTACK_ENDPOINT; the
// customer's account is LocalStack's: localstack/awscustomer makes its
// queue). Run with `make portal-test-aws` while LocalStack is up (.ci/run
// does, in its LocalStack phase). A screenshot of the endpoint's page goes
// to SCREENSHOTS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { startDev, until } from './dev.mjs';

const root = resolve(import.meta.dirname, '../..');
const devBin = process.env.DEV_BIN || join(root, '.cache/bin/dev');
const customerBin = process.env.CUSTOMER_BIN || join(root, '.cache/bin/awscustomer');
const shots = process.env.SCREENSHOTS || join(root, 'docs');
const browserPath = process.env.CHROMIUM || '/usr/bin/chromium';
const apiKey = 'gifq_portalaws_' + Math.random().toString(36).slice(2, 14);

let dev, browser;

async function call(method, path, body) {
  const res = await fetch(dev.api + path, {
    method, headers: { Authorization: 'Bearer ' + apiKey, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

before(async () => {
  assert.ok(process.env.LOCALSTACK_ENDPOINT, 'LOCALSTACK_ENDPOINT must name a running LocalStack (make localstack-up)');
  dev = await startDev(devBin, { DEV_API_KEY: apiKey, API_KEY_CACHE_TTL: '0s', PORTAL_RATE_PER_SECOND: '1000', PORTAL_BURST: '1000' });
  browser = await chromium.launch({ executablePath: browserPath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
});

after(async () => {
  if (browser) await browser.close();
  if (dev) await dev.stop();
});

test('an SQS endpoint: registered as a role, delivered to its queue, shown with its target and role', async () => {
  const customer = JSON.parse(execFileSync(customerBin, [], { encoding: 'utf8' }));
  const made = await call('POST', '/v1/endpoints', { type: 'aws_sqs', aws: { target_arn: customer.queue_arn, role_arn: customer.role_arn }, description: 'ledger queue' });
  assert.equal(made.status, 201, JSON.stringify(made.body) + dev.log());
  const ep = made.body;
  assert.equal(ep.type, 'aws_sqs');

  const ev = await call('POST', '/v1/events', { event: 'payout.fulfilled', data: { id: 'po_portal_aws' } });
  assert.equal(ev.status, 202, JSON.stringify(ev.body));
  const body = execFileSync(customerBin, ['-receive', customer.queue_url], { encoding: 'utf8' });
  assert.match(body, /po_portal_aws/, 'the queue got the event body');
  await until('the delivery to be delivered', async () => {
    const d = await call('GET', '/v1/deliveries/' + ev.body.deliveries[0].id);
    return d.body && d.body.status === 'delivered';
  });

  const session = await call('POST', '/v1/portal/sessions', {});
  assert.equal(session.status, 201, JSON.stringify(session.body));
  const page = await (await browser.newContext({ viewport: { width: 1100, height: 820 }, colorScheme: 'light', locale: 'en-GB', timezoneId: 'UTC' })).newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.goto(session.body.url);
  await page.getByText(customer.queue_arn).first().waitFor();
  await page.getByText(customer.queue_arn).first().click();
  await page.locator('#aws-role').waitFor();
  assert.equal(await page.locator('#aws-role').textContent(), customer.role_arn);
  await page.getByText('Amazon SQS queue').first().waitFor();
  await page.locator('#deliveries tbody tr', { hasText: 'Delivered' }).first().waitFor();
  assert.equal(await page.locator('#rotate-title').count(), 0, 'no signing secret to rotate: the message carries no signature');
  await page.screenshot({ path: join(shots, 'portal-aws-endpoint.png'), fullPage: true });
  assert.deepEqual(problems, []);
});
