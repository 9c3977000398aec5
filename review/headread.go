package review

import (
	"context"
	"slices"

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
	// abandoned is set by abandon, for discard.
	abandoned bool
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
// taken or abandoned.
func (h *headRead) discard() {
	if !h.abandoned {
		h.closeSide()
	}
}

func (h *headRead) closeSide() {
	if s, _ := h.take(); s != nil {
		s.close()
	}
}

// abandon stops caring for a read whose ctx the caller has cancelled:
// when it is done, what it read is closed at once; when it is not, in the
// background when it ends, so that the caller does not wait for a build
// kustomize cannot stop halfway. Only for a read that lays nothing out
// (no ArtifactGenerator, no GitRepository include): a process that exits
// before such a read ends leaves no folder behind.
func (h *headRead) abandon() {
	h.abandoned = true
	select {
	case <-h.done:
		h.closeSide()
	default:
		go h.closeSide()
	}
}

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
