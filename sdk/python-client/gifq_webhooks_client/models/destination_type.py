from enum import StrEnum


class DestinationType(StrEnum):
    AWS_EVENTBRIDGE = "aws_eventbridge"
    AWS_KINESIS = "aws_kinesis"
    AWS_SNS = "aws_sns"
    AWS_SQS = "aws_sqs"
    HTTP = "http"
    POLLING = "polling"

    def __str__(self) -> str:
        return str(self.value)
