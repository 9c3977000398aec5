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

// The bounds of what a textMemo keeps, so that a process that checks
// without end (a library's user) does not grow without end: a number of
// texts, and their bytes (a Grafana dashboard is one value of 50 kB).
const (
	textMemoMax      = 1 << 14
	textMemoMaxBytes = 32 << 20
)

// textMemo keeps the answers of a function of a string, within the bounds
// above.
type textMemo struct {
	m        sync.Map // text → parsed
	n, bytes atomic.Int64
}

func (m *textMemo) get(text string, f func(string) parsed) parsed {
	if p, ok := m.m.Load(text); ok {
		return p.(parsed)
	}
	p := f(text)
	if m.n.Load() < textMemoMax && m.bytes.Load()+int64(len(text)) <= textMemoMaxBytes {
		if _, loaded := m.m.LoadOrStore(text, p); !loaded {
			m.n.Add(1)
			m.bytes.Add(int64(len(text)))
		}
	}
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
