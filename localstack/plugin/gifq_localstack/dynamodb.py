"""DynamoDB for LocalStack served by moto.

LocalStack's own DynamoDB providers forward to DynamoDB Local, which they
download with a Java runtime; its licence is not acceptable here and neither
can be downloaded offline. moto, which LocalStack already depends on,
implements DynamoDB (conditions, transactions, GSIs, TTL settings). Every
operation falls through to it. Select with PROVIDER_OVERRIDE_DYNAMODB=moto.

moto's DynamoDB backend is not safe for concurrent requests (two
TransactWriteItems at once failed with "dictionary changed size during
iteration", a 500 to the caller), so requests are served one at a time, as
one partition of real DynamoDB serialises conflicting writes anyway.

Real DynamoDB sends every answer with X-Amz-Crc32, the CRC32 of its body,
which the AWS SDKs check. Answers through moto came without it, so the Go
SDK found a mismatch (expected 0) on every call and logged a warning; the
header is added here to each answer as it leaves, as LocalStack's own
DynamoDB provider does.
"""

import threading
from binascii import crc32

from localstack.aws import handlers
from localstack.aws.api import RequestContext, ServiceRequest
from localstack.aws.api.dynamodb import DynamodbApi
from localstack.aws.forwarder import ForwardingFallbackDispatcher
from localstack.http import Response
from localstack.services.moto import call_moto
from localstack.services.plugins import Service, ServiceLifecycleHook, aws_provider

_LOCK = threading.Lock()


def _add_crc32(chain, context: RequestContext, response: Response):
    response.headers["x-amz-crc32"] = str(crc32(response.data) & 0xFFFFFFFF)


class MotoDynamoDBProvider(DynamodbApi, ServiceLifecycleHook):
    """No methods of its own: the dispatcher hands each request to moto."""

    def on_after_init(self):
        handlers.modify_service_response.append(self.service, _add_crc32)


def _call_moto_serialised(context: RequestContext, request: ServiceRequest):
    with _LOCK:
        return call_moto(context)


@aws_provider(api="dynamodb", name="moto")
def dynamodb_moto():
    return Service.for_provider(
        MotoDynamoDBProvider(),
        dispatch_table_factory=lambda provider: ForwardingFallbackDispatcher(provider, _call_moto_serialised),
    )
