package awsdest

import (
	"context"
	"errors"
	"net"
	"strings"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/gifq/webhooks/shared/destination"
)

// Error classes of AWS destinations, as recorded in the attempt log; the
// AWS error code itself is in the attempt's error.
const (
	ErrThrottled    = "aws_throttled"       // retried
	ErrUnavailable  = "aws_unavailable"     // a 5xx or an internal error: retried
	ErrUnknown      = "aws_error"           // an error code we do not know: retried
	ErrAssumeRole   = "aws_assume_role"     // the customer's role refused us: failed for good
	ErrAccessDenied = "aws_access_denied"   // the role may not write to the target: failed for good
	ErrNotFound     = "aws_not_found"       // the target does not exist: failed for good
	ErrKMS          = "aws_kms"             // the target's KMS key is disabled or not usable: failed for good
	ErrInvalid      = "aws_invalid_request" // the message can never be accepted (too large, ...): failed for good
	ErrTimeout      = "timeout"             // AWS did not answer in time: retried, and counted by the breaker
	ErrNetwork      = "network"             // AWS could not be reached: retried, and counted by the breaker
)

// rejectedClasses fail a delivery on the attempt, like a 4xx: each needs
// the customer to change something in their account, and the dead-letter
// queue's redrive sends it again once they have.
var rejectedClasses = map[string]bool{
	ErrAssumeRole: true, ErrAccessDenied: true, ErrNotFound: true, ErrKMS: true, ErrInvalid: true,
}

// VerdictOf is what an attempt's error class means for the delivery.
func VerdictOf(class string) destination.Verdict {
	if rejectedClasses[class] {
		return destination.Rejected
	}
	return destination.Retry
}

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
// VerdictOf, onto the contract. The reasons are in
// docs/destinations.md: what only time fixes is retried; what needs the
// customer to change their account fails the delivery at once, like a 4xx,
// and the redrive sends it again once they have; what we do not know is
// retried, which costs attempts but loses nothing.
func ClassOf(stage Stage, code string, status int) string {
	c := strings.ToLower(code)
	switch {
	case throttledCodes[c] || strings.Contains(c, "throttl"):
		return ErrThrottled
	case unavailableCodes[c] || status >= 500:
		return ErrUnavailable
	case stage == StageAssumeRole && assumeRefusedCodes[c]:
		return ErrAssumeRole
	case stage == StageAssumeRole:
		return ErrUnknown
	case strings.HasPrefix(c, "kms"):
		// KmsDisabled, KMSAccessDenied, KMS.NotFoundException, ...: the
		// target's key refuses us until its owner changes it.
		return ErrKMS
	case accessCodes[c]:
		return ErrAccessDenied
	case notFoundCodes[c]:
		return ErrNotFound
	case invalidCodes[c]:
		return ErrInvalid
	}
	return ErrUnknown
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
// a transport error (timeout, network): no answer, which the breaker
// counts; the SDK's own text names the operation and AWS's
// endpoint, no secret (a queue's URL is its ARN's parts), and tells a DNS
// failure from a refused connection.
func classify(stage Stage, err error) failure { return classifyWith(nil, stage, err) }

// classifyWith is classify, with a service's own codes (Service.Codes)
// read first at the publish stage.
func classifyWith(codes map[string]string, stage Stage, err error) failure {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		if c, ok := codes[strings.ToLower(apiErr.ErrorCode())]; ok && stage == StagePublish {
			return failure{c, apiErr.ErrorCode(), apiErr.ErrorMessage()}
		}
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
		return failure{class: ErrTimeout, message: prefix + "no response within the timeout: " + err.Error()}
	}
	return failure{class: ErrNetwork, message: prefix + err.Error()}
}

// outcome is the seam's outcome of f.
func (f failure) outcome() destination.Outcome {
	return destination.Outcome{Verdict: VerdictOf(f.class), Class: f.class, Error: f.text(),
		NoAnswer: f.class == ErrTimeout || f.class == ErrNetwork}
}

func clip(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	return strings.ToValidUTF8(s[:maxErrorText], "") + "…" // a rune cut in two is dropped
}
