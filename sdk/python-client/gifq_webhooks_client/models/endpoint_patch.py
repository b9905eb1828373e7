from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.signature_scheme import SignatureScheme
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.aws_destination import AWSDestination
    from ..models.endpoint_settings_patch import EndpointSettingsPatch


T = TypeVar("T", bound="EndpointPatch")


@_attrs_define
class EndpointPatch:
    """
    Attributes:
        url (str | Unset):
        event_types (list[str] | Unset): Exact names, prefixes like `payout.*`, or `*`; empty means every event.
        description (str | Unset):
        disabled (bool | Unset):
        signature_scheme (SignatureScheme | Unset): What `webhook-signature` carries: `v1` (HMAC-SHA256 with the
            endpoint's secret, the default), `v1a` (ed25519 with the account's signing key, verified with its public JWKS),
            or `both`. `X-Gifq-Signature` is sent whatever the scheme.
        settings (EndpointSettingsPatch | Unset): A change of the settings: the fields given are set, the ones left out
            stay. `headers` adds or replaces the headers it names and keeps the others; `remove_headers` removes headers by
            name; `reset` sends `rate_limit` or `timeout_seconds` back to the account's or the deployment's, or removes
            every header. Reset and remove apply first.
        aws (AWSDestination | Unset): An AWS endpoint's target and the customer's role we assume to write to it, with
            the account's external id (`GET /v1/account`). The target's region must be one the deployment serves (by default
            its own).
    """

    url: str | Unset = UNSET
    event_types: list[str] | Unset = UNSET
    description: str | Unset = UNSET
    disabled: bool | Unset = UNSET
    signature_scheme: SignatureScheme | Unset = UNSET
    settings: EndpointSettingsPatch | Unset = UNSET
    aws: AWSDestination | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        url = self.url

        event_types: list[str] | Unset = UNSET
        if not isinstance(self.event_types, Unset):
            event_types = self.event_types

        description = self.description

        disabled = self.disabled

        signature_scheme: str | Unset = UNSET
        if not isinstance(self.signature_scheme, Unset):
            signature_scheme = self.signature_scheme.value

        settings: dict[str, Any] | Unset = UNSET
        if not isinstance(self.settings, Unset):
            settings = self.settings.to_dict()

        aws: dict[str, Any] | Unset = UNSET
        if not isinstance(self.aws, Unset):
            aws = self.aws.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if url is not UNSET:
            field_dict["url"] = url
        if event_types is not UNSET:
            field_dict["event_types"] = event_types
        if description is not UNSET:
            field_dict["description"] = description
        if disabled is not UNSET:
            field_dict["disabled"] = disabled
        if signature_scheme is not UNSET:
            field_dict["signature_scheme"] = signature_scheme
        if settings is not UNSET:
            field_dict["settings"] = settings
        if aws is not UNSET:
            field_dict["aws"] = aws

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.aws_destination import AWSDestination  # noqa: PLC0415
        from ..models.endpoint_settings_patch import EndpointSettingsPatch  # noqa: PLC0415

        d = dict(src_dict)
        url = d.pop("url", UNSET)

        event_types = cast(list[str], d.pop("event_types", UNSET))

        description = d.pop("description", UNSET)

        disabled = d.pop("disabled", UNSET)

        _signature_scheme = d.pop("signature_scheme", UNSET)
        signature_scheme: SignatureScheme | Unset
        if isinstance(_signature_scheme, Unset):
            signature_scheme = UNSET
        else:
            signature_scheme = SignatureScheme(_signature_scheme)

        _settings = d.pop("settings", UNSET)
        settings: EndpointSettingsPatch | Unset
        if isinstance(_settings, Unset):
            settings = UNSET
        else:
            settings = EndpointSettingsPatch.from_dict(_settings)

        _aws = d.pop("aws", UNSET)
        aws: AWSDestination | Unset
        if isinstance(_aws, Unset):
            aws = UNSET
        else:
            aws = AWSDestination.from_dict(_aws)

        endpoint_patch = cls(
            url=url,
            event_types=event_types,
            description=description,
            disabled=disabled,
            signature_scheme=signature_scheme,
            settings=settings,
            aws=aws,
        )

        return endpoint_patch
