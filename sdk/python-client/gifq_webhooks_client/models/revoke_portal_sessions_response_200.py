from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="RevokePortalSessionsResponse200")


@_attrs_define
class RevokePortalSessionsResponse200:
    """
    Attributes:
        revoked (int):
        more (bool):
    """

    revoked: int
    more: bool

    def to_dict(self) -> dict[str, Any]:
        revoked = self.revoked

        more = self.more

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "revoked": revoked,
                "more": more,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        revoked = d.pop("revoked")

        more = d.pop("more")

        revoke_portal_sessions_response_200 = cls(
            revoked=revoked,
            more=more,
        )

        return revoke_portal_sessions_response_200
