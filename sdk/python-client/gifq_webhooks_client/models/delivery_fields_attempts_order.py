from enum import StrEnum


class DeliveryFieldsAttemptsOrder(StrEnum):
    NEWEST_FIRST = "newest_first"

    def __str__(self) -> str:
        return str(self.value)
