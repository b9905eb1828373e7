from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.endpoint_filter import EndpointFilter
    from ..models.test_filter_body_body import TestFilterBodyBody


T = TypeVar("T", bound="TestFilterBody")


@_attrs_define
class TestFilterBody:
    """
    Attributes:
        filter_ (EndpointFilter): A content filter on the event's body (docs/endpoint-settings.md): an EventBridge-style
            pattern mirroring the body's nesting; each leaf a list of values or conditions (`prefix`, `numeric`, `exists`,
            `anything-but`), OR within a list, AND across fields. At most 4096 bytes, 32 fields, 5 levels, 100 values (422
            `invalid_filter` otherwise). `reset: ["filter"]` removes it. Example: {'data': {'payout_type': ['crypto'],
            'amount': [{'numeric': ['>', 0, '<=', 500]}]}}.
        event_type (str | Unset):
        body (TestFilterBodyBody | Unset):
    """

    filter_: EndpointFilter
    event_type: str | Unset = UNSET
    body: TestFilterBodyBody | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        filter_ = self.filter_.to_dict()

        event_type = self.event_type

        body: dict[str, Any] | Unset = UNSET
        if not isinstance(self.body, Unset):
            body = self.body.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "filter": filter_,
            }
        )
        if event_type is not UNSET:
            field_dict["event_type"] = event_type
        if body is not UNSET:
            field_dict["body"] = body

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.endpoint_filter import EndpointFilter  # noqa: PLC0415
        from ..models.test_filter_body_body import TestFilterBodyBody  # noqa: PLC0415

        d = dict(src_dict)
        filter_ = EndpointFilter.from_dict(d.pop("filter"))

        event_type = d.pop("event_type", UNSET)

        _body = d.pop("body", UNSET)
        body: TestFilterBodyBody | Unset
        if isinstance(_body, Unset):
            body = UNSET
        else:
            body = TestFilterBodyBody.from_dict(_body)

        test_filter_body = cls(
            filter_=filter_,
            event_type=event_type,
            body=body,
        )

        return test_filter_body
