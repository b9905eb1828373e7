from enum import StrEnum


class EndpointSettingsPatchResetItem(StrEnum):
    FILTER = "filter"
    HEADERS = "headers"
    OAUTH2 = "oauth2"
    RATE_LIMIT = "rate_limit"
    TIMEOUT_SECONDS = "timeout_seconds"
    TLS = "tls"

    def __str__(self) -> str:
        return str(self.value)
