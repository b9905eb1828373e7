package main

import (
	"math"
	"sort"
)

// Zipf is the share of traffic of each of n accounts ranked 1..n: rank r
// gets a share proportional to 1/r^s.
type Zipf struct {
	cdf []float64 // cdf[i]: the share of ranks 1..i+1
}

// NewZipf returns the distribution over n ranks with exponent s.
func NewZipf(n int, s float64) Zipf {
	cdf := make([]float64, n)
	sum := 0.0
	for i := range cdf {
		sum += 1 / math.Pow(float64(i+1), s)
		cdf[i] = sum
	}
	for i := range cdf {
		cdf[i] /= sum
	}
	return Zipf{cdf: cdf}
}

// Share is rank r's share (1-based).
func (z Zipf) Share(r int) float64 {
	if r == 1 {
		return z.cdf[0]
	}
	return z.cdf[r-1] - z.cdf[r-2]
}

// Sample maps u in [0,1) to a rank (inverse CDF): rank r for a fraction
// Share(r) of the values of u.
func (z Zipf) Sample(u float64) int {
	i := sort.Search(len(z.cdf), func(i int) bool { return z.cdf[i] > u })
	return min(i, len(z.cdf)-1) + 1
}
