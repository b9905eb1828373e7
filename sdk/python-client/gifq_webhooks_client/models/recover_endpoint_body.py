from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="RecoverEndpointBody")


@_attrs_define
class RecoverEndpointBody:
    """
    Attributes:
        since (datetime.datetime): RFC 3339; a malformed time is 422 `invalid_window` naming the field.
        until (datetime.datetime | Unset): Default now.
        cursor (str | Unset): The previous answer's `next_cursor` (422 `invalid_cursor` otherwise).
    """

    since: datetime.datetime
    until: datetime.datetime | Unset = UNSET
    cursor: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        since = self.since.isoformat()

        until: str | Unset = UNSET
        if not isinstance(self.until, Unset):
            until = self.until.isoformat()

        cursor = self.cursor

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "since": since,
            }
        )
        if until is not UNSET:
            field_dict["until"] = until
        if cursor is not UNSET:
            field_dict["cursor"] = cursor

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        since = datetime.datetime.fromisoformat(d.pop("since"))

        _until = d.pop("until", UNSET)
        until: datetime.datetime | Unset
        if isinstance(_until, Unset):
            until = UNSET
        else:
            until = datetime.datetime.fromisoformat(_until)

        cursor = d.pop("cursor", UNSET)

        recover_endpoint_body = cls(
            since=since,
            until=until,
            cursor=cursor,
        )

        return recover_endpoint_body
