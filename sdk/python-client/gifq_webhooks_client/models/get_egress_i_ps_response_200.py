from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="GetEgressIPsResponse200")


@_attrs_define
class GetEgressIPsResponse200:
    """
    Attributes:
        ips (list[str]):
    """

    ips: list[str]

    def to_dict(self) -> dict[str, Any]:
        ips = self.ips

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "ips": ips,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        ips = cast(list[str], d.pop("ips"))

        get_egress_i_ps_response_200 = cls(
            ips=ips,
        )

        return get_egress_i_ps_response_200
