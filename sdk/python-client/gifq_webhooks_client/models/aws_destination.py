from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="AWSDestination")


@_attrs_define
class AWSDestination:
    """An AWS endpoint's target and the customer's role we assume to write to it, with the account's external id (`GET
    /v1/account`). The target's region must be one the deployment serves (by default its own).

        Attributes:
            target_arn (str): `arn:<partition>:sqs:<region>:<account>:<queue>`, `...:sns:...:<topic>`,
                `...:events:...:event-bus/<name>` or `...:kinesis:...:stream/<name>`, matching the type. Example:
                arn:aws:sqs:eu-west-1:123456789012:gifq-webhooks.
            role_arn (str): `arn:<partition>:iam::<account>:role/<name>`, in the target's partition. Example:
                arn:aws:iam::123456789012:role/gifq-webhooks-delivery.
    """

    target_arn: str
    role_arn: str

    def to_dict(self) -> dict[str, Any]:
        target_arn = self.target_arn

        role_arn = self.role_arn

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "target_arn": target_arn,
                "role_arn": role_arn,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        target_arn = d.pop("target_arn")

        role_arn = d.pop("role_arn")

        aws_destination = cls(
            target_arn=target_arn,
            role_arn=role_arn,
        )

        return aws_destination
