// Package memo keeps the answers of pure functions by a text key, within
// bounds: a process that renders or checks without end (a library's
// user, wake) does not grow without end.
package memo

import (
	"sync"
	"sync/atomic"
)

// The default bounds of a Bounded: a number of answers, and the bytes of
// their keys and values (a Grafana dashboard is one value of 50 kB).
const (
	DefaultMax      = 1 << 14
	DefaultMaxBytes = 32 << 20
)

// Bounded keeps answers of type V by key. An answer is shared by every
// caller that asks again: it is read, never changed. Max and MaxBytes
// bound what it keeps (zero: the defaults); it is safe for concurrent use.
type Bounded[V any] struct {
	Max, MaxBytes int64
	m             sync.Map // key → V
	n, bytes      atomic.Int64
}

// Load returns the answer kept for key.
func (m *Bounded[V]) Load(key string) (V, bool) {
	v, ok := m.m.Load(key)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

// Store keeps v for key when the bounds allow; size is v's bytes (the
// key's are added).
func (m *Bounded[V]) Store(key string, v V, size int) {
	size += len(key)
	maxN, maxBytes := m.Max, m.MaxBytes
	if maxN == 0 {
		maxN = DefaultMax
	}
	if maxBytes == 0 {
		maxBytes = DefaultMaxBytes
	}
	if m.n.Load() < maxN && m.bytes.Load()+int64(size) <= maxBytes {
		if _, loaded := m.m.LoadOrStore(key, v); !loaded {
			m.n.Add(1)
			m.bytes.Add(int64(size))
		}
	}
}

// Len returns how many answers are kept.
func (m *Bounded[V]) Len() int64 { return m.n.Load() }

// Bytes returns the bytes of the answers kept and of their keys.
func (m *Bounded[V]) Bytes() int64 { return m.bytes.Load() }
