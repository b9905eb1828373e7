from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.endpoint_settings_patch_reset_item import EndpointSettingsPatchResetItem
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.endpoint_filter import EndpointFilter
    from ..models.endpoint_headers import EndpointHeaders
    from ..models.endpoint_o_auth_2 import EndpointOAuth2
    from ..models.endpoint_tls import EndpointTLS


T = TypeVar("T", bound="EndpointSettingsPatch")


@_attrs_define
class EndpointSettingsPatch:
    """A change of the settings: the fields given are set, the ones left out stay. `headers` adds or replaces the headers
    it names and keeps the others; `remove_headers` removes headers by name; `reset` sends `rate_limit` or
    `timeout_seconds` back to the account's or the deployment's, or removes every header. Reset and remove apply first.

        Attributes:
            rate_limit (float | Unset):
            timeout_seconds (int | Unset):
            headers (EndpointHeaders | Unset):  Example: {'Authorization': 'Bearer gateway-token'}.
            ordered (bool | Unset):
            remove_headers (list[str] | Unset):
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
            reset (list[EndpointSettingsPatchResetItem] | Unset):
    """

    rate_limit: float | Unset = UNSET
    timeout_seconds: int | Unset = UNSET
    headers: EndpointHeaders | Unset = UNSET
    ordered: bool | Unset = UNSET
    remove_headers: list[str] | Unset = UNSET
    filter_: EndpointFilter | Unset = UNSET
    oauth2: EndpointOAuth2 | Unset = UNSET
    tls: EndpointTLS | Unset = UNSET
    reset: list[EndpointSettingsPatchResetItem] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        rate_limit = self.rate_limit

        timeout_seconds = self.timeout_seconds

        headers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.headers, Unset):
            headers = self.headers.to_dict()

        ordered = self.ordered

        remove_headers: list[str] | Unset = UNSET
        if not isinstance(self.remove_headers, Unset):
            remove_headers = self.remove_headers

        filter_: dict[str, Any] | Unset = UNSET
        if not isinstance(self.filter_, Unset):
            filter_ = self.filter_.to_dict()

        oauth2: dict[str, Any] | Unset = UNSET
        if not isinstance(self.oauth2, Unset):
            oauth2 = self.oauth2.to_dict()

        tls: dict[str, Any] | Unset = UNSET
        if not isinstance(self.tls, Unset):
            tls = self.tls.to_dict()

        reset: list[str] | Unset = UNSET
        if not isinstance(self.reset, Unset):
            reset = []
            for reset_item_data in self.reset:
                reset_item = reset_item_data.value
                reset.append(reset_item)

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if rate_limit is not UNSET:
            field_dict["rate_limit"] = rate_limit
        if timeout_seconds is not UNSET:
            field_dict["timeout_seconds"] = timeout_seconds
        if headers is not UNSET:
            field_dict["headers"] = headers
        if ordered is not UNSET:
            field_dict["ordered"] = ordered
        if remove_headers is not UNSET:
            field_dict["remove_headers"] = remove_headers
        if filter_ is not UNSET:
            field_dict["filter"] = filter_
        if oauth2 is not UNSET:
            field_dict["oauth2"] = oauth2
        if tls is not UNSET:
            field_dict["tls"] = tls
        if reset is not UNSET:
            field_dict["reset"] = reset

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

        ordered = d.pop("ordered", UNSET)

        remove_headers = cast(list[str], d.pop("remove_headers", UNSET))

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

        _reset = d.pop("reset", UNSET)
        reset: list[EndpointSettingsPatchResetItem] | Unset = UNSET
        if _reset is not UNSET:
            reset = []
            for reset_item_data in _reset:
                reset_item = EndpointSettingsPatchResetItem(reset_item_data)

                reset.append(reset_item)

        endpoint_settings_patch = cls(
            rate_limit=rate_limit,
            timeout_seconds=timeout_seconds,
            headers=headers,
            ordered=ordered,
            remove_headers=remove_headers,
            filter_=filter_,
            oauth2=oauth2,
            tls=tls,
            reset=reset,
        )

        return endpoint_settings_patch
