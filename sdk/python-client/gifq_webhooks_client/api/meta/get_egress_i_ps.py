from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.get_egress_i_ps_response_200 import GetEgressIPsResponse200
from ...types import Response


def _get_kwargs() -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/egress-ips",
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | GetEgressIPsResponse200 | None:
    if response.status_code == 200:
        response_200 = GetEgressIPsResponse200.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

    if response.status_code == 500:
        response_500 = Error.from_dict(response.json())

        return response_500

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Error | GetEgressIPsResponse200]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
) -> Response[Error | GetEgressIPsResponse200]:
    """The addresses webhooks are sent from

     The static IPs every delivery leaves from, for receivers that allowlist senders: the
    stack's Elastic IPs when it is deployed with static egress IPs (docs/deploy.md). Empty
    when it is not: deliveries then come from AWS's shared ranges. Any API key or portal
    session may read it.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | GetEgressIPsResponse200]
    """

    kwargs = _get_kwargs()

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
) -> Error | GetEgressIPsResponse200 | None:
    """The addresses webhooks are sent from

     The static IPs every delivery leaves from, for receivers that allowlist senders: the
    stack's Elastic IPs when it is deployed with static egress IPs (docs/deploy.md). Empty
    when it is not: deliveries then come from AWS's shared ranges. Any API key or portal
    session may read it.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | GetEgressIPsResponse200
    """

    return sync_detailed(
        client=client,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
) -> Response[Error | GetEgressIPsResponse200]:
    """The addresses webhooks are sent from

     The static IPs every delivery leaves from, for receivers that allowlist senders: the
    stack's Elastic IPs when it is deployed with static egress IPs (docs/deploy.md). Empty
    when it is not: deliveries then come from AWS's shared ranges. Any API key or portal
    session may read it.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | GetEgressIPsResponse200]
    """

    kwargs = _get_kwargs()

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
) -> Error | GetEgressIPsResponse200 | None:
    """The addresses webhooks are sent from

     The static IPs every delivery leaves from, for receivers that allowlist senders: the
    stack's Elastic IPs when it is deployed with static egress IPs (docs/deploy.md). Empty
    when it is not: deliveries then come from AWS's shared ranges. Any API key or portal
    session may read it.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | GetEgressIPsResponse200
    """

    return (
        await asyncio_detailed(
            client=client,
        )
    ).parsed
