from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.get_jwks_response_200 import GetJwksResponse200
from ...types import Response


def _get_kwargs(
    account_id: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/accounts/{account_id}/jwks.json".format(
            account_id=quote(str(account_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | GetJwksResponse200 | None:
    if response.status_code == 200:
        response_200 = GetJwksResponse200.from_dict(response.json())

        return response_200

    if response.status_code == 404:
        response_404 = Error.from_dict(response.json())

        return response_404

    if response.status_code == 500:
        response_500 = Error.from_dict(response.json())

        return response_500

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Error | GetJwksResponse200]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    account_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Error | GetJwksResponse200]:
    """The account's public keys as a JWKS, without a key

     Public, so a receiver fetches it with only the account id: public keys are not secret. An unknown
    account answers an empty set (as one without keys), so the route does not tell which ids exist.
    Cacheable for 5 minutes; a receiver that finds no key verifying a signature fetches it again (at
    most once a minute).

    Args:
        account_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | GetJwksResponse200]
    """

    kwargs = _get_kwargs(
        account_id=account_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    account_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Error | GetJwksResponse200 | None:
    """The account's public keys as a JWKS, without a key

     Public, so a receiver fetches it with only the account id: public keys are not secret. An unknown
    account answers an empty set (as one without keys), so the route does not tell which ids exist.
    Cacheable for 5 minutes; a receiver that finds no key verifying a signature fetches it again (at
    most once a minute).

    Args:
        account_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | GetJwksResponse200
    """

    return sync_detailed(
        account_id=account_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    account_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Error | GetJwksResponse200]:
    """The account's public keys as a JWKS, without a key

     Public, so a receiver fetches it with only the account id: public keys are not secret. An unknown
    account answers an empty set (as one without keys), so the route does not tell which ids exist.
    Cacheable for 5 minutes; a receiver that finds no key verifying a signature fetches it again (at
    most once a minute).

    Args:
        account_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | GetJwksResponse200]
    """

    kwargs = _get_kwargs(
        account_id=account_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    account_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Error | GetJwksResponse200 | None:
    """The account's public keys as a JWKS, without a key

     Public, so a receiver fetches it with only the account id: public keys are not secret. An unknown
    account answers an empty set (as one without keys), so the route does not tell which ids exist.
    Cacheable for 5 minutes; a receiver that finds no key verifying a signature fetches it again (at
    most once a minute).

    Args:
        account_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | GetJwksResponse200
    """

    return (
        await asyncio_detailed(
            account_id=account_id,
            client=client,
        )
    ).parsed
