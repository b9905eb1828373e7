package store

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gifq/webhooks/shared/domain"
)

// An account's v1a (ed25519) signing keys live on one item in its
// partition, newest first, each private key sealed (package envelope).
const skSigningKeys = "SIGNKEYS"

type signingKeysItem struct {
	Keys      []domain.SigningKey `dynamodbav:"keys"`
	UpdatedAt int64               `dynamodbav:"updated_at"`
}

// SigningKeyCheckEvery is how often a process holding an account's opened
// keys reads the key item again to see a rotation (one read per account
// and process at most this often, never one per delivery; the keys are
// opened again only when the item changed). A rotation without overlap
// (the old key leaves the JWKS at once) is signed with at most this late;
// a key whose retirement time passes is never signed with.
const SigningKeyCheckEvery = 5 * time.Second

// keyCache holds opened signing keys per account.
type keyCache struct {
	mu sync.Mutex
	m  map[string]cachedKeys
}

type cachedKeys struct {
	keys    []domain.SigningKey
	version int64     // the item's updated_at they were opened from
	checked time.Time // when the item was last read
}

func (s *Store) readSigningKeys(ctx context.Context, accountID string) (signingKeysItem, bool, error) {
	var it signingKeysItem
	err := s.get(ctx, key(accountPK(accountID), skSigningKeys), &it)
	if errors.Is(err, ErrNotFound) {
		return it, false, nil
	}
	return it, err == nil, err
}

// PublishedSigningKeys are the account's keys a receiver may verify with at
// now (the current one and those in their overlap), public parts only: the
// JWKS. None when the account has none (or does not exist).
func (s *Store) PublishedSigningKeys(ctx context.Context, accountID string) ([]domain.SigningKey, error) {
	it, _, err := s.readSigningKeys(ctx, accountID)
	if err != nil {
		return nil, err
	}
	return published(it.Keys, domain.Millis(s.now())), nil
}

// published are the keys live at now, newest first, without their sealed
// private parts: at most domain.MaxLiveSigningKeys (an account rotated many
// times before the cap publishes and signs with its newest two).
func published(keys []domain.SigningKey, now int64) []domain.SigningKey {
	var out []domain.SigningKey
	for _, k := range keys {
		if k.Live(now) && len(out) < domain.MaxLiveSigningKeys {
			k.Sealed = nil
			out = append(out, k)
		}
	}
	return out
}

// EnsureSigningKey gives the account a signing key if it has no live one
// (an endpoint is about to use v1a), and returns the published keys. Two
// at once make one key: the second finds the first's.
func (s *Store) EnsureSigningKey(ctx context.Context, accountID string) ([]domain.SigningKey, error) {
	keys, err := s.PublishedSigningKeys(ctx, accountID)
	if err != nil || len(keys) > 0 {
		return keys, err
	}
	return s.rotateSigningKey(ctx, accountID, 0, true)
}

// RotateSigningKey makes a new key, first; the ones before it stay
// published and keep signing until now+overlap (or their own earlier
// retirement); retired ones are dropped. Conditioned on the item not having
// changed since it was read, so two rotations cannot lose a key. At most
// two keys are live: a rotation with an overlap while a previous key is
// still in its own overlap is refused (*PreviousKeyLive); overlap 0 retires
// every older key at once and is always allowed.
func (s *Store) RotateSigningKey(ctx context.Context, accountID string, overlap time.Duration) ([]domain.SigningKey, error) {
	return s.rotateSigningKey(ctx, accountID, overlap, false)
}

// rotateSigningKey rotates; ensure: only if no key is live, else it returns
// the live ones as they are.
func (s *Store) rotateSigningKey(ctx context.Context, accountID string, overlap time.Duration, ensure bool) ([]domain.SigningKey, error) {
	if s.sealer == nil {
		return nil, ErrNoSealer // a private key is never written in plaintext
	}
	for try := 0; try < 3; try++ {
		it, found, err := s.readSigningKeys(ctx, accountID)
		if err != nil {
			return nil, err
		}
		if live := published(it.Keys, domain.Millis(s.now())); ensure && len(live) > 0 {
			return live, nil
		}
		if p := previousLive(it.Keys, domain.Millis(s.now())); !ensure && overlap > 0 && p != nil {
			return nil, p
		}
		nk, err := s.newSigningKey(ctx, accountID)
		if err != nil {
			return nil, err
		}
		now := domain.Millis(s.now())
		keys := []domain.SigningKey{nk}
		for _, old := range it.Keys {
			if retire := now + overlap.Milliseconds(); old.RetiresAt == 0 || old.RetiresAt > retire {
				old.RetiresAt = retire
			}
			if old.Live(now) {
				keys = append(keys, old)
			}
		}
		next := signingKeysItem{Keys: keys, UpdatedAt: max(now, it.UpdatedAt+1)}
		av, err := marshal(next, key(accountPK(accountID), skSigningKeys))
		if err != nil {
			return nil, err
		}
		in := &dynamodb.PutItemInput{TableName: s.table, Item: av, ConditionExpression: aws.String("attribute_not_exists(pk)")}
		if found {
			in.ConditionExpression = aws.String("updated_at = :seen")
			in.ExpressionAttributeValues = item{":seen": num(it.UpdatedAt)}
		}
		_, err = s.db.PutItem(ctx, in)
		if isConditionFailed(err) {
			continue // rotated meanwhile: read again
		}
		if err != nil {
			return nil, err
		}
		s.forgetKeys(accountID)
		for i := range keys {
			keys[i].Sealed = nil
		}
		return keys, nil
	}
	return nil, ErrConflict
}

// PreviousKeyLive: a rotation with an overlap while the key a previous
// rotation replaced still signs (until RetiresAt, unix ms): a third live
// key would follow. Nothing changed.
type PreviousKeyLive struct{ RetiresAt int64 }

func (e *PreviousKeyLive) Error() string {
	return "store: a previous signing key is still in its overlap"
}

// previousLive is the refusal of a rotation with an overlap: a key already
// retiring (replaced, in its overlap) is still live; the latest such.
func previousLive(keys []domain.SigningKey, now int64) *PreviousKeyLive {
	var p *PreviousKeyLive
	for _, k := range keys {
		if k.RetiresAt != 0 && k.Live(now) && (p == nil || k.RetiresAt > p.RetiresAt) {
			p = &PreviousKeyLive{RetiresAt: k.RetiresAt}
		}
	}
	return p
}

func signingKeyAAD(accountID, kid string) []byte {
	return append(itemAAD(accountPK(accountID), skSigningKeys), "\x00"+kid...)
}

func (s *Store) newSigningKey(ctx context.Context, accountID string) (domain.SigningKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return domain.SigningKey{}, err
	}
	kid := domain.NewID("sigkey")
	seed := priv.Seed()
	defer clear(seed)
	sealed, err := s.sealer.Seal(ctx, seed, signingKeyAAD(accountID, kid))
	if err != nil {
		return domain.SigningKey{}, err
	}
	return domain.SigningKey{ID: kid, Public: pub, Sealed: sealed, CreatedAt: domain.Millis(s.now())}, nil
}

// signingKeysFor are the account's live keys at now with their private
// keys opened, for an attempt. The opened keys are cached; the item is read
// again at most every SigningKeyCheckEvery per account, and the keys opened
// again only when it changed.
func (s *Store) signingKeysFor(ctx context.Context, accountID string) ([]domain.SigningKey, error) {
	now := s.now()
	s.keys.mu.Lock()
	c, hit := s.keys.m[accountID]
	s.keys.mu.Unlock()
	if hit && now.Sub(c.checked) < SigningKeyCheckEvery {
		return liveKeys(c.keys, now), nil
	}
	it, _, err := s.readSigningKeys(ctx, accountID)
	if err != nil {
		return nil, err
	}
	if hit && it.UpdatedAt == c.version {
		c.checked = now
		s.keys.mu.Lock()
		s.keys.m[accountID] = c
		s.keys.mu.Unlock()
		return liveKeys(c.keys, now), nil
	}
	var keys []domain.SigningKey
	for _, k := range it.Keys {
		if !k.Live(domain.Millis(now)) || len(keys) == domain.MaxLiveSigningKeys {
			continue // newest first: the newest two sign, as published
		}
		if s.sealer == nil {
			return nil, ErrNoSealer
		}
		seed, err := s.sealer.Open(ctx, k.Sealed, signingKeyAAD(accountID, k.ID))
		if err != nil {
			return nil, err
		}
		if len(seed) != ed25519.SeedSize {
			return nil, errors.New("store: a sealed signing key is not an ed25519 seed")
		}
		k.Private, k.Sealed = ed25519.NewKeyFromSeed(seed), nil
		clear(seed)
		keys = append(keys, k)
	}
	s.keys.mu.Lock()
	if s.keys.m == nil {
		s.keys.m = map[string]cachedKeys{}
	}
	s.keys.m[accountID] = cachedKeys{keys: keys, version: it.UpdatedAt, checked: now}
	s.keys.mu.Unlock()
	return keys, nil
}

// liveKeys are the keys of keys still live at now (a new slice: the cached
// one is shared).
func liveKeys(keys []domain.SigningKey, now time.Time) []domain.SigningKey {
	var out []domain.SigningKey
	for _, k := range keys {
		if k.Live(domain.Millis(now)) {
			out = append(out, k)
		}
	}
	return out
}

// forgetKeys drops an account's cached keys (this process rotated them).
func (s *Store) forgetKeys(accountID string) {
	s.keys.mu.Lock()
	delete(s.keys.m, accountID)
	s.keys.mu.Unlock()
}
