from enum import StrEnum


class SignatureScheme(StrEnum):
    BOTH = "both"
    V1 = "v1"
    V1A = "v1a"

    def __str__(self) -> str:
        return str(self.value)
