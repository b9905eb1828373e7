from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.batch_result import BatchResult


T = TypeVar("T", bound="BatchAnswer")


@_attrs_define
class BatchAnswer:
    """
    Example:
        {'accepted': 1, 'refused': 1, 'results': [{'index': 0, 'status': 202, 'event': {'id':
            'evt_01M8NHFFVCFQ74KQHZWNC6B1MM', 'event': 'payout.fulfilled', 'received_at': '2026-12-01T08:00:00.123Z',
            'deliveries': []}}, {'index': 1, 'status': 422, 'error': {'code': 'invalid_event', 'message': 'the body has no
            string field "event"'}}]}

    Attributes:
        accepted (int):
        refused (int):
        results (list[BatchResult]):
    """

    accepted: int
    refused: int
    results: list[BatchResult]

    def to_dict(self) -> dict[str, Any]:
        accepted = self.accepted

        refused = self.refused

        results = []
        for results_item_data in self.results:
            results_item = results_item_data.to_dict()
            results.append(results_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "accepted": accepted,
                "refused": refused,
                "results": results,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.batch_result import BatchResult  # noqa: PLC0415

        d = dict(src_dict)
        accepted = d.pop("accepted")

        refused = d.pop("refused")

        results = []
        _results = d.pop("results")
        for results_item_data in _results:
            results_item = BatchResult.from_dict(results_item_data)

            results.append(results_item)

        batch_answer = cls(
            accepted=accepted,
            refused=refused,
            results=results,
        )

        return batch_answer
