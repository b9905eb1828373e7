from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.delivery_status import DeliveryStatus

T = TypeVar("T", bound="AcceptedEventDeliveriesItem")


@_attrs_define
class AcceptedEventDeliveriesItem:
    """
    Attributes:
        id (str):
        endpoint_id (str):
        status (DeliveryStatus):
    """

    id: str
    endpoint_id: str
    status: DeliveryStatus

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        endpoint_id = self.endpoint_id

        status = self.status.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "endpoint_id": endpoint_id,
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        endpoint_id = d.pop("endpoint_id")

        status = DeliveryStatus(d.pop("status"))

        accepted_event_deliveries_item = cls(
            id=id,
            endpoint_id=endpoint_id,
            status=status,
        )

        return accepted_event_deliveries_item
