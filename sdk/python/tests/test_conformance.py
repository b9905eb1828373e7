"""Every fixture of sdk/conformance/fixtures.json (made by shared/signing) reaches its result."""

import base64
import json
import pathlib
import unittest

from gifq_webhooks import WebhookVerificationError, parse_jwks, verify_gifq_signature, verify_standard, verify_standard_v1a

FIXTURES = json.loads((pathlib.Path(__file__).parents[2] / "conformance" / "fixtures.json").read_text("utf-8"))


def run(fx):
    body = base64.b64decode(fx["body_base64"])
    opts = {"tolerance": fx.get("tolerance_seconds"), "now": lambda: float(fx["now"])}
    headers = fx["headers"]
    scheme = fx["scheme"]
    if scheme == "x-gifq-signature":
        return verify_gifq_signature(body, headers.get("X-Gifq-Signature"), fx.get("secrets") or [], **opts)
    if scheme == "standard-webhooks-v1":
        return verify_standard(body, headers, fx.get("secrets") or [], **opts)
    if scheme == "standard-webhooks-v1a":
        return verify_standard_v1a(body, headers, parse_jwks(fx["jwks"]), **opts)
    raise AssertionError("unknown scheme " + scheme)


class Conformance(unittest.TestCase):
    def test_fixtures(self):
        self.assertGreaterEqual(len(FIXTURES["fixtures"]), 40)
        for fx in FIXTURES["fixtures"]:
            with self.subTest(fx["name"]):
                try:
                    run(fx)
                    got = "ok"
                except WebhookVerificationError as e:
                    got = e.kind
                self.assertEqual(got, fx["expected"], fx["description"])


if __name__ == "__main__":
    unittest.main()
