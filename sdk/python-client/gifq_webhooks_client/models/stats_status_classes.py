from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="StatsStatusClasses")


@_attrs_define
class StatsStatusClasses:
    """
    Attributes:
        field_2xx (int):
        field_3xx (int):
        field_4xx (int):
        field_5xx (int):
        network (int):
    """

    field_2xx: int
    field_3xx: int
    field_4xx: int
    field_5xx: int
    network: int

    def to_dict(self) -> dict[str, Any]:
        field_2xx = self.field_2xx

        field_3xx = self.field_3xx

        field_4xx = self.field_4xx

        field_5xx = self.field_5xx

        network = self.network

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "2xx": field_2xx,
                "3xx": field_3xx,
                "4xx": field_4xx,
                "5xx": field_5xx,
                "network": network,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        field_2xx = d.pop("2xx")

        field_3xx = d.pop("3xx")

        field_4xx = d.pop("4xx")

        field_5xx = d.pop("5xx")

        network = d.pop("network")

        stats_status_classes = cls(
            field_2xx=field_2xx,
            field_3xx=field_3xx,
            field_4xx=field_4xx,
            field_5xx=field_5xx,
            network=network,
        )

        return stats_status_classes
