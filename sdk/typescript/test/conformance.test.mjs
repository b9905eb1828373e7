// Every fixture of sdk/conformance/fixtures.json (made by shared/signing) reaches its result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseJwks, verifyGifqSignature, verifyStandard, verifyStandardV1a, getHeader } from '../index.mjs';

const file = JSON.parse(readFileSync(new URL('../../conformance/fixtures.json', import.meta.url), 'utf8'));

function run(fx) {
  const body = Buffer.from(fx.body_base64, 'base64');
  const opts = { toleranceSeconds: fx.tolerance_seconds, now: () => new Date(fx.now * 1000) };
  switch (fx.scheme) {
    case 'x-gifq-signature':
      return verifyGifqSignature(body, getHeader(fx.headers, 'x-gifq-signature'), fx.secrets ?? [], opts);
    case 'standard-webhooks-v1':
      return verifyStandard(body, fx.headers, fx.secrets ?? [], opts);
    case 'standard-webhooks-v1a':
      return verifyStandardV1a(body, fx.headers, parseJwks(fx.jwks), opts);
  }
  throw new Error(`unknown scheme ${fx.scheme}`);
}

assert.ok(file.fixtures.length >= 40, 'the fixtures are there');
for (const fx of file.fixtures) {
  test(fx.name, () => {
    let got = 'ok';
    try {
      run(fx);
    } catch (e) {
      if (!e.kind) throw e;
      got = e.kind;
    }
    assert.equal(got, fx.expected, fx.description);
  });
}
