from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.delivery_fields_attempts_order import DeliveryFieldsAttemptsOrder
from ..models.delivery_status import DeliveryStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.attempt import Attempt


T = TypeVar("T", bound="DeliveryWithAttempts")


@_attrs_define
class DeliveryWithAttempts:
    """
    Attributes:
        id (str):
        event_id (str):
        endpoint_id (str):
        event (str):
        status (DeliveryStatus):
        attempt_count (int):
        series (int):
        created_at (datetime.datetime):
        attempts (list[Attempt]):
        next_attempt_at (datetime.datetime | Unset):
        last_attempt_at (datetime.datetime | Unset):
        last_status (int | Unset):
        last_error (str | Unset):
        fail_reason (str | Unset):
        updated_at (datetime.datetime | Unset):
        delivered_at (datetime.datetime | Unset):
        failed_at (datetime.datetime | Unset):
        attempts_order (DeliveryFieldsAttemptsOrder | Unset): One delivery's view only (`GET /v1/deliveries/{id}`): its
            attempts are its newest 20, newest first.
        attempts_next_cursor (str | Unset): When a delivery has more attempts than its view shows (one delivery's view:
            the newest
            20; an event's view: each delivery's newest 10, oldest first): the cursor of the older
            ones for `GET /v1/deliveries/{id}/attempts`.
    """

    id: str
    event_id: str
    endpoint_id: str
    event: str
    status: DeliveryStatus
    attempt_count: int
    series: int
    created_at: datetime.datetime
    attempts: list[Attempt]
    next_attempt_at: datetime.datetime | Unset = UNSET
    last_attempt_at: datetime.datetime | Unset = UNSET
    last_status: int | Unset = UNSET
    last_error: str | Unset = UNSET
    fail_reason: str | Unset = UNSET
    updated_at: datetime.datetime | Unset = UNSET
    delivered_at: datetime.datetime | Unset = UNSET
    failed_at: datetime.datetime | Unset = UNSET
    attempts_order: DeliveryFieldsAttemptsOrder | Unset = UNSET
    attempts_next_cursor: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        event_id = self.event_id

        endpoint_id = self.endpoint_id

        event = self.event

        status = self.status.value

        attempt_count = self.attempt_count

        series = self.series

        created_at = self.created_at.isoformat()

        attempts = []
        for attempts_item_data in self.attempts:
            attempts_item = attempts_item_data.to_dict()
            attempts.append(attempts_item)

        next_attempt_at: str | Unset = UNSET
        if not isinstance(self.next_attempt_at, Unset):
            next_attempt_at = self.next_attempt_at.isoformat()

        last_attempt_at: str | Unset = UNSET
        if not isinstance(self.last_attempt_at, Unset):
            last_attempt_at = self.last_attempt_at.isoformat()

        last_status = self.last_status

        last_error = self.last_error

        fail_reason = self.fail_reason

        updated_at: str | Unset = UNSET
        if not isinstance(self.updated_at, Unset):
            updated_at = self.updated_at.isoformat()

        delivered_at: str | Unset = UNSET
        if not isinstance(self.delivered_at, Unset):
            delivered_at = self.delivered_at.isoformat()

        failed_at: str | Unset = UNSET
        if not isinstance(self.failed_at, Unset):
            failed_at = self.failed_at.isoformat()

        attempts_order: str | Unset = UNSET
        if not isinstance(self.attempts_order, Unset):
            attempts_order = self.attempts_order.value

        attempts_next_cursor = self.attempts_next_cursor

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "event_id": event_id,
                "endpoint_id": endpoint_id,
                "event": event,
                "status": status,
                "attempt_count": attempt_count,
                "series": series,
                "created_at": created_at,
                "attempts": attempts,
            }
        )
        if next_attempt_at is not UNSET:
            field_dict["next_attempt_at"] = next_attempt_at
        if last_attempt_at is not UNSET:
            field_dict["last_attempt_at"] = last_attempt_at
        if last_status is not UNSET:
            field_dict["last_status"] = last_status
        if last_error is not UNSET:
            field_dict["last_error"] = last_error
        if fail_reason is not UNSET:
            field_dict["fail_reason"] = fail_reason
        if updated_at is not UNSET:
            field_dict["updated_at"] = updated_at
        if delivered_at is not UNSET:
            field_dict["delivered_at"] = delivered_at
        if failed_at is not UNSET:
            field_dict["failed_at"] = failed_at
        if attempts_order is not UNSET:
            field_dict["attempts_order"] = attempts_order
        if attempts_next_cursor is not UNSET:
            field_dict["attempts_next_cursor"] = attempts_next_cursor

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attempt import Attempt  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        event_id = d.pop("event_id")

        endpoint_id = d.pop("endpoint_id")

        event = d.pop("event")

        status = DeliveryStatus(d.pop("status"))

        attempt_count = d.pop("attempt_count")

        series = d.pop("series")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        attempts = []
        _attempts = d.pop("attempts")
        for attempts_item_data in _attempts:
            attempts_item = Attempt.from_dict(attempts_item_data)

            attempts.append(attempts_item)

        _next_attempt_at = d.pop("next_attempt_at", UNSET)
        next_attempt_at: datetime.datetime | Unset
        if isinstance(_next_attempt_at, Unset):
            next_attempt_at = UNSET
        else:
            next_attempt_at = datetime.datetime.fromisoformat(_next_attempt_at)

        _last_attempt_at = d.pop("last_attempt_at", UNSET)
        last_attempt_at: datetime.datetime | Unset
        if isinstance(_last_attempt_at, Unset):
            last_attempt_at = UNSET
        else:
            last_attempt_at = datetime.datetime.fromisoformat(_last_attempt_at)

        last_status = d.pop("last_status", UNSET)

        last_error = d.pop("last_error", UNSET)

        fail_reason = d.pop("fail_reason", UNSET)

        _updated_at = d.pop("updated_at", UNSET)
        updated_at: datetime.datetime | Unset
        if isinstance(_updated_at, Unset):
            updated_at = UNSET
        else:
            updated_at = datetime.datetime.fromisoformat(_updated_at)

        _delivered_at = d.pop("delivered_at", UNSET)
        delivered_at: datetime.datetime | Unset
        if isinstance(_delivered_at, Unset):
            delivered_at = UNSET
        else:
            delivered_at = datetime.datetime.fromisoformat(_delivered_at)

        _failed_at = d.pop("failed_at", UNSET)
        failed_at: datetime.datetime | Unset
        if isinstance(_failed_at, Unset):
            failed_at = UNSET
        else:
            failed_at = datetime.datetime.fromisoformat(_failed_at)

        _attempts_order = d.pop("attempts_order", UNSET)
        attempts_order: DeliveryFieldsAttemptsOrder | Unset
        if isinstance(_attempts_order, Unset):
            attempts_order = UNSET
        else:
            attempts_order = DeliveryFieldsAttemptsOrder(_attempts_order)

        attempts_next_cursor = d.pop("attempts_next_cursor", UNSET)

        delivery_with_attempts = cls(
            id=id,
            event_id=event_id,
            endpoint_id=endpoint_id,
            event=event,
            status=status,
            attempt_count=attempt_count,
            series=series,
            created_at=created_at,
            attempts=attempts,
            next_attempt_at=next_attempt_at,
            last_attempt_at=last_attempt_at,
            last_status=last_status,
            last_error=last_error,
            fail_reason=fail_reason,
            updated_at=updated_at,
            delivered_at=delivered_at,
            failed_at=failed_at,
            attempts_order=attempts_order,
            attempts_next_cursor=attempts_next_cursor,
        )

        delivery_with_attempts.additional_properties = d
        return delivery_with_attempts

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
