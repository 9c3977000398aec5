package fluxrepo

import (
	"context"

	"github.com/fluxpack/fluxpack/layering"
)

// Graph reads the tree of entry and draws its Kustomizations' dependency
// graph (layering.Plan.Graph).
func Graph(ctx context.Context, entry string, format layering.GraphFormat, opts ...Option) ([]byte, error) {
	repo, err := Read(ctx, entry, opts...)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	return repo.Plan.Graph(format)
}
