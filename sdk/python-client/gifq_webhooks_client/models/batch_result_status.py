from enum import IntEnum


class BatchResultStatus(IntEnum):
    VALUE_202 = 202
    VALUE_400 = 400
    VALUE_409 = 409
    VALUE_413 = 413
    VALUE_422 = 422
    VALUE_500 = 500

    def __str__(self) -> str:
        return str(self.value)
