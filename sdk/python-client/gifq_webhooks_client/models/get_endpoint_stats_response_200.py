from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.get_endpoint_stats_response_200_window import GetEndpointStatsResponse200Window

if TYPE_CHECKING:
    from ..models.get_endpoint_stats_response_200_latency_ms import GetEndpointStatsResponse200LatencyMs
    from ..models.get_endpoint_stats_response_200_series_item import GetEndpointStatsResponse200SeriesItem
    from ..models.get_endpoint_stats_response_200_status_classes import GetEndpointStatsResponse200StatusClasses


T = TypeVar("T", bound="GetEndpointStatsResponse200")


@_attrs_define
class GetEndpointStatsResponse200:
    """
    Attributes:
        window (GetEndpointStatsResponse200Window):
        from_ (datetime.datetime):
        to (datetime.datetime): The end of the current hour.
        attempts (int):
        delivered (int):
        failed (int):
        dead_lettered (int):
        success_rate (float | None): delivered / (delivered + failed); null when neither.
        latency_ms (GetEndpointStatsResponse200LatencyMs): Upper bounds of the latency buckets (50, 100, 250, 500, 1000,
            2500, 5000, 10000 ms) the quantiles fall in; 0 when no attempt.
        status_classes (GetEndpointStatsResponse200StatusClasses):
        series (list[GetEndpointStatsResponse200SeriesItem]):
    """

    window: GetEndpointStatsResponse200Window
    from_: datetime.datetime
    to: datetime.datetime
    attempts: int
    delivered: int
    failed: int
    dead_lettered: int
    success_rate: float | None
    latency_ms: GetEndpointStatsResponse200LatencyMs
    status_classes: GetEndpointStatsResponse200StatusClasses
    series: list[GetEndpointStatsResponse200SeriesItem]

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
        from ..models.get_endpoint_stats_response_200_latency_ms import GetEndpointStatsResponse200LatencyMs  # noqa: PLC0415
        from ..models.get_endpoint_stats_response_200_series_item import GetEndpointStatsResponse200SeriesItem  # noqa: PLC0415
        from ..models.get_endpoint_stats_response_200_status_classes import GetEndpointStatsResponse200StatusClasses  # noqa: PLC0415

        d = dict(src_dict)
        window = GetEndpointStatsResponse200Window(d.pop("window"))

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

        latency_ms = GetEndpointStatsResponse200LatencyMs.from_dict(d.pop("latency_ms"))

        status_classes = GetEndpointStatsResponse200StatusClasses.from_dict(d.pop("status_classes"))

        series = []
        _series = d.pop("series")
        for series_item_data in _series:
            series_item = GetEndpointStatsResponse200SeriesItem.from_dict(series_item_data)

            series.append(series_item)

        get_endpoint_stats_response_200 = cls(
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

        return get_endpoint_stats_response_200
