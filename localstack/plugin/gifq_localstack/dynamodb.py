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

moto keeps a TransactWriteItems' undo as a deep copy of each table it names,
made before every transaction: its cost grows with the table, and under the
one lock every other request waits for it. Over the e2e suite that copy came
to 56 % of LocalStack's CPU (py-spy), its calls took seconds, and tests with
deadlines failed late in the run. The undo here is a copy of the items the
transaction names (and the stream's length), restored when it fails.
"""

import copy
import threading
from binascii import crc32

from localstack.aws import handlers
from localstack.aws.api import RequestContext, ServiceRequest
from localstack.aws.api.dynamodb import DynamodbApi
from localstack.aws.forwarder import ForwardingFallbackDispatcher
from localstack.http import Response
from localstack.services.moto import call_moto
from localstack.services.plugins import Service, ServiceLifecycleHook, aws_provider
from moto.dynamodb import models

_LOCK = threading.Lock()


class _NoTableCopy:
    """moto's copy module as its TransactWriteItems sees it: a Table is not
    copied (the undo is _transact_write_items'), anything else is."""

    @staticmethod
    def deepcopy(x, memo=None):
        return x if isinstance(x, models.Table) else copy.deepcopy(x, memo)


def _transact_write_items(self, transact_items):
    saved, streams = [], {}
    for op in transact_items:
        body = next(iter(op.values()), {})
        table = self.tables.get(body.get("TableName"))
        if table is None:
            continue
        key = body.get("Key") or {a: v for a, v in body.get("Item", {}).items() if a in (table.hash_key_attr, table.range_key_attr)}
        try:
            hash_key, range_key = self.get_keys_value(table, key)
        except Exception:
            continue  # moto refuses the transaction for it, before any write
        saved.append((table, hash_key, range_key, copy.deepcopy(table.get_item(hash_key, range_key))))
        if table.stream_shard is not None:
            streams.setdefault(table, len(table.stream_shard.items))
    try:
        return _moto_transact_write_items(self, transact_items)
    except Exception:
        for table, hash_key, range_key, item in reversed(saved):
            held = table.items[hash_key] if range_key is not None else table.items
            key = range_key if range_key is not None else hash_key
            if item is None:
                held.pop(key, None)
            else:
                held[key] = item
        for table, n in streams.items():
            del table.stream_shard.items[n:]
        raise


models.copy = _NoTableCopy
_moto_transact_write_items = models.DynamoDBBackend.transact_write_items
models.DynamoDBBackend.transact_write_items = _transact_write_items


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
