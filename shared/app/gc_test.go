package app

import "testing"

func TestGCSettings(t *testing.T) {
	for _, c := range []struct {
		env     map[string]string
		percent int
		limit   int64
	}{
		{map[string]string{}, 400, 0}, // make dev, tests: no memory size to go by
		{map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256"}, 400, 256 << 20 * 8 / 10},
		{map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024", "GOGC": "100"}, 0, 1024 << 20 * 8 / 10}, // the operator's GOGC wins
		{map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256", "GOMEMLIMIT": "100MiB"}, 400, 0},         // and their limit
		{map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "lots"}, 400, 0},
	} {
		p, l := GCSettings(func(k string) string { return c.env[k] })
		if p != c.percent || l != c.limit {
			t.Errorf("%v: percent %d, limit %d; want %d, %d", c.env, p, l, c.percent, c.limit)
		}
	}
}
