package review

import (
	"context"
	"slices"
	"sync"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/lint"
)

// headRead is a first read of the head (readSide with firstRead's
// options) under way: done is closed when side and err are set. Whoever
// takes it closes side.
type headRead struct {
	done chan struct{}
	side *side
	err  error
}

// startHeadRead starts the head's first read for Compare under cfg.
func startHeadRead(ctx context.Context, headRoot, entry string, cfg *config) *headRead {
	h := &headRead{done: make(chan struct{})}
	go func() {
		defer close(h.done)
		h.side, h.err = readSide(ctx, headRoot, entry, firstRead(cfg), nil)
	}()
	return h
}

// take returns the read, once it is done; the side is the caller's to
// close.
func (h *headRead) take() (*side, error) {
	<-h.done
	s := h.side
	h.side = nil
	return s, h.err
}

// discard waits for the read and closes what it read, unless it was
// taken.
func (h *headRead) discard() {
	if s, _ := h.take(); s != nil {
		s.close()
	}
}

// abandon stops caring for the read: when it is done, what it read is
// closed at once; when it is not (the caller has cancelled its ctx), it is
// closed in the background when the read ends, so that whoever stops it
// does not wait for a build kustomize cannot stop halfway.
func (h *headRead) abandon() {
	select {
	case <-h.done:
		h.discard()
	default:
		abandoned.Go(h.discard)
	}
}

// abandoned are the reads being closed in the background (tests wait for
// them).
var abandoned sync.WaitGroup

// firstRead is how Compare first reads the head: changed-only, for what
// its layers apply (the identities of the objects whose content lint does
// not read), enough to tell the layers the change feeds from those it
// leaves alone, which are the same on both sides and are not rendered.
// Those it feeds are then read whole, on both sides. With WithAll, whole.
func firstRead(cfg *config) []fluxrepo.Option {
	if cfg.all {
		return cfg.read
	}
	return append(slices.Clone(cfg.read), fluxrepo.WithIdentityOnly(lint.ReadsContent))
}

// withHeadRead gives Compare the head's first read CompareRevision
// started.
func withHeadRead(h *headRead) Option {
	return optionFunc(func(c *config) error { c.headRead = h; return nil })
}
