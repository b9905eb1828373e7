from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.breaker_state import BreakerState

T = TypeVar("T", bound="Breaker")


@_attrs_define
class Breaker:
    """The endpoint's circuit breaker, shown only while it is not closed: after 5 consecutive timeouts or connection
    failures it opens, and its deliveries wait without using attempts until `open_until`; then one attempt goes as the
    probe (`half_open`, then `probing` while it is in flight), and an answer closes it. Enabling the endpoint or
    changing its URL closes it too.

        Attributes:
            state (BreakerState):
            open_until (datetime.datetime):
    """

    state: BreakerState
    open_until: datetime.datetime

    def to_dict(self) -> dict[str, Any]:
        state = self.state.value

        open_until = self.open_until.isoformat()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "open_until": open_until,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        state = BreakerState(d.pop("state"))

        open_until = datetime.datetime.fromisoformat(d.pop("open_until"))

        breaker = cls(
            state=state,
            open_until=open_until,
        )

        return breaker
