from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="CreatePortalSessionResponse201")


@_attrs_define
class CreatePortalSessionResponse201:
    """
    Attributes:
        id (str):  Example: ps_01M8NHFFVSXRY4XPHP9AET0VWJ.
        url (str): The portal page, with `#token=...` (and `&read_only=1`).
        read_only (bool):
        expires_at (datetime.datetime):
    """

    id: str
    url: str
    read_only: bool
    expires_at: datetime.datetime

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        url = self.url

        read_only = self.read_only

        expires_at = self.expires_at.isoformat()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "url": url,
                "read_only": read_only,
                "expires_at": expires_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        url = d.pop("url")

        read_only = d.pop("read_only")

        expires_at = datetime.datetime.fromisoformat(d.pop("expires_at"))

        create_portal_session_response_201 = cls(
            id=id,
            url=url,
            read_only=read_only,
            expires_at=expires_at,
        )

        return create_portal_session_response_201
