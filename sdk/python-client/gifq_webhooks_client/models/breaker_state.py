from enum import StrEnum


class BreakerState(StrEnum):
    HALF_OPEN = "half_open"
    OPEN = "open"
    PROBING = "probing"

    def __str__(self) -> str:
        return str(self.value)
