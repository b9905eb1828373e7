// Package envelope seals the few secrets the table holds (endpoint signing
// secrets, the accounts' ed25519 private keys) so that none is in the table,
// or its backups, in plaintext.
//
// Envelope encryption: one 256-bit data key, made by KMS GenerateDataKey
// under the stack's key, is stored only encrypted (by KMS) in one table item
// (Blobs). A process decrypts it with one KMS Decrypt the first time it
// seals or opens something, and keeps it in memory: one KMS call per cold
// start, not one per secret. Each secret is sealed with AES-256-GCM, a fresh
// random nonce, and the key of the item it is stored in as associated data,
// so a ciphertext copied to another item (another account's endpoint) does
// not open there.
//
// Why the table rather than an environment variable or an SSM parameter:
// the data key must be made by GenerateDataKey, which CloudFormation cannot
// call without a custom resource; the first process that needs it makes it
// and stores it with a conditional put (a racing cold start reads the
// winner's), the functions already read that table, and a cold start pays
// no extra SSM call. The item is useless without kms:Decrypt on the key, which
// a backup, an export or a table-read grant alone does not give.
package envelope

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
)

// KMS is the part of the KMS client the keyring uses.
type KMS interface {
	GenerateDataKey(context.Context, *kms.GenerateDataKeyInput, ...func(*kms.Options)) (*kms.GenerateDataKeyOutput, error)
	Decrypt(context.Context, *kms.DecryptInput, ...func(*kms.Options)) (*kms.DecryptOutput, error)
}

// Blobs keeps the encrypted data key (package store: one table item).
type Blobs interface {
	// DataKey is the stored encrypted data key; nil when none was made yet.
	DataKey(ctx context.Context) ([]byte, error)
	// CreateDataKey stores blob unless a data key is stored already, and
	// returns the one stored: blob, or the one another process stored first.
	CreateDataKey(ctx context.Context, blob []byte) ([]byte, error)
}

// version starts every sealed value: the format (AES-256-GCM under data key 1).
const version byte = 1

// EncryptionContext binds the encrypted data key to its use: KMS refuses to
// decrypt it without the same context, CloudTrail shows it on each call, and
// the functions' IAM grants require it (infra/keys.go), so the grant cannot
// be used to decrypt anything else under the key.
var EncryptionContext = map[string]string{"app": "gifq-webhooks", "purpose": "envelope-data-key"}

// Errors Open returns.
var (
	ErrNoDataKey = errors.New("envelope: no data key stored, so nothing can have been sealed")
	ErrMalformed = errors.New("envelope: not a sealed value")
	ErrOpen      = errors.New("envelope: does not open (tampered, or sealed for another item)")
)

// Keyring seals and opens values with the data key, loaded once.
type Keyring struct {
	kms   KMS
	keyID string
	blobs Blobs

	mu   sync.Mutex
	aead cipher.AEAD // nil until loaded; a failed load is tried again on the next call
}

// New returns a keyring on the KMS key keyID (an ARN, id or alias).
func New(k KMS, keyID string, blobs Blobs) *Keyring {
	return &Keyring{kms: k, keyID: keyID, blobs: blobs}
}

// Seal encrypts plaintext for the item named by aad. The first seal of a
// deployment makes the data key (kms:GenerateDataKey).
func (k *Keyring) Seal(ctx context.Context, plaintext, aad []byte) ([]byte, error) {
	aead, err := k.load(ctx, true)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 1+aead.NonceSize(), 1+aead.NonceSize()+len(plaintext)+aead.Overhead())
	out[0] = version
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, err
	}
	return aead.Seal(out, out[1:], plaintext, aad), nil
}

// Open decrypts what Seal returned for the same aad.
func (k *Keyring) Open(ctx context.Context, sealed, aad []byte) ([]byte, error) {
	if len(sealed) < 1 || sealed[0] != version {
		return nil, ErrMalformed
	}
	aead, err := k.load(ctx, false)
	if err != nil {
		return nil, err
	}
	n := aead.NonceSize()
	if len(sealed) < 1+n+aead.Overhead() {
		return nil, ErrMalformed
	}
	plain, err := aead.Open(nil, sealed[1:1+n], sealed[1+n:], aad)
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}

// load returns the cipher, reading and decrypting the data key the first
// time (orCreate: make one when there is none).
func (k *Keyring) load(ctx context.Context, orCreate bool) (cipher.AEAD, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.aead != nil {
		return k.aead, nil
	}
	blob, err := k.blobs.DataKey(ctx)
	if err != nil {
		return nil, fmt.Errorf("envelope: read the data key: %w", err)
	}
	var key []byte
	switch {
	case blob != nil:
		key, err = k.decrypt(ctx, blob)
	case !orCreate:
		return nil, ErrNoDataKey
	default:
		key, err = k.create(ctx)
	}
	if err != nil {
		return nil, err
	}
	defer clear(key)
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	if k.aead, err = cipher.NewGCM(block); err != nil {
		return nil, err
	}
	return k.aead, nil
}

func (k *Keyring) create(ctx context.Context) ([]byte, error) {
	out, err := k.kms.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{
		KeyId: aws.String(k.keyID), KeySpec: types.DataKeySpecAes256, EncryptionContext: EncryptionContext,
	})
	if err != nil {
		return nil, fmt.Errorf("envelope: kms GenerateDataKey: %w", err)
	}
	stored, err := k.blobs.CreateDataKey(ctx, out.CiphertextBlob)
	if err != nil {
		return nil, fmt.Errorf("envelope: store the data key: %w", err)
	}
	if string(stored) == string(out.CiphertextBlob) {
		return out.Plaintext, nil
	}
	clear(out.Plaintext)
	return k.decrypt(ctx, stored) // another process stored its key first: use that one
}

func (k *Keyring) decrypt(ctx context.Context, blob []byte) ([]byte, error) {
	out, err := k.kms.Decrypt(ctx, &kms.DecryptInput{
		CiphertextBlob: blob, KeyId: aws.String(k.keyID), EncryptionContext: EncryptionContext,
	})
	if err != nil {
		return nil, fmt.Errorf("envelope: kms Decrypt: %w", err)
	}
	if len(out.Plaintext) != 32 {
		return nil, fmt.Errorf("envelope: the data key is %d bytes, want 32", len(out.Plaintext))
	}
	return out.Plaintext, nil
}
