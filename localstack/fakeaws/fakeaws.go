// Package fakeaws is an in-process fake of the DynamoDB, SQS and KMS JSON
// protocols, served over real HTTP (net/http/httptest on loopback), for CPU
// benchmarks ONLY: BenchmarkDelivery (shared/delivery) and BenchmarkFakeCall
// measure our process's CPU per delivery and per SDK call with the real
// aws-sdk-go-v2 clients, against a server cheap enough that it does not
// drown what is measured. Correctness tests use the real emulators
// (localstack/testenv, docs/testing.md): this fake answers what the deliver
// path needs to take its success path, and nothing more.
//
// What it does, and what it does not:
//
//   - DynamoDB: one map of items keyed by table and the key's raw JSON
//     (hash key "pk", range key "sk"; no table needs creating, any name
//     is accepted). GetItem, BatchGetItem, PutItem, UpdateItem,
//     DeleteItem, BatchWriteItem and TransactWriteItems read and write it.
//     UpdateItem applies SET (a = :v, a = b + :v, a - :v,
//     if_not_exists(a, :v), list_append), REMOVE and ADD (numbers) on
//     top-level attributes, and answers ReturnValues ALL_NEW and ALL_OLD
//     (UPDATED_* as ALL_*). Condition expressions are NOT evaluated: every
//     condition holds, which is the success path the benchmark measures.
//     Projections are not applied (the whole item is returned). Answers
//     carry X-Amz-Crc32, as DynamoDB's do, so the SDK checks it.
//   - SQS: SendMessage and SendMessageBatch (with the body's MD5, which the
//     SDK checks), DeleteMessage(Batch), ChangeMessageVisibility(Batch), and
//     ReceiveMessage, which returns no message. Nothing is queued.
//   - KMS: GenerateDataKey, Encrypt and Decrypt, with a "ciphertext" that is
//     the plaintext behind a marker: nothing is encrypted.
//
// Every request is counted by "Service.Operation" (Calls). The server's
// goroutines carry the profiler label side=server (ServerLabel), so a CPU
// profile tells its share from the client's (ServerShare).
package fakeaws

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Key attribute names of the table (shared/schema: pk, sk).
const (
	HashKey  = "pk"
	RangeKey = "sk"
)

// Item is an item as the JSON protocol carries it: attribute name to its
// AttributeValue's JSON ({"S":"x"}, {"N":"1"}, ...).
type Item map[string]json.RawMessage

// Server is the fake. Its zero value is not usable: call New or NewHandler.
type Server struct {
	// URL is the endpoint of all three services (http://127.0.0.1:port).
	URL string
	srv *httptest.Server

	mu    sync.Mutex
	items map[string]Item

	callsMu sync.Mutex
	calls   map[string]*atomic.Int64
	seq     atomic.Int64
}

// New starts a fake on a loopback port, its goroutines labelled
// side=server for the profiler (ServerLabel).
func New() *Server {
	s := NewHandler()
	s.srv = StartServer(s)
	s.URL = s.srv.URL
	return s
}

// NewHandler is a fake that is not listening: an http.Handler to serve
// some other way.
func NewHandler() *Server {
	return &Server{items: map[string]Item{}, calls: map[string]*atomic.Int64{}}
}

// ServerLabel is the profiler label that StartServer gives every goroutine
// of the servers it starts: their accept loop and each connection's.
var ServerLabel = pprof.Labels("side", "server")

// StartServer starts h on a loopback port with httptest, its goroutines
// labelled ServerLabel (goroutines inherit the labels of the goroutine that
// starts them, so the accept loop's connections carry them too).
func StartServer(h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	pprof.Do(context.Background(), ServerLabel, func(context.Context) { srv.Start() })
	return srv
}

// Close stops the server.
func (s *Server) Close() {
	if s.srv != nil {
		s.srv.Close()
	}
}

// Calls is the requests answered so far, by "Service.Operation".
func (s *Server) Calls() map[string]int {
	s.callsMu.Lock()
	defer s.callsMu.Unlock()
	out := make(map[string]int, len(s.calls))
	for k, v := range s.calls {
		if n := v.Load(); n > 0 {
			out[k] = int(n)
		}
	}
	return out
}

// Total is every request answered so far.
func (s *Server) Total() int {
	n := 0
	for _, v := range s.Calls() {
		n += v
	}
	return n
}

// ResetCalls sets the counts to zero.
func (s *Server) ResetCalls() {
	s.callsMu.Lock()
	defer s.callsMu.Unlock()
	for _, v := range s.calls {
		v.Store(0)
	}
}

// CallsString lists the counts, sorted: "DynamoDB.GetItem=1 ...".
func (s *Server) CallsString() string {
	c := s.Calls()
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", k, c[k])
	}
	return strings.TrimSpace(b.String())
}

func (s *Server) count(op string) {
	s.callsMu.Lock()
	c := s.calls[op]
	if c == nil {
		c = &atomic.Int64{}
		s.calls[op] = c
	}
	s.callsMu.Unlock()
	c.Add(1)
}

// apiError is an error in the JSON protocols' form.
type apiError struct {
	status int
	typ    string
	msg    string
}

func (e *apiError) Error() string { return e.typ + ": " + e.msg }

func badRequest(typ, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: typ, msg: fmt.Sprintf(format, args...)}
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	target := r.Header.Get("X-Amz-Target")
	service, op, _ := strings.Cut(target, ".")
	var out any
	var ctype string
	switch service {
	case "DynamoDB_20120810":
		s.count("DynamoDB." + op)
		ctype = "application/x-amz-json-1.0"
		out, err = s.dynamo(op, body)
	case "AmazonSQS":
		s.count("SQS." + op)
		ctype = "application/x-amz-json-1.0"
		out, err = s.sqs(op, body)
	case "TrentService":
		s.count("KMS." + op)
		ctype = "application/x-amz-json-1.1"
		out, err = s.kms(op, body)
	default:
		err = badRequest("UnknownOperationException", "unknown target %q", target)
	}
	status := http.StatusOK
	if err != nil {
		ae, ok := err.(*apiError)
		if !ok {
			ae = &apiError{status: http.StatusInternalServerError, typ: "InternalServerError", msg: err.Error()}
		}
		status, out = ae.status, map[string]string{"__type": ae.typ, "message": ae.msg}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("X-Amzn-Requestid", "fake-"+strconv.FormatInt(s.seq.Add(1), 10))
	if service == "DynamoDB_20120810" {
		h.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(raw)), 10))
	}
	h.Set("Content-Length", strconv.Itoa(len(raw)))
	w.WriteHeader(status)
	_, _ = w.Write(raw)
}

// --- SQS ---

type sqsEntry struct {
	ID          string `json:"Id"`
	MessageBody string `json:"MessageBody"`
}

type sqsRequest struct {
	QueueURL    string     `json:"QueueUrl"`
	MessageBody string     `json:"MessageBody"`
	Entries     []sqsEntry `json:"Entries"`
}

func md5Hex(s string) string {
	h := md5.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

func (s *Server) messageID() string { return fmt.Sprintf("fake-msg-%d", s.seq.Add(1)) }

func (s *Server) sqs(op string, body []byte) (any, error) {
	var in sqsRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, badRequest("InvalidParameterValue", "%v", err)
	}
	switch op {
	case "SendMessage":
		return map[string]string{"MessageId": s.messageID(), "MD5OfMessageBody": md5Hex(in.MessageBody)}, nil
	case "SendMessageBatch":
		ok := make([]map[string]string, 0, len(in.Entries))
		for _, e := range in.Entries {
			ok = append(ok, map[string]string{"Id": e.ID, "MessageId": s.messageID(), "MD5OfMessageBody": md5Hex(e.MessageBody)})
		}
		return map[string]any{"Successful": ok, "Failed": []any{}}, nil
	case "DeleteMessageBatch", "ChangeMessageVisibilityBatch":
		ok := make([]map[string]string, 0, len(in.Entries))
		for _, e := range in.Entries {
			ok = append(ok, map[string]string{"Id": e.ID})
		}
		return map[string]any{"Successful": ok, "Failed": []any{}}, nil
	case "DeleteMessage", "ChangeMessageVisibility":
		return struct{}{}, nil
	case "ReceiveMessage":
		return map[string]any{"Messages": []any{}}, nil
	}
	return nil, badRequest("UnsupportedOperation", "SQS.%s is not faked", op)
}

// --- KMS ---

// kmsMarker starts every "ciphertext" the fake hands out.
var kmsMarker = []byte("fakeaws-kms:")

type kmsRequest struct {
	KeyID          string `json:"KeyId"`
	NumberOfBytes  int    `json:"NumberOfBytes"`
	KeySpec        string `json:"KeySpec"`
	Plaintext      []byte `json:"Plaintext"`
	CiphertextBlob []byte `json:"CiphertextBlob"`
}

func (s *Server) kms(op string, body []byte) (any, error) {
	var in kmsRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, badRequest("ValidationException", "%v", err)
	}
	keyID := in.KeyID
	if keyID == "" {
		keyID = "fake-key"
	}
	switch op {
	case "GenerateDataKey":
		n := in.NumberOfBytes
		if n == 0 {
			n = 32
			if in.KeySpec == "AES_128" {
				n = 16
			}
		}
		plain := make([]byte, n)
		for i := range plain {
			plain[i] = byte(s.seq.Add(1))
		}
		return map[string]any{"KeyId": keyID, "Plaintext": plain, "CiphertextBlob": append(append([]byte{}, kmsMarker...), plain...)}, nil
	case "Encrypt":
		return map[string]any{"KeyId": keyID, "CiphertextBlob": append(append([]byte{}, kmsMarker...), in.Plaintext...)}, nil
	case "Decrypt":
		plain, ok := bytes.CutPrefix(in.CiphertextBlob, kmsMarker)
		if !ok {
			return nil, badRequest("InvalidCiphertextException", "not a fakeaws ciphertext")
		}
		return map[string]any{"KeyId": keyID, "Plaintext": plain}, nil
	}
	return nil, badRequest("UnsupportedOperationException", "KMS.%s is not faked", op)
}
