from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="ResendDeliveryResponse202")


@_attrs_define
class ResendDeliveryResponse202:
    """
    Attributes:
        delivery_id (str):
        attempt_id (str):
        status (Literal['queued']):
    """

    delivery_id: str
    attempt_id: str
    status: Literal["queued"]

    def to_dict(self) -> dict[str, Any]:
        delivery_id = self.delivery_id

        attempt_id = self.attempt_id

        status = self.status

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "delivery_id": delivery_id,
                "attempt_id": attempt_id,
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        delivery_id = d.pop("delivery_id")

        attempt_id = d.pop("attempt_id")

        status = cast(Literal["queued"], d.pop("status"))
        if status != "queued":
            raise ValueError(f"status must match const 'queued', got '{status}'")

        resend_delivery_response_202 = cls(
            delivery_id=delivery_id,
            attempt_id=attempt_id,
            status=status,
        )

        return resend_delivery_response_202
