from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="GetJwksResponse200KeysItem")


@_attrs_define
class GetJwksResponse200KeysItem:
    """
    Attributes:
        kty (Literal['OKP']):
        crv (Literal['Ed25519']):
        x (str): The 32-byte public key, base64url without padding.
        kid (str):
        use (Literal['sig'] | Unset):
        alg (Literal['EdDSA'] | Unset):
    """

    kty: Literal["OKP"]
    crv: Literal["Ed25519"]
    x: str
    kid: str
    use: Literal["sig"] | Unset = UNSET
    alg: Literal["EdDSA"] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        kty = self.kty

        crv = self.crv

        x = self.x

        kid = self.kid

        use = self.use

        alg = self.alg

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "kty": kty,
                "crv": crv,
                "x": x,
                "kid": kid,
            }
        )
        if use is not UNSET:
            field_dict["use"] = use
        if alg is not UNSET:
            field_dict["alg"] = alg

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kty = cast(Literal["OKP"], d.pop("kty"))
        if kty != "OKP":
            raise ValueError(f"kty must match const 'OKP', got '{kty}'")

        crv = cast(Literal["Ed25519"], d.pop("crv"))
        if crv != "Ed25519":
            raise ValueError(f"crv must match const 'Ed25519', got '{crv}'")

        x = d.pop("x")

        kid = d.pop("kid")

        use = cast(Literal["sig"] | Unset, d.pop("use", UNSET))
        if use != "sig" and not isinstance(use, Unset):
            raise ValueError(f"use must match const 'sig', got '{use}'")

        alg = cast(Literal["EdDSA"] | Unset, d.pop("alg", UNSET))
        if alg != "EdDSA" and not isinstance(alg, Unset):
            raise ValueError(f"alg must match const 'EdDSA', got '{alg}'")

        get_jwks_response_200_keys_item = cls(
            kty=kty,
            crv=crv,
            x=x,
            kid=kid,
            use=use,
            alg=alg,
        )

        return get_jwks_response_200_keys_item
