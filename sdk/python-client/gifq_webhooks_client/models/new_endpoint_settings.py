from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.endpoint_filter import EndpointFilter
    from ..models.endpoint_headers import EndpointHeaders
    from ..models.endpoint_o_auth_2 import EndpointOAuth2
    from ..models.endpoint_tls import EndpointTLS


T = TypeVar("T", bound="NewEndpointSettings")


@_attrs_define
class NewEndpointSettings:
    """Settings at registration. `rate_limit`: deliveries a second, at least 0.01 and at most the account's (422
    otherwise). `timeout_seconds`: 1 to 10, never longer than the deployment's DELIVERY_TIMEOUT. `headers`: up to 10,
    sent on every attempt; names are HTTP tokens, case-insensitive; Host, Content-Type, Content-Length, User-Agent, hop-
    by-hop headers, X-Gifq-* and webhook-* cannot be set (422 naming the header); values 1 to 1024 bytes, no control
    characters.

        Attributes:
            rate_limit (float | Unset):
            timeout_seconds (int | Unset):
            headers (EndpointHeaders | Unset):  Example: {'Authorization': 'Bearer gateway-token'}.
            filter_ (EndpointFilter | Unset): A content filter on the event's body (docs/endpoint-settings.md): an
                EventBridge-style pattern mirroring the body's nesting; each leaf a list of values or conditions (`prefix`,
                `numeric`, `exists`, `anything-but`), OR within a list, AND across fields. At most 4096 bytes, 32 fields, 5
                levels, 100 values (422 `invalid_filter` otherwise). `reset: ["filter"]` removes it. Example: {'data':
                {'payout_type': ['crypto'], 'amount': [{'numeric': ['>', 0, '<=', 500]}]}}.
            oauth2 (EndpointOAuth2 | Unset): OAuth 2.0 client credentials (RFC 6749 4.4): before each attempt the sender
                gets a bearer token from `token_url` (cached until 60 s before it expires) and sends it as `Authorization:
                Bearer`. Set as a whole. `token_url` passes the endpoint URL's rules (https in deployed stacks, no private
                address; 422). `client_secret` (or, for `private_key_jwt`, `private_key`: a PEM RSA 2048+ or EC P-256 key
                signing an RFC 7523 client assertion, RS256/ES256, `aud` the token URL, 60 s life, unique `jti`) is write-only
                and sealed at rest; required, except that a PATCH may leave it out to keep the current one for the same
                `client_id` and `token_url` origin. A PATCH that changes the endpoint URL's origin must give `oauth2` again or
                reset it (422 `oauth2_not_confirmed`).
            tls (EndpointTLS | Unset): Mutual TLS: a client certificate and its private key (PEM) the sender presents to the
                receiver, and a CA bundle (PEM) to trust for a receiver with a private certificate; either or both, set as a
                whole. The key is write-only and sealed at rest; a PATCH may leave it out to keep the current one for the same
                `client_cert`. 422 when the certificate and key are not a pair or the bundle holds no certificate.
            ordered (bool | Unset): Keyed events arrive one at a time per key, in sequence.
    """

    rate_limit: float | Unset = UNSET
    timeout_seconds: int | Unset = UNSET
    headers: EndpointHeaders | Unset = UNSET
    filter_: EndpointFilter | Unset = UNSET
    oauth2: EndpointOAuth2 | Unset = UNSET
    tls: EndpointTLS | Unset = UNSET
    ordered: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        rate_limit = self.rate_limit

        timeout_seconds = self.timeout_seconds

        headers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.headers, Unset):
            headers = self.headers.to_dict()

        filter_: dict[str, Any] | Unset = UNSET
        if not isinstance(self.filter_, Unset):
            filter_ = self.filter_.to_dict()

        oauth2: dict[str, Any] | Unset = UNSET
        if not isinstance(self.oauth2, Unset):
            oauth2 = self.oauth2.to_dict()

        tls: dict[str, Any] | Unset = UNSET
        if not isinstance(self.tls, Unset):
            tls = self.tls.to_dict()

        ordered = self.ordered

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if rate_limit is not UNSET:
            field_dict["rate_limit"] = rate_limit
        if timeout_seconds is not UNSET:
            field_dict["timeout_seconds"] = timeout_seconds
        if headers is not UNSET:
            field_dict["headers"] = headers
        if filter_ is not UNSET:
            field_dict["filter"] = filter_
        if oauth2 is not UNSET:
            field_dict["oauth2"] = oauth2
        if tls is not UNSET:
            field_dict["tls"] = tls
        if ordered is not UNSET:
            field_dict["ordered"] = ordered

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.endpoint_filter import EndpointFilter  # noqa: PLC0415
        from ..models.endpoint_headers import EndpointHeaders  # noqa: PLC0415
        from ..models.endpoint_o_auth_2 import EndpointOAuth2  # noqa: PLC0415
        from ..models.endpoint_tls import EndpointTLS  # noqa: PLC0415

        d = dict(src_dict)
        rate_limit = d.pop("rate_limit", UNSET)

        timeout_seconds = d.pop("timeout_seconds", UNSET)

        _headers = d.pop("headers", UNSET)
        headers: EndpointHeaders | Unset
        if isinstance(_headers, Unset):
            headers = UNSET
        else:
            headers = EndpointHeaders.from_dict(_headers)

        _filter_ = d.pop("filter", UNSET)
        filter_: EndpointFilter | Unset
        if isinstance(_filter_, Unset):
            filter_ = UNSET
        else:
            filter_ = EndpointFilter.from_dict(_filter_)

        _oauth2 = d.pop("oauth2", UNSET)
        oauth2: EndpointOAuth2 | Unset
        if isinstance(_oauth2, Unset):
            oauth2 = UNSET
        else:
            oauth2 = EndpointOAuth2.from_dict(_oauth2)

        _tls = d.pop("tls", UNSET)
        tls: EndpointTLS | Unset
        if isinstance(_tls, Unset):
            tls = UNSET
        else:
            tls = EndpointTLS.from_dict(_tls)

        ordered = d.pop("ordered", UNSET)

        new_endpoint_settings = cls(
            rate_limit=rate_limit,
            timeout_seconds=timeout_seconds,
            headers=headers,
            filter_=filter_,
            oauth2=oauth2,
            tls=tls,
            ordered=ordered,
        )

        return new_endpoint_settings
