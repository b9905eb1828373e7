from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.endpoint_filter import EndpointFilter
    from ..models.endpoint_o_auth_2_view import EndpointOAuth2View
    from ..models.endpoint_settings_headers import EndpointSettingsHeaders
    from ..models.endpoint_tls_view import EndpointTLSView


T = TypeVar("T", bound="EndpointSettings")


@_attrs_define
class EndpointSettings:
    """The endpoint's own delivery settings as its owner set them. A field left out is the account's rate or the
    deployment's timeout (DELIVERY_TIMEOUT). Header values are write-only: every answer shows them masked (`****`, plus
    the last 2 characters of a value of 12 or more).

        Attributes:
            headers (EndpointSettingsHeaders):
            rate_limit (float | Unset): Deliveries a second; at least 0.01 and at most the account's.
            timeout_seconds (int | Unset):
            filter_ (EndpointFilter | Unset): A content filter on the event's body (docs/endpoint-settings.md): an
                EventBridge-style pattern mirroring the body's nesting; each leaf a list of values or conditions (`prefix`,
                `numeric`, `exists`, `anything-but`), OR within a list, AND across fields. At most 4096 bytes, 32 fields, 5
                levels, 100 values (422 `invalid_filter` otherwise). `reset: ["filter"]` removes it. Example: {'data':
                {'payout_type': ['crypto'], 'amount': [{'numeric': ['>', 0, '<=', 500]}]}}.
            oauth2 (EndpointOAuth2View | Unset):
            tls (EndpointTLSView | Unset):
            ordered (bool | Unset): Keyed events (`Ordering-Key`) arrive one at a time per key, in sequence (docs/endpoint-
                settings.md). Left out: false.
    """

    headers: EndpointSettingsHeaders
    rate_limit: float | Unset = UNSET
    timeout_seconds: int | Unset = UNSET
    filter_: EndpointFilter | Unset = UNSET
    oauth2: EndpointOAuth2View | Unset = UNSET
    tls: EndpointTLSView | Unset = UNSET
    ordered: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        headers = self.headers.to_dict()

        rate_limit = self.rate_limit

        timeout_seconds = self.timeout_seconds

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

        field_dict.update(
            {
                "headers": headers,
            }
        )
        if rate_limit is not UNSET:
            field_dict["rate_limit"] = rate_limit
        if timeout_seconds is not UNSET:
            field_dict["timeout_seconds"] = timeout_seconds
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
        from ..models.endpoint_o_auth_2_view import EndpointOAuth2View  # noqa: PLC0415
        from ..models.endpoint_settings_headers import EndpointSettingsHeaders  # noqa: PLC0415
        from ..models.endpoint_tls_view import EndpointTLSView  # noqa: PLC0415

        d = dict(src_dict)
        headers = EndpointSettingsHeaders.from_dict(d.pop("headers"))

        rate_limit = d.pop("rate_limit", UNSET)

        timeout_seconds = d.pop("timeout_seconds", UNSET)

        _filter_ = d.pop("filter", UNSET)
        filter_: EndpointFilter | Unset
        if isinstance(_filter_, Unset):
            filter_ = UNSET
        else:
            filter_ = EndpointFilter.from_dict(_filter_)

        _oauth2 = d.pop("oauth2", UNSET)
        oauth2: EndpointOAuth2View | Unset
        if isinstance(_oauth2, Unset):
            oauth2 = UNSET
        else:
            oauth2 = EndpointOAuth2View.from_dict(_oauth2)

        _tls = d.pop("tls", UNSET)
        tls: EndpointTLSView | Unset
        if isinstance(_tls, Unset):
            tls = UNSET
        else:
            tls = EndpointTLSView.from_dict(_tls)

        ordered = d.pop("ordered", UNSET)

        endpoint_settings = cls(
            headers=headers,
            rate_limit=rate_limit,
            timeout_seconds=timeout_seconds,
            filter_=filter_,
            oauth2=oauth2,
            tls=tls,
            ordered=ordered,
        )

        return endpoint_settings
