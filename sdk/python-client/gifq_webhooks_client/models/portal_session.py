from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.portal_session_status import PortalSessionStatus
from ..types import UNSET, Unset

T = TypeVar("T", bound="PortalSession")


@_attrs_define
class PortalSession:
    """
    Attributes:
        id (str):  Example: ps_01M8NHFFVSXRY4XPHP9AET0VWJ.
        read_only (bool):
        status (PortalSessionStatus):
        created_at (datetime.datetime):
        expires_at (datetime.datetime):
        key_id (str | Unset): The API key that minted it; revoking the key ends the session.
        revoked_at (datetime.datetime | Unset):
    """

    id: str
    read_only: bool
    status: PortalSessionStatus
    created_at: datetime.datetime
    expires_at: datetime.datetime
    key_id: str | Unset = UNSET
    revoked_at: datetime.datetime | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        read_only = self.read_only

        status = self.status.value

        created_at = self.created_at.isoformat()

        expires_at = self.expires_at.isoformat()

        key_id = self.key_id

        revoked_at: str | Unset = UNSET
        if not isinstance(self.revoked_at, Unset):
            revoked_at = self.revoked_at.isoformat()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "read_only": read_only,
                "status": status,
                "created_at": created_at,
                "expires_at": expires_at,
            }
        )
        if key_id is not UNSET:
            field_dict["key_id"] = key_id
        if revoked_at is not UNSET:
            field_dict["revoked_at"] = revoked_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        read_only = d.pop("read_only")

        status = PortalSessionStatus(d.pop("status"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        expires_at = datetime.datetime.fromisoformat(d.pop("expires_at"))

        key_id = d.pop("key_id", UNSET)

        _revoked_at = d.pop("revoked_at", UNSET)
        revoked_at: datetime.datetime | Unset
        if isinstance(_revoked_at, Unset):
            revoked_at = UNSET
        else:
            revoked_at = datetime.datetime.fromisoformat(_revoked_at)

        portal_session = cls(
            id=id,
            read_only=read_only,
            status=status,
            created_at=created_at,
            expires_at=expires_at,
            key_id=key_id,
            revoked_at=revoked_at,
        )

        return portal_session
