package store

import (
	"crypto/sha256"
	"encoding/hex"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/schema"
)

// Partition and sort keys; the layout is documented on schema.Table.
func accountPK(id string) string             { return "ACCT#" + id }
func endpointSK(id string) string            { return "EP#" + id }
func keyRefSK(id string) string              { return "KEY#" + id }
func apiKeyPK(hash string) string            { return "KEY#" + hash }
func eventPK(id string) string               { return "EVT#" + id }
func deliveryPK(id string) string            { return "DLV#" + id }
func attemptSK(id string) string             { return "ATT#" + id }
func ratePK(account string) string           { return "RATE#" + account }
func slotPK(endpoint string) string          { return "SLOT#" + endpoint }
func endpointLogPK(endpoint string) string   { return "EP#" + endpoint }
func idempotencyPK(account, k string) string { return "IDEM#" + account + "#" + hashHex(k) }

// accountEventsPK is an account's events of one UTC day in the
// account_events index: a day per partition key keeps a busy account's
// index writes spread over time and a replay's query to the days it asks.
func accountEventsPK(account string, ms int64) string {
	return "EVTS#" + account + "#" + time.UnixMilli(ms).UTC().Format(time.DateOnly)
}

func endpointStatusPK(endpoint string, status domain.Status) string {
	return "EP#" + endpoint + "#" + string(status)
}

const (
	skAccount     = "ACCT"
	skAPIKey      = "KEY"
	skEvent       = "EVT"
	skDelivery    = "DLV"
	skRate        = "RATE"
	skIdempotency = "IDEM"
	skSlot        = "SLOT"
)

func hashHex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// sweepShard spreads deliveries over the sweeper index's partition keys.
func sweepShard(deliveryID string) string {
	h := fnv.New32a()
	h.Write([]byte(deliveryID))
	return strconv.Itoa(int(h.Sum32() % schema.SweepShards))
}

// RatePK is the rate limiter item's key, for package ratelimit.
func RateKey(account string) (pk, sk string) { return ratePK(account), skRate }
