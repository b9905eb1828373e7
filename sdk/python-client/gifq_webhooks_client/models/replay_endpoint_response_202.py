from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ReplayEndpointResponse202")


@_attrs_define
class ReplayEndpointResponse202:
    """
    Attributes:
        scanned (int): Events of the window looked at.
        replayed (int): Deliveries made and queued.
        skipped (int): Events that got a delivery to the endpoint meanwhile, expired, or expire within the hour (their
            delivery would fail as `event_expired` at once).
        more (bool):
        next_cursor (str | Unset): Given when `more`: send it as `cursor`.
    """

    scanned: int
    replayed: int
    skipped: int
    more: bool
    next_cursor: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        scanned = self.scanned

        replayed = self.replayed

        skipped = self.skipped

        more = self.more

        next_cursor = self.next_cursor

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "scanned": scanned,
                "replayed": replayed,
                "skipped": skipped,
                "more": more,
            }
        )
        if next_cursor is not UNSET:
            field_dict["next_cursor"] = next_cursor

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        scanned = d.pop("scanned")

        replayed = d.pop("replayed")

        skipped = d.pop("skipped")

        more = d.pop("more")

        next_cursor = d.pop("next_cursor", UNSET)

        replay_endpoint_response_202 = cls(
            scanned=scanned,
            replayed=replayed,
            skipped=skipped,
            more=more,
            next_cursor=next_cursor,
        )

        return replay_endpoint_response_202
