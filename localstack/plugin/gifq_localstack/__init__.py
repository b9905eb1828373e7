"""LocalStack plugins of gifq-webhooks: see executor.py, dynamodb.py and dynamodbstreams.py."""
