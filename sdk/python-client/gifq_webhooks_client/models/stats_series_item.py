from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="StatsSeriesItem")


@_attrs_define
class StatsSeriesItem:
    """
    Attributes:
        hour (datetime.datetime):
        attempts (int):
        delivered (int):
        failed (int):
        dead_lettered (int):
    """

    hour: datetime.datetime
    attempts: int
    delivered: int
    failed: int
    dead_lettered: int

    def to_dict(self) -> dict[str, Any]:
        hour = self.hour.isoformat()

        attempts = self.attempts

        delivered = self.delivered

        failed = self.failed

        dead_lettered = self.dead_lettered

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "hour": hour,
                "attempts": attempts,
                "delivered": delivered,
                "failed": failed,
                "dead_lettered": dead_lettered,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        hour = datetime.datetime.fromisoformat(d.pop("hour"))

        attempts = d.pop("attempts")

        delivered = d.pop("delivered")

        failed = d.pop("failed")

        dead_lettered = d.pop("dead_lettered")

        stats_series_item = cls(
            hour=hour,
            attempts=attempts,
            delivered=delivered,
            failed=failed,
            dead_lettered=dead_lettered,
        )

        return stats_series_item
