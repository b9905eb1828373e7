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

	"github.com/gifq/webhooks/shared/retry"
)

func TestClassOfMapsAWSErrorsOntoTheContract(t *testing.T) {
	tests := []struct {
		stage  Stage
		code   string
		status int
		class  string
		want   retry.Verdict
	}{
		// Only time fixes these: retried on the schedule.
		{StagePublish, "ThrottlingException", 400, retry.ErrAWSThrottled, retry.Retry},
		{StagePublish, "RequestThrottled", 403, retry.ErrAWSThrottled, retry.Retry},
		{StagePublish, "KmsThrottled", 400, retry.ErrAWSThrottled, retry.Retry},
		{StagePublish, "KMSThrottling", 400, retry.ErrAWSThrottled, retry.Retry},
		{StagePublish, "InternalError", 500, retry.ErrAWSUnavailable, retry.Retry},
		{StagePublish, "ServiceUnavailable", 503, retry.ErrAWSUnavailable, retry.Retry},
		{StagePublish, "SomethingNew", 502, retry.ErrAWSUnavailable, retry.Retry},
		{StagePublish, "InternalFailure", 0, retry.ErrAWSUnavailable, retry.Retry}, // a PutEvents entry
		{StagePublish, "ExpiredToken", 400, retry.ErrAWSUnavailable, retry.Retry},
		{StagePublish, "SomethingNew", 400, retry.ErrAWSError, retry.Retry},
		// The customer must change their account: failed for good.
		{StagePublish, "AccessDenied", 403, retry.ErrAWSAccessDenied, retry.Reject},
		{StagePublish, "AccessDeniedException", 400, retry.ErrAWSAccessDenied, retry.Reject},
		{StagePublish, "AuthorizationError", 403, retry.ErrAWSAccessDenied, retry.Reject},
		{StagePublish, "NotAuthorizedForSourceException", 0, retry.ErrAWSAccessDenied, retry.Reject},
		{StagePublish, "AWS.SimpleQueueService.NonExistentQueue", 400, retry.ErrAWSNotFound, retry.Reject},
		{StagePublish, "QueueDoesNotExist", 400, retry.ErrAWSNotFound, retry.Reject},
		{StagePublish, "NotFound", 404, retry.ErrAWSNotFound, retry.Reject},
		{StagePublish, "ResourceNotFoundException", 400, retry.ErrAWSNotFound, retry.Reject},
		{StagePublish, "KmsDisabled", 400, retry.ErrAWSKMS, retry.Reject},
		{StagePublish, "KMSAccessDenied", 400, retry.ErrAWSKMS, retry.Reject},
		{StagePublish, "KMS.NotFoundException", 400, retry.ErrAWSKMS, retry.Reject},
		{StagePublish, "InvalidParameterValue", 400, retry.ErrAWSInvalid, retry.Reject},
		{StagePublish, "ValidationException", 400, retry.ErrAWSInvalid, retry.Reject},
		// Assuming the role.
		{StageAssumeRole, "AccessDenied", 403, retry.ErrAWSAssumeRole, retry.Reject},
		{StageAssumeRole, "RegionDisabledException", 403, retry.ErrAWSAssumeRole, retry.Reject},
		{StageAssumeRole, "Throttling", 400, retry.ErrAWSThrottled, retry.Retry},
		{StageAssumeRole, "InternalFailure", 500, retry.ErrAWSUnavailable, retry.Retry},
		{StageAssumeRole, "SomethingNew", 400, retry.ErrAWSError, retry.Retry},
	}
	for _, tt := range tests {
		class := ClassOf(tt.stage, tt.code, tt.status)
		if class != tt.class {
			t.Errorf("%s %d at stage %d: %s, want %s", tt.code, tt.status, tt.stage, class, tt.class)
		}
		if v := retry.Classify(retry.Result{ErrorClass: class}); v != tt.want {
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
	if f.class != retry.ErrAWSKMS || f.text() != "KmsDisabled: The KMS key is disabled" {
		t.Fatalf("%+v", f)
	}
	if f := classify(StagePublish, awsError("Weird", "", 503)); f.class != retry.ErrAWSUnavailable {
		t.Fatalf("%+v", f)
	}
	f = classify(StageAssumeRole, fmt.Errorf("retrieve: %w", context.DeadlineExceeded))
	if f.class != retry.ErrTimeout || f.code != "" || !strings.HasPrefix(f.text(), "assuming the role: no response") {
		t.Fatalf("%+v", f)
	}
	f = classify(StagePublish, errors.New("dial tcp 127.0.0.1:1: connect: connection refused"))
	if f.class != retry.ErrNetwork || f.text() != "publishing: dial tcp 127.0.0.1:1: connect: connection refused" {
		t.Fatalf("%+v", f)
	}
	msg := classify(StagePublish, awsError("AccessDenied", strings.Repeat("é", 400), 403)).text()
	if len(msg) > maxErrorText+len("…") || !strings.HasSuffix(msg, "…") || !utf8.ValidString(msg) {
		t.Fatalf("%d bytes: %q", len(msg), msg)
	}
}
