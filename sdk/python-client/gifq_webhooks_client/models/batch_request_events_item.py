from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="BatchRequestEventsItem")


@_attrs_define
class BatchRequestEventsItem:
    """
    Attributes:
        body (Any): The event body, as `POST /v1/events` takes it (a JSON object with a string
            `event`, at most 256 KiB). Any other value is refused in its own result (400,
            413 or 422), not as a batch.
        idempotency_key (str | Unset): As the Idempotency-Key header of `POST /v1/events`: 1-255 printable ASCII
            characters, or the event is refused in its result (400 `invalid_idempotency_key`).
        ordering_key (str | Unset): As the Ordering-Key header of `POST /v1/events` (else 422 `invalid_ordering_key`
            in its result); a batch's events of one key are numbered in the batch's order.
    """

    body: Any
    idempotency_key: str | Unset = UNSET
    ordering_key: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        body = self.body

        idempotency_key = self.idempotency_key

        ordering_key = self.ordering_key

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "body": body,
            }
        )
        if idempotency_key is not UNSET:
            field_dict["idempotency_key"] = idempotency_key
        if ordering_key is not UNSET:
            field_dict["ordering_key"] = ordering_key

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        body = d.pop("body")

        idempotency_key = d.pop("idempotency_key", UNSET)

        ordering_key = d.pop("ordering_key", UNSET)

        batch_request_events_item = cls(
            body=body,
            idempotency_key=idempotency_key,
            ordering_key=ordering_key,
        )

        return batch_request_events_item
