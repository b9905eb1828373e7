import datetime
from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.list_events_order import ListEventsOrder
from ...models.list_events_response_200 import ListEventsResponse200
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    type_: str | Unset = UNSET,
    order: ListEventsOrder | Unset = ListEventsOrder.NEWEST,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_since: str | Unset = UNSET
    if not isinstance(since, Unset):
        json_since = since.isoformat()
    params["since"] = json_since

    json_until: str | Unset = UNSET
    if not isinstance(until, Unset):
        json_until = until.isoformat()
    params["until"] = json_until

    params["type"] = type_

    json_order: str | Unset = UNSET
    if not isinstance(order, Unset):
        json_order = order.value

    params["order"] = json_order

    params["limit"] = limit

    params["cursor"] = cursor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/events",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | ListEventsResponse200 | None:
    if response.status_code == 200:
        response_200 = ListEventsResponse200.from_dict(response.json())

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
) -> Response[Error | ListEventsResponse200]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    type_: str | Unset = UNSET,
    order: ListEventsOrder | Unset = ListEventsOrder.NEWEST,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> Response[Error | ListEventsResponse200]:
    """The account's events in a window, newest or oldest first

     The events feed, for reconciliation: the events received between `since` and `until`
    (default: the 30-day retention up to now), optionally of one `type`, with their bodies.
    Test events are not listed. A page reads at most 500 events of the window and holds at most
    4 MiB of bodies, so it may hold fewer than `limit` (even none) while `next_cursor` is set:
    keep following `next_cursor` (with the same query) until it is empty.

    Args:
        since (datetime.datetime | Unset):
        until (datetime.datetime | Unset):
        type_ (str | Unset):
        order (ListEventsOrder | Unset):  Default: ListEventsOrder.NEWEST.
        limit (int | Unset):  Default: 20.
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ListEventsResponse200]
    """

    kwargs = _get_kwargs(
        since=since,
        until=until,
        type_=type_,
        order=order,
        limit=limit,
        cursor=cursor,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    type_: str | Unset = UNSET,
    order: ListEventsOrder | Unset = ListEventsOrder.NEWEST,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> Error | ListEventsResponse200 | None:
    """The account's events in a window, newest or oldest first

     The events feed, for reconciliation: the events received between `since` and `until`
    (default: the 30-day retention up to now), optionally of one `type`, with their bodies.
    Test events are not listed. A page reads at most 500 events of the window and holds at most
    4 MiB of bodies, so it may hold fewer than `limit` (even none) while `next_cursor` is set:
    keep following `next_cursor` (with the same query) until it is empty.

    Args:
        since (datetime.datetime | Unset):
        until (datetime.datetime | Unset):
        type_ (str | Unset):
        order (ListEventsOrder | Unset):  Default: ListEventsOrder.NEWEST.
        limit (int | Unset):  Default: 20.
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ListEventsResponse200
    """

    return sync_detailed(
        client=client,
        since=since,
        until=until,
        type_=type_,
        order=order,
        limit=limit,
        cursor=cursor,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    type_: str | Unset = UNSET,
    order: ListEventsOrder | Unset = ListEventsOrder.NEWEST,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> Response[Error | ListEventsResponse200]:
    """The account's events in a window, newest or oldest first

     The events feed, for reconciliation: the events received between `since` and `until`
    (default: the 30-day retention up to now), optionally of one `type`, with their bodies.
    Test events are not listed. A page reads at most 500 events of the window and holds at most
    4 MiB of bodies, so it may hold fewer than `limit` (even none) while `next_cursor` is set:
    keep following `next_cursor` (with the same query) until it is empty.

    Args:
        since (datetime.datetime | Unset):
        until (datetime.datetime | Unset):
        type_ (str | Unset):
        order (ListEventsOrder | Unset):  Default: ListEventsOrder.NEWEST.
        limit (int | Unset):  Default: 20.
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ListEventsResponse200]
    """

    kwargs = _get_kwargs(
        since=since,
        until=until,
        type_=type_,
        order=order,
        limit=limit,
        cursor=cursor,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    type_: str | Unset = UNSET,
    order: ListEventsOrder | Unset = ListEventsOrder.NEWEST,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> Error | ListEventsResponse200 | None:
    """The account's events in a window, newest or oldest first

     The events feed, for reconciliation: the events received between `since` and `until`
    (default: the 30-day retention up to now), optionally of one `type`, with their bodies.
    Test events are not listed. A page reads at most 500 events of the window and holds at most
    4 MiB of bodies, so it may hold fewer than `limit` (even none) while `next_cursor` is set:
    keep following `next_cursor` (with the same query) until it is empty.

    Args:
        since (datetime.datetime | Unset):
        until (datetime.datetime | Unset):
        type_ (str | Unset):
        order (ListEventsOrder | Unset):  Default: ListEventsOrder.NEWEST.
        limit (int | Unset):  Default: 20.
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ListEventsResponse200
    """

    return (
        await asyncio_detailed(
            client=client,
            since=since,
            until=until,
            type_=type_,
            order=order,
            limit=limit,
            cursor=cursor,
        )
    ).parsed
