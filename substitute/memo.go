package substitute

import (
	"github.com/fluxcd/pkg/envsubst/parse"

	"github.com/fluxpack/fluxpack/internal/memo"
)

// parsed is what a step of a check gave for a text: what re-serialising a
// value or reading a text back gave (checkRetyping), or the variables a
// value references (referenced). Its v is shared by every check that asks
// again: it is read, never changed.
type parsed struct {
	v   any
	err error
}

// textMemo keeps the answers of a function of a string, within
// memo.Bounded's default bounds.
type textMemo struct{ memo.Bounded[parsed] }

func (m *textMemo) get(text string, f func(string) parsed) parsed {
	if p, ok := m.Load(text); ok {
		return p
	}
	p := f(text)
	m.Store(text, p, 0)
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
