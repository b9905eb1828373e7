// The JWKS is fetched once, cached, and refetched when no cached key verifies, at most once a minute.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { JwksCache, Webhook, WebhookVerificationError } from '../index.mjs';

const file = JSON.parse(readFileSync(new URL('../../conformance/fixtures.json', import.meta.url), 'utf8'));
const fixture = (name) => file.fixtures.find((f) => f.name === name);
// Signed by k2; its JWKS (k1, k_other) does not hold k2.
const unknown = fixture('v1a/unknown-key');
const withK2 = fixture('v1a/rotation-new-key').jwks; // { keys: [k2] }
const body = Buffer.from(unknown.body_base64, 'base64');
const opts = { now: () => new Date(unknown.now * 1000) };

function server(...docs) {
  const calls = [];
  const fetch = async (url) => {
    calls.push(String(url));
    const doc = docs[Math.min(calls.length - 1, docs.length - 1)];
    return new Response(JSON.stringify(doc), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  return { fetch, calls };
}

test('fetched once and cached', async () => {
  const s = server(withK2);
  const c = new JwksCache('http://jwks.test/j', { fetch: s.fetch });
  await c.verify(body, unknown.headers, opts);
  await c.verify(body, unknown.headers, opts);
  await c.keys();
  assert.equal(s.calls.length, 1);
});

test('an unknown key refetches, then verifies with the new key', async () => {
  let ms = 1_000_000;
  const s = server(unknown.jwks, withK2);
  const c = new JwksCache('http://jwks.test/j', { fetch: s.fetch, clock: () => ms });
  await c.keys(); // cached: k1 and k_other
  ms += 60_000;
  await c.verify(body, unknown.headers, opts);
  assert.equal(s.calls.length, 2);
});

test('at most once a minute', async () => {
  let ms = 1_000_000;
  const s = server(unknown.jwks);
  const c = new JwksCache('http://jwks.test/j', { fetch: s.fetch, clock: () => ms });
  for (let i = 0; i < 5; i++) {
    await assert.rejects(c.verify(body, unknown.headers, opts), (e) => e instanceof WebhookVerificationError && e.kind === 'no_match');
    ms += 10_000;
  }
  // fetched at first use only: 40 s have passed
  assert.equal(s.calls.length, 1);
  ms += 20_000;
  await assert.rejects(c.verify(body, unknown.headers, opts));
  assert.equal(s.calls.length, 2);
  await assert.rejects(c.verify(body, unknown.headers, opts));
  assert.equal(s.calls.length, 2);
});

test('a tampered body does not refetch', async () => {
  let ms = 1_000_000;
  const fx = fixture('v1a/old-timestamp');
  const s = server(fx.jwks);
  const c = new JwksCache('http://jwks.test/j', { fetch: s.fetch, clock: () => ms });
  ms += 120_000;
  await assert.rejects(c.verify(Buffer.from(fx.body_base64, 'base64'), fx.headers, { now: () => new Date(fx.now * 1000) }), { kind: 'too_old' });
  assert.equal(s.calls.length, 1);
});

test('Webhook picks the scheme the request carries', async () => {
  const v1 = fixture('standard-v1/valid');
  const gifq = fixture('gifq/valid');
  const both = fixture('v1a/v1a-beside-v1');
  const s = server(both.jwks);
  const wh = new Webhook({ secrets: v1.secrets, jwksUrl: 'http://jwks.test/j', fetch: s.fetch, now: () => new Date(v1.now * 1000) });
  assert.equal(await wh.verify(Buffer.from(v1.body_base64, 'base64'), v1.headers), 'standard-webhooks-v1');
  assert.equal(await wh.verify(Buffer.from(gifq.body_base64, 'base64'), gifq.headers), 'x-gifq-signature');
  assert.equal(await wh.verify(Buffer.from(both.body_base64, 'base64'), new Headers(both.headers)), 'standard-webhooks-v1a');
  const tampered = fixture('gifq/tampered-body');
  await assert.rejects(wh.verify(Buffer.from(tampered.body_base64, 'base64'), tampered.headers), { kind: 'no_match' });
  assert.throws(() => new Webhook({}), TypeError);
});

test('a failed fetch is retried after a minute, not on every request', async () => {
  let ms = 1_000_000;
  let calls = 0;
  const fetch = async () => {
    calls++;
    return calls === 1 ? new Response('down', { status: 503 }) : new Response(JSON.stringify(withK2), { status: 200 });
  };
  const c = new JwksCache('http://jwks.test/j', { fetch, clock: () => ms });
  await assert.rejects(c.verify(body, unknown.headers, opts), /HTTP 503/);
  ms += 30_000;
  await assert.rejects(c.verify(body, unknown.headers, opts), /HTTP 503/);
  assert.equal(calls, 1);
  ms += 30_000;
  await c.verify(body, unknown.headers, opts);
  assert.equal(calls, 2);
});
