from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="RecoverEndpointResponse202")


@_attrs_define
class RecoverEndpointResponse202:
    """
    Attributes:
        recovered (int):
        more (bool):
    """

    recovered: int
    more: bool

    def to_dict(self) -> dict[str, Any]:
        recovered = self.recovered

        more = self.more

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "recovered": recovered,
                "more": more,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        recovered = d.pop("recovered")

        more = d.pop("more")

        recover_endpoint_response_202 = cls(
            recovered=recovered,
            more=more,
        )

        return recover_endpoint_response_202
