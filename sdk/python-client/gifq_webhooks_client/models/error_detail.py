from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ErrorDetail")


@_attrs_define
class ErrorDetail:
    """
    Attributes:
        code (str): Stable; switch on this.
        message (str): For people.
        pointer (str | Unset): The JSON pointer of the refused value when a schema refused it (`""` is the whole
            document): `schema_mismatch`, `invalid_schema`, `invalid_example`.
    """

    code: str
    message: str
    pointer: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        code = self.code

        message = self.message

        pointer = self.pointer

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "code": code,
                "message": message,
            }
        )
        if pointer is not UNSET:
            field_dict["pointer"] = pointer

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        code = d.pop("code")

        message = d.pop("message")

        pointer = d.pop("pointer", UNSET)

        error_detail = cls(
            code=code,
            message=message,
            pointer=pointer,
        )

        return error_detail
