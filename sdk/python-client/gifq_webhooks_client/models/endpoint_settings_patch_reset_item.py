from enum import StrEnum


class EndpointSettingsPatchResetItem(StrEnum):
    FILTER = "filter"
    HEADERS = "headers"
    RATE_LIMIT = "rate_limit"
    TIMEOUT_SECONDS = "timeout_seconds"

    def __str__(self) -> str:
        return str(self.value)
