from enum import StrEnum


class EndpointOAuth2AuthMethod(StrEnum):
    CLIENT_SECRET_BASIC = "client_secret_basic"
    CLIENT_SECRET_POST = "client_secret_post"
    PRIVATE_KEY_JWT = "private_key_jwt"

    def __str__(self) -> str:
        return str(self.value)
