package synth

import (
	"math/rand/v2"
	"time"
)

// newRand returns the generator for one stream of the corpus. Every notice
// draws from its own stream, keyed by a stable number, so that notices can be
// built in any order (and in parallel) and still come out byte-identical.
func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, mix(stream)))
}

// mix scrambles a stream key (splitmix64) so that neighbouring keys give
// unrelated PCG streams.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// chance reports true with probability p.
func chance(r *rand.Rand, p float64) bool { return r.Float64() < p }

// pick returns a random element of xs.
func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// pickWeighted returns an index of weights, each chosen in proportion to its
// weight.
func pickWeighted(r *rand.Rand, weights []int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	n := r.IntN(total)
	for i, w := range weights {
		if n < w {
			return i
		}
		n -= w
	}
	return len(weights) - 1
}

// between returns a random integer in [lo, hi].
func between(r *rand.Rand, lo, hi int) int {
	if hi <= lo {
		return lo
	}
	return lo + r.IntN(hi-lo+1)
}

// day is a date as days since 1970-01-01, the unit the plan works in.
type day int32

// dayOf returns the day of t (UTC).
func dayOf(t time.Time) day {
	return day(t.UTC().Truncate(24*time.Hour).Unix() / 86400)
}

// time returns the day's midnight UTC.
func (d day) time() time.Time { return time.Unix(int64(d)*86400, 0).UTC() }

// String writes the day YYYY-MM-DD.
func (d day) String() string { return d.time().Format(time.DateOnly) }

// year returns the day's year.
func (d day) year() int { return d.time().Year() }
