from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.error_detail import ErrorDetail


T = TypeVar("T", bound="Error")


@_attrs_define
class Error:
    """
    Example:
        {'error': {'code': 'not_found', 'message': 'no such endpoint'}}

    Attributes:
        error (ErrorDetail):
    """

    error: ErrorDetail

    def to_dict(self) -> dict[str, Any]:
        error = self.error.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "error": error,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.error_detail import ErrorDetail  # noqa: PLC0415

        d = dict(src_dict)
        error = ErrorDetail.from_dict(d.pop("error"))

        error = cls(
            error=error,
        )

        return error
