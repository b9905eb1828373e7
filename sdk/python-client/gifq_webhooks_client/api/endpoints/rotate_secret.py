from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.rotate_secret_body import RotateSecretBody
from ...models.rotated_endpoint import RotatedEndpoint
from ...types import UNSET, Response, Unset


def _get_kwargs(
    id: str,
    *,
    body: RotateSecretBody | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/endpoints/{id}/rotate-secret".format(
            id=quote(str(id), safe=""),
        ),
    }

    if not isinstance(body, Unset):
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | RotatedEndpoint | None:
    if response.status_code == 200:
        response_200 = RotatedEndpoint.from_dict(response.json())

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


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Error | RotatedEndpoint]:
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
    body: RotateSecretBody | Unset = UNSET,
) -> Response[Error | RotatedEndpoint]:
    """New secret; the previous one keeps signing for a grace period

     At most two secrets sign a delivery: the current one and, for at most 24 h after a
    rotation, the previous one. A rotation while the previous secret still signs is a 409
    `previous_secret_live` (nothing changes) unless the body says `expire_previous_now`:
    then that previous secret stops signing at once, the current one becomes the previous
    one, and the new one signs from now on.

    Args:
        id (str):
        body (RotateSecretBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RotatedEndpoint]
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
    body: RotateSecretBody | Unset = UNSET,
) -> Error | RotatedEndpoint | None:
    """New secret; the previous one keeps signing for a grace period

     At most two secrets sign a delivery: the current one and, for at most 24 h after a
    rotation, the previous one. A rotation while the previous secret still signs is a 409
    `previous_secret_live` (nothing changes) unless the body says `expire_previous_now`:
    then that previous secret stops signing at once, the current one becomes the previous
    one, and the new one signs from now on.

    Args:
        id (str):
        body (RotateSecretBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RotatedEndpoint
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
    body: RotateSecretBody | Unset = UNSET,
) -> Response[Error | RotatedEndpoint]:
    """New secret; the previous one keeps signing for a grace period

     At most two secrets sign a delivery: the current one and, for at most 24 h after a
    rotation, the previous one. A rotation while the previous secret still signs is a 409
    `previous_secret_live` (nothing changes) unless the body says `expire_previous_now`:
    then that previous secret stops signing at once, the current one becomes the previous
    one, and the new one signs from now on.

    Args:
        id (str):
        body (RotateSecretBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | RotatedEndpoint]
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
    body: RotateSecretBody | Unset = UNSET,
) -> Error | RotatedEndpoint | None:
    """New secret; the previous one keeps signing for a grace period

     At most two secrets sign a delivery: the current one and, for at most 24 h after a
    rotation, the previous one. A rotation while the previous secret still signs is a 409
    `previous_secret_live` (nothing changes) unless the body says `expire_previous_now`:
    then that previous secret stops signing at once, the current one becomes the previous
    one, and the new one signs from now on.

    Args:
        id (str):
        body (RotateSecretBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | RotatedEndpoint
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            body=body,
        )
    ).parsed
