from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.get_account_stats_response_200_window import GetAccountStatsResponse200Window

if TYPE_CHECKING:
    from ..models.get_account_stats_response_200_latency_ms import GetAccountStatsResponse200LatencyMs
    from ..models.get_account_stats_response_200_series_item import GetAccountStatsResponse200SeriesItem
    from ..models.get_account_stats_response_200_status_classes import GetAccountStatsResponse200StatusClasses


T = TypeVar("T", bound="GetAccountStatsResponse200")


@_attrs_define
class GetAccountStatsResponse200:
    """
    Attributes:
        window (GetAccountStatsResponse200Window):
        from_ (datetime.datetime):
        to (datetime.datetime): The end of the current hour.
        attempts (int):
        delivered (int):
        failed (int):
        dead_lettered (int):
        success_rate (float | None): delivered / (delivered + failed); null when neither.
        latency_ms (GetAccountStatsResponse200LatencyMs): Upper bounds of the latency buckets (50, 100, 250, 500, 1000,
            2500, 5000, 10000 ms) the quantiles fall in; 0 when no attempt.
        status_classes (GetAccountStatsResponse200StatusClasses):
        series (list[GetAccountStatsResponse200SeriesItem]):
    """

    window: GetAccountStatsResponse200Window
    from_: datetime.datetime
    to: datetime.datetime
    attempts: int
    delivered: int
    failed: int
    dead_lettered: int
    success_rate: float | None
    latency_ms: GetAccountStatsResponse200LatencyMs
    status_classes: GetAccountStatsResponse200StatusClasses
    series: list[GetAccountStatsResponse200SeriesItem]

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
        from ..models.get_account_stats_response_200_latency_ms import GetAccountStatsResponse200LatencyMs  # noqa: PLC0415
        from ..models.get_account_stats_response_200_series_item import GetAccountStatsResponse200SeriesItem  # noqa: PLC0415
        from ..models.get_account_stats_response_200_status_classes import GetAccountStatsResponse200StatusClasses  # noqa: PLC0415

        d = dict(src_dict)
        window = GetAccountStatsResponse200Window(d.pop("window"))

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

        latency_ms = GetAccountStatsResponse200LatencyMs.from_dict(d.pop("latency_ms"))

        status_classes = GetAccountStatsResponse200StatusClasses.from_dict(d.pop("status_classes"))

        series = []
        _series = d.pop("series")
        for series_item_data in _series:
            series_item = GetAccountStatsResponse200SeriesItem.from_dict(series_item_data)

            series.append(series_item)

        get_account_stats_response_200 = cls(
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

        return get_account_stats_response_200
