"""Contains all the data models used in inputs/outputs"""

from .accepted_event import AcceptedEvent
from .accepted_event_deliveries_item import AcceptedEventDeliveriesItem
from .account import Account
from .attempt import Attempt
from .attempt_kind import AttemptKind
from .aws_destination import AWSDestination
from .batch_answer import BatchAnswer
from .batch_request import BatchRequest
from .batch_request_events_item import BatchRequestEventsItem
from .batch_result import BatchResult
from .batch_result_status import BatchResultStatus
from .breaker import Breaker
from .breaker_state import BreakerState
from .commit_poll_body import CommitPollBody
from .commit_poll_response_200 import CommitPollResponse200
from .create_portal_session_body import CreatePortalSessionBody
from .create_portal_session_response_201 import CreatePortalSessionResponse201
from .delivery import Delivery
from .delivery_fields import DeliveryFields
from .delivery_fields_attempts_order import DeliveryFieldsAttemptsOrder
from .delivery_status import DeliveryStatus
from .delivery_with_attempts import DeliveryWithAttempts
from .destination_type import DestinationType
from .endpoint import Endpoint
from .endpoint_fields import EndpointFields
from .endpoint_filter import EndpointFilter
from .endpoint_headers import EndpointHeaders
from .endpoint_health import EndpointHealth
from .endpoint_health_breaker import EndpointHealthBreaker
from .endpoint_o_auth_2 import EndpointOAuth2
from .endpoint_o_auth_2_auth_method import EndpointOAuth2AuthMethod
from .endpoint_o_auth_2_view import EndpointOAuth2View
from .endpoint_o_auth_2_view_auth_method import EndpointOAuth2ViewAuthMethod
from .endpoint_patch import EndpointPatch
from .endpoint_settings import EndpointSettings
from .endpoint_settings_headers import EndpointSettingsHeaders
from .endpoint_settings_patch import EndpointSettingsPatch
from .endpoint_settings_patch_reset_item import EndpointSettingsPatchResetItem
from .endpoint_tls import EndpointTLS
from .endpoint_tls_view import EndpointTLSView
from .endpoint_with_secret import EndpointWithSecret
from .error import Error
from .error_detail import ErrorDetail
from .event import Event
from .event_body import EventBody
from .event_type import EventType
from .event_type_example import EventTypeExample
from .event_type_patch import EventTypePatch
from .feed_event import FeedEvent
from .get_egress_i_ps_response_200 import GetEgressIPsResponse200
from .get_jwks_response_200 import GetJwksResponse200
from .get_jwks_response_200_keys_item import GetJwksResponse200KeysItem
from .get_open_api_response_200 import GetOpenApiResponse200
from .health_response_200 import HealthResponse200
from .list_delivery_attempts_response_200 import ListDeliveryAttemptsResponse200
from .list_endpoint_deliveries_response_200 import ListEndpointDeliveriesResponse200
from .list_endpoints_response_200 import ListEndpointsResponse200
from .list_event_types_response_200 import ListEventTypesResponse200
from .list_events_order import ListEventsOrder
from .list_events_response_200 import ListEventsResponse200
from .list_portal_sessions_response_200 import ListPortalSessionsResponse200
from .new_endpoint import NewEndpoint
from .new_endpoint_settings import NewEndpointSettings
from .new_event_type import NewEventType
from .notification_emails import NotificationEmails
from .poll_endpoint_response_200 import PollEndpointResponse200
from .portal_session import PortalSession
from .portal_session_status import PortalSessionStatus
from .recover_endpoint_body import RecoverEndpointBody
from .recover_endpoint_response_202 import RecoverEndpointResponse202
from .replay_endpoint_body import ReplayEndpointBody
from .replay_endpoint_response_202 import ReplayEndpointResponse202
from .resend_delivery_response_202 import ResendDeliveryResponse202
from .revoke_portal_sessions_response_200 import RevokePortalSessionsResponse200
from .rotate_secret_body import RotateSecretBody
from .rotate_signing_key_body import RotateSigningKeyBody
from .rotated_endpoint import RotatedEndpoint
from .send_test_event_body import SendTestEventBody
from .signature_scheme import SignatureScheme
from .signing_keys import SigningKeys
from .signing_keys_data_item import SigningKeysDataItem
from .stats import Stats
from .stats_latency_ms import StatsLatencyMs
from .stats_series_item import StatsSeriesItem
from .stats_status_classes import StatsStatusClasses
from .stats_window import StatsWindow
from .test_filter_body import TestFilterBody
from .test_filter_body_body import TestFilterBodyBody
from .test_filter_response_200 import TestFilterResponse200
from .test_filter_response_200_body import TestFilterResponse200Body

__all__ = (
    "AcceptedEvent",
    "AcceptedEventDeliveriesItem",
    "Account",
    "Attempt",
    "AttemptKind",
    "AWSDestination",
    "BatchAnswer",
    "BatchRequest",
    "BatchRequestEventsItem",
    "BatchResult",
    "BatchResultStatus",
    "Breaker",
    "BreakerState",
    "CommitPollBody",
    "CommitPollResponse200",
    "CreatePortalSessionBody",
    "CreatePortalSessionResponse201",
    "Delivery",
    "DeliveryFields",
    "DeliveryFieldsAttemptsOrder",
    "DeliveryStatus",
    "DeliveryWithAttempts",
    "DestinationType",
    "Endpoint",
    "EndpointFields",
    "EndpointFilter",
    "EndpointHeaders",
    "EndpointHealth",
    "EndpointHealthBreaker",
    "EndpointOAuth2",
    "EndpointOAuth2AuthMethod",
    "EndpointOAuth2View",
    "EndpointOAuth2ViewAuthMethod",
    "EndpointPatch",
    "EndpointSettings",
    "EndpointSettingsHeaders",
    "EndpointSettingsPatch",
    "EndpointSettingsPatchResetItem",
    "EndpointTLS",
    "EndpointTLSView",
    "EndpointWithSecret",
    "Error",
    "ErrorDetail",
    "Event",
    "EventBody",
    "EventType",
    "EventTypeExample",
    "EventTypePatch",
    "FeedEvent",
    "GetEgressIPsResponse200",
    "GetJwksResponse200",
    "GetJwksResponse200KeysItem",
    "GetOpenApiResponse200",
    "HealthResponse200",
    "ListDeliveryAttemptsResponse200",
    "ListEndpointDeliveriesResponse200",
    "ListEndpointsResponse200",
    "ListEventsOrder",
    "ListEventsResponse200",
    "ListEventTypesResponse200",
    "ListPortalSessionsResponse200",
    "NewEndpoint",
    "NewEndpointSettings",
    "NewEventType",
    "NotificationEmails",
    "PollEndpointResponse200",
    "PortalSession",
    "PortalSessionStatus",
    "RecoverEndpointBody",
    "RecoverEndpointResponse202",
    "ReplayEndpointBody",
    "ReplayEndpointResponse202",
    "ResendDeliveryResponse202",
    "RevokePortalSessionsResponse200",
    "RotatedEndpoint",
    "RotateSecretBody",
    "RotateSigningKeyBody",
    "SendTestEventBody",
    "SignatureScheme",
    "SigningKeys",
    "SigningKeysDataItem",
    "Stats",
    "StatsLatencyMs",
    "StatsSeriesItem",
    "StatsStatusClasses",
    "StatsWindow",
    "TestFilterBody",
    "TestFilterBodyBody",
    "TestFilterResponse200",
    "TestFilterResponse200Body",
)
