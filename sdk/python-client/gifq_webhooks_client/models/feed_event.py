from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.event_body import EventBody


T = TypeVar("T", bound="FeedEvent")


@_attrs_define
class FeedEvent:
    """
    Attributes:
        id (str):
        event (str):
        received_at (datetime.datetime):
        body (EventBody): The webhook body, delivered byte for byte. At most 256 KiB.
        idempotency_key (str | Unset):
    """

    id: str
    event: str
    received_at: datetime.datetime
    body: EventBody
    idempotency_key: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        event = self.event

        received_at = self.received_at.isoformat()

        body = self.body.to_dict()

        idempotency_key = self.idempotency_key

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "event": event,
                "received_at": received_at,
                "body": body,
            }
        )
        if idempotency_key is not UNSET:
            field_dict["idempotency_key"] = idempotency_key

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.event_body import EventBody  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        event = d.pop("event")

        received_at = datetime.datetime.fromisoformat(d.pop("received_at"))

        body = EventBody.from_dict(d.pop("body"))

        idempotency_key = d.pop("idempotency_key", UNSET)

        feed_event = cls(
            id=id,
            event=event,
            received_at=received_at,
            body=body,
            idempotency_key=idempotency_key,
        )

        return feed_event
