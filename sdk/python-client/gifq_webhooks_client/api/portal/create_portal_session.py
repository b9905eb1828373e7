from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.create_portal_session_body import CreatePortalSessionBody
from ...models.create_portal_session_response_201 import CreatePortalSessionResponse201
from ...models.error import Error
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: CreatePortalSessionBody | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/portal/sessions",
    }

    if not isinstance(body, Unset):
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> CreatePortalSessionResponse201 | Error | None:
    if response.status_code == 201:
        response_201 = CreatePortalSessionResponse201.from_dict(response.json())

        return response_201

    if response.status_code == 400:
        response_400 = Error.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Error.from_dict(response.json())

        return response_403

    if response.status_code == 413:
        response_413 = Error.from_dict(response.json())

        return response_413

    if response.status_code == 422:
        response_422 = Error.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = Error.from_dict(response.json())

        return response_429

    if response.status_code == 500:
        response_500 = Error.from_dict(response.json())

        return response_500

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[CreatePortalSessionResponse201 | Error]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: CreatePortalSessionBody | Unset = UNSET,
) -> Response[CreatePortalSessionResponse201 | Error]:
    """Open the customer portal for this account

     With the account's API key (not a portal token): a session of `ttl_seconds` (60-86400,
    default 3600), read-only if asked, and the URL that opens the portal with it. The token
    rides in the URL's fragment, which browsers never send to a server; it is shown only in
    this answer (the table keeps its SHA-256). The session lives only as long as the API key
    that minted it: revoking the key ends it.

    Args:
        body (CreatePortalSessionBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CreatePortalSessionResponse201 | Error]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: CreatePortalSessionBody | Unset = UNSET,
) -> CreatePortalSessionResponse201 | Error | None:
    """Open the customer portal for this account

     With the account's API key (not a portal token): a session of `ttl_seconds` (60-86400,
    default 3600), read-only if asked, and the URL that opens the portal with it. The token
    rides in the URL's fragment, which browsers never send to a server; it is shown only in
    this answer (the table keeps its SHA-256). The session lives only as long as the API key
    that minted it: revoking the key ends it.

    Args:
        body (CreatePortalSessionBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CreatePortalSessionResponse201 | Error
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: CreatePortalSessionBody | Unset = UNSET,
) -> Response[CreatePortalSessionResponse201 | Error]:
    """Open the customer portal for this account

     With the account's API key (not a portal token): a session of `ttl_seconds` (60-86400,
    default 3600), read-only if asked, and the URL that opens the portal with it. The token
    rides in the URL's fragment, which browsers never send to a server; it is shown only in
    this answer (the table keeps its SHA-256). The session lives only as long as the API key
    that minted it: revoking the key ends it.

    Args:
        body (CreatePortalSessionBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CreatePortalSessionResponse201 | Error]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: CreatePortalSessionBody | Unset = UNSET,
) -> CreatePortalSessionResponse201 | Error | None:
    """Open the customer portal for this account

     With the account's API key (not a portal token): a session of `ttl_seconds` (60-86400,
    default 3600), read-only if asked, and the URL that opens the portal with it. The token
    rides in the URL's fragment, which browsers never send to a server; it is shown only in
    this answer (the table keeps its SHA-256). The session lives only as long as the API key
    that minted it: revoking the key ends it.

    Args:
        body (CreatePortalSessionBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CreatePortalSessionResponse201 | Error
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
