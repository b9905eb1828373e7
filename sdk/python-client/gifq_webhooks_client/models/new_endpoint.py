from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.destination_type import DestinationType
from ..models.signature_scheme import SignatureScheme
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.aws_destination import AWSDestination
    from ..models.new_endpoint_settings import NewEndpointSettings


T = TypeVar("T", bound="NewEndpoint")


@_attrs_define
class NewEndpoint:
    """An `http` endpoint (the default) takes `url`; an AWS one (`aws_sqs`, `aws_sns`, `aws_eventbridge`, `aws_kinesis`)
    takes `aws` instead, is checked by assuming its role once with the account's external id, and is refused with 422
    `invalid_destination` (a malformed ARN, a service that is not the type's, a region or partition the deployment does
    not serve) or `role_not_assumable` (naming the AWS error). docs/destinations.md.

        Attributes:
            type_ (DestinationType | Unset): How the endpoint is reached: `http` (a signed POST to `url`, the default), or a
                customer's SQS queue, SNS topic, EventBridge bus or Kinesis data stream written to as their role
                (docs/destinations.md), or `polling`: read by its consumer through `GET /v1/endpoints/{id}/poll`, never
                delivered to. `url` is empty for all but `http`.
            aws (AWSDestination | Unset): An AWS endpoint's target and the customer's role we assume to write to it, with
                the account's external id (`GET /v1/account`). The target's region must be one the deployment serves (by default
                its own).
            url (str | Unset): Required for `http`. https (http too in make dev); no private, loopback, link-local or
                metadata address unless the deployment allows it.
            event_types (list[str] | Unset): Exact names, prefixes like `payout.*`, or `*`; empty means every event.
            description (str | Unset):
            signature_scheme (SignatureScheme | Unset): What `webhook-signature` carries: `v1` (HMAC-SHA256 with the
                endpoint's secret, the default), `v1a` (ed25519 with the account's signing key, verified with its public JWKS),
                or `both`. `X-Gifq-Signature` is sent whatever the scheme.
            settings (NewEndpointSettings | Unset): Settings at registration. `rate_limit`: deliveries a second, at least
                0.01 and at most the account's (422 otherwise). `timeout_seconds`: 1 to 10, never longer than the deployment's
                DELIVERY_TIMEOUT. `headers`: up to 10, sent on every attempt; names are HTTP tokens, case-insensitive; Host,
                Content-Type, Content-Length, User-Agent, hop-by-hop headers, X-Gifq-* and webhook-* cannot be set (422 naming
                the header); values 1 to 1024 bytes, no control characters.
    """

    type_: DestinationType | Unset = UNSET
    aws: AWSDestination | Unset = UNSET
    url: str | Unset = UNSET
    event_types: list[str] | Unset = UNSET
    description: str | Unset = UNSET
    signature_scheme: SignatureScheme | Unset = UNSET
    settings: NewEndpointSettings | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        type_: str | Unset = UNSET
        if not isinstance(self.type_, Unset):
            type_ = self.type_.value

        aws: dict[str, Any] | Unset = UNSET
        if not isinstance(self.aws, Unset):
            aws = self.aws.to_dict()

        url = self.url

        event_types: list[str] | Unset = UNSET
        if not isinstance(self.event_types, Unset):
            event_types = self.event_types

        description = self.description

        signature_scheme: str | Unset = UNSET
        if not isinstance(self.signature_scheme, Unset):
            signature_scheme = self.signature_scheme.value

        settings: dict[str, Any] | Unset = UNSET
        if not isinstance(self.settings, Unset):
            settings = self.settings.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if type_ is not UNSET:
            field_dict["type"] = type_
        if aws is not UNSET:
            field_dict["aws"] = aws
        if url is not UNSET:
            field_dict["url"] = url
        if event_types is not UNSET:
            field_dict["event_types"] = event_types
        if description is not UNSET:
            field_dict["description"] = description
        if signature_scheme is not UNSET:
            field_dict["signature_scheme"] = signature_scheme
        if settings is not UNSET:
            field_dict["settings"] = settings

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.aws_destination import AWSDestination  # noqa: PLC0415
        from ..models.new_endpoint_settings import NewEndpointSettings  # noqa: PLC0415

        d = dict(src_dict)
        _type_ = d.pop("type", UNSET)
        type_: DestinationType | Unset
        if isinstance(_type_, Unset):
            type_ = UNSET
        else:
            type_ = DestinationType(_type_)

        _aws = d.pop("aws", UNSET)
        aws: AWSDestination | Unset
        if isinstance(_aws, Unset):
            aws = UNSET
        else:
            aws = AWSDestination.from_dict(_aws)

        url = d.pop("url", UNSET)

        event_types = cast(list[str], d.pop("event_types", UNSET))

        description = d.pop("description", UNSET)

        _signature_scheme = d.pop("signature_scheme", UNSET)
        signature_scheme: SignatureScheme | Unset
        if isinstance(_signature_scheme, Unset):
            signature_scheme = UNSET
        else:
            signature_scheme = SignatureScheme(_signature_scheme)

        _settings = d.pop("settings", UNSET)
        settings: NewEndpointSettings | Unset
        if isinstance(_settings, Unset):
            settings = UNSET
        else:
            settings = NewEndpointSettings.from_dict(_settings)

        new_endpoint = cls(
            type_=type_,
            aws=aws,
            url=url,
            event_types=event_types,
            description=description,
            signature_scheme=signature_scheme,
            settings=settings,
        )

        return new_endpoint
