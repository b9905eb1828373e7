import type { KeyObject } from 'node:crypto';

/** The raw request body, bytes-exact (do not parse and re-serialise it first). */
export type RawBody = Uint8Array | string;
/** Node's req.headers, a Fetch Headers, or a plain object of header names to values. */
export type HeadersLike =
  | { get(name: string): string | null }
  | Record<string, string | string[] | undefined>;

export type ErrorKind =
  | 'no_header'
  | 'malformed'
  | 'no_signatures'
  | 'too_old'
  | 'no_match'
  | 'no_secret'
  | 'no_standard_key'
  | 'no_public_key';

export type Scheme = 'x-gifq-signature' | 'standard-webhooks-v1' | 'standard-webhooks-v1a';

export interface VerifyOptions {
  /** How far the signature's timestamp may be from now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The clock, for tests. */
  now?: () => Date;
}

export interface Jwk {
  kty: string;
  crv?: string;
  x?: string;
  kid: string;
  use?: string;
  alg?: string;
}
export interface Jwks {
  keys: Jwk[];
}

export const DEFAULT_TOLERANCE_SECONDS: 300;
export const JWKS_REFETCH_INTERVAL_MS: 60000;

export class WebhookVerificationError extends Error {
  readonly kind: ErrorKind;
  constructor(kind: ErrorKind, message: string);
}

export function getHeader(headers: HeadersLike, name: string): string;
export function parseGifqSignature(header: string): { t: number; sigs: Uint8Array[] };
/** Verifies X-Gifq-Signature with any of the secrets; throws WebhookVerificationError. */
export function verifyGifqSignature(body: RawBody, header: string | null | undefined, secrets: readonly string[], opts?: VerifyOptions): void;
export function standardKey(secret: string): Uint8Array | null;
/** Verifies the Standard Webhooks v1 (HMAC) signature with any of the secrets; throws WebhookVerificationError. */
export function verifyStandard(body: RawBody, headers: HeadersLike, secrets: readonly string[], opts?: VerifyOptions): void;
/** Reads a JWKS: its Ed25519 keys by kid. */
export function parseJwks(doc: Jwks | string): Map<string, KeyObject>;
/** Verifies the Standard Webhooks v1a (ed25519) signature with the public keys; throws WebhookVerificationError. */
export function verifyStandardV1a(body: RawBody, headers: HeadersLike, keys: readonly KeyObject[] | Map<string, KeyObject>, opts?: VerifyOptions): void;

export interface JwksCacheOptions {
  fetch?: typeof globalThis.fetch;
  /** The shortest time between two fetches, in ms (default 60000). */
  refetchIntervalMs?: number;
  /** Milliseconds since the epoch, for tests. */
  clock?: () => number;
}

/** An account's JWKS: fetched on first use, cached, refetched (at most once a minute) when no cached key verifies. */
export class JwksCache {
  constructor(url: string | URL, options?: JwksCacheOptions);
  keys(): Promise<Map<string, KeyObject>>;
  verify(body: RawBody, headers: HeadersLike, opts?: VerifyOptions): Promise<void>;
}

export interface WebhookOptions extends VerifyOptions {
  /** The endpoint's secret (whsec_...). */
  secret?: string;
  /** Every secret to accept: old and new while one rotates. */
  secrets?: readonly string[];
  /** The account's JWKS, <api>/v1/accounts/<account_id>/jwks.json, for v1a. */
  jwksUrl?: string | URL;
  /** Or a JwksCache of your own. */
  jwks?: JwksCache;
  fetch?: typeof globalThis.fetch;
}

/** Verifies a delivery with whatever it is given: secrets, a JWKS URL, or both. */
export class Webhook {
  constructor(options: WebhookOptions);
  /** Resolves to the scheme that verified; rejects with a WebhookVerificationError. */
  verify(body: RawBody, headers: HeadersLike): Promise<Scheme>;
}
