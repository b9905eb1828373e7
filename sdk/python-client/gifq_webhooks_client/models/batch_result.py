from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..models.batch_result_status import BatchResultStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.accepted_event import AcceptedEvent
    from ..models.error_detail import ErrorDetail


T = TypeVar("T", bound="BatchResult")


@_attrs_define
class BatchResult:
    """`event` when `status` is 202, `error` otherwise.

    Attributes:
        index (int):
        status (BatchResultStatus):
        replayed (bool | Unset): The first event of this idempotency key.
        event (AcceptedEvent | Unset):  Example: {'id': 'evt_01M8NHFFVCFQ74KQHZWNC6B1MM', 'event': 'payout.fulfilled',
            'received_at': '2026-12-01T08:00:00.123Z', 'deliveries': [{'id': 'dlv_01M8NHFFVCQ2K0R6WZ5QH3J1XA',
            'endpoint_id': 'ep_01M8NHFFVSXRY4XPHP9AET0VWJ', 'status': 'pending'}]}.
        error (ErrorDetail | Unset):
    """

    index: int
    status: BatchResultStatus
    replayed: bool | Unset = UNSET
    event: AcceptedEvent | Unset = UNSET
    error: ErrorDetail | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        index = self.index

        status = self.status.value

        replayed = self.replayed

        event: dict[str, Any] | Unset = UNSET
        if not isinstance(self.event, Unset):
            event = self.event.to_dict()

        error: dict[str, Any] | Unset = UNSET
        if not isinstance(self.error, Unset):
            error = self.error.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "index": index,
                "status": status,
            }
        )
        if replayed is not UNSET:
            field_dict["replayed"] = replayed
        if event is not UNSET:
            field_dict["event"] = event
        if error is not UNSET:
            field_dict["error"] = error

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.accepted_event import AcceptedEvent  # noqa: PLC0415
        from ..models.error_detail import ErrorDetail  # noqa: PLC0415

        d = dict(src_dict)
        index = d.pop("index")

        status = BatchResultStatus(d.pop("status"))

        replayed = d.pop("replayed", UNSET)

        _event = d.pop("event", UNSET)
        event: AcceptedEvent | Unset
        if isinstance(_event, Unset):
            event = UNSET
        else:
            event = AcceptedEvent.from_dict(_event)

        _error = d.pop("error", UNSET)
        error: ErrorDetail | Unset
        if isinstance(_error, Unset):
            error = UNSET
        else:
            error = ErrorDetail.from_dict(_error)

        batch_result = cls(
            index=index,
            status=status,
            replayed=replayed,
            event=event,
            error=error,
        )

        return batch_result
