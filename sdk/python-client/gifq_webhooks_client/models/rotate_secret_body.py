from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="RotateSecretBody")


@_attrs_define
class RotateSecretBody:
    """
    Attributes:
        expire_previous_after_seconds (int | Unset): How long the current secret keeps signing once replaced (default
            and most 86400; 0 stops it now).
        expire_previous_now (bool | Unset): Stop a previous secret that still signs now, instead of answering 409.
            Default: False.
    """

    expire_previous_after_seconds: int | Unset = UNSET
    expire_previous_now: bool | Unset = False

    def to_dict(self) -> dict[str, Any]:
        expire_previous_after_seconds = self.expire_previous_after_seconds

        expire_previous_now = self.expire_previous_now

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if expire_previous_after_seconds is not UNSET:
            field_dict["expire_previous_after_seconds"] = expire_previous_after_seconds
        if expire_previous_now is not UNSET:
            field_dict["expire_previous_now"] = expire_previous_now

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        expire_previous_after_seconds = d.pop("expire_previous_after_seconds", UNSET)

        expire_previous_now = d.pop("expire_previous_now", UNSET)

        rotate_secret_body = cls(
            expire_previous_after_seconds=expire_previous_after_seconds,
            expire_previous_now=expire_previous_now,
        )

        return rotate_secret_body
