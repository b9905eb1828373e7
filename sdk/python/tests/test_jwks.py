"""The JWKS is fetched once, cached, and refetched when no cached key verifies, at most once a minute."""

import base64
import json
import unittest

from gifq_webhooks import JwksCache, Webhook, WebhookVerificationError
from test_conformance import FIXTURES

BY_NAME = {f["name"]: f for f in FIXTURES["fixtures"]}
UNKNOWN = BY_NAME["v1a/unknown-key"]  # signed by k2; its JWKS holds k1 and k_other
WITH_K2 = BY_NAME["v1a/rotation-new-key"]["jwks"]
BODY = base64.b64decode(UNKNOWN["body_base64"])
NOW = {"now": lambda: float(UNKNOWN["now"])}


class Server:
    def __init__(self, *docs):
        self.docs, self.calls = docs, 0

    def __call__(self, url):
        self.calls += 1
        return json.dumps(self.docs[min(self.calls, len(self.docs)) - 1]).encode()


class Clock:
    t = 1000.0

    def __call__(self):
        return self.t


class JwksCacheTest(unittest.TestCase):
    def test_fetched_once_and_cached(self):
        s = Server(WITH_K2)
        c = JwksCache("http://jwks.test/j", fetch=s)
        c.verify(BODY, UNKNOWN["headers"], **NOW)
        c.verify(BODY, UNKNOWN["headers"], **NOW)
        c.keys()
        self.assertEqual(s.calls, 1)

    def test_unknown_key_refetches_then_verifies(self):
        s, clock = Server(UNKNOWN["jwks"], WITH_K2), Clock()
        c = JwksCache("http://jwks.test/j", fetch=s, clock=clock)
        c.keys()
        clock.t += 60
        c.verify(BODY, UNKNOWN["headers"], **NOW)
        self.assertEqual(s.calls, 2)

    def test_at_most_once_a_minute(self):
        s, clock = Server(UNKNOWN["jwks"]), Clock()
        c = JwksCache("http://jwks.test/j", fetch=s, clock=clock)
        for _ in range(5):
            with self.assertRaises(WebhookVerificationError) as e:
                c.verify(BODY, UNKNOWN["headers"], **NOW)
            self.assertEqual(e.exception.kind, "no_match")
            clock.t += 10
        self.assertEqual(s.calls, 1)  # 40 s after the first fetch
        clock.t += 20
        self.assertRaises(WebhookVerificationError, c.verify, BODY, UNKNOWN["headers"], **NOW)
        self.assertEqual(s.calls, 2)
        self.assertRaises(WebhookVerificationError, c.verify, BODY, UNKNOWN["headers"], **NOW)
        self.assertEqual(s.calls, 2)

    def test_old_timestamp_does_not_refetch(self):
        fx = BY_NAME["v1a/old-timestamp"]
        s, clock = Server(fx["jwks"]), Clock()
        c = JwksCache("http://jwks.test/j", fetch=s, clock=clock)
        clock.t += 120
        with self.assertRaises(WebhookVerificationError) as e:
            c.verify(base64.b64decode(fx["body_base64"]), fx["headers"], now=lambda: float(fx["now"]))
        self.assertEqual(e.exception.kind, "too_old")
        self.assertEqual(s.calls, 1)

    def test_failed_fetch_is_retried_after_a_minute(self):
        calls = []

        def fetch(url):
            calls.append(url)
            if len(calls) == 1:
                raise OSError("down")
            return json.dumps(WITH_K2).encode()

        clock = Clock()
        c = JwksCache("http://jwks.test/j", fetch=fetch, clock=clock)
        self.assertRaises(OSError, c.verify, BODY, UNKNOWN["headers"], **NOW)
        clock.t += 30
        self.assertRaises(OSError, c.verify, BODY, UNKNOWN["headers"], **NOW)
        self.assertEqual(len(calls), 1)
        clock.t += 30
        c.verify(BODY, UNKNOWN["headers"], **NOW)
        self.assertEqual(len(calls), 2)


class WebhookTest(unittest.TestCase):
    def test_picks_the_scheme_the_request_carries(self):
        v1, gifq, both = BY_NAME["standard-v1/valid"], BY_NAME["gifq/valid"], BY_NAME["v1a/v1a-beside-v1"]
        wh = Webhook(secrets=v1["secrets"], jwks=JwksCache("http://jwks.test/j", fetch=Server(both["jwks"])), now=lambda: float(v1["now"]))
        self.assertEqual(wh.verify(base64.b64decode(v1["body_base64"]), v1["headers"]), "standard-webhooks-v1")
        self.assertEqual(wh.verify(base64.b64decode(gifq["body_base64"]), gifq["headers"]), "x-gifq-signature")
        self.assertEqual(wh.verify(base64.b64decode(both["body_base64"]), both["headers"]), "standard-webhooks-v1a")
        bad = BY_NAME["gifq/tampered-body"]
        with self.assertRaises(WebhookVerificationError) as e:
            wh.verify(base64.b64decode(bad["body_base64"]), bad["headers"])
        self.assertEqual(e.exception.kind, "no_match")
        self.assertRaises(ValueError, Webhook)


if __name__ == "__main__":
    unittest.main()
