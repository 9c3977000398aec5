package substitute

import (
	"sync"
	"sync/atomic"

	"github.com/fluxcd/pkg/envsubst/parse"
)

// parsed is what a step of a check gave for a text: what re-serialising a
// value or reading a text back gave (checkRetyping), or the variables a
// value references (referenced). Its v is shared by every check that asks
// again: it is read, never changed.
type parsed struct {
	v   any
	err error
}

// The bounds of what a memo keeps, so that a process that checks or
// renders without end (a library's user) does not grow without end: a
// number of answers, and the bytes of their keys and values (a Grafana
// dashboard is one value of 50 kB).
const (
	textMemoMax      = 1 << 14
	textMemoMaxBytes = 32 << 20
)

// memo keeps answers by a text key, within the bounds above. An answer is
// shared by every caller that asks again: it is read, never changed.
type memo[V any] struct {
	m        sync.Map // key → V
	n, bytes atomic.Int64
}

func (m *memo[V]) load(key string) (V, bool) {
	v, ok := m.m.Load(key)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

// store keeps v for key when the bounds allow; size is v's bytes.
func (m *memo[V]) store(key string, v V, size int) {
	size += len(key)
	if m.n.Load() < textMemoMax && m.bytes.Load()+int64(size) <= textMemoMaxBytes {
		if _, loaded := m.m.LoadOrStore(key, v); !loaded {
			m.n.Add(1)
			m.bytes.Add(int64(size))
		}
	}
}

// textMemo keeps the answers of a function of a string.
type textMemo struct{ memo[parsed] }

func (m *textMemo) get(text string, f func(string) parsed) parsed {
	if p, ok := m.load(text); ok {
		return p
	}
	p := f(text)
	m.store(text, p, 0)
	return p
}

// parsedRefs keeps what referenced found: a value is parsed once per
// process, though every check of a layer (and both sides of a review)
// and Uses.Vars read it. envsubst's parser takes about 20 ns a byte, and
// dashboards are long.
var parsedRefs textMemo

// referenced returns the variables value references, in order, as Flux's
// parser reads them, or its parse error. The slice is shared: read it only.
func referenced(value string) ([]ref, error) {
	p := parsedRefs.get(value, func(value string) parsed {
		tree, err := parse.Parse(value)
		if err != nil {
			return parsed{err: err}
		}
		var rs []ref
		refs(tree.Root, &rs)
		return parsed{v: rs}
	})
	rs, _ := p.v.([]ref)
	return rs, p.err
}
