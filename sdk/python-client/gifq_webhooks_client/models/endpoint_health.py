from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.endpoint_health_breaker import EndpointHealthBreaker
from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointHealth")


@_attrs_define
class EndpointHealth:
    """How the endpoint is doing (read-only). `breaker`: closed; open (its deliveries wait without using attempts until
    `breaker_open_until`); half_open (the pause is over, the next attempt is the probe); probing (the probe is in
    flight). `consecutive_failures`: timeouts or connection failures in a row counted toward opening the breaker (reset
    to 0 when it opens). `failing_since`: the first failure since the last success. `paused_until`: a receiver's Retry-
    After. The last failed attempt (`last_failure_at` with its HTTP status, or its error class when there was no answer)
    is recorded at most once a minute. Why an endpoint is disabled is its `disabled_reason`.

        Attributes:
            breaker (EndpointHealthBreaker):
            consecutive_failures (int):
            breaker_open_until (datetime.datetime | Unset):
            failing_since (datetime.datetime | Unset):
            paused_until (datetime.datetime | Unset):
            last_failure_at (datetime.datetime | Unset):
            last_failure_status (int | Unset):
            last_failure_error (str | Unset): timeout, connection_refused, tls, blocked_address, ...
    """

    breaker: EndpointHealthBreaker
    consecutive_failures: int
    breaker_open_until: datetime.datetime | Unset = UNSET
    failing_since: datetime.datetime | Unset = UNSET
    paused_until: datetime.datetime | Unset = UNSET
    last_failure_at: datetime.datetime | Unset = UNSET
    last_failure_status: int | Unset = UNSET
    last_failure_error: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        breaker = self.breaker.value

        consecutive_failures = self.consecutive_failures

        breaker_open_until: str | Unset = UNSET
        if not isinstance(self.breaker_open_until, Unset):
            breaker_open_until = self.breaker_open_until.isoformat()

        failing_since: str | Unset = UNSET
        if not isinstance(self.failing_since, Unset):
            failing_since = self.failing_since.isoformat()

        paused_until: str | Unset = UNSET
        if not isinstance(self.paused_until, Unset):
            paused_until = self.paused_until.isoformat()

        last_failure_at: str | Unset = UNSET
        if not isinstance(self.last_failure_at, Unset):
            last_failure_at = self.last_failure_at.isoformat()

        last_failure_status = self.last_failure_status

        last_failure_error = self.last_failure_error

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "breaker": breaker,
                "consecutive_failures": consecutive_failures,
            }
        )
        if breaker_open_until is not UNSET:
            field_dict["breaker_open_until"] = breaker_open_until
        if failing_since is not UNSET:
            field_dict["failing_since"] = failing_since
        if paused_until is not UNSET:
            field_dict["paused_until"] = paused_until
        if last_failure_at is not UNSET:
            field_dict["last_failure_at"] = last_failure_at
        if last_failure_status is not UNSET:
            field_dict["last_failure_status"] = last_failure_status
        if last_failure_error is not UNSET:
            field_dict["last_failure_error"] = last_failure_error

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        breaker = EndpointHealthBreaker(d.pop("breaker"))

        consecutive_failures = d.pop("consecutive_failures")

        _breaker_open_until = d.pop("breaker_open_until", UNSET)
        breaker_open_until: datetime.datetime | Unset
        if isinstance(_breaker_open_until, Unset):
            breaker_open_until = UNSET
        else:
            breaker_open_until = datetime.datetime.fromisoformat(_breaker_open_until)

        _failing_since = d.pop("failing_since", UNSET)
        failing_since: datetime.datetime | Unset
        if isinstance(_failing_since, Unset):
            failing_since = UNSET
        else:
            failing_since = datetime.datetime.fromisoformat(_failing_since)

        _paused_until = d.pop("paused_until", UNSET)
        paused_until: datetime.datetime | Unset
        if isinstance(_paused_until, Unset):
            paused_until = UNSET
        else:
            paused_until = datetime.datetime.fromisoformat(_paused_until)

        _last_failure_at = d.pop("last_failure_at", UNSET)
        last_failure_at: datetime.datetime | Unset
        if isinstance(_last_failure_at, Unset):
            last_failure_at = UNSET
        else:
            last_failure_at = datetime.datetime.fromisoformat(_last_failure_at)

        last_failure_status = d.pop("last_failure_status", UNSET)

        last_failure_error = d.pop("last_failure_error", UNSET)

        endpoint_health = cls(
            breaker=breaker,
            consecutive_failures=consecutive_failures,
            breaker_open_until=breaker_open_until,
            failing_since=failing_since,
            paused_until=paused_until,
            last_failure_at=last_failure_at,
            last_failure_status=last_failure_status,
            last_failure_error=last_failure_error,
        )

        return endpoint_health
