from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.event_type_example import EventTypeExample


T = TypeVar("T", bound="EventType")


@_attrs_define
class EventType:
    """
    Attributes:
        name (str): As an event's `event`. Example: payout.sent.
        description (str):
        deprecated (bool): Still validated and delivered; no new subscriptions.
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
        schema (Any | Unset): A JSON Schema (draft 2020-12; an object, or true or false), self-contained, at most 64
            KiB. Events of the type must pass it as a whole body.
        example (EventTypeExample | Unset): An event body of this type (its `event` is the type's name) that passes the
            schema; at most 64 KiB.
    """

    name: str
    description: str
    deprecated: bool
    created_at: datetime.datetime
    updated_at: datetime.datetime
    schema: Any | Unset = UNSET
    example: EventTypeExample | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        description = self.description

        deprecated = self.deprecated

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        schema = self.schema

        example: dict[str, Any] | Unset = UNSET
        if not isinstance(self.example, Unset):
            example = self.example.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "description": description,
                "deprecated": deprecated,
                "created_at": created_at,
                "updated_at": updated_at,
            }
        )
        if schema is not UNSET:
            field_dict["schema"] = schema
        if example is not UNSET:
            field_dict["example"] = example

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.event_type_example import EventTypeExample  # noqa: PLC0415

        d = dict(src_dict)
        name = d.pop("name")

        description = d.pop("description")

        deprecated = d.pop("deprecated")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        schema = d.pop("schema", UNSET)

        _example = d.pop("example", UNSET)
        example: EventTypeExample | Unset
        if isinstance(_example, Unset):
            example = UNSET
        else:
            example = EventTypeExample.from_dict(_example)

        event_type = cls(
            name=name,
            description=description,
            deprecated=deprecated,
            created_at=created_at,
            updated_at=updated_at,
            schema=schema,
            example=example,
        )

        return event_type
