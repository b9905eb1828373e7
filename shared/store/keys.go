package store

import (
	"crypto/sha256"
	"encoding/hex"
	"hash/fnv"
	"strconv"
	"strings"
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

// accountEventsPK is an account's events of one UTC day: the partition of
// their items (eventKey), sorted by id, so that AccountEvents lists them by
// time with no index; a day per partition key keeps a busy account's writes
// spread over time and a listing's query to the days it asks. (Items
// written before this layout are at legacyEventKey, listed by the
// account_events index under the same key: gsi3pk, gsi3sk.)
func accountEventsPK(account string, ms int64) string {
	return "EVTS#" + account + "#" + time.UnixMilli(ms).UTC().Format(time.DateOnly)
}

// eventKey is an event's item key: in its account's day (the day of the
// id's own time), under its id. An id without a time (not one of ours)
// has none.
func eventKey(account, id string) (item, bool) {
	ms, ok := domain.IDMillis(id)
	if !ok || account == "" {
		return nil, false
	}
	return key(accountEventsPK(account, ms), id), true
}

// EventItemKey is the key of an event's item (eventKey), for tests and
// tools that read the table directly.
func EventItemKey(accountID, id string) (pk, sk string) {
	if k, ok := eventKey(accountID, id); ok {
		return stringAttr(k, "pk"), stringAttr(k, "sk")
	}
	return eventPK(id), skEvent
}

// legacyEventKey is where an event was stored before eventKey: its reads
// try it when eventKey finds nothing, until the last such event has expired
// (the retention after the deploy that moved them).
func legacyEventKey(id string) item { return key(eventPK(id), skEvent) }

// isEventItem says whether an item's pk is an event's, in either layout.
func isEventItem(pk string) bool {
	return strings.HasPrefix(pk, "EVTS#") || strings.HasPrefix(pk, eventPK(""))
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
