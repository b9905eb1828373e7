from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="RecoverEndpointResponse202")


@_attrs_define
class RecoverEndpointResponse202:
    """
    Attributes:
        recovered (int):
        more (bool):
        filtered (int | Unset):
        next_cursor (str | Unset):
    """

    recovered: int
    more: bool
    filtered: int | Unset = UNSET
    next_cursor: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        recovered = self.recovered

        more = self.more

        filtered = self.filtered

        next_cursor = self.next_cursor

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "recovered": recovered,
                "more": more,
            }
        )
        if filtered is not UNSET:
            field_dict["filtered"] = filtered
        if next_cursor is not UNSET:
            field_dict["next_cursor"] = next_cursor

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        recovered = d.pop("recovered")

        more = d.pop("more")

        filtered = d.pop("filtered", UNSET)

        next_cursor = d.pop("next_cursor", UNSET)

        recover_endpoint_response_202 = cls(
            recovered=recovered,
            more=more,
            filtered=filtered,
            next_cursor=next_cursor,
        )

        return recover_endpoint_response_202
