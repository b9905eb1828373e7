from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.stats_window import StatsWindow

if TYPE_CHECKING:
    from ..models.stats_latency_ms import StatsLatencyMs
    from ..models.stats_series_item import StatsSeriesItem
    from ..models.stats_status_classes import StatsStatusClasses


T = TypeVar("T", bound="Stats")


@_attrs_define
class Stats:
    """The window's counters added up, and its hourly series, oldest first.

    Attributes:
        window (StatsWindow):
        from_ (datetime.datetime):
        to (datetime.datetime): The end of the current hour.
        attempts (int):
        delivered (int):
        failed (int):
        dead_lettered (int):
        success_rate (float | None): delivered / (delivered + failed); null when neither.
        latency_ms (StatsLatencyMs): Upper bounds of the latency buckets (50, 100, 250, 500, 1000, 2500, 5000, 10000 ms)
            the quantiles fall in; 0 when no attempt.
        status_classes (StatsStatusClasses):
        series (list[StatsSeriesItem]):
    """

    window: StatsWindow
    from_: datetime.datetime
    to: datetime.datetime
    attempts: int
    delivered: int
    failed: int
    dead_lettered: int
    success_rate: float | None
    latency_ms: StatsLatencyMs
    status_classes: StatsStatusClasses
    series: list[StatsSeriesItem]

    def to_dict(self) -> dict[str, Any]:
        window = self.window.value

        from_ = self.from_.isoformat()

        to = self.to.isoformat()

        attempts = self.attempts

        delivered = self.delivered

        failed = self.failed

        dead_lettered = self.dead_lettered

        success_rate: float | None
        success_rate = self.success_rate

        latency_ms = self.latency_ms.to_dict()

        status_classes = self.status_classes.to_dict()

        series = []
        for series_item_data in self.series:
            series_item = series_item_data.to_dict()
            series.append(series_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "window": window,
                "from": from_,
                "to": to,
                "attempts": attempts,
                "delivered": delivered,
                "failed": failed,
                "dead_lettered": dead_lettered,
                "success_rate": success_rate,
                "latency_ms": latency_ms,
                "status_classes": status_classes,
                "series": series,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.stats_latency_ms import StatsLatencyMs  # noqa: PLC0415
        from ..models.stats_series_item import StatsSeriesItem  # noqa: PLC0415
        from ..models.stats_status_classes import StatsStatusClasses  # noqa: PLC0415

        d = dict(src_dict)
        window = StatsWindow(d.pop("window"))

        from_ = datetime.datetime.fromisoformat(d.pop("from"))

        to = datetime.datetime.fromisoformat(d.pop("to"))

        attempts = d.pop("attempts")

        delivered = d.pop("delivered")

        failed = d.pop("failed")

        dead_lettered = d.pop("dead_lettered")

        def _parse_success_rate(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        success_rate = _parse_success_rate(d.pop("success_rate"))

        latency_ms = StatsLatencyMs.from_dict(d.pop("latency_ms"))

        status_classes = StatsStatusClasses.from_dict(d.pop("status_classes"))

        series = []
        _series = d.pop("series")
        for series_item_data in _series:
            series_item = StatsSeriesItem.from_dict(series_item_data)

            series.append(series_item)

        stats = cls(
            window=window,
            from_=from_,
            to=to,
            attempts=attempts,
            delivered=delivered,
            failed=failed,
            dead_lettered=dead_lettered,
            success_rate=success_rate,
            latency_ms=latency_ms,
            status_classes=status_classes,
            series=series,
        )

        return stats
