from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.batch_answer import BatchAnswer
from ...models.batch_request import BatchRequest
from ...models.error import Error
from ...types import Response


def _get_kwargs(
    *,
    body: BatchRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/events/batch",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> BatchAnswer | Error | None:
    if response.status_code == 200:
        response_200 = BatchAnswer.from_dict(response.json())

        return response_200

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[BatchAnswer | Error]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: BatchRequest,
) -> Response[BatchAnswer | Error]:
    """Post up to 100 events

     Each event is accepted or refused on its own, with the status and error the single route
    would answer for it; each has its own optional idempotency key (a key repeated in the
    batch answers its first event). Every accepted event is written before its deliveries
    are queued, and every delivery takes its own slot of the account's rate limit. The whole
    batch is refused only when its envelope is wrong.

    Args:
        body (BatchRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BatchAnswer | Error]
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
    body: BatchRequest,
) -> BatchAnswer | Error | None:
    """Post up to 100 events

     Each event is accepted or refused on its own, with the status and error the single route
    would answer for it; each has its own optional idempotency key (a key repeated in the
    batch answers its first event). Every accepted event is written before its deliveries
    are queued, and every delivery takes its own slot of the account's rate limit. The whole
    batch is refused only when its envelope is wrong.

    Args:
        body (BatchRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BatchAnswer | Error
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: BatchRequest,
) -> Response[BatchAnswer | Error]:
    """Post up to 100 events

     Each event is accepted or refused on its own, with the status and error the single route
    would answer for it; each has its own optional idempotency key (a key repeated in the
    batch answers its first event). Every accepted event is written before its deliveries
    are queued, and every delivery takes its own slot of the account's rate limit. The whole
    batch is refused only when its envelope is wrong.

    Args:
        body (BatchRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BatchAnswer | Error]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: BatchRequest,
) -> BatchAnswer | Error | None:
    """Post up to 100 events

     Each event is accepted or refused on its own, with the status and error the single route
    would answer for it; each has its own optional idempotency key (a key repeated in the
    batch answers its first event). Every accepted event is written before its deliveries
    are queued, and every delivery takes its own slot of the account's rate limit. The whole
    batch is refused only when its envelope is wrong.

    Args:
        body (BatchRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BatchAnswer | Error
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
