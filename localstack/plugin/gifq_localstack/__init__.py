"""LocalStack plugins of gifq-webhooks: see executor.py and dynamodb.py."""
