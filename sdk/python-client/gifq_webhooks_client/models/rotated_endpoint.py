from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.destination_type import DestinationType
from ..models.signature_scheme import SignatureScheme
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.aws_destination import AWSDestination
    from ..models.breaker import Breaker
    from ..models.endpoint_health import EndpointHealth
    from ..models.endpoint_settings import EndpointSettings


T = TypeVar("T", bound="RotatedEndpoint")


@_attrs_define
class RotatedEndpoint:
    """
    Attributes:
        id (str):
        url (str):
        description (str):
        event_types (list[str]):
        disabled (bool):
        health (EndpointHealth): How the endpoint is doing (read-only). `breaker`: closed; open (its deliveries wait
            without using attempts until `breaker_open_until`); half_open (the pause is over, the next attempt is the
            probe); probing (the probe is in flight). `consecutive_failures`: timeouts or connection failures in a row
            counted toward opening the breaker (reset to 0 when it opens). `failing_since`: the first failure since the last
            success. `paused_until`: a receiver's Retry-After. The last failed attempt (`last_failure_at` with its HTTP
            status, or its error class when there was no answer) is recorded at most once a minute. Why an endpoint is
            disabled is its `disabled_reason`.
        settings (EndpointSettings): The endpoint's own delivery settings as its owner set them. A field left out is the
            account's rate or the deployment's timeout (DELIVERY_TIMEOUT). Header values are write-only: every answer shows
            them masked (`****`, plus the last 2 characters of a value of 12 or more).
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
        secret (str): `whsec_` + base64 of 32 random bytes. Shown once.
        disabled_reason (str | Unset):
        failing_since (datetime.datetime | Unset):
        breaker (Breaker | Unset): The endpoint's circuit breaker, shown only while it is not closed: after 5
            consecutive timeouts or connection failures it opens, and its deliveries wait without using attempts until
            `open_until`; then one attempt goes as the probe (`half_open`, then `probing` while it is in flight), and an
            answer closes it. Enabling the endpoint or changing its URL closes it too.
        signature_scheme (SignatureScheme | Unset): What `webhook-signature` carries: `v1` (HMAC-SHA256 with the
            endpoint's secret, the default), `v1a` (ed25519 with the account's signing key, verified with its public JWKS),
            or `both`. `X-Gifq-Signature` is sent whatever the scheme.
        type_ (DestinationType | Unset): How the endpoint is reached: `http` (a signed POST to `url`, the default), or a
            customer's SQS queue, SNS topic, EventBridge bus or Kinesis data stream written to as their role
            (docs/destinations.md), or `polling`: read by its consumer through `GET /v1/endpoints/{id}/poll`, never
            delivered to. `url` is empty for all but `http`.
        aws (AWSDestination | Unset): An AWS endpoint's target and the customer's role we assume to write to it, with
            the account's external id (`GET /v1/account`). The target's region must be one the deployment serves (by default
            its own).
        poll_token (str | Unset): A polling endpoint's token for its poll and commit routes. Shown once, at
            registration.
        previous_secret_expires_at (datetime.datetime | Unset): Rotation only; when the previous secret stops signing.
    """

    id: str
    url: str
    description: str
    event_types: list[str]
    disabled: bool
    health: EndpointHealth
    settings: EndpointSettings
    created_at: datetime.datetime
    updated_at: datetime.datetime
    secret: str
    disabled_reason: str | Unset = UNSET
    failing_since: datetime.datetime | Unset = UNSET
    breaker: Breaker | Unset = UNSET
    signature_scheme: SignatureScheme | Unset = UNSET
    type_: DestinationType | Unset = UNSET
    aws: AWSDestination | Unset = UNSET
    poll_token: str | Unset = UNSET
    previous_secret_expires_at: datetime.datetime | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        url = self.url

        description = self.description

        event_types = self.event_types

        disabled = self.disabled

        health = self.health.to_dict()

        settings = self.settings.to_dict()

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        secret = self.secret

        disabled_reason = self.disabled_reason

        failing_since: str | Unset = UNSET
        if not isinstance(self.failing_since, Unset):
            failing_since = self.failing_since.isoformat()

        breaker: dict[str, Any] | Unset = UNSET
        if not isinstance(self.breaker, Unset):
            breaker = self.breaker.to_dict()

        signature_scheme: str | Unset = UNSET
        if not isinstance(self.signature_scheme, Unset):
            signature_scheme = self.signature_scheme.value

        type_: str | Unset = UNSET
        if not isinstance(self.type_, Unset):
            type_ = self.type_.value

        aws: dict[str, Any] | Unset = UNSET
        if not isinstance(self.aws, Unset):
            aws = self.aws.to_dict()

        poll_token = self.poll_token

        previous_secret_expires_at: str | Unset = UNSET
        if not isinstance(self.previous_secret_expires_at, Unset):
            previous_secret_expires_at = self.previous_secret_expires_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "url": url,
                "description": description,
                "event_types": event_types,
                "disabled": disabled,
                "health": health,
                "settings": settings,
                "created_at": created_at,
                "updated_at": updated_at,
                "secret": secret,
            }
        )
        if disabled_reason is not UNSET:
            field_dict["disabled_reason"] = disabled_reason
        if failing_since is not UNSET:
            field_dict["failing_since"] = failing_since
        if breaker is not UNSET:
            field_dict["breaker"] = breaker
        if signature_scheme is not UNSET:
            field_dict["signature_scheme"] = signature_scheme
        if type_ is not UNSET:
            field_dict["type"] = type_
        if aws is not UNSET:
            field_dict["aws"] = aws
        if poll_token is not UNSET:
            field_dict["poll_token"] = poll_token
        if previous_secret_expires_at is not UNSET:
            field_dict["previous_secret_expires_at"] = previous_secret_expires_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.aws_destination import AWSDestination  # noqa: PLC0415
        from ..models.breaker import Breaker  # noqa: PLC0415
        from ..models.endpoint_health import EndpointHealth  # noqa: PLC0415
        from ..models.endpoint_settings import EndpointSettings  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        url = d.pop("url")

        description = d.pop("description")

        event_types = cast(list[str], d.pop("event_types"))

        disabled = d.pop("disabled")

        health = EndpointHealth.from_dict(d.pop("health"))

        settings = EndpointSettings.from_dict(d.pop("settings"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        secret = d.pop("secret")

        disabled_reason = d.pop("disabled_reason", UNSET)

        _failing_since = d.pop("failing_since", UNSET)
        failing_since: datetime.datetime | Unset
        if isinstance(_failing_since, Unset):
            failing_since = UNSET
        else:
            failing_since = datetime.datetime.fromisoformat(_failing_since)

        _breaker = d.pop("breaker", UNSET)
        breaker: Breaker | Unset
        if isinstance(_breaker, Unset):
            breaker = UNSET
        else:
            breaker = Breaker.from_dict(_breaker)

        _signature_scheme = d.pop("signature_scheme", UNSET)
        signature_scheme: SignatureScheme | Unset
        if isinstance(_signature_scheme, Unset):
            signature_scheme = UNSET
        else:
            signature_scheme = SignatureScheme(_signature_scheme)

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

        poll_token = d.pop("poll_token", UNSET)

        _previous_secret_expires_at = d.pop("previous_secret_expires_at", UNSET)
        previous_secret_expires_at: datetime.datetime | Unset
        if isinstance(_previous_secret_expires_at, Unset):
            previous_secret_expires_at = UNSET
        else:
            previous_secret_expires_at = datetime.datetime.fromisoformat(_previous_secret_expires_at)

        rotated_endpoint = cls(
            id=id,
            url=url,
            description=description,
            event_types=event_types,
            disabled=disabled,
            health=health,
            settings=settings,
            created_at=created_at,
            updated_at=updated_at,
            secret=secret,
            disabled_reason=disabled_reason,
            failing_since=failing_since,
            breaker=breaker,
            signature_scheme=signature_scheme,
            type_=type_,
            aws=aws,
            poll_token=poll_token,
            previous_secret_expires_at=previous_secret_expires_at,
        )

        rotated_endpoint.additional_properties = d
        return rotated_endpoint

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
