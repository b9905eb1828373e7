from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.endpoint_o_auth_2_view_auth_method import EndpointOAuth2ViewAuthMethod
from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointOAuth2View")


@_attrs_define
class EndpointOAuth2View:
    """
    Attributes:
        token_url (str):
        client_id (str):
        auth_method (EndpointOAuth2ViewAuthMethod):
        client_secret (str | Unset): Always masked.
        scopes (list[str] | Unset):
        audience (str | Unset):
        private_key (str | Unset): Always masked.
    """

    token_url: str
    client_id: str
    auth_method: EndpointOAuth2ViewAuthMethod
    client_secret: str | Unset = UNSET
    scopes: list[str] | Unset = UNSET
    audience: str | Unset = UNSET
    private_key: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        token_url = self.token_url

        client_id = self.client_id

        auth_method = self.auth_method.value

        client_secret = self.client_secret

        scopes: list[str] | Unset = UNSET
        if not isinstance(self.scopes, Unset):
            scopes = self.scopes

        audience = self.audience

        private_key = self.private_key

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "token_url": token_url,
                "client_id": client_id,
                "auth_method": auth_method,
            }
        )
        if client_secret is not UNSET:
            field_dict["client_secret"] = client_secret
        if scopes is not UNSET:
            field_dict["scopes"] = scopes
        if audience is not UNSET:
            field_dict["audience"] = audience
        if private_key is not UNSET:
            field_dict["private_key"] = private_key

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        token_url = d.pop("token_url")

        client_id = d.pop("client_id")

        auth_method = EndpointOAuth2ViewAuthMethod(d.pop("auth_method"))

        client_secret = d.pop("client_secret", UNSET)

        scopes = cast(list[str], d.pop("scopes", UNSET))

        audience = d.pop("audience", UNSET)

        private_key = d.pop("private_key", UNSET)

        endpoint_o_auth_2_view = cls(
            token_url=token_url,
            client_id=client_id,
            auth_method=auth_method,
            client_secret=client_secret,
            scopes=scopes,
            audience=audience,
            private_key=private_key,
        )

        return endpoint_o_auth_2_view
