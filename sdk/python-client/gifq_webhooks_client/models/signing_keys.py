from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.signing_keys_data_item import SigningKeysDataItem


T = TypeVar("T", bound="SigningKeys")


@_attrs_define
class SigningKeys:
    """
    Attributes:
        data (list[SigningKeysDataItem]):
        jwks_path (str):  Example: /v1/accounts/acct_01M8NHFFVSXRY4XPHP9AET0VWJ/jwks.json.
    """

    data: list[SigningKeysDataItem]
    jwks_path: str

    def to_dict(self) -> dict[str, Any]:
        data = []
        for data_item_data in self.data:
            data_item = data_item_data.to_dict()
            data.append(data_item)

        jwks_path = self.jwks_path

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "data": data,
                "jwks_path": jwks_path,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.signing_keys_data_item import SigningKeysDataItem  # noqa: PLC0415

        d = dict(src_dict)
        data = []
        _data = d.pop("data")
        for data_item_data in _data:
            data_item = SigningKeysDataItem.from_dict(data_item_data)

            data.append(data_item)

        jwks_path = d.pop("jwks_path")

        signing_keys = cls(
            data=data,
            jwks_path=jwks_path,
        )

        return signing_keys
