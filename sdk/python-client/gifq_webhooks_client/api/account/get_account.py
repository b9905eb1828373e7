from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.account import Account
from ...models.error import Error
from ...types import Response


def _get_kwargs() -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/account",
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Account | Error | None:
    if response.status_code == 200:
        response_200 = Account.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Error.from_dict(response.json())

        return response_403

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Account | Error]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
) -> Response[Account | Error]:
    """The authenticated account, with its AWS external id

     `aws_external_id` is the `sts:ExternalId` this account's AWS roles must require in their trust
    policy (endpoints of type `aws_sqs`, `aws_sns`, `aws_eventbridge`, `aws_kinesis`). It is made on
    first use, never changes, and is shown only to this account.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Account | Error]
    """

    kwargs = _get_kwargs()

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
) -> Account | Error | None:
    """The authenticated account, with its AWS external id

     `aws_external_id` is the `sts:ExternalId` this account's AWS roles must require in their trust
    policy (endpoints of type `aws_sqs`, `aws_sns`, `aws_eventbridge`, `aws_kinesis`). It is made on
    first use, never changes, and is shown only to this account.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Account | Error
    """

    return sync_detailed(
        client=client,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
) -> Response[Account | Error]:
    """The authenticated account, with its AWS external id

     `aws_external_id` is the `sts:ExternalId` this account's AWS roles must require in their trust
    policy (endpoints of type `aws_sqs`, `aws_sns`, `aws_eventbridge`, `aws_kinesis`). It is made on
    first use, never changes, and is shown only to this account.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Account | Error]
    """

    kwargs = _get_kwargs()

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
) -> Account | Error | None:
    """The authenticated account, with its AWS external id

     `aws_external_id` is the `sts:ExternalId` this account's AWS roles must require in their trust
    policy (endpoints of type `aws_sqs`, `aws_sns`, `aws_eventbridge`, `aws_kinesis`). It is made on
    first use, never changes, and is shown only to this account.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Account | Error
    """

    return (
        await asyncio_detailed(
            client=client,
        )
    ).parsed
