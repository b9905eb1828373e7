from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.accepted_event import AcceptedEvent
from ...models.error import Error
from ...models.event_body import EventBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: EventBody,
    idempotency_key: str | Unset = UNSET,
    ordering_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    if not isinstance(ordering_key, Unset):
        headers["Ordering-Key"] = ordering_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/events",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> AcceptedEvent | Error | None:
    if response.status_code == 202:
        response_202 = AcceptedEvent.from_dict(response.json())

        return response_202

    if response.status_code == 400:
        response_400 = Error.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Error.from_dict(response.json())

        return response_403

    if response.status_code == 409:
        response_409 = Error.from_dict(response.json())

        return response_409

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
) -> Response[AcceptedEvent | Error]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: EventBody,
    idempotency_key: str | Unset = UNSET,
    ordering_key: str | Unset = UNSET,
) -> Response[AcceptedEvent | Error]:
    """Post an event

     The body is the webhook itself: a JSON object of at most 256 KiB with a string field
    `event` (1-200 letters, digits and `. _ : / -`, once). It is stored byte for byte and
    delivered unchanged. The event and its deliveries are written before anything is queued.

    Args:
        idempotency_key (str | Unset):
        ordering_key (str | Unset):
        body (EventBody): The webhook body, delivered byte for byte. At most 256 KiB.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AcceptedEvent | Error]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
        ordering_key=ordering_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: EventBody,
    idempotency_key: str | Unset = UNSET,
    ordering_key: str | Unset = UNSET,
) -> AcceptedEvent | Error | None:
    """Post an event

     The body is the webhook itself: a JSON object of at most 256 KiB with a string field
    `event` (1-200 letters, digits and `. _ : / -`, once). It is stored byte for byte and
    delivered unchanged. The event and its deliveries are written before anything is queued.

    Args:
        idempotency_key (str | Unset):
        ordering_key (str | Unset):
        body (EventBody): The webhook body, delivered byte for byte. At most 256 KiB.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AcceptedEvent | Error
    """

    return sync_detailed(
        client=client,
        body=body,
        idempotency_key=idempotency_key,
        ordering_key=ordering_key,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: EventBody,
    idempotency_key: str | Unset = UNSET,
    ordering_key: str | Unset = UNSET,
) -> Response[AcceptedEvent | Error]:
    """Post an event

     The body is the webhook itself: a JSON object of at most 256 KiB with a string field
    `event` (1-200 letters, digits and `. _ : / -`, once). It is stored byte for byte and
    delivered unchanged. The event and its deliveries are written before anything is queued.

    Args:
        idempotency_key (str | Unset):
        ordering_key (str | Unset):
        body (EventBody): The webhook body, delivered byte for byte. At most 256 KiB.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AcceptedEvent | Error]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
        ordering_key=ordering_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: EventBody,
    idempotency_key: str | Unset = UNSET,
    ordering_key: str | Unset = UNSET,
) -> AcceptedEvent | Error | None:
    """Post an event

     The body is the webhook itself: a JSON object of at most 256 KiB with a string field
    `event` (1-200 letters, digits and `. _ : / -`, once). It is stored byte for byte and
    delivered unchanged. The event and its deliveries are written before anything is queued.

    Args:
        idempotency_key (str | Unset):
        ordering_key (str | Unset):
        body (EventBody): The webhook body, delivered byte for byte. At most 256 KiB.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AcceptedEvent | Error
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            idempotency_key=idempotency_key,
            ordering_key=ordering_key,
        )
    ).parsed
