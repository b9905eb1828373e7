from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.event_type_example import EventTypeExample


T = TypeVar("T", bound="EventTypePatch")


@_attrs_define
class EventTypePatch:
    """
    Attributes:
        description (str | Unset):
        schema (Any | Unset): A JSON Schema (draft 2020-12; an object, or true or false), self-contained, at most 64
            KiB. Events of the type must pass it as a whole body.
        example (EventTypeExample | Unset): An event body of this type (its `event` is the type's name) that passes the
            schema; at most 64 KiB.
        deprecated (bool | Unset):
    """

    description: str | Unset = UNSET
    schema: Any | Unset = UNSET
    example: EventTypeExample | Unset = UNSET
    deprecated: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        description = self.description

        schema = self.schema

        example: dict[str, Any] | Unset = UNSET
        if not isinstance(self.example, Unset):
            example = self.example.to_dict()

        deprecated = self.deprecated

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if description is not UNSET:
            field_dict["description"] = description
        if schema is not UNSET:
            field_dict["schema"] = schema
        if example is not UNSET:
            field_dict["example"] = example
        if deprecated is not UNSET:
            field_dict["deprecated"] = deprecated

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.event_type_example import EventTypeExample  # noqa: PLC0415

        d = dict(src_dict)
        description = d.pop("description", UNSET)

        schema = d.pop("schema", UNSET)

        _example = d.pop("example", UNSET)
        example: EventTypeExample | Unset
        if isinstance(_example, Unset):
            example = UNSET
        else:
            example = EventTypeExample.from_dict(_example)

        deprecated = d.pop("deprecated", UNSET)

        event_type_patch = cls(
            description=description,
            schema=schema,
            example=example,
            deprecated=deprecated,
        )

        return event_type_patch
