package awsdest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/gifq/webhooks/shared/destination"
)

func TestClassOfMapsAWSErrorsOntoTheContract(t *testing.T) {
	tests := []struct {
		stage  Stage
		code   string
		status int
		class  string
		want   destination.Verdict
	}{
		// Only time fixes these: retried on the schedule.
		{StagePublish, "ThrottlingException", 400, ErrThrottled, destination.Retry},
		{StagePublish, "RequestThrottled", 403, ErrThrottled, destination.Retry},
		{StagePublish, "KmsThrottled", 400, ErrThrottled, destination.Retry},
		{StagePublish, "KMSThrottling", 400, ErrThrottled, destination.Retry},
		{StagePublish, "InternalError", 500, ErrUnavailable, destination.Retry},
		{StagePublish, "ServiceUnavailable", 503, ErrUnavailable, destination.Retry},
		{StagePublish, "SomethingNew", 502, ErrUnavailable, destination.Retry},
		{StagePublish, "InternalFailure", 0, ErrUnavailable, destination.Retry}, // a PutEvents entry
		{StagePublish, "ExpiredToken", 400, ErrUnavailable, destination.Retry},
		{StagePublish, "SomethingNew", 400, ErrUnknown, destination.Retry},
		// The customer must change their account: failed for good.
		{StagePublish, "AccessDenied", 403, ErrAccessDenied, destination.Rejected},
		{StagePublish, "AccessDeniedException", 400, ErrAccessDenied, destination.Rejected},
		{StagePublish, "AuthorizationError", 403, ErrAccessDenied, destination.Rejected},
		{StagePublish, "NotAuthorizedForSourceException", 0, ErrAccessDenied, destination.Rejected},
		{StagePublish, "AWS.SimpleQueueService.NonExistentQueue", 400, ErrNotFound, destination.Rejected},
		{StagePublish, "QueueDoesNotExist", 400, ErrNotFound, destination.Rejected},
		{StagePublish, "NotFound", 404, ErrNotFound, destination.Rejected},
		{StagePublish, "ResourceNotFoundException", 400, ErrNotFound, destination.Rejected},
		{StagePublish, "KmsDisabled", 400, ErrKMS, destination.Rejected},
		{StagePublish, "KMSAccessDenied", 400, ErrKMS, destination.Rejected},
		{StagePublish, "KMS.NotFoundException", 400, ErrKMS, destination.Rejected},
		{StagePublish, "InvalidParameterValue", 400, ErrInvalid, destination.Rejected},
		{StagePublish, "ValidationException", 400, ErrInvalid, destination.Rejected},
		// Assuming the role.
		{StageAssumeRole, "AccessDenied", 403, ErrAssumeRole, destination.Rejected},
		{StageAssumeRole, "RegionDisabledException", 403, ErrAssumeRole, destination.Rejected},
		{StageAssumeRole, "Throttling", 400, ErrThrottled, destination.Retry},
		{StageAssumeRole, "InternalFailure", 500, ErrUnavailable, destination.Retry},
		{StageAssumeRole, "SomethingNew", 400, ErrUnknown, destination.Retry},
	}
	for _, tt := range tests {
		class := ClassOf(tt.stage, tt.code, tt.status)
		if class != tt.class {
			t.Errorf("%s %d at stage %d: %s, want %s", tt.code, tt.status, tt.stage, class, tt.class)
		}
		if v := VerdictOf(class); v != tt.want {
			t.Errorf("%s: %s classifies %s, want %s", tt.code, class, v, tt.want)
		}
	}
}

// awsError is an error as the SDK returns one: the service's code inside
// the HTTP response error.
func awsError(code, message string, status int) error {
	return &awshttp.ResponseError{
		ResponseError: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
			Err: &smithy.GenericAPIError{Code: code, Message: message}},
	}
}

func TestClassifyReadsTheSDKError(t *testing.T) {
	err := fmt.Errorf("operation error SQS: SendMessage: %w", awsError("KmsDisabled", "The KMS key is disabled", 400))
	f := classify(StagePublish, err)
	if f.class != ErrKMS || f.text() != "KmsDisabled: The KMS key is disabled" {
		t.Fatalf("%+v", f)
	}
	if f := classify(StagePublish, awsError("Weird", "", 503)); f.class != ErrUnavailable {
		t.Fatalf("%+v", f)
	}
	f = classify(StageAssumeRole, fmt.Errorf("retrieve: %w", context.DeadlineExceeded))
	if f.class != ErrTimeout || f.code != "" || !strings.HasPrefix(f.text(), "assuming the role: no response") {
		t.Fatalf("%+v", f)
	}
	f = classify(StagePublish, errors.New("dial tcp 127.0.0.1:1: connect: connection refused"))
	if f.class != ErrNetwork || f.text() != "publishing: dial tcp 127.0.0.1:1: connect: connection refused" {
		t.Fatalf("%+v", f)
	}
	msg := classify(StagePublish, awsError("AccessDenied", strings.Repeat("é", 400), 403)).text()
	if len(msg) > maxErrorText+len("…") || !strings.HasSuffix(msg, "…") || !utf8.ValidString(msg) {
		t.Fatalf("%d bytes: %q", len(msg), msg)
	}
}
