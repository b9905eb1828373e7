from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.test_filter_response_200_body import TestFilterResponse200Body


T = TypeVar("T", bound="TestFilterResponse200")


@_attrs_define
class TestFilterResponse200:
    """
    Attributes:
        matches (bool):
        body (TestFilterResponse200Body):
    """

    matches: bool
    body: TestFilterResponse200Body

    def to_dict(self) -> dict[str, Any]:
        matches = self.matches

        body = self.body.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "matches": matches,
                "body": body,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.test_filter_response_200_body import TestFilterResponse200Body  # noqa: PLC0415

        d = dict(src_dict)
        matches = d.pop("matches")

        body = TestFilterResponse200Body.from_dict(d.pop("body"))

        test_filter_response_200 = cls(
            matches=matches,
            body=body,
        )

        return test_filter_response_200
