package awsdest

import (
	"context"
	"errors"
	"net"
	"strings"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/gifq/webhooks/shared/retry"
)

// Stage is where in an attempt an AWS error came back.
type Stage int

// The stages of an AWS attempt.
const (
	StageAssumeRole Stage = iota // sts:AssumeRole into the customer's role
	StagePublish                 // SendMessage, Publish or PutEvents as that role
)

// The AWS error codes by meaning, lower-cased: SQS (JSON protocol and the
// older query names), SNS, EventBridge (its PutEvents entries too), STS and
// the KMS errors the three report for an encrypted target.
var (
	throttledCodes = set("throttling", "throttlingexception", "throttled", "throttledexception", "requestthrottled",
		"requestthrottledexception", "toomanyrequestsexception", "requestlimitexceeded", "limitexceededexception",
		"aws.simplequeueservice.requestthrottled", "slowdown")
	unavailableCodes = set("internalerror", "internalfailure", "internalexception", "internalservererror",
		"serviceunavailable", "serviceunavailableexception", "requesttimeout", "requesttimeoutexception",
		"expiredtoken", "expiredtokenexception", "idpcommunicationerror", "kmsinternal", "kms.kmsinternalexception",
		"kms.keyunavailableexception", "keyunavailableexception")
	accessCodes = set("accessdenied", "accessdeniedexception", "authorizationerror", "notauthorizedforsourceexception",
		"invalidsecurity", "forbidden")
	notFoundCodes = set("queuedoesnotexist", "aws.simplequeueservice.nonexistentqueue", "nonexistentqueue", "notfound",
		"notfoundexception", "resourcenotfoundexception", "queuedeletedrecently")
	invalidCodes = set("invalidmessagecontents", "invalidparameter", "invalidparametervalue", "invalidparameterexception",
		"invalidparametervalueexception", "validationexception", "validationerror", "malformeddetail", "invalidargument",
		"unsupportedoperation", "invalidattributevalue", "invalidattributename", "messagetoolong", "batchrequesttoolong",
		"invalidaddress")
	// The role cannot be assumed at all: its trust policy, our ExternalId,
	// STS off in the region, or a malformed role.
	assumeRefusedCodes = set("accessdenied", "accessdeniedexception", "regiondisabledexception",
		"malformedpolicydocument", "malformedpolicydocumentexception", "packedpolicytoolarge", "validationerror",
		"invalidparametervalue", "notfound", "nosuchentity")
)

func set(codes ...string) map[string]bool {
	m := make(map[string]bool, len(codes))
	for _, c := range codes {
		m[c] = true
	}
	return m
}

// ClassOf maps an AWS error (its code and HTTP status; status 0 when
// unknown) at stage onto the attempt log's error class, and so, through
// retry.Classify, onto the contract. The reasons are in
// docs/destinations.md: what only time fixes is retried; what needs the
// customer to change their account fails the delivery at once, like a 4xx,
// and the redrive sends it again once they have; what we do not know is
// retried, which costs attempts but loses nothing.
func ClassOf(stage Stage, code string, status int) string {
	c := strings.ToLower(code)
	switch {
	case throttledCodes[c] || strings.Contains(c, "throttl"):
		return retry.ErrAWSThrottled
	case unavailableCodes[c] || status >= 500:
		return retry.ErrAWSUnavailable
	case stage == StageAssumeRole && assumeRefusedCodes[c]:
		return retry.ErrAWSAssumeRole
	case stage == StageAssumeRole:
		return retry.ErrAWSError
	case strings.HasPrefix(c, "kms"):
		// KmsDisabled, KMSAccessDenied, KMS.NotFoundException, ...: the
		// target's key refuses us until its owner changes it.
		return retry.ErrAWSKMS
	case accessCodes[c]:
		return retry.ErrAWSAccessDenied
	case notFoundCodes[c]:
		return retry.ErrAWSNotFound
	case invalidCodes[c]:
		return retry.ErrAWSInvalid
	}
	return retry.ErrAWSError
}

// maxErrorText bounds the attempt log's error: AWS messages name ARNs and
// policies, useful to the customer, but never need to be long.
const maxErrorText = 300

// failure is an AWS attempt's error in the attempt log's terms.
type failure struct {
	class   string // the attempt's error_class
	code    string // AWS's error code; empty when AWS did not answer
	message string
}

// text is the attempt's error: "<AWS code>: <AWS message>", bounded.
func (f failure) text() string {
	if f.code == "" {
		return clip(f.message)
	}
	return clip(f.code + ": " + f.message)
}

// classify reads an SDK error at stage. An error without an AWS answer is
// a transport error and takes the HTTP sender's classes, so the breaker
// counts it alike; the SDK's own text names the operation and AWS's
// endpoint, no secret (a queue's URL is its ARN's parts), and tells a DNS
// failure from a refused connection.
func classify(stage Stage, err error) failure {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		status := 0
		var re *awshttp.ResponseError
		if errors.As(err, &re) {
			status = re.HTTPStatusCode()
		}
		return failure{ClassOf(stage, apiErr.ErrorCode(), status), apiErr.ErrorCode(), apiErr.ErrorMessage()}
	}
	prefix := "publishing: "
	if stage == StageAssumeRole {
		prefix = "assuming the role: "
	}
	var netErr net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout() {
		return failure{class: retry.ErrTimeout, message: prefix + "no response within the timeout: " + err.Error()}
	}
	return failure{class: retry.ErrNetwork, message: prefix + err.Error()}
}

func clip(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	return strings.ToValidUTF8(s[:maxErrorText], "") + "…" // a rune cut in two is dropped
}
