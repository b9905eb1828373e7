from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.accepted_event_deliveries_item import AcceptedEventDeliveriesItem


T = TypeVar("T", bound="AcceptedEvent")


@_attrs_define
class AcceptedEvent:
    """
    Example:
        {'id': 'evt_01M8NHFFVCFQ74KQHZWNC6B1MM', 'event': 'payout.fulfilled', 'received_at': '2026-12-01T08:00:00.123Z',
            'deliveries': [{'id': 'dlv_01M8NHFFVCQ2K0R6WZ5QH3J1XA', 'endpoint_id': 'ep_01M8NHFFVSXRY4XPHP9AET0VWJ',
            'status': 'pending'}]}

    Attributes:
        id (str):  Example: evt_01M8NHFFVCFQ74KQHZWNC6B1MM.
        event (str):
        received_at (datetime.datetime):
        deliveries (list[AcceptedEventDeliveriesItem]):
    """

    id: str
    event: str
    received_at: datetime.datetime
    deliveries: list[AcceptedEventDeliveriesItem]

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        event = self.event

        received_at = self.received_at.isoformat()

        deliveries = []
        for deliveries_item_data in self.deliveries:
            deliveries_item = deliveries_item_data.to_dict()
            deliveries.append(deliveries_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "event": event,
                "received_at": received_at,
                "deliveries": deliveries,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.accepted_event_deliveries_item import AcceptedEventDeliveriesItem  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        event = d.pop("event")

        received_at = datetime.datetime.fromisoformat(d.pop("received_at"))

        deliveries = []
        _deliveries = d.pop("deliveries")
        for deliveries_item_data in _deliveries:
            deliveries_item = AcceptedEventDeliveriesItem.from_dict(deliveries_item_data)

            deliveries.append(deliveries_item)

        accepted_event = cls(
            id=id,
            event=event,
            received_at=received_at,
            deliveries=deliveries,
        )

        return accepted_event
