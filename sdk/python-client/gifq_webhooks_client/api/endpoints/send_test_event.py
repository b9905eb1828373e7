from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.accepted_event import AcceptedEvent
from ...models.error import Error
from ...models.send_test_event_body import SendTestEventBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    id: str,
    *,
    body: SendTestEventBody | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/endpoints/{id}/test-event".format(
            id=quote(str(id), safe=""),
        ),
    }

    if not isinstance(body, Unset):
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

    if response.status_code == 404:
        response_404 = Error.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = Error.from_dict(response.json())

        return response_409

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
    id: str,
    *,
    client: AuthenticatedClient | Client,
    body: SendTestEventBody | Unset = UNSET,
) -> Response[AcceptedEvent | Error]:
    """Send this endpoint a test event

     An event `webhook.test` with `endpoint_id` and `sent_at`, delivered to this endpoint only
    (whatever its `event_types`), signed and retried like any other. With `event_type`, the
    catalog's example of that type is sent instead (the `webhook.test` body when the type has
    no example). Not for a polling endpoint (409).

    Args:
        id (str):
        body (SendTestEventBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AcceptedEvent | Error]
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
    body: SendTestEventBody | Unset = UNSET,
) -> AcceptedEvent | Error | None:
    """Send this endpoint a test event

     An event `webhook.test` with `endpoint_id` and `sent_at`, delivered to this endpoint only
    (whatever its `event_types`), signed and retried like any other. With `event_type`, the
    catalog's example of that type is sent instead (the `webhook.test` body when the type has
    no example). Not for a polling endpoint (409).

    Args:
        id (str):
        body (SendTestEventBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AcceptedEvent | Error
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
    body: SendTestEventBody | Unset = UNSET,
) -> Response[AcceptedEvent | Error]:
    """Send this endpoint a test event

     An event `webhook.test` with `endpoint_id` and `sent_at`, delivered to this endpoint only
    (whatever its `event_types`), signed and retried like any other. With `event_type`, the
    catalog's example of that type is sent instead (the `webhook.test` body when the type has
    no example). Not for a polling endpoint (409).

    Args:
        id (str):
        body (SendTestEventBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AcceptedEvent | Error]
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
    body: SendTestEventBody | Unset = UNSET,
) -> AcceptedEvent | Error | None:
    """Send this endpoint a test event

     An event `webhook.test` with `endpoint_id` and `sent_at`, delivered to this endpoint only
    (whatever its `event_types`), signed and retried like any other. With `event_type`, the
    catalog's example of that type is sent instead (the `webhook.test` body when the type has
    no example). Not for a polling endpoint (409).

    Args:
        id (str):
        body (SendTestEventBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AcceptedEvent | Error
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            body=body,
        )
    ).parsed
