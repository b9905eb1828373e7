package store_test

import (
	"bytes"
	"errors"
	"fmt"
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

// sealedStore is a store as the deployed functions have it: secrets sealed
// under a KMS key (the KMS emulator), the data key in the table.
func sealedStore(t *testing.T) (*store.Store, *testenv.Env) {
	env := testenv.New(t)
	k, keyID := testenv.KMS(t)
	s := store.New(env.DB, env.Table)
	return s.SealWith(envelope.New(k, keyID, s)), env
}

// rawItem is the endpoint item exactly as DynamoDB holds it, every value
// (strings, and binaries as raw bytes) in one byte string to search.
func rawItem(t *testing.T, env *testenv.Env, ep domain.Endpoint) []byte {
	t.Helper()
	out, err := env.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(env.Table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "ACCT#" + ep.AccountID}, "sk": &types.AttributeValueMemberS{Value: "EP#" + ep.ID}}})
	if err != nil || out.Item == nil {
		t.Fatalf("raw read: %v", err)
	}
	var b bytes.Buffer
	var walk func(types.AttributeValue)
	walk = func(v types.AttributeValue) {
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			b.WriteString(v.Value + "\n")
		case *types.AttributeValueMemberB:
			b.Write(v.Value)
			b.WriteString("\n")
		case *types.AttributeValueMemberL:
			for _, e := range v.Value {
				walk(e)
			}
		case *types.AttributeValueMemberM:
			for k, e := range v.Value {
				b.WriteString(k + "\n")
				walk(e)
			}
		default:
			fmt.Fprintf(&b, "%v\n", v)
		}
	}
	for k, v := range out.Item {
		b.WriteString(k + "\n")
		walk(v)
	}
	return b.Bytes()
}

func TestSecretsAreStoredOnlySealed(t *testing.T) {
	s, env := sealedStore(t)
	a := account(t, s)
	secret := signing.NewSecret()
	ep := domain.Endpoint{ID: domain.NewID("ep"), AccountID: a.ID, URL: "https://hooks.example.com/x",
		Secrets: []domain.Secret{{Value: secret, CreatedAt: 1}}, CreatedAt: 1, UpdatedAt: 1}
	if err := s.CreateEndpoint(ctx, ep); err != nil {
		t.Fatal(err)
	}
	raw := rawItem(t, env, ep)
	if bytes.Contains(raw, []byte("whsec_")) || !bytes.Contains(raw, []byte("sealed")) {
		t.Fatalf("the endpoint item holds a plaintext secret (or no sealed one):\n%q", raw)
	}

	got, err := s.GetEndpoint(ctx, a.ID, ep.ID)
	if err != nil || got.SigningSecrets(2)[0] != secret {
		t.Fatalf("GetEndpoint: secrets %v, %v; want the one made", got.SigningSecrets(2), err)
	}
	rotated := signing.NewSecret()
	r, err := s.RotateSecret(ctx, a.ID, ep.ID, domain.Rotation{NewSecret: rotated, Grace: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if sec := r.SigningSecrets(domain.Millis(time.Now())); len(sec) != 2 || sec[0] != rotated || sec[1] != secret {
		t.Fatalf("after rotation the store returns %v; want the new then the old", sec)
	}
	if raw := rawItem(t, env, ep); bytes.Contains(raw, []byte("whsec_")) {
		t.Fatalf("after rotation the item holds a plaintext secret:\n%q", raw)
	}
	snap, err := s.LoadForAttempt(ctx, store.Ref{AccountID: a.ID, EndpointID: ep.ID, DeliveryID: "dlv_none", EventID: "evt_none"})
	if err != nil || snap.Endpoint == nil || snap.Endpoint.SigningSecrets(domain.Millis(time.Now()))[0] != rotated {
		t.Fatalf("the attempt's read does not open the secrets: %+v %v", snap.Endpoint, err)
	}
	eps, err := s.ListEndpoints(ctx, a.ID)
	if err != nil || len(eps) != 1 || eps[0].Secrets[0].Value != rotated {
		t.Fatalf("ListEndpoints: %+v %v", eps, err)
	}
	// Ingest's read leaves them sealed: it signs nothing.
	_, eps, err = s.AccountWithEndpoints(ctx, a.ID)
	if err != nil || len(eps) != 1 || eps[0].Secrets[0].Value != "" || eps[0].Secrets[0].Sealed == nil {
		t.Fatalf("AccountWithEndpoints opened the secrets: %+v %v", eps, err)
	}
}

// An item written before sealing (plaintext) is still read, and is sealed
// on its next write: a rotation, or a PATCH.
func TestPlaintextItemsAreReadAndSealedOnTheNextWrite(t *testing.T) {
	for _, write := range []string{"rotate", "patch"} {
		t.Run(write, func(t *testing.T) {
			sealed, env := sealedStore(t)
			old := store.New(env.DB, env.Table) // the store as it was: no sealer
			a := account(t, old)
			secret := signing.NewSecret()
			ep := domain.Endpoint{ID: domain.NewID("ep"), AccountID: a.ID, URL: "https://hooks.example.com/x",
				Secrets: []domain.Secret{{Value: secret, CreatedAt: 1}}, CreatedAt: 1, UpdatedAt: 1}
			if err := old.CreateEndpoint(ctx, ep); err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(rawItem(t, env, ep), []byte(secret)) {
				t.Fatal("setup: the old item should be plaintext")
			}
			got, err := sealed.GetEndpoint(ctx, a.ID, ep.ID)
			if err != nil || got.Secrets[0].Value != secret {
				t.Fatalf("a plaintext item is not read: %+v %v", got, err)
			}
			switch write {
			case "rotate":
				_, err = sealed.RotateSecret(ctx, a.ID, ep.ID, domain.Rotation{NewSecret: signing.NewSecret(), Grace: time.Minute})
			case "patch":
				desc := "sealed on this write"
				_, err = sealed.UpdateEndpoint(ctx, a.ID, ep.ID, store.EndpointPatch{Description: &desc})
			}
			if err != nil {
				t.Fatal(err)
			}
			if raw := rawItem(t, env, ep); bytes.Contains(raw, []byte("whsec_")) {
				t.Fatalf("after a %s the item still holds a plaintext secret:\n%q", write, raw)
			}
			got, err = sealed.GetEndpoint(ctx, a.ID, ep.ID)
			if err != nil || got.SigningSecrets(domain.Millis(time.Now()))[len(got.SigningSecrets(domain.Millis(time.Now())))-1] != secret {
				t.Fatalf("the old secret is lost in sealing: %+v %v", got.Secrets, err)
			}
			// A store without a KMS key cannot read it any more, and says why.
			if _, err := old.GetEndpoint(ctx, a.ID, ep.ID); !errors.Is(err, store.ErrNoSealer) {
				t.Fatalf("a store without a sealer read a sealed item: %v", err)
			}
		})
	}
}

// A sealed secret copied onto another endpoint's item does not open there.
func TestASealedSecretDoesNotOpenOnAnotherItem(t *testing.T) {
	s, env := sealedStore(t)
	a := account(t, s)
	one, two := endpoint(t, s, a.ID), endpoint(t, s, a.ID)
	src, err := env.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(env.Table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "ACCT#" + a.ID}, "sk": &types.AttributeValueMemberS{Value: "EP#" + one.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(env.Table),
		Key:              map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "ACCT#" + a.ID}, "sk": &types.AttributeValueMemberS{Value: "EP#" + two.ID}},
		UpdateExpression: aws.String("SET secrets = :s"), ExpressionAttributeValues: map[string]types.AttributeValue{":s": src.Item["secrets"]}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetEndpoint(ctx, a.ID, two.ID); !errors.Is(err, envelope.ErrOpen) {
		t.Fatalf("a secret moved to another item opened there: %v", err)
	}
}

// Custom header values (a receiver's API key, say) are sealed like the
// signing secrets: not in the table in plain text, opened on every read
// that delivers or shows them; a plaintext item from before is read, and
// sealed on its next write.
func TestCustomHeadersAreStoredOnlySealed(t *testing.T) {
	s, env := sealedStore(t)
	old := store.New(env.DB, env.Table) // no sealer: items as written before sealing
	a := account(t, s)
	value := "Bearer gw_" + signing.NewSecret()
	ep := domain.Endpoint{ID: domain.NewID("ep"), AccountID: a.ID, URL: "https://hooks.example.com/x",
		Secrets: []domain.Secret{{Value: signing.NewSecret(), CreatedAt: 1}}, CreatedAt: 1, UpdatedAt: 1,
		Settings: domain.EndpointSettings{Headers: map[string]string{"Authorization": value}}}
	if err := s.CreateEndpoint(ctx, ep); err != nil {
		t.Fatal(err)
	}
	if raw := rawItem(t, env, ep); bytes.Contains(raw, []byte("gw_")) || bytes.Contains(raw, []byte("Authorization")) {
		t.Fatalf("the endpoint item holds a header in plain text:\n%q", raw)
	}
	check := func(what string, got domain.Endpoint, err error) {
		t.Helper()
		if err != nil || got.Settings.Headers["Authorization"] != value || got.Settings.SealedHeaders != nil {
			t.Fatalf("%s: headers %v, %v", what, got.Settings.Headers, err)
		}
	}
	got, err := s.GetEndpoint(ctx, a.ID, ep.ID)
	check("GetEndpoint", got, err)
	snap, err := s.LoadForAttempt(ctx, store.Ref{AccountID: a.ID, EndpointID: ep.ID, DeliveryID: "dlv_none", EventID: "evt_none"})
	if err != nil || snap.Endpoint == nil {
		t.Fatal(err)
	}
	check("LoadForAttempt", *snap.Endpoint, nil)

	// A PATCH of the settings writes them sealed again.
	next := got.Settings
	next.Headers = map[string]string{"Authorization": value, "X-Tenant": "t_" + signing.NewSecret()}
	got, err = s.UpdateEndpoint(ctx, a.ID, ep.ID, store.EndpointPatch{Settings: &next})
	check("UpdateEndpoint", got, err)
	if raw := rawItem(t, env, ep); bytes.Contains(raw, []byte("gw_")) || bytes.Contains(raw, []byte("t_whsec")) {
		t.Fatalf("after a PATCH the item holds a header in plain text:\n%q", raw)
	}
	if _, err := old.GetEndpoint(ctx, a.ID, ep.ID); !errors.Is(err, store.ErrNoSealer) {
		t.Fatalf("a store without a sealer read sealed headers: %v", err)
	}

	// An item written before sealing: read as it is, sealed on its next write.
	plain := ep
	plain.ID = domain.NewID("ep")
	if err := old.CreateEndpoint(ctx, plain); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(rawItem(t, env, plain), []byte("gw_")) {
		t.Fatal("setup: the old item should be plaintext")
	}
	got, err = s.GetEndpoint(ctx, a.ID, plain.ID)
	check("a plaintext item", got, err)
	desc := "sealed on this write"
	if _, err := s.UpdateEndpoint(ctx, a.ID, plain.ID, store.EndpointPatch{Description: &desc}); err != nil {
		t.Fatal(err)
	}
	if raw := rawItem(t, env, plain); bytes.Contains(raw, []byte("gw_")) {
		t.Fatalf("after a write the old item still holds a header in plain text:\n%q", raw)
	}
	got, err = s.GetEndpoint(ctx, a.ID, plain.ID)
	check("after resealing", got, err)
}

// The operators' re-seal seals every item written before sealing, in one
// pass, and leaves sealed items as they are.
func TestResealAllSealsEveryPlaintextItem(t *testing.T) {
	s, env := sealedStore(t)
	old := store.New(env.DB, env.Table)
	a := account(t, s)
	var eps []domain.Endpoint
	for i := range 3 {
		ep := domain.Endpoint{ID: domain.NewID("ep"), AccountID: a.ID, URL: "https://hooks.example.com/x",
			Secrets: []domain.Secret{{Value: signing.NewSecret(), CreatedAt: 1}}, CreatedAt: 1, UpdatedAt: 1,
			Settings: domain.EndpointSettings{Headers: map[string]string{"X-Key": fmt.Sprint("plain-header-", i)}}}
		w := old
		if i == 2 {
			w = s // already sealed
		}
		if err := w.CreateEndpoint(ctx, ep); err != nil {
			t.Fatal(err)
		}
		eps = append(eps, ep)
	}
	read, sealed, err := s.ResealAll(ctx, env.DB)
	if err != nil || read != 3 || sealed != 2 {
		t.Fatalf("read %d, sealed %d, %v; want 3, 2", read, sealed, err)
	}
	for i, ep := range eps {
		if raw := rawItem(t, env, ep); bytes.Contains(raw, []byte("whsec_")) || bytes.Contains(raw, []byte("plain-header")) {
			t.Fatalf("item %d still holds plain text:\n%q", i, raw)
		}
		got, err := s.GetEndpoint(ctx, a.ID, ep.ID)
		if err != nil || got.Settings.Headers["X-Key"] != fmt.Sprint("plain-header-", i) || got.Secrets[0].Value != ep.Secrets[0].Value {
			t.Fatalf("item %d after the re-seal: %+v %v", i, got, err)
		}
	}
	if _, sealed, err := s.ResealAll(ctx, env.DB); err != nil || sealed != 0 {
		t.Fatalf("a second pass sealed %d, %v", sealed, err)
	}
}

// The OAuth2 client secret and the TLS client key too (both hold secret).
func TestOAuth2ClientSecretIsStoredOnlySealed(t *testing.T) {
	s, env := sealedStore(t)
	a := account(t, s)
	secret := "oa_" + signing.NewSecret()
	ep := domain.Endpoint{ID: domain.NewID("ep"), AccountID: a.ID, URL: "https://hooks.example.com/x",
		Secrets: []domain.Secret{{Value: signing.NewSecret(), CreatedAt: 1}}, CreatedAt: 1, UpdatedAt: 1,
		Settings: domain.EndpointSettings{OAuth2: &domain.OAuth2{TokenURL: "https://auth.example.com/token", ClientID: "c1", ClientSecret: secret},
			TLS: &domain.ClientTLS{CertPEM: "CERT", KeyPEM: "tlskey_" + secret}}}
	if err := s.CreateEndpoint(ctx, ep); err != nil {
		t.Fatal(err)
	}
	if ep.Settings.OAuth2.ClientSecret != secret {
		t.Fatal("sealing changed the caller's settings")
	}
	if raw := rawItem(t, env, ep); bytes.Contains(raw, []byte("oa_")) || !bytes.Contains(raw, []byte("auth.example.com")) {
		t.Fatalf("the endpoint item holds the OAuth2 secret in plain text (or no OAuth2 settings):\n%q", raw)
	}
	got, err := s.GetEndpoint(ctx, a.ID, ep.ID)
	if err != nil || got.Settings.TLS == nil || got.Settings.TLS.KeyPEM != "tlskey_"+secret || got.Settings.TLS.SealedKey != nil {
		t.Fatalf("GetEndpoint TLS: %+v, %v", got.Settings.TLS, err)
	}
	if err != nil || got.Settings.OAuth2 == nil || got.Settings.OAuth2.ClientSecret != secret || got.Settings.OAuth2.SealedClientSecret != nil {
		t.Fatalf("GetEndpoint: %+v, %v", got.Settings.OAuth2, err)
	}
	snap, err := s.LoadForAttempt(ctx, store.Ref{AccountID: a.ID, EndpointID: ep.ID, DeliveryID: "dlv_none", EventID: "evt_none"})
	if err != nil || snap.Endpoint == nil || snap.Endpoint.Settings.OAuth2.ClientSecret != secret {
		t.Fatalf("LoadForAttempt: %v", err)
	}
	next := got.Settings
	next.RatePerSecond = 3
	if _, err := s.UpdateEndpoint(ctx, a.ID, ep.ID, store.EndpointPatch{Settings: &next}); err != nil {
		t.Fatal(err)
	}
	if raw := rawItem(t, env, ep); bytes.Contains(raw, []byte("oa_")) {
		t.Fatalf("after a PATCH the item holds the OAuth2 secret in plain text:\n%q", raw)
	}
}

// private_key_jwt's private key is sealed like the client secret: on write,
// opened on read, and an item written before sealing is sealed by the
// operators' re-seal.
func TestOAuth2PrivateKeyIsStoredOnlySealed(t *testing.T) {
	s, env := sealedStore(t)
	old := store.New(env.DB, env.Table) // no sealer: an item as written before sealing
	a := account(t, s)
	for _, w := range []*store.Store{s, old} {
		key := "-----BEGIN PRIVATE KEY-----\npk_" + signing.NewSecret() + "\n-----END PRIVATE KEY-----\n"
		ep := domain.Endpoint{ID: domain.NewID("ep"), AccountID: a.ID, URL: "https://hooks.example.com/x",
			Secrets: []domain.Secret{{Value: signing.NewSecret(), CreatedAt: 1}}, CreatedAt: 1, UpdatedAt: 1,
			Settings: domain.EndpointSettings{OAuth2: &domain.OAuth2{TokenURL: "https://auth.example.com/token", ClientID: "c1", AuthMethod: "private_key_jwt", PrivateKey: key}}}
		if err := w.CreateEndpoint(ctx, ep); err != nil {
			t.Fatal(err)
		}
		if w == old {
			if _, sealed, err := s.ResealAll(ctx, env.DB); err != nil || sealed != 1 {
				t.Fatalf("re-seal sealed %d, %v; want the plaintext item", sealed, err)
			}
		}
		if raw := rawItem(t, env, ep); bytes.Contains(raw, []byte("pk_")) || !bytes.Contains(raw, []byte("sealed_private_key")) {
			t.Fatalf("the endpoint item holds the private key in plain text (or no sealed key):\n%q", raw)
		}
		got, err := s.GetEndpoint(ctx, a.ID, ep.ID)
		if err != nil || got.Settings.OAuth2 == nil || got.Settings.OAuth2.PrivateKey != key || got.Settings.OAuth2.SealedPrivateKey != nil {
			t.Fatalf("GetEndpoint: %+v, %v", got.Settings.OAuth2, err)
		}
	}
}
