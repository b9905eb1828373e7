from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.delivery_with_attempts import DeliveryWithAttempts
    from ..models.event_body import EventBody


T = TypeVar("T", bound="Event")


@_attrs_define
class Event:
    """
    Attributes:
        id (str):
        event (str):
        received_at (datetime.datetime):
        body (EventBody): The webhook body, delivered byte for byte. At most 256 KiB.
        deliveries (list[DeliveryWithAttempts]):
        idempotency_key (str | Unset):
        ordering_key (str | Unset): Its Ordering-Key, if it was posted with one.
        sequence (int | Unset): With ordering_key: its number in the key's sequence (X-Gifq-Sequence).
    """

    id: str
    event: str
    received_at: datetime.datetime
    body: EventBody
    deliveries: list[DeliveryWithAttempts]
    idempotency_key: str | Unset = UNSET
    ordering_key: str | Unset = UNSET
    sequence: int | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        event = self.event

        received_at = self.received_at.isoformat()

        body = self.body.to_dict()

        deliveries = []
        for deliveries_item_data in self.deliveries:
            deliveries_item = deliveries_item_data.to_dict()
            deliveries.append(deliveries_item)

        idempotency_key = self.idempotency_key

        ordering_key = self.ordering_key

        sequence = self.sequence

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "event": event,
                "received_at": received_at,
                "body": body,
                "deliveries": deliveries,
            }
        )
        if idempotency_key is not UNSET:
            field_dict["idempotency_key"] = idempotency_key
        if ordering_key is not UNSET:
            field_dict["ordering_key"] = ordering_key
        if sequence is not UNSET:
            field_dict["sequence"] = sequence

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.delivery_with_attempts import DeliveryWithAttempts  # noqa: PLC0415
        from ..models.event_body import EventBody  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        event = d.pop("event")

        received_at = datetime.datetime.fromisoformat(d.pop("received_at"))

        body = EventBody.from_dict(d.pop("body"))

        deliveries = []
        _deliveries = d.pop("deliveries")
        for deliveries_item_data in _deliveries:
            deliveries_item = DeliveryWithAttempts.from_dict(deliveries_item_data)

            deliveries.append(deliveries_item)

        idempotency_key = d.pop("idempotency_key", UNSET)

        ordering_key = d.pop("ordering_key", UNSET)

        sequence = d.pop("sequence", UNSET)

        event = cls(
            id=id,
            event=event,
            received_at=received_at,
            body=body,
            deliveries=deliveries,
            idempotency_key=idempotency_key,
            ordering_key=ordering_key,
            sequence=sequence,
        )

        return event
