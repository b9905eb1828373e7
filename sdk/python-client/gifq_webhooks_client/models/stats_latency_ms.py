from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="StatsLatencyMs")


@_attrs_define
class StatsLatencyMs:
    """Upper bounds of the latency buckets (50, 100, 250, 500, 1000, 2500, 5000, 10000 ms) the quantiles fall in; 0 when no
    attempt.

        Attributes:
            p50 (int):
            p99 (int):
    """

    p50: int
    p99: int

    def to_dict(self) -> dict[str, Any]:
        p50 = self.p50

        p99 = self.p99

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "p50": p50,
                "p99": p99,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        p50 = d.pop("p50")

        p99 = d.pop("p99")

        stats_latency_ms = cls(
            p50=p50,
            p99=p99,
        )

        return stats_latency_ms
