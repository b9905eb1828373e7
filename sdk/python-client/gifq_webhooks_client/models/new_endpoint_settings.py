from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.endpoint_filter import EndpointFilter
    from ..models.endpoint_headers import EndpointHeaders


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
            ordered (bool | Unset): Keyed events arrive one at a time per key, in sequence.
    """

    rate_limit: float | Unset = UNSET
    timeout_seconds: int | Unset = UNSET
    headers: EndpointHeaders | Unset = UNSET
    filter_: EndpointFilter | Unset = UNSET
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
        if ordered is not UNSET:
            field_dict["ordered"] = ordered

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.endpoint_filter import EndpointFilter  # noqa: PLC0415
        from ..models.endpoint_headers import EndpointHeaders  # noqa: PLC0415

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

        ordered = d.pop("ordered", UNSET)

        new_endpoint_settings = cls(
            rate_limit=rate_limit,
            timeout_seconds=timeout_seconds,
            headers=headers,
            filter_=filter_,
            ordered=ordered,
        )

        return new_endpoint_settings
