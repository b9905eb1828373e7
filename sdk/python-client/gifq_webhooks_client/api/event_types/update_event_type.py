from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.event_type import EventType
from ...models.event_type_patch import EventTypePatch
from ...types import Response


def _get_kwargs(
    name: str,
    *,
    body: EventTypePatch,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "patch",
        "url": "/v1/event-types/{name}".format(
            name=quote(str(name), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | EventType | None:
    if response.status_code == 200:
        response_200 = EventType.from_dict(response.json())

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

    if response.status_code == 404:
        response_404 = Error.from_dict(response.json())

        return response_404

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Error | EventType]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: EventTypePatch,
) -> Response[Error | EventType]:
    """Change or deprecate an event type

     `{"deprecated": true}` deprecates it: events of the type are still validated and
    delivered, endpoints subscribed to it keep it, but no endpoint may newly subscribe to it
    (`false` undoes it). A new schema must accept the example (the stored one unless a new one
    comes with it). The name cannot change.

    Args:
        name (str):
        body (EventTypePatch):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | EventType]
    """

    kwargs = _get_kwargs(
        name=name,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: EventTypePatch,
) -> Error | EventType | None:
    """Change or deprecate an event type

     `{"deprecated": true}` deprecates it: events of the type are still validated and
    delivered, endpoints subscribed to it keep it, but no endpoint may newly subscribe to it
    (`false` undoes it). A new schema must accept the example (the stored one unless a new one
    comes with it). The name cannot change.

    Args:
        name (str):
        body (EventTypePatch):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | EventType
    """

    return sync_detailed(
        name=name,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: EventTypePatch,
) -> Response[Error | EventType]:
    """Change or deprecate an event type

     `{"deprecated": true}` deprecates it: events of the type are still validated and
    delivered, endpoints subscribed to it keep it, but no endpoint may newly subscribe to it
    (`false` undoes it). A new schema must accept the example (the stored one unless a new one
    comes with it). The name cannot change.

    Args:
        name (str):
        body (EventTypePatch):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | EventType]
    """

    kwargs = _get_kwargs(
        name=name,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: EventTypePatch,
) -> Error | EventType | None:
    """Change or deprecate an event type

     `{"deprecated": true}` deprecates it: events of the type are still validated and
    delivered, endpoints subscribed to it keep it, but no endpoint may newly subscribe to it
    (`false` undoes it). A new schema must accept the example (the stored one unless a new one
    comes with it). The name cannot change.

    Args:
        name (str):
        body (EventTypePatch):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | EventType
    """

    return (
        await asyncio_detailed(
            name=name,
            client=client,
            body=body,
        )
    ).parsed
