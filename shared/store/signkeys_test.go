package store_test

import (
	"crypto/ed25519"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/envelope"
	"github.com/gifq/webhooks/shared/signing"
	"github.com/gifq/webhooks/shared/store"
)

func TestSigningKeysRotateWithAnOverlapAndAreStoredSealed(t *testing.T) {
	s, env := sealedStore(t)
	a := account(t, s)
	if keys, err := s.PublishedSigningKeys(ctx, a.ID); err != nil || len(keys) != 0 {
		t.Fatalf("a new account has keys: %v %v", keys, err)
	}
	first, err := s.EnsureSigningKey(ctx, a.ID)
	if err != nil || len(first) != 1 || len(first[0].Public) != ed25519.PublicKeySize || first[0].Sealed != nil {
		t.Fatalf("EnsureSigningKey: %+v %v", first, err)
	}
	if again, err := s.EnsureSigningKey(ctx, a.ID); err != nil || len(again) != 1 || again[0].ID != first[0].ID {
		t.Fatalf("a second EnsureSigningKey made another key: %+v %v", again, err)
	}

	rotated, err := s.RotateSigningKey(ctx, a.ID, time.Hour)
	if err != nil || len(rotated) != 2 || rotated[1].ID != first[0].ID || rotated[0].ID == first[0].ID {
		t.Fatalf("after a rotation: %+v %v; want the new key, then the old one", rotated, err)
	}
	if r := rotated[1].RetiresAt; r < domain.Millis(time.Now().Add(59*time.Minute)) || r > domain.Millis(time.Now().Add(61*time.Minute)) {
		t.Fatalf("the old key retires at %v; want in an hour", time.UnixMilli(r))
	}
	published, err := s.PublishedSigningKeys(ctx, a.ID)
	if err != nil || len(published) != 2 {
		t.Fatalf("the JWKS during the overlap: %+v %v; want both keys", published, err)
	}

	// With no overlap the old keys stop at once: only the newest is left.
	last, err := s.RotateSigningKey(ctx, a.ID, 0)
	if err != nil || len(last) != 1 {
		t.Fatalf("a rotation without overlap: %+v %v", last, err)
	}

	// The item holds the public keys and sealed seeds, no private key.
	out, err := env.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(env.Table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "ACCT#" + a.ID}, "sk": &types.AttributeValueMemberS{Value: "SIGNKEYS"}}})
	if err != nil || out.Item == nil {
		t.Fatal(err)
	}
	k := out.Item["keys"].(*types.AttributeValueMemberL).Value[0].(*types.AttributeValueMemberM).Value
	sealed := k["sealed"].(*types.AttributeValueMemberB).Value
	if _, has := k["private"]; has || len(sealed) < ed25519.SeedSize+16 {
		t.Fatalf("the key item: %v", k)
	}
}

// A v1a endpoint's attempt read carries the account's private keys, which
// sign what the published public keys verify.
func TestAttemptReadCarriesTheAccountsKeys(t *testing.T) {
	s, _ := sealedStore(t)
	a := account(t, s)
	published, err := s.EnsureSigningKey(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	ep := endpoint(t, s, a.ID)
	v1a := domain.SchemeV1a
	if _, err := s.UpdateEndpoint(ctx, a.ID, ep.ID, store.EndpointPatch{Scheme: &v1a}); err != nil {
		t.Fatal(err)
	}
	snap, err := s.LoadForAttempt(ctx, store.Ref{AccountID: a.ID, EndpointID: ep.ID, DeliveryID: "dlv_none", EventID: "evt_none"})
	if err != nil || snap.Endpoint == nil {
		t.Fatal(err)
	}
	keys := snap.Endpoint.V1aKeys(domain.Millis(time.Now()))
	if len(keys) != 1 {
		t.Fatalf("the attempt has %d v1a keys; want the account's one", len(keys))
	}
	now := time.Now()
	sig := signing.SignStandardV1a(keys, "dlv_1", now, []byte("{}"))
	if err := signing.VerifyStandardV1a([]byte("{}"), "dlv_1", strconv.FormatInt(now.Unix(), 10), sig, []ed25519.PublicKey{published[0].Public}, signing.Options{}); err != nil {
		t.Fatalf("the published key does not verify what the attempt's key signs: %v", err)
	}
	// A v1 endpoint's read does not open them.
	plain := endpoint(t, s, a.ID)
	snap, err = s.LoadForAttempt(ctx, store.Ref{AccountID: a.ID, EndpointID: plain.ID, DeliveryID: "dlv_none", EventID: "evt_none"})
	if err != nil || len(snap.Endpoint.SigningKeys) != 0 {
		t.Fatalf("a v1 endpoint's attempt read the signing keys: %+v %v", snap.Endpoint.SigningKeys, err)
	}
}

// A sealed signing key moved to another account's item does not open there.
func TestASigningKeyDoesNotOpenForAnotherAccount(t *testing.T) {
	s, env := sealedStore(t)
	a, b := account(t, s), account(t, s)
	if _, err := s.EnsureSigningKey(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	out, err := env.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(env.Table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "ACCT#" + a.ID}, "sk": &types.AttributeValueMemberS{Value: "SIGNKEYS"}}})
	if err != nil {
		t.Fatal(err)
	}
	out.Item["pk"] = &types.AttributeValueMemberS{Value: "ACCT#" + b.ID}
	if _, err := env.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(env.Table), Item: out.Item}); err != nil {
		t.Fatal(err)
	}
	ep := endpoint(t, s, b.ID)
	v1a := domain.SchemeV1a
	if _, err := s.UpdateEndpoint(ctx, b.ID, ep.ID, store.EndpointPatch{Scheme: &v1a}); err != nil {
		t.Fatal(err)
	}
	_, err = s.LoadForAttempt(ctx, store.Ref{AccountID: b.ID, EndpointID: ep.ID, DeliveryID: "dlv_none", EventID: "evt_none"})
	if err == nil {
		t.Fatal("account b signs with account a's key copied onto its item")
	}
}

func TestSigningKeysNeedASealer(t *testing.T) {
	s := newStore(t)
	a := account(t, s)
	if _, err := s.EnsureSigningKey(ctx, a.ID); !errors.Is(err, store.ErrNoSealer) {
		t.Fatalf("a store without a KMS key made a signing key: %v", err)
	}
}

// Endpoints switched to v1a at the same moment make one key between them,
// not one that the other's retry replaces at once.
func TestConcurrentEnsureMakesOneKey(t *testing.T) {
	s, _ := sealedStore(t)
	a := account(t, s)
	const n = 4
	got := make([][]domain.SigningKey, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { got[i], errs[i] = s.EnsureSigningKey(ctx, a.ID) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || len(got[i]) != 1 || got[i][0].ID != got[0][0].ID {
			t.Fatalf("EnsureSigningKey %d: %+v %v; want the same single key as the first", i, got[i], errs[i])
		}
	}
	if keys, _ := s.PublishedSigningKeys(ctx, a.ID); len(keys) != 1 {
		t.Fatalf("%d keys published after concurrent ensures", len(keys))
	}
}

// An emergency rotation (no overlap: the old key leaves the JWKS at once)
// reaches a warm deliver process within store.SigningKeyCheckEvery: its
// next attempt after that signs with the new key only, never with the one
// the JWKS dropped. Between checks the process reads the key item no more
// (no read per delivery). With a one-minute cache it signed with the
// retired key for up to a minute.
func TestAnEmergencyRotationIsSignedWithinSeconds(t *testing.T) {
	env := testenv.New(t)
	k, keyID := testenv.KMS(t)
	api := store.New(env.DB, env.Table)
	api.SealWith(envelope.New(k, keyID, api))
	a := account(t, api)
	if _, err := api.EnsureSigningKey(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	ep := endpoint(t, api, a.ID)
	v1a := domain.SchemeV1a
	if _, err := api.UpdateEndpoint(ctx, a.ID, ep.ID, store.EndpointPatch{Scheme: &v1a}); err != nil {
		t.Fatal(err)
	}
	calls := testenv.NewCalls()
	db, _ := env.CountedClients(calls)
	clock := time.Now()
	deliver := store.New(db, env.Table).WithClock(func() time.Time { return clock })
	deliver.SealWith(envelope.New(k, keyID, deliver))
	load := func() []string {
		t.Helper()
		snap, err := deliver.LoadForAttempt(ctx, store.Ref{AccountID: a.ID, EndpointID: ep.ID, DeliveryID: "dlv_none", EventID: "evt_none", Event: &domain.Event{ID: "evt_none"}})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, k := range snap.Endpoint.SigningKeys {
			ids = append(ids, k.ID)
		}
		return ids
	}
	before := load()
	calls.Reset()
	for range 3 {
		clock = clock.Add(time.Second)
		load()
	}
	if n := calls.Snapshot()["DynamoDB.GetItem"]; n != 0 {
		t.Fatalf("%d reads of the key item within %s: a read per delivery", n, store.SigningKeyCheckEvery)
	}
	rotated, err := api.RotateSigningKey(ctx, a.ID, 0)
	if err != nil || len(rotated) != 1 {
		t.Fatalf("rotation without overlap: %+v %v", rotated, err)
	}
	clock = clock.Add(store.SigningKeyCheckEvery)
	after := load()
	if len(after) != 1 || after[0] != rotated[0].ID || after[0] == before[0] {
		t.Fatalf("%s after a rotation without overlap the attempt signs with %v; want only the new key %s (the JWKS dropped %v)",
			store.SigningKeyCheckEvery, after, rotated[0].ID, before)
	}
}

// At most two v1a keys are live. Rotations with an overlap while the last
// one's overlap runs are refused and change nothing (150 of them made 151
// live keys and a 14 KB webhook-signature header); a rotation with no
// overlap always goes through. An item with many live keys, stored before
// the cap, publishes and signs with its newest two.
func TestAtMostTwoSigningKeysAreLive(t *testing.T) {
	s, env := sealedStore(t)
	a := account(t, s)
	first, err := s.EnsureSigningKey(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.RotateSigningKey(ctx, a.ID, time.Hour)
	if err != nil || len(second) != 2 {
		t.Fatalf("the first rotation: %+v %v", second, err)
	}
	for i := 0; i < 150; i++ {
		_, err := s.RotateSigningKey(ctx, a.ID, time.Hour)
		var prev *store.PreviousKeyLive
		if !errors.As(err, &prev) || prev.RetiresAt != second[1].RetiresAt {
			t.Fatalf("rotation %d during the overlap: %v", i+2, err)
		}
	}
	if keys, err := s.PublishedSigningKeys(ctx, a.ID); err != nil || len(keys) != 2 || keys[0].ID != second[0].ID || keys[1].ID != first[0].ID {
		t.Fatalf("after refused rotations: %+v %v; want the two of the first rotation", keys, err)
	}
	if keys, err := s.RotateSigningKey(ctx, a.ID, 0); err != nil || len(keys) != 1 {
		t.Fatalf("an emergency rotation during the overlap: %+v %v", keys, err)
	}
	if keys, err := s.RotateSigningKey(ctx, a.ID, time.Hour); err != nil || len(keys) != 2 {
		t.Fatalf("a rotation once no key is retiring: %+v %v", keys, err)
	}

	// An item from before the cap: 151 live keys, newest first, each sealed
	// for this account (the newest key of 151 rotations, kept with no
	// retirement).
	many := account(t, s)
	pk := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "ACCT#" + many.ID}, "sk": &types.AttributeValueMemberS{Value: "SIGNKEYS"}}
	var live []types.AttributeValue
	var donor *dynamodb.GetItemOutput
	for i := 0; i < 151; i++ {
		if _, err := s.RotateSigningKey(ctx, many.ID, 0); err != nil {
			t.Fatal(err)
		}
		if donor, err = env.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(env.Table), Key: pk, ConsistentRead: aws.Bool(true)}); err != nil {
			t.Fatal(err)
		}
		live = append([]types.AttributeValue{donor.Item["keys"].(*types.AttributeValueMemberL).Value[0]}, live...)
	}
	item := donor.Item
	item["keys"] = &types.AttributeValueMemberL{Value: live}
	item["updated_at"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(time.Now().UnixMilli()+1000, 10)}
	if _, err := env.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(env.Table), Item: item}); err != nil {
		t.Fatal(err)
	}
	if keys, err := s.PublishedSigningKeys(ctx, many.ID); err != nil || len(keys) != 2 {
		t.Fatalf("151 live keys stored: published %d %v, want the newest two", len(keys), err)
	}
	ep := endpoint(t, s, many.ID)
	v1a := domain.SchemeV1a
	if _, err := s.UpdateEndpoint(ctx, many.ID, ep.ID, store.EndpointPatch{Scheme: &v1a}); err != nil {
		t.Fatal(err)
	}
	snap, err := s.LoadForAttempt(ctx, store.Ref{AccountID: many.ID, EndpointID: ep.ID, DeliveryID: "dlv_none", EventID: "evt_none"})
	if err != nil {
		t.Fatal(err)
	}
	if keys := snap.Endpoint.V1aKeys(domain.Millis(time.Now())); len(keys) != 2 {
		t.Fatalf("151 live keys stored: an attempt signs with %d, want the newest two", len(keys))
	}
}
