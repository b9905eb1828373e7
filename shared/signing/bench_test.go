package signing

import (
	"crypto/ed25519"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchBody is a JSON body of n bytes, like a producer's event.
func benchBody(n int) []byte {
	const head, tail = `{"event":"payout.fulfilled","data":{"pad":"`, `"}}`
	return []byte(head + strings.Repeat("x", n-len(head)-len(tail)) + tail)
}

var sizes = []struct {
	name string
	n    int
}{{"1KiB", 1 << 10}, {"256KiB", 256 << 10}}

// Sign runs once per attempt; two secrets during a rotation.
func BenchmarkSign(b *testing.B) {
	at := time.Unix(1_764_460_800, 0)
	for _, secrets := range [][]string{{"whsec_current"}, {"whsec_current", "whsec_previous"}} {
		for _, size := range sizes {
			body := benchBody(size.n)
			b.Run(strconv.Itoa(len(secrets))+"secret/"+size.name, func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					_ = Sign(secrets, at, body)
				}
			})
		}
	}
}

// Verify is what a receiver runs per request: one secret, and two while it
// rotates (the header then carries two v1 values).
func BenchmarkVerify(b *testing.B) {
	at := time.Unix(1_764_460_800, 0)
	opts := Options{Now: func() time.Time { return at }}
	for _, size := range sizes {
		body := benchBody(size.n)
		header := Sign([]string{"whsec_current", "whsec_previous"}, at, body)
		for _, secrets := range [][]string{{"whsec_current"}, {"whsec_previous", "whsec_current"}} {
			b.Run(strconv.Itoa(len(secrets))+"secret/"+size.name, func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					if err := Verify(body, header, secrets, opts); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// SignStandard also runs once per attempt, beside Sign.
func BenchmarkSignStandard(b *testing.B) {
	at := time.Unix(1_764_460_800, 0)
	secrets := []string{NewSecret(), NewSecret()}
	for _, n := range []int{1, 2} {
		for _, size := range sizes {
			body := benchBody(size.n)
			b.Run(strconv.Itoa(n)+"secret/"+size.name, func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					_ = SignStandard(secrets[:n], "dlv_01M8NHFFVSXRY4XPHP9AET0VWJ", at, body)
				}
			})
		}
	}
}

// SignStandardV1a runs once per attempt of a v1a endpoint (docs/signing.md
// compares it with a KMS Sign call): one key, two during a rotation.
func BenchmarkSignStandardV1a(b *testing.B) {
	at := time.Unix(1_764_460_800, 0)
	keys := []ed25519.PrivateKey{ed25519.NewKeyFromSeed(make([]byte, 32)), ed25519.NewKeyFromSeed(append(make([]byte, 31), 1))}
	for _, n := range []int{1, 2} {
		for _, size := range sizes {
			body := benchBody(size.n)
			b.Run(strconv.Itoa(n)+"key/"+size.name, func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					_ = SignStandardV1a(keys[:n], "dlv_01ABC", at, body)
				}
			})
		}
	}
}
