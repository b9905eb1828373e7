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
        client_secret (str): Always masked.
        auth_method (EndpointOAuth2ViewAuthMethod):
        scopes (list[str] | Unset):
        audience (str | Unset):
    """

    token_url: str
    client_id: str
    client_secret: str
    auth_method: EndpointOAuth2ViewAuthMethod
    scopes: list[str] | Unset = UNSET
    audience: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        token_url = self.token_url

        client_id = self.client_id

        client_secret = self.client_secret

        auth_method = self.auth_method.value

        scopes: list[str] | Unset = UNSET
        if not isinstance(self.scopes, Unset):
            scopes = self.scopes

        audience = self.audience

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "token_url": token_url,
                "client_id": client_id,
                "client_secret": client_secret,
                "auth_method": auth_method,
            }
        )
        if scopes is not UNSET:
            field_dict["scopes"] = scopes
        if audience is not UNSET:
            field_dict["audience"] = audience

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        token_url = d.pop("token_url")

        client_id = d.pop("client_id")

        client_secret = d.pop("client_secret")

        auth_method = EndpointOAuth2ViewAuthMethod(d.pop("auth_method"))

        scopes = cast(list[str], d.pop("scopes", UNSET))

        audience = d.pop("audience", UNSET)

        endpoint_o_auth_2_view = cls(
            token_url=token_url,
            client_id=client_id,
            client_secret=client_secret,
            auth_method=auth_method,
            scopes=scopes,
            audience=audience,
        )

        return endpoint_o_auth_2_view
