from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.attempt_kind import AttemptKind
from ..types import UNSET, Unset

T = TypeVar("T", bound="Attempt")


@_attrs_define
class Attempt:
    """
    Example:
        {'id': 'att_01M8NHFFVSXRY4XPHP9AET0VWJ', 'kind': 'auto', 'series': 1, 'number': 1, 'started_at':
            '2026-12-01T08:00:00.130Z', 'duration_ms': 84, 'status_code': 503, 'outcome': 'retry', 'response_body': 'busy'}

    Attributes:
        id (str):
        kind (AttemptKind): `auto`: an attempt of the automatic series; `manual`: a resend; `interrupted`: an
            attempt whose worker stopped before recording its result (the receiver may have seen it).
        series (int):
        started_at (datetime.datetime):
        duration_ms (int):
        outcome (str):
        number (int | Unset): Automatic attempts only.
        status_code (int | Unset):
        error_class (str | Unset): A transport failure instead of a status.
        error (str | Unset):
        response_body (str | Unset): The first 1 KiB of the answer.
        response_truncated (bool | Unset):
    """

    id: str
    kind: AttemptKind
    series: int
    started_at: datetime.datetime
    duration_ms: int
    outcome: str
    number: int | Unset = UNSET
    status_code: int | Unset = UNSET
    error_class: str | Unset = UNSET
    error: str | Unset = UNSET
    response_body: str | Unset = UNSET
    response_truncated: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        kind = self.kind.value

        series = self.series

        started_at = self.started_at.isoformat()

        duration_ms = self.duration_ms

        outcome = self.outcome

        number = self.number

        status_code = self.status_code

        error_class = self.error_class

        error = self.error

        response_body = self.response_body

        response_truncated = self.response_truncated

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "kind": kind,
                "series": series,
                "started_at": started_at,
                "duration_ms": duration_ms,
                "outcome": outcome,
            }
        )
        if number is not UNSET:
            field_dict["number"] = number
        if status_code is not UNSET:
            field_dict["status_code"] = status_code
        if error_class is not UNSET:
            field_dict["error_class"] = error_class
        if error is not UNSET:
            field_dict["error"] = error
        if response_body is not UNSET:
            field_dict["response_body"] = response_body
        if response_truncated is not UNSET:
            field_dict["response_truncated"] = response_truncated

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        kind = AttemptKind(d.pop("kind"))

        series = d.pop("series")

        started_at = datetime.datetime.fromisoformat(d.pop("started_at"))

        duration_ms = d.pop("duration_ms")

        outcome = d.pop("outcome")

        number = d.pop("number", UNSET)

        status_code = d.pop("status_code", UNSET)

        error_class = d.pop("error_class", UNSET)

        error = d.pop("error", UNSET)

        response_body = d.pop("response_body", UNSET)

        response_truncated = d.pop("response_truncated", UNSET)

        attempt = cls(
            id=id,
            kind=kind,
            series=series,
            started_at=started_at,
            duration_ms=duration_ms,
            outcome=outcome,
            number=number,
            status_code=status_code,
            error_class=error_class,
            error=error,
            response_body=response_body,
            response_truncated=response_truncated,
        )

        return attempt
