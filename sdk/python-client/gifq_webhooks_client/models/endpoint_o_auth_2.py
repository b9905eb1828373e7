from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.endpoint_o_auth_2_auth_method import EndpointOAuth2AuthMethod
from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointOAuth2")


@_attrs_define
class EndpointOAuth2:
    """OAuth 2.0 client credentials (RFC 6749 4.4): before each attempt the sender gets a bearer token from `token_url`
    (cached until 60 s before it expires) and sends it as `Authorization: Bearer`. Set as a whole. `token_url` passes
    the endpoint URL's rules (https in deployed stacks, no private address; 422). `client_secret` (or, for
    `private_key_jwt`, `private_key`: a PEM RSA 2048+ or EC P-256 key signing an RFC 7523 client assertion, RS256/ES256,
    `aud` the token URL, 60 s life, unique `jti`) is write-only and sealed at rest; required, except that a PATCH may
    leave it out to keep the current one for the same `client_id` and `token_url` origin. A PATCH that changes the
    endpoint URL's origin must give `oauth2` again or reset it (422 `oauth2_not_confirmed`).

        Attributes:
            token_url (str):
            client_id (str):
            client_secret (str | Unset):
            scopes (list[str] | Unset):
            audience (str | Unset):
            auth_method (EndpointOAuth2AuthMethod | Unset):  Default: EndpointOAuth2AuthMethod.CLIENT_SECRET_BASIC.
            private_key (str | Unset):
    """

    token_url: str
    client_id: str
    client_secret: str | Unset = UNSET
    scopes: list[str] | Unset = UNSET
    audience: str | Unset = UNSET
    auth_method: EndpointOAuth2AuthMethod | Unset = EndpointOAuth2AuthMethod.CLIENT_SECRET_BASIC
    private_key: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        token_url = self.token_url

        client_id = self.client_id

        client_secret = self.client_secret

        scopes: list[str] | Unset = UNSET
        if not isinstance(self.scopes, Unset):
            scopes = self.scopes

        audience = self.audience

        auth_method: str | Unset = UNSET
        if not isinstance(self.auth_method, Unset):
            auth_method = self.auth_method.value

        private_key = self.private_key

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "token_url": token_url,
                "client_id": client_id,
            }
        )
        if client_secret is not UNSET:
            field_dict["client_secret"] = client_secret
        if scopes is not UNSET:
            field_dict["scopes"] = scopes
        if audience is not UNSET:
            field_dict["audience"] = audience
        if auth_method is not UNSET:
            field_dict["auth_method"] = auth_method
        if private_key is not UNSET:
            field_dict["private_key"] = private_key

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        token_url = d.pop("token_url")

        client_id = d.pop("client_id")

        client_secret = d.pop("client_secret", UNSET)

        scopes = cast(list[str], d.pop("scopes", UNSET))

        audience = d.pop("audience", UNSET)

        _auth_method = d.pop("auth_method", UNSET)
        auth_method: EndpointOAuth2AuthMethod | Unset
        if isinstance(_auth_method, Unset):
            auth_method = UNSET
        else:
            auth_method = EndpointOAuth2AuthMethod(_auth_method)

        private_key = d.pop("private_key", UNSET)

        endpoint_o_auth_2 = cls(
            token_url=token_url,
            client_id=client_id,
            client_secret=client_secret,
            scopes=scopes,
            audience=audience,
            auth_method=auth_method,
            private_key=private_key,
        )

        return endpoint_o_auth_2
