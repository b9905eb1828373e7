"""DynamoDB for LocalStack served by moto.

LocalStack's own DynamoDB providers forward to DynamoDB Local, which they
download with a Java runtime; its licence is not acceptable here and neither
can be downloaded offline. moto, which LocalStack already depends on,
implements DynamoDB (conditions, transactions, GSIs, TTL settings). Every
operation falls through to it. Select with PROVIDER_OVERRIDE_DYNAMODB=moto.
"""

from localstack.aws.api.dynamodb import DynamodbApi
from localstack.services.moto import MotoFallbackDispatcher
from localstack.services.plugins import Service, aws_provider


class MotoDynamoDBProvider(DynamodbApi):
    """No methods of its own: the dispatcher hands each request to moto."""


@aws_provider(api="dynamodb", name="moto")
def dynamodb_moto():
    return Service.for_provider(MotoDynamoDBProvider(), dispatch_table_factory=MotoFallbackDispatcher)
