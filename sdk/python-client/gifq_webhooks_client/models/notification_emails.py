from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="NotificationEmails")


@_attrs_define
class NotificationEmails:
    """
    Attributes:
        emails (list[str]):
    """

    emails: list[str]

    def to_dict(self) -> dict[str, Any]:
        emails = self.emails

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "emails": emails,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        emails = cast(list[str], d.pop("emails"))

        notification_emails = cls(
            emails=emails,
        )

        return notification_emails
