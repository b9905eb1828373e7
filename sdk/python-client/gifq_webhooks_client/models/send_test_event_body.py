from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="SendTestEventBody")


@_attrs_define
class SendTestEventBody:
    """
    Attributes:
        event_type (str | Unset):
    """

    event_type: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        event_type = self.event_type

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if event_type is not UNSET:
            field_dict["event_type"] = event_type

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        event_type = d.pop("event_type", UNSET)

        send_test_event_body = cls(
            event_type=event_type,
        )

        return send_test_event_body
