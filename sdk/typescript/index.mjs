// @gifq/webhooks: verify gifq-webhooks deliveries (X-Gifq-Signature and
// Standard Webhooks v1 and v1a) with node:crypto only. Types: index.d.ts.
import { createHmac, createPublicKey, timingSafeEqual, verify as edVerify } from 'node:crypto';

export const DEFAULT_TOLERANCE_SECONDS = 300;
export const JWKS_REFETCH_INTERVAL_MS = 60_000;

const SECRET_PREFIX = 'whsec_';
const MIN_STANDARD_KEY_BYTES = 24;

/** A request that does not verify; `kind` says why (see fixtures.json's kinds). */
export class WebhookVerificationError extends Error {
  constructor(kind, message) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.kind = kind;
  }
}

const fail = (kind, message) => {
  throw new WebhookVerificationError(kind, message);
};

function toBytes(body) {
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError('body must be the raw request body: a Buffer, a Uint8Array or a string');
}

/** Reads a header from Node's req.headers, a Fetch Headers or a plain object, case-insensitively. */
export function getHeader(headers, name) {
  if (!headers) return '';
  if (typeof headers.get === 'function') return headers.get(name) ?? '';
  const want = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === want) return Array.isArray(v) ? v.join(', ') : String(v ?? '');
  }
  return '';
}

function checkTime(t, opts = {}) {
  const tol = opts.toleranceSeconds > 0 ? opts.toleranceSeconds : DEFAULT_TOLERANCE_SECONDS;
  const now = (opts.now ? opts.now() : new Date()).getTime() / 1000;
  const d = now - t;
  if (d > tol || d < -tol) fail('too_old', 'timestamp outside the tolerance');
}

function parseTimestamp(v) {
  if (!/^[+-]?\d{1,19}$/.test(v)) fail('malformed', 'malformed timestamp');
  const t = Number(v);
  if (!(t > 0)) fail('malformed', 'malformed timestamp');
  return t;
}

// Strict standard base64 (padding required), as Go's decoder reads it.
function decodeBase64(s, size) {
  if (s.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return null;
  const b = Buffer.from(s, 'base64');
  return size === undefined || b.length === size ? b : null;
}

// Compares every pair in constant time, so timing tells nothing of which matched.
function anyEqual(wants, sigs) {
  let matched = false;
  for (const w of wants) for (const s of sigs) if (w.length === s.length && timingSafeEqual(w, s)) matched = true;
  return matched;
}

function hmac(key, ...parts) {
  const h = createHmac('sha256', key);
  for (const p of parts) h.update(p);
  return h.digest();
}

/** Splits X-Gifq-Signature into its timestamp and its 32-byte v1 signatures. */
export function parseGifqSignature(header) {
  let t;
  const sigs = [];
  for (const raw of header.split(',')) {
    const part = raw.trim();
    const eq = part.indexOf('=');
    if (eq < 0) fail('malformed', 'malformed signature header');
    const k = part.slice(0, eq);
    const v = part.slice(eq + 1);
    if (k === 't') {
      if (t !== undefined) fail('malformed', 'more than one timestamp');
      t = parseTimestamp(v);
    } else if (k === 'v1' && /^[0-9a-fA-F]{64}$/.test(v)) {
      sigs.push(Buffer.from(v, 'hex')); // other schemes and lengths are skipped: a newer sender does not break this
    }
  }
  if (t === undefined) fail('malformed', 'no timestamp');
  if (sigs.length === 0) fail('no_signatures', 'no v1 signature in header');
  return { t, sigs };
}

/** Verifies X-Gifq-Signature (t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>) with any of the secrets. */
export function verifyGifqSignature(body, header, secrets, opts = {}) {
  if (!header) fail('no_header', 'no X-Gifq-Signature header');
  if (!secrets || secrets.length === 0) fail('no_secret', 'no secret to verify with');
  const { t, sigs } = parseGifqSignature(header);
  checkTime(t, opts);
  const b = toBytes(body);
  const wants = secrets.map((s) => hmac(Buffer.from(s, 'utf8'), `${t}.`, b));
  if (!anyEqual(wants, sigs)) fail('no_match', 'no signature matches');
}

/** The Standard Webhooks HMAC key of a whsec_ secret: the bytes after whsec_, base64-decoded (null if it is not one). */
export function standardKey(secret) {
  if (!secret.startsWith(SECRET_PREFIX)) return null;
  const k = decodeBase64(secret.slice(SECRET_PREFIX.length));
  return k && k.length >= MIN_STANDARD_KEY_BYTES ? k : null;
}

function standardHeaders(headers) {
  const id = getHeader(headers, 'webhook-id');
  const timestamp = getHeader(headers, 'webhook-timestamp');
  const signature = getHeader(headers, 'webhook-signature');
  if (!id || !timestamp || !signature) fail('no_header', 'missing a webhook-id, webhook-timestamp or webhook-signature header');
  return { id, timestamp, signature };
}

function standardSignatures(timestamp, signature, version, size, opts) {
  const t = parseTimestamp(timestamp);
  checkTime(t, opts);
  const sigs = [];
  for (const part of signature.split(/\s+/)) {
    const comma = part.indexOf(',');
    if (comma < 0 || part.slice(0, comma) !== version) continue;
    const b = decodeBase64(part.slice(comma + 1), size);
    if (b) sigs.push(b);
  }
  if (sigs.length === 0) fail('no_signatures', `no ${version} signature in webhook-signature`);
  return { t, sigs };
}

/** Verifies the Standard Webhooks v1 (HMAC) signature with any of the whsec_ secrets. */
export function verifyStandard(body, headers, secrets, opts = {}) {
  const { id, timestamp, signature } = standardHeaders(headers);
  if (!secrets || secrets.length === 0) fail('no_secret', 'no secret to verify with');
  const { t, sigs } = standardSignatures(timestamp, signature, 'v1', 32, opts);
  const keys = secrets.map(standardKey).filter(Boolean);
  if (keys.length === 0) fail('no_standard_key', 'no secret is whsec_ + base64 of >= 24 bytes');
  const b = toBytes(body);
  const wants = keys.map((k) => hmac(k, `${id}.${t}.`, b));
  if (!anyEqual(wants, sigs)) fail('no_match', 'no signature matches');
}

/** Reads a JWKS document (object or JSON text): its Ed25519 keys by kid, as node:crypto KeyObjects. */
export function parseJwks(doc) {
  const set = typeof doc === 'string' ? JSON.parse(doc) : doc;
  const out = new Map();
  for (const k of set?.keys ?? []) {
    if (k.kty !== 'OKP' || k.crv !== 'Ed25519') continue;
    if (typeof k.x !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(k.x)) throw new Error(`JWKS key ${k.kid}: x is not a 32-byte key in base64url`);
    out.set(k.kid, createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: k.x }, format: 'jwk' }));
  }
  return out;
}

/** Verifies the Standard Webhooks v1a (ed25519) signature with public keys (KeyObjects, or a parsed JWKS Map). */
export function verifyStandardV1a(body, headers, keys, opts = {}) {
  const { id, timestamp, signature } = standardHeaders(headers);
  const list = keys instanceof Map ? [...keys.values()] : keys ?? [];
  if (list.length === 0) fail('no_public_key', 'no public key to verify with');
  const { t, sigs } = standardSignatures(timestamp, signature, 'v1a', 64, opts);
  const msg = Buffer.concat([Buffer.from(`${id}.${t}.`, 'utf8'), toBytes(body)]);
  for (const k of list) for (const s of sigs) if (edVerify(null, msg, k, s)) return;
  fail('no_match', 'no signature matches');
}

/**
 * An account's JWKS, fetched on first use and cached. When no cached key verifies
 * (the signing key rotated), it is fetched again, at most once a minute.
 */
export class JwksCache {
  #url; #fetch; #interval; #clock; #keys = null; #fetchedAt = -Infinity; #pending = null; #error = null;

  constructor(url, { fetch = globalThis.fetch, refetchIntervalMs = JWKS_REFETCH_INTERVAL_MS, clock = Date.now } = {}) {
    this.#url = url;
    this.#fetch = fetch;
    this.#interval = refetchIntervalMs;
    this.#clock = clock;
  }

  /** The cached keys by kid, fetching them the first time. */
  async keys() {
    if (this.#keys) return this.#keys;
    // A failed fetch is not retried within the minute either: a JWKS route that is down is not hammered.
    if (this.#error && this.#clock() - this.#fetchedAt < this.#interval) throw this.#error;
    return this.#refresh();
  }

  #refresh() {
    this.#pending ??= (async () => {
      this.#fetchedAt = this.#clock();
      try {
        const res = await this.#fetch(this.#url, { headers: { accept: 'application/json' } });
        if (!res.ok) throw new Error(`JWKS ${this.#url}: HTTP ${res.status}`);
        this.#keys = parseJwks(await res.json());
        this.#error = null;
        return this.#keys;
      } catch (e) {
        this.#error = e;
        throw e;
      } finally {
        this.#pending = null;
      }
    })();
    return this.#pending;
  }

  /** Verifies v1a with the cached keys, refetching once (at most once a minute) when none matches. */
  async verify(body, headers, opts = {}) {
    const keys = await this.keys();
    try {
      verifyStandardV1a(body, headers, keys, opts);
    } catch (e) {
      const unknownKey = e.kind === 'no_match' || e.kind === 'no_public_key';
      if (!unknownKey || this.#clock() - this.#fetchedAt < this.#interval) throw e;
      verifyStandardV1a(body, headers, await this.#refresh(), opts);
    }
  }
}

/**
 * Verifies a delivery with what the receiver holds: the endpoint's secrets (old and
 * new during a rotation) for X-Gifq-Signature and Standard Webhooks v1, and/or the
 * account's JWKS URL for v1a. Resolves to the scheme that verified; rejects with a
 * WebhookVerificationError.
 */
export class Webhook {
  #secrets; #jwks; #opts;

  constructor({ secrets = [], secret, jwksUrl, jwks, toleranceSeconds, now, fetch } = {}) {
    this.#secrets = secret ? [secret, ...secrets] : [...secrets];
    this.#jwks = jwks ?? (jwksUrl ? new JwksCache(jwksUrl, { fetch }) : null);
    this.#opts = { toleranceSeconds, now };
    if (this.#secrets.length === 0 && !this.#jwks) throw new TypeError('Webhook needs secrets, a jwksUrl or both');
  }

  async verify(body, headers) {
    const sig = getHeader(headers, 'webhook-signature');
    const has = (v) => sig.split(/\s+/).some((p) => p.startsWith(`${v},`));
    if (this.#jwks && (has('v1a') || this.#secrets.length === 0)) {
      await this.#jwks.verify(body, headers, this.#opts);
      return 'standard-webhooks-v1a';
    }
    if (has('v1')) {
      verifyStandard(body, headers, this.#secrets, this.#opts);
      return 'standard-webhooks-v1';
    }
    verifyGifqSignature(body, getHeader(headers, 'x-gifq-signature'), this.#secrets, this.#opts);
    return 'x-gifq-signature';
  }
}
