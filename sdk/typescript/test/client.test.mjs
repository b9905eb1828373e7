// The producer client builds requests as docs/openapi.yaml describes them and reads the answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createClient, ApiError } from '@gifq/webhooks/client';

async function withServer(handler, fn) {
  const seen = [];
  const srv = createServer(async (req, res) => {
    let body = '';
    for await (const c of req) body += c;
    seen.push({ method: req.method, url: req.url, headers: req.headers, body });
    handler(req, res);
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  try {
    await fn(`http://127.0.0.1:${srv.address().port}/`, seen);
  } finally {
    srv.close();
  }
}

test('path, query, header parameters, the key and the JSON body', async () => {
  await withServer(
    (req, res) => res.writeHead(201, { 'content-type': 'application/json' }).end('{"id":"ep_1","secret":"whsec_x"}'),
    async (base, seen) => {
      const api = createClient({ baseUrl: base, apiKey: 'gk_test' });
      const ep = await api.POST('/v1/endpoints', { body: { url: 'https://example.com/h' } });
      assert.deepEqual(ep, { id: 'ep_1', secret: 'whsec_x' });
      await api.GET('/v1/endpoints/{id}/deliveries', { params: { path: { id: 'ep/1' }, query: { limit: 5, status: undefined } } });
      await api.POST('/v1/events', { body: { event: 'a.b' }, params: { header: { 'Idempotency-Key': 'k1' } } });
      assert.equal(seen[0].method, 'POST');
      assert.equal(seen[0].url, '/v1/endpoints');
      assert.equal(seen[0].headers.authorization, 'Bearer gk_test');
      assert.equal(seen[0].headers['content-type'], 'application/json');
      assert.deepEqual(JSON.parse(seen[0].body), { url: 'https://example.com/h' });
      assert.equal(seen[1].url, '/v1/endpoints/ep%2F1/deliveries?limit=5');
      assert.equal(seen[1].body, '');
      assert.equal(seen[2].headers['idempotency-key'], 'k1');
    },
  );
});

test('an error answer is an ApiError with the code', async () => {
  await withServer(
    (req, res) => res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":"not_found","message":"no such endpoint"}}'),
    async (base) => {
      const api = createClient({ baseUrl: base, apiKey: 'gk_test' });
      await assert.rejects(api.GET('/v1/endpoints/{id}', { params: { path: { id: 'ep_x' } } }), (e) => e instanceof ApiError && e.status === 404 && e.code === 'not_found');
      await assert.rejects(api.GET('/v1/endpoints/{id}', {}), TypeError);
    },
  );
});
