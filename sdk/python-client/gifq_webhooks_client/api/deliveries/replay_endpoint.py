from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.replay_endpoint_body import ReplayEndpointBody
from ...models.replay_endpoint_response_202 import ReplayEndpointResponse202
from ...types import Response


def _get_kwargs(
    id: str,
    *,
    body: ReplayEndpointBody,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/endpoints/{id}/replay".format(
            id=quote(str(id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | ReplayEndpointResponse202 | None:
    if response.status_code == 202:
        response_202 = ReplayEndpointResponse202.from_dict(response.json())

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


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Error | ReplayEndpointResponse202]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    body: ReplayEndpointBody,
) -> Response[Error | ReplayEndpointResponse202]:
    """Deliver the events of a window the endpoint missed

     Delivers to the endpoint the events received between `since` and `until` that match its
    `event_types` and never had a delivery to it (it was created or re-filtered after them); test events
    are not replayed, nor events within an hour of the end of their 30-day retention (their delivery
    would fail as `event_expired` at once; counted in `skipped`). Each call reads at most 1,000 events
    and makes at most 100 deliveries, paced by the account's rate like new events; while `more`, call
    again with the same window and `cursor` set to `next_cursor`. Calling it again sends nothing twice.
    `since` must be within the 30-day retention (else 422 `window_past_retention`). Counts as one event
    against the API key's ingest limit.

    Args:
        id (str):
        body (ReplayEndpointBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ReplayEndpointResponse202]
    """

    kwargs = _get_kwargs(
        id=id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    body: ReplayEndpointBody,
) -> Error | ReplayEndpointResponse202 | None:
    """Deliver the events of a window the endpoint missed

     Delivers to the endpoint the events received between `since` and `until` that match its
    `event_types` and never had a delivery to it (it was created or re-filtered after them); test events
    are not replayed, nor events within an hour of the end of their 30-day retention (their delivery
    would fail as `event_expired` at once; counted in `skipped`). Each call reads at most 1,000 events
    and makes at most 100 deliveries, paced by the account's rate like new events; while `more`, call
    again with the same window and `cursor` set to `next_cursor`. Calling it again sends nothing twice.
    `since` must be within the 30-day retention (else 422 `window_past_retention`). Counts as one event
    against the API key's ingest limit.

    Args:
        id (str):
        body (ReplayEndpointBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ReplayEndpointResponse202
    """

    return sync_detailed(
        id=id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    body: ReplayEndpointBody,
) -> Response[Error | ReplayEndpointResponse202]:
    """Deliver the events of a window the endpoint missed

     Delivers to the endpoint the events received between `since` and `until` that match its
    `event_types` and never had a delivery to it (it was created or re-filtered after them); test events
    are not replayed, nor events within an hour of the end of their 30-day retention (their delivery
    would fail as `event_expired` at once; counted in `skipped`). Each call reads at most 1,000 events
    and makes at most 100 deliveries, paced by the account's rate like new events; while `more`, call
    again with the same window and `cursor` set to `next_cursor`. Calling it again sends nothing twice.
    `since` must be within the 30-day retention (else 422 `window_past_retention`). Counts as one event
    against the API key's ingest limit.

    Args:
        id (str):
        body (ReplayEndpointBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ReplayEndpointResponse202]
    """

    kwargs = _get_kwargs(
        id=id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    body: ReplayEndpointBody,
) -> Error | ReplayEndpointResponse202 | None:
    """Deliver the events of a window the endpoint missed

     Delivers to the endpoint the events received between `since` and `until` that match its
    `event_types` and never had a delivery to it (it was created or re-filtered after them); test events
    are not replayed, nor events within an hour of the end of their 30-day retention (their delivery
    would fail as `event_expired` at once; counted in `skipped`). Each call reads at most 1,000 events
    and makes at most 100 deliveries, paced by the account's rate like new events; while `more`, call
    again with the same window and `cursor` set to `next_cursor`. Calling it again sends nothing twice.
    `since` must be within the 30-day retention (else 422 `window_past_retention`). Counts as one event
    against the API key's ingest limit.

    Args:
        id (str):
        body (ReplayEndpointBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ReplayEndpointResponse202
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            body=body,
        )
    ).parsed
