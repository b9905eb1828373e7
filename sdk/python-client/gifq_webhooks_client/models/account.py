from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="Account")


@_attrs_define
class Account:
    """
    Attributes:
        id (str):  Example: acct_01M8NHFFVSXRY4XPHP9AET0VWJ.
        name (str):
        aws_external_id (str):  Example: gifq-5f0c6a1e9b2d4c7a8e3f1a2b3c4d5e6f.
        notification_emails (list[str]):
    """

    id: str
    name: str
    aws_external_id: str
    notification_emails: list[str]

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        name = self.name

        aws_external_id = self.aws_external_id

        notification_emails = self.notification_emails

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "name": name,
                "aws_external_id": aws_external_id,
                "notification_emails": notification_emails,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        name = d.pop("name")

        aws_external_id = d.pop("aws_external_id")

        notification_emails = cast(list[str], d.pop("notification_emails"))

        account = cls(
            id=id,
            name=name,
            aws_external_id=aws_external_id,
            notification_emails=notification_emails,
        )

        return account
