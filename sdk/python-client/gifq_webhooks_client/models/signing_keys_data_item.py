from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="SigningKeysDataItem")


@_attrs_define
class SigningKeysDataItem:
    """
    Attributes:
        kid (str):  Example: sigkey_01M8NHFFVSXRY4XPHP9AET0VWJ.
        public_key (str): The Standard Webhooks form, `whpk_` + base64 of the 32-byte key.
        created_at (datetime.datetime):
        retires_at (datetime.datetime | Unset): Set on a rotated-out key; published and signing until then.
    """

    kid: str
    public_key: str
    created_at: datetime.datetime
    retires_at: datetime.datetime | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        kid = self.kid

        public_key = self.public_key

        created_at = self.created_at.isoformat()

        retires_at: str | Unset = UNSET
        if not isinstance(self.retires_at, Unset):
            retires_at = self.retires_at.isoformat()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "kid": kid,
                "public_key": public_key,
                "created_at": created_at,
            }
        )
        if retires_at is not UNSET:
            field_dict["retires_at"] = retires_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kid = d.pop("kid")

        public_key = d.pop("public_key")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        _retires_at = d.pop("retires_at", UNSET)
        retires_at: datetime.datetime | Unset
        if isinstance(_retires_at, Unset):
            retires_at = UNSET
        else:
            retires_at = datetime.datetime.fromisoformat(_retires_at)

        signing_keys_data_item = cls(
            kid=kid,
            public_key=public_key,
            created_at=created_at,
            retires_at=retires_at,
        )

        return signing_keys_data_item
