from enum import StrEnum


class EndpointHealthBreaker(StrEnum):
    CLOSED = "closed"
    HALF_OPEN = "half_open"
    OPEN = "open"
    PROBING = "probing"

    def __str__(self) -> str:
        return str(self.value)
