"""Checked by mypy --strict (make sdk-test): the library's types fit the usual header objects."""

from http.server import BaseHTTPRequestHandler

from gifq_webhooks import JwksCache, Webhook, verify_gifq_signature, verify_standard


class Handler(BaseHTTPRequestHandler):
    wh = Webhook("whsec_x", jwks_url="http://127.0.0.1:8080/v1/accounts/acct_1/jwks.json")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        scheme: str = self.wh.verify(body, self.headers)
        verify_standard(body, {"webhook-id": "x"}, ["whsec_x"], tolerance=600)
        verify_gifq_signature(body, self.headers.get("X-Gifq-Signature"), ["whsec_x"], now=lambda: 0.0)
        JwksCache("http://127.0.0.1/jwks.json").keys()
        print(scheme)
