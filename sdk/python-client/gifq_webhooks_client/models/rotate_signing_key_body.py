from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="RotateSigningKeyBody")


@_attrs_define
class RotateSigningKeyBody:
    """
    Attributes:
        overlap_seconds (int | Unset): How long the previous keys stay published and keep signing beside the new one
            (default 86400). 0 retires them at once (after a leak). At most two keys are live: a rotation with an overlap
            while the key the last rotation replaced still signs is 409 `previous_key_live` (naming when it retires) and
            changes nothing; 0 is always allowed.
    """

    overlap_seconds: int | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        overlap_seconds = self.overlap_seconds

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if overlap_seconds is not UNSET:
            field_dict["overlap_seconds"] = overlap_seconds

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        overlap_seconds = d.pop("overlap_seconds", UNSET)

        rotate_signing_key_body = cls(
            overlap_seconds=overlap_seconds,
        )

        return rotate_signing_key_body
