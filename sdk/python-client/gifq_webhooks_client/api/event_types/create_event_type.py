from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.event_type import EventType
from ...models.new_event_type import NewEventType
from ...types import Response


def _get_kwargs(
    *,
    body: NewEventType,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/event-types",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | EventType | None:
    if response.status_code == 201:
        response_201 = EventType.from_dict(response.json())

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
    *,
    client: AuthenticatedClient | Client,
    body: NewEventType,
) -> Response[Error | EventType]:
    """Add an event type to the account's catalog (at most 250)

     The catalog is optional: until an account has one, any event type goes and endpoints may
    name any. Once it has one, an event whose type has a schema must pass it (422
    `schema_mismatch` otherwise), an event of a type not in the catalog still goes, and an
    endpoint's `event_types` must name catalogued, non-deprecated types. The schema is JSON
    Schema draft 2020-12, self-contained (no `$ref` outside it), at most 64 KiB; the example is
    an event body (its `event` is the name) and must pass the schema.

    Args:
        body (NewEventType):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | EventType]
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
    body: NewEventType,
) -> Error | EventType | None:
    """Add an event type to the account's catalog (at most 250)

     The catalog is optional: until an account has one, any event type goes and endpoints may
    name any. Once it has one, an event whose type has a schema must pass it (422
    `schema_mismatch` otherwise), an event of a type not in the catalog still goes, and an
    endpoint's `event_types` must name catalogued, non-deprecated types. The schema is JSON
    Schema draft 2020-12, self-contained (no `$ref` outside it), at most 64 KiB; the example is
    an event body (its `event` is the name) and must pass the schema.

    Args:
        body (NewEventType):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | EventType
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: NewEventType,
) -> Response[Error | EventType]:
    """Add an event type to the account's catalog (at most 250)

     The catalog is optional: until an account has one, any event type goes and endpoints may
    name any. Once it has one, an event whose type has a schema must pass it (422
    `schema_mismatch` otherwise), an event of a type not in the catalog still goes, and an
    endpoint's `event_types` must name catalogued, non-deprecated types. The schema is JSON
    Schema draft 2020-12, self-contained (no `$ref` outside it), at most 64 KiB; the example is
    an event body (its `event` is the name) and must pass the schema.

    Args:
        body (NewEventType):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | EventType]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: NewEventType,
) -> Error | EventType | None:
    """Add an event type to the account's catalog (at most 250)

     The catalog is optional: until an account has one, any event type goes and endpoints may
    name any. Once it has one, an event whose type has a schema must pass it (422
    `schema_mismatch` otherwise), an event of a type not in the catalog still goes, and an
    endpoint's `event_types` must name catalogued, non-deprecated types. The schema is JSON
    Schema draft 2020-12, self-contained (no `$ref` outside it), at most 64 KiB; the example is
    an event body (its `event` is the name) and must pass the schema.

    Args:
        body (NewEventType):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | EventType
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
