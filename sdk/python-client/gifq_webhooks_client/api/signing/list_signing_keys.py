from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.signing_keys import SigningKeys
from ...types import Response


def _get_kwargs() -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/signing-keys",
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | SigningKeys | None:
    if response.status_code == 200:
        response_200 = SigningKeys.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Error.from_dict(response.json())

        return response_403

    if response.status_code == 500:
        response_500 = Error.from_dict(response.json())

        return response_500

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Error | SigningKeys]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
) -> Response[Error | SigningKeys]:
    """The account's published v1a signing keys

     The keys a receiver may verify v1a signatures with now: the current one first, then any rotated-out
    key still in its overlap. None until an endpoint uses `v1a` or `both`, or a rotation. `jwks_path` is
    the public JWKS to give receivers.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | SigningKeys]
    """

    kwargs = _get_kwargs()

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
) -> Error | SigningKeys | None:
    """The account's published v1a signing keys

     The keys a receiver may verify v1a signatures with now: the current one first, then any rotated-out
    key still in its overlap. None until an endpoint uses `v1a` or `both`, or a rotation. `jwks_path` is
    the public JWKS to give receivers.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | SigningKeys
    """

    return sync_detailed(
        client=client,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
) -> Response[Error | SigningKeys]:
    """The account's published v1a signing keys

     The keys a receiver may verify v1a signatures with now: the current one first, then any rotated-out
    key still in its overlap. None until an endpoint uses `v1a` or `both`, or a rotation. `jwks_path` is
    the public JWKS to give receivers.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | SigningKeys]
    """

    kwargs = _get_kwargs()

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
) -> Error | SigningKeys | None:
    """The account's published v1a signing keys

     The keys a receiver may verify v1a signatures with now: the current one first, then any rotated-out
    key still in its overlap. None until an endpoint uses `v1a` or `both`, or a rotation. `jwks_path` is
    the public JWKS to give receivers.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | SigningKeys
    """

    return (
        await asyncio_detailed(
            client=client,
        )
    ).parsed
