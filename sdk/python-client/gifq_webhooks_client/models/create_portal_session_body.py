from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="CreatePortalSessionBody")


@_attrs_define
class CreatePortalSessionBody:
    """
    Attributes:
        ttl_seconds (int | Unset):
        read_only (bool | Unset):
    """

    ttl_seconds: int | Unset = UNSET
    read_only: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        ttl_seconds = self.ttl_seconds

        read_only = self.read_only

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if ttl_seconds is not UNSET:
            field_dict["ttl_seconds"] = ttl_seconds
        if read_only is not UNSET:
            field_dict["read_only"] = read_only

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        ttl_seconds = d.pop("ttl_seconds", UNSET)

        read_only = d.pop("read_only", UNSET)

        create_portal_session_body = cls(
            ttl_seconds=ttl_seconds,
            read_only=read_only,
        )

        return create_portal_session_body
