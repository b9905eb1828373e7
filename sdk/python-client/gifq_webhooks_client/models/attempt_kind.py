from enum import StrEnum


class AttemptKind(StrEnum):
    AUTO = "auto"
    INTERRUPTED = "interrupted"
    MANUAL = "manual"

    def __str__(self) -> str:
        return str(self.value)
