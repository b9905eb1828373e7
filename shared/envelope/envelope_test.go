package envelope_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/envelope"
	"github.com/gifq/webhooks/shared/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var ctx = context.Background()

// counted passes every call to the KMS emulator and counts them: a cold
// start must cost one Decrypt, not one per secret.
type counted struct {
	c                  *kms.Client
	generate, decrypts atomic.Int64
}

func (k *counted) GenerateDataKey(ctx context.Context, in *kms.GenerateDataKeyInput, o ...func(*kms.Options)) (*kms.GenerateDataKeyOutput, error) {
	k.generate.Add(1)
	return k.c.GenerateDataKey(ctx, in, o...)
}

func (k *counted) Decrypt(ctx context.Context, in *kms.DecryptInput, o ...func(*kms.Options)) (*kms.DecryptOutput, error) {
	k.decrypts.Add(1)
	return k.c.Decrypt(ctx, in, o...)
}

func setup(t *testing.T) (*counted, string, *store.Store) {
	env := testenv.New(t)
	c, keyID := testenv.KMS(t)
	return &counted{c: c}, keyID, store.New(env.DB, env.Table)
}

func TestSealOpenAcrossColdStarts(t *testing.T) {
	k, keyID, st := setup(t)
	api := envelope.New(k, keyID, st) // the first process: makes the data key
	aad := []byte("ACCT#a\x00EP#e")
	sealed, err := api.Seal(ctx, []byte("whsec_secret"), aad)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("whsec_")) {
		t.Fatal("the sealed value holds the plaintext")
	}
	if k.generate.Load() != 1 || k.decrypts.Load() != 0 {
		t.Fatalf("first seal: %d GenerateDataKey, %d Decrypt; want 1 and 0", k.generate.Load(), k.decrypts.Load())
	}
	blob, err := st.DataKey(ctx)
	if err != nil || len(blob) == 0 {
		t.Fatalf("the encrypted data key is not in the table: %v", err)
	}

	deliver := envelope.New(k, keyID, st) // a cold start elsewhere
	for i := 0; i < 50; i++ {
		got, err := deliver.Open(ctx, sealed, aad)
		if err != nil || string(got) != "whsec_secret" {
			t.Fatalf("open: %q, %v", got, err)
		}
	}
	if k.decrypts.Load() != 1 || k.generate.Load() != 1 {
		t.Fatalf("a cold start opening 50 values made %d Decrypt calls (want 1) and %d GenerateDataKey (want 1 in all)", k.decrypts.Load(), k.generate.Load())
	}
	// The same plaintext seals differently each time (a fresh nonce).
	again, _ := api.Seal(ctx, []byte("whsec_secret"), aad)
	if bytes.Equal(again, sealed) {
		t.Fatal("two seals of one value are equal: the nonce is reused")
	}
}

func TestOpenRefusesAnotherItemOrATamperedValue(t *testing.T) {
	k, keyID, st := setup(t)
	r := envelope.New(k, keyID, st)
	sealed, err := r.Seal(ctx, []byte("whsec_a"), []byte("ACCT#a\x00EP#1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Open(ctx, sealed, []byte("ACCT#b\x00EP#1")); !errors.Is(err, envelope.ErrOpen) {
		t.Fatalf("opened under another item's key: %v", err)
	}
	tampered := bytes.Clone(sealed)
	tampered[len(tampered)-1] ^= 1
	if _, err := r.Open(ctx, tampered, []byte("ACCT#a\x00EP#1")); !errors.Is(err, envelope.ErrOpen) {
		t.Fatalf("a tampered value opened: %v", err)
	}
	if _, err := r.Open(ctx, []byte("whsec_plain"), nil); !errors.Is(err, envelope.ErrMalformed) {
		t.Fatalf("plaintext taken for a sealed value: %v", err)
	}
}

func TestOpenWithoutADataKeyMakesNone(t *testing.T) {
	k, keyID, st := setup(t)
	r := envelope.New(k, keyID, st)
	if _, err := r.Open(ctx, append([]byte{1}, make([]byte, 40)...), nil); !errors.Is(err, envelope.ErrNoDataKey) {
		t.Fatalf("open before any seal: %v, want ErrNoDataKey", err)
	}
	if k.generate.Load() != 0 {
		t.Fatal("an open made a data key (deliver has no kms:GenerateDataKey)")
	}
}

func TestRacingColdStartsShareOneDataKey(t *testing.T) {
	k, keyID, st := setup(t)
	// Two cold starts seal at once: each may generate a data key, one
	// stores it first (a conditional put) and the other must use that one.
	rings := []*envelope.Keyring{envelope.New(k, keyID, st), envelope.New(k, keyID, st)}
	sealed := make([][]byte, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range rings {
		wg.Go(func() { sealed[i], errs[i] = rings[i].Seal(ctx, []byte{byte('a' + i)}, nil) })
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	for i := range rings {
		other := 1 - i
		if got, err := rings[i].Open(ctx, sealed[other], nil); err != nil || got[0] != byte('a'+other) {
			t.Fatalf("keyring %d cannot open keyring %d's value: %v", i, other, err)
		}
	}
}

func TestALostCreateUsesTheStoredKey(t *testing.T) {
	k, keyID, st := setup(t)
	first := envelope.New(k, keyID, st)
	if _, err := first.Seal(ctx, []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	stored, _ := st.DataKey(ctx)
	// A second CreateDataKey (a cold start that generated its own key while
	// the first stored) gets the first one back, not its own.
	out, err := k.c.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{KeyId: &keyID, NumberOfBytes: nil, KeySpec: "AES_256"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.CreateDataKey(ctx, out.CiphertextBlob)
	if err != nil || !bytes.Equal(got, stored) {
		t.Fatalf("CreateDataKey over an existing key returned %x, %v; want the stored one", got, err)
	}
}
