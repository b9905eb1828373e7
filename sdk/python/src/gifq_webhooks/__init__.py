"""Verify gifq-webhooks deliveries: X-Gifq-Signature and Standard Webhooks v1 and v1a.

HMAC schemes use the standard library only; v1a (ed25519) needs the optional
``cryptography`` package (``pip install gifq-webhooks[v1a]``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import threading
import time
import urllib.request
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Protocol, Sequence, Tuple, Union

__all__ = [
    "DEFAULT_TOLERANCE_SECONDS",
    "JWKS_REFETCH_INTERVAL_SECONDS",
    "WebhookVerificationError",
    "verify_gifq_signature",
    "verify_standard",
    "verify_standard_v1a",
    "parse_jwks",
    "standard_key",
    "JwksCache",
    "Webhook",
]

DEFAULT_TOLERANCE_SECONDS = 300
JWKS_REFETCH_INTERVAL_SECONDS = 60.0

_SECRET_PREFIX = "whsec_"
_MIN_STANDARD_KEY_BYTES = 24
_TIMESTAMP = re.compile(r"[+-]?[0-9]{1,19}")
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")
_B64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_B64URL_32 = re.compile(r"[A-Za-z0-9_-]{43}")

Body = Union[bytes, bytearray, memoryview, str]


class Headers(Protocol):
    """Any headers object with .get(name): a dict, http.server's self.headers, Flask's, Django's request.headers..."""

    def get(self, key: str, /) -> Optional[str]: ...


class WebhookVerificationError(Exception):
    """A request that does not verify; ``kind`` says why (see fixtures.json's kinds)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _fail(kind: str, message: str) -> "WebhookVerificationError":
    return WebhookVerificationError(kind, message)


def _bytes(body: Body) -> bytes:
    if isinstance(body, str):
        return body.encode("utf-8")
    return bytes(body)


def _header(headers: Headers, name: str) -> str:
    v = headers.get(name)
    if v is None:
        # a plain dict is case-sensitive: look for the name in another case
        want = name.lower()
        for k, val in getattr(headers, "items", lambda: [])():
            if isinstance(k, str) and k.lower() == want:
                return str(val or "")
        return ""
    return str(v)


def _check_time(t: int, tolerance: Optional[float], now: Optional[Callable[[], float]]) -> None:
    tol = tolerance if tolerance and tolerance > 0 else DEFAULT_TOLERANCE_SECONDS
    d = (now() if now else time.time()) - t
    if d > tol or d < -tol:
        raise _fail("too_old", "timestamp outside the tolerance")


def _timestamp(v: str) -> int:
    if not _TIMESTAMP.fullmatch(v):
        raise _fail("malformed", "malformed timestamp")
    t = int(v)
    if t <= 0:
        raise _fail("malformed", "malformed timestamp")
    return t


def _b64(s: str, size: Optional[int] = None) -> Optional[bytes]:
    # Strict standard base64 (padding required), as Go's decoder reads it.
    if len(s) % 4 or not _B64.fullmatch(s):
        return None
    try:
        b = base64.b64decode(s, validate=True)
    except binascii.Error:
        return None
    return b if size is None or len(b) == size else None


def _any_equal(wants: Iterable[bytes], sigs: Sequence[bytes]) -> bool:
    # Every pair is compared in constant time: timing tells nothing of which matched.
    matched = False
    for w in wants:
        for s in sigs:
            if hmac.compare_digest(w, s):
                matched = True
    return matched


def parse_gifq_signature(header: str) -> Tuple[int, List[bytes]]:
    """Splits X-Gifq-Signature into its timestamp and its 32-byte v1 signatures."""
    t: Optional[int] = None
    sigs: List[bytes] = []
    for raw in header.split(","):
        k, eq, v = raw.strip().partition("=")
        if not eq:
            raise _fail("malformed", "malformed signature header")
        if k == "t":
            if t is not None:
                raise _fail("malformed", "more than one timestamp")
            t = _timestamp(v)
        elif k == "v1" and _HEX64.fullmatch(v):
            sigs.append(bytes.fromhex(v))  # other schemes and lengths are skipped
    if t is None:
        raise _fail("malformed", "no timestamp")
    if not sigs:
        raise _fail("no_signatures", "no v1 signature in header")
    return t, sigs


def verify_gifq_signature(
    body: Body,
    header: Optional[str],
    secrets: Sequence[str],
    *,
    tolerance: Optional[float] = None,
    now: Optional[Callable[[], float]] = None,
) -> None:
    """Verifies X-Gifq-Signature (t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>) with any of the secrets.

    Raises WebhookVerificationError.
    """
    if not header:
        raise _fail("no_header", "no X-Gifq-Signature header")
    if not secrets:
        raise _fail("no_secret", "no secret to verify with")
    t, sigs = parse_gifq_signature(header)
    _check_time(t, tolerance, now)
    msg = str(t).encode() + b"." + _bytes(body)
    wants = [hmac.new(s.encode("utf-8"), msg, hashlib.sha256).digest() for s in secrets]
    if not _any_equal(wants, sigs):
        raise _fail("no_match", "no signature matches")


def standard_key(secret: str) -> Optional[bytes]:
    """The Standard Webhooks HMAC key of a whsec_ secret (the part after whsec_, base64-decoded), or None."""
    if not secret.startswith(_SECRET_PREFIX):
        return None
    k = _b64(secret[len(_SECRET_PREFIX):])
    return k if k is not None and len(k) >= _MIN_STANDARD_KEY_BYTES else None


def _standard_headers(headers: Headers) -> Tuple[str, str, str]:
    id_, ts, sig = (_header(headers, n) for n in ("webhook-id", "webhook-timestamp", "webhook-signature"))
    if not id_ or not ts or not sig:
        raise _fail("no_header", "missing a webhook-id, webhook-timestamp or webhook-signature header")
    return id_, ts, sig


def _standard_signatures(
    timestamp: str, signature: str, version: str, size: int, tolerance: Optional[float], now: Optional[Callable[[], float]]
) -> Tuple[int, List[bytes]]:
    t = _timestamp(timestamp)
    _check_time(t, tolerance, now)
    sigs = []
    for part in signature.split():
        v, comma, s = part.partition(",")
        if not comma or v != version:
            continue
        b = _b64(s, size)
        if b is not None:
            sigs.append(b)
    if not sigs:
        raise _fail("no_signatures", "no %s signature in webhook-signature" % version)
    return t, sigs


def verify_standard(
    body: Body,
    headers: Headers,
    secrets: Sequence[str],
    *,
    tolerance: Optional[float] = None,
    now: Optional[Callable[[], float]] = None,
) -> None:
    """Verifies the Standard Webhooks v1 (HMAC) signature with any of the whsec_ secrets."""
    id_, ts, sig = _standard_headers(headers)
    if not secrets:
        raise _fail("no_secret", "no secret to verify with")
    t, sigs = _standard_signatures(ts, sig, "v1", 32, tolerance, now)
    keys = [k for k in (standard_key(s) for s in secrets) if k is not None]
    if not keys:
        raise _fail("no_standard_key", "no secret is whsec_ + base64 of >= 24 bytes")
    msg = ("%s.%d." % (id_, t)).encode("utf-8") + _bytes(body)
    if not _any_equal([hmac.new(k, msg, hashlib.sha256).digest() for k in keys], sigs):
        raise _fail("no_match", "no signature matches")


def parse_jwks(doc: Union[str, bytes, Mapping[str, Any]]) -> Dict[str, bytes]:
    """Reads a JWKS: its Ed25519 public keys (32 raw bytes) by kid; keys of other types are skipped."""
    s = json.loads(doc) if isinstance(doc, (str, bytes)) else doc
    out: Dict[str, bytes] = {}
    for k in s.get("keys") or []:
        if k.get("kty") != "OKP" or k.get("crv") != "Ed25519":
            continue
        x = k.get("x")
        if not isinstance(x, str) or not _B64URL_32.fullmatch(x):
            raise ValueError("JWKS key %r: x is not a 32-byte key in base64url" % k.get("kid"))
        out[str(k.get("kid"))] = base64.urlsafe_b64decode(x + "=")
    return out


def _ed25519_verify(key: bytes, sig: bytes, msg: bytes) -> bool:
    try:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    except ImportError as e:  # pragma: no cover - depends on the install
        raise RuntimeError("v1a needs the cryptography package: pip install gifq-webhooks[v1a]") from e
    try:
        Ed25519PublicKey.from_public_bytes(key).verify(sig, msg)
        return True
    except InvalidSignature:
        return False


def verify_standard_v1a(
    body: Body,
    headers: Headers,
    keys: Union[Mapping[str, bytes], Sequence[bytes]],
    *,
    tolerance: Optional[float] = None,
    now: Optional[Callable[[], float]] = None,
) -> None:
    """Verifies the Standard Webhooks v1a (ed25519) signature with the public keys (parse_jwks's result)."""
    id_, ts, sig = _standard_headers(headers)
    key_list = list(keys.values()) if isinstance(keys, Mapping) else list(keys)
    if not key_list:
        raise _fail("no_public_key", "no public key to verify with")
    t, sigs = _standard_signatures(ts, sig, "v1a", 64, tolerance, now)
    msg = ("%s.%d." % (id_, t)).encode("utf-8") + _bytes(body)
    for k in key_list:
        if len(k) != 32:
            continue
        for s in sigs:
            if _ed25519_verify(k, s, msg):
                return
    raise _fail("no_match", "no signature matches")


def _urlopen_fetch(url: str) -> bytes:
    req = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as res:  # noqa: S310 - the URL is the receiver's own setting
        data: bytes = res.read()
        return data


class JwksCache:
    """An account's JWKS: fetched on first use, cached, and fetched again when no
    cached key verifies (the signing key rotated), at most once a minute."""

    def __init__(
        self,
        url: str,
        *,
        fetch: Callable[[str], bytes] = _urlopen_fetch,
        refetch_interval: float = JWKS_REFETCH_INTERVAL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._url = url
        self._fetch = fetch
        self._interval = refetch_interval
        self._clock = clock
        self._keys: Optional[Dict[str, bytes]] = None
        self._fetched_at: Optional[float] = None
        self._error: Optional[Exception] = None
        self._lock = threading.Lock()

    def keys(self) -> Dict[str, bytes]:
        """The cached keys by kid, fetched the first time."""
        with self._lock:
            if self._keys is None:
                # A failed fetch is not retried within the minute either: a JWKS route that is down is not hammered.
                if self._error is not None and self._fetched_at is not None and self._clock() - self._fetched_at < self._interval:
                    raise self._error
                self._refresh()
            assert self._keys is not None
            return self._keys

    def _refresh(self) -> None:
        self._fetched_at = self._clock()
        try:
            self._keys = parse_jwks(self._fetch(self._url))
            self._error = None
        except Exception as e:
            self._error = e
            raise

    def _refetch_if_due(self, seen: Dict[str, bytes]) -> Dict[str, bytes]:
        with self._lock:
            if self._keys is not seen:  # another thread refetched meanwhile
                return self._keys or {}
            if self._fetched_at is not None and self._clock() - self._fetched_at < self._interval:
                return seen
            self._refresh()
            return self._keys or {}

    def verify(
        self, body: Body, headers: Headers, *, tolerance: Optional[float] = None, now: Optional[Callable[[], float]] = None
    ) -> None:
        """Verifies v1a with the cached keys, refetching once (at most once a minute) when none matches."""
        keys = self.keys()
        try:
            verify_standard_v1a(body, headers, keys, tolerance=tolerance, now=now)
        except WebhookVerificationError as e:
            if e.kind not in ("no_match", "no_public_key"):
                raise
            fresh = self._refetch_if_due(keys)
            if fresh is keys:
                raise
            verify_standard_v1a(body, headers, fresh, tolerance=tolerance, now=now)


class Webhook:
    """Verifies a delivery with what the receiver holds: the endpoint's secrets (old and
    new during a rotation) for X-Gifq-Signature and Standard Webhooks v1, and/or the
    account's JWKS URL for v1a. ``verify`` returns the scheme that verified."""

    def __init__(
        self,
        secret: Optional[str] = None,
        *,
        secrets: Sequence[str] = (),
        jwks_url: Optional[str] = None,
        jwks: Optional[JwksCache] = None,
        tolerance: Optional[float] = None,
        now: Optional[Callable[[], float]] = None,
    ) -> None:
        self._secrets = ([secret] if secret else []) + list(secrets)
        self._jwks = jwks if jwks is not None else (JwksCache(jwks_url) if jwks_url else None)
        self._tolerance = tolerance
        self._now = now
        if not self._secrets and self._jwks is None:
            raise ValueError("Webhook needs secrets, a jwks_url or both")

    def verify(self, body: Body, headers: Headers) -> str:
        """Returns 'x-gifq-signature', 'standard-webhooks-v1' or 'standard-webhooks-v1a'; raises WebhookVerificationError."""
        sig = _header(headers, "webhook-signature")
        versions = {p.partition(",")[0] for p in sig.split()}
        opts: Dict[str, Any] = {"tolerance": self._tolerance, "now": self._now}
        if self._jwks is not None and ("v1a" in versions or not self._secrets):
            self._jwks.verify(body, headers, **opts)
            return "standard-webhooks-v1a"
        if "v1" in versions:
            verify_standard(body, headers, self._secrets, **opts)
            return "standard-webhooks-v1"
        verify_gifq_signature(body, _header(headers, "x-gifq-signature"), self._secrets, **opts)
        return "x-gifq-signature"
