package domain

import (
	"errors"
	"time"
)

// MaxLiveSecrets is how many secrets sign a request at most: the current one
// and, during a rotation, the previous one. More would only grow every
// request's signature headers (151 secrets made a 10 KB X-Gifq-Signature,
// past common proxies' header limits).
const MaxLiveSecrets = 2

// MaxRotationGrace is the longest a previous secret keeps signing.
const MaxRotationGrace = 24 * time.Hour

// ErrPreviousSecretLive refuses a rotation while a previous secret still
// signs: a third live secret would exceed MaxLiveSecrets.
var ErrPreviousSecretLive = errors.New("a previous secret still signs")

// Rotation is a rotation's request: the new secret, how long the current
// one keeps signing (at most MaxRotationGrace), and whether a previous
// secret still signing is to stop now rather than refuse the rotation.
type Rotation struct {
	NewSecret         string
	Grace             time.Duration
	ExpirePreviousNow bool
	Now               int64 // unix ms
}

// RotateSecrets decides an endpoint's secrets after a rotation: the new one
// first, then the current one expiring after the grace (left out when the
// grace is 0). A secret older than the current one that still signs refuses
// the rotation with ErrPreviousSecretLive, unless ExpirePreviousNow drops
// it; expired ones are dropped. The answer never holds more than
// MaxLiveSecrets secrets, and never one signing past now+MaxRotationGrace.
func RotateSecrets(secrets []Secret, r Rotation) ([]Secret, error) {
	grace := min(max(r.Grace, 0), MaxRotationGrace).Milliseconds()
	live := liveSecrets(secrets, r.Now)
	if len(live) > 1 && !r.ExpirePreviousNow {
		return secrets, ErrPreviousSecretLive
	}
	out := []Secret{{Value: r.NewSecret, CreatedAt: r.Now}}
	if len(live) > 0 && grace > 0 {
		cur := live[0]
		if cur.ExpiresAt == 0 || cur.ExpiresAt > r.Now+grace {
			cur.ExpiresAt = r.Now + grace
		}
		out = append(out, cur)
	}
	return out, nil
}

// PreviousSecretExpiresAt is when the newest previous secret still signing
// at now stops (unix ms); 0 when none does.
func PreviousSecretExpiresAt(secrets []Secret, now int64) int64 {
	if live := liveSecrets(secrets, now); len(live) > 1 {
		return live[1].ExpiresAt
	}
	return 0
}

// liveSecrets are the secrets signing at now, newest first.
func liveSecrets(secrets []Secret, now int64) []Secret {
	var out []Secret
	for _, s := range secrets {
		if s.ExpiresAt == 0 || s.ExpiresAt > now {
			out = append(out, s)
		}
	}
	return out
}
