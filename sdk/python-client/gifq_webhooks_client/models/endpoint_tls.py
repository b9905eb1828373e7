from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointTLS")


@_attrs_define
class EndpointTLS:
    """Mutual TLS: a client certificate and its private key (PEM) the sender presents to the receiver, and a CA bundle
    (PEM) to trust for a receiver with a private certificate; either or both, set as a whole. The key is write-only and
    sealed at rest; a PATCH may leave it out to keep the current one for the same `client_cert`. 422 when the
    certificate and key are not a pair or the bundle holds no certificate.

        Attributes:
            client_cert (str | Unset):
            client_key (str | Unset):
            ca_bundle (str | Unset):
    """

    client_cert: str | Unset = UNSET
    client_key: str | Unset = UNSET
    ca_bundle: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        client_cert = self.client_cert

        client_key = self.client_key

        ca_bundle = self.ca_bundle

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if client_cert is not UNSET:
            field_dict["client_cert"] = client_cert
        if client_key is not UNSET:
            field_dict["client_key"] = client_key
        if ca_bundle is not UNSET:
            field_dict["ca_bundle"] = ca_bundle

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        client_cert = d.pop("client_cert", UNSET)

        client_key = d.pop("client_key", UNSET)

        ca_bundle = d.pop("ca_bundle", UNSET)

        endpoint_tls = cls(
            client_cert=client_cert,
            client_key=client_key,
            ca_bundle=ca_bundle,
        )

        return endpoint_tls
