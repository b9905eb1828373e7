"""DynamoDB Streams for LocalStack served by moto, beside dynamodb.py.

With DynamoDB on moto, the table's stream lives in moto (each write appends
a record to the table's one shard). LocalStack's own Streams providers read
theirs elsewhere (DynamoDB Local, or records its own DynamoDB provider
forwards), so its Lambda event source mapping, which asks the
dynamodbstreams service (DescribeStream, GetShardIterator, GetRecords), found
no stream: CreateEventSourceMapping failed with "Stream not found". moto
implements those calls on the same tables; every operation falls through to
it, under dynamodb.py's lock (they read the tables that writes change).
Select with PROVIDER_OVERRIDE_DYNAMODBSTREAMS=moto.

What differs from AWS: one shard per table that is never closed or trimmed
(records stay in memory for the life of LocalStack), and every GetRecords
keeps its next iterator in memory.
"""

from localstack.aws.api import RequestContext, ServiceRequest
from localstack.aws.api.dynamodbstreams import DynamodbstreamsApi
from localstack.aws.forwarder import ForwardingFallbackDispatcher
from localstack.services.moto import call_moto
from localstack.services.plugins import Service, aws_provider

from gifq_localstack.dynamodb import _LOCK


class MotoDynamoDBStreamsProvider(DynamodbstreamsApi):
    """No methods of its own: the dispatcher hands each request to moto."""


def _call_moto_serialised(context: RequestContext, request: ServiceRequest):
    with _LOCK:
        return call_moto(context)


@aws_provider(api="dynamodbstreams", name="moto")
def dynamodbstreams_moto():
    return Service.for_provider(
        MotoDynamoDBStreamsProvider(),
        dispatch_table_factory=lambda provider: ForwardingFallbackDispatcher(provider, _call_moto_serialised),
    )
