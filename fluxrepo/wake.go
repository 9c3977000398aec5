package fluxrepo

import (
	"context"
	"path/filepath"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/render"
)

// WakeTarget is where the repository's wake objects go when written to dir,
// a folder inside the repository that the cluster's entry point applies
// (such as clusters/prod/wake): layering.DefaultWakeTarget for its Plan,
// objects named <entry folder>-wake, read by the wake Kustomization from
// dir/objects (Wake.Files' layout) of the source that is the repository
// itself: the source of the Kustomization that applies the entry point
// when the tree has one, else the one source mapped to Root with
// WithSource, else DefaultSource. Give the result to Plan.WakeFor.
func (repo *Repository) WakeTarget(dir string) (layering.WakeTarget, error) {
	ref, srcDir := repo.selfSource()
	abs, err := filepath.Abs(dir)
	if err != nil {
		return layering.WakeTarget{}, err
	}
	rel, err := filepath.Rel(srcDir, abs)
	if err != nil || !filepath.IsLocal(rel) {
		return layering.WakeTarget{}, errdefs.InvalidOption("wake folder %s: it is not inside %s (%s), which the wake Kustomization reads", dir, srcDir, ref)
	}
	t := layering.DefaultWakeTarget(repo.Plan, "./"+filepath.ToSlash(filepath.Join(rel, "objects")))
	t.SourceRef = kustomizev1.CrossNamespaceSourceReference{Kind: ref.Kind, Name: ref.Name}
	if ref.Namespace != t.Namespace {
		t.SourceRef.Namespace = ref.Namespace
	}
	return t, nil
}

// selfSource is the source that holds the entry point, and its directory.
func (repo *Repository) selfSource() (SourceRef, string) {
	if len(repo.Plan.Layers) > 0 {
		if k := repo.Plan.Layers[0].Kustomization; k != nil {
			if ref := sourceOf(k); repo.srcDirs[ref] == repo.Root && ref != DefaultSource() {
				return ref, repo.Root
			}
		}
	}
	var mapped []SourceRef
	for ref, dir := range repo.srcDirs {
		if dir == repo.Root && ref != DefaultSource() {
			mapped = append(mapped, ref)
		}
	}
	if len(mapped) == 1 {
		return mapped[0], repo.Root
	}
	return DefaultSource(), repo.srcDirs[DefaultSource()]
}

// WakeObjects returns the objects that wake the Kustomizations of the
// repository's tree (layering.Wake), to be written to dir with
// render.WriteWake; receiverURL goes into the Secret only ("" for
// layering.DefaultReceiverURL). It fails when no Kustomization depends on
// another: there is nothing to wake.
func (repo *Repository) WakeObjects(dir, receiverURL string) (*layering.Wake, error) {
	t, err := repo.WakeTarget(dir)
	if err != nil {
		return nil, err
	}
	if receiverURL != "" {
		t.ReceiverURL = receiverURL
	}
	w, err := repo.Plan.WakeFor(t)
	if err != nil {
		return nil, err
	}
	if w == nil {
		return nil, errdefs.InvalidOption("no Kustomization of %s depends on another: there is nothing to wake", repo.Entry)
	}
	return w, nil
}

// WakeConfig says where Wake writes.
type WakeConfig struct {
	// Dir is the folder inside the repository the wake objects go to,
	// which the cluster's entry point applies (such as clusters/prod/wake).
	Dir string
	// SecretFile receives the wake Secret, outside the repository; ""
	// leaves it out.
	SecretFile string
	// ReceiverURL is where notification-controller reaches its webhook
	// receiver ("" for layering.DefaultReceiverURL); only in the Secret.
	ReceiverURL string
	// Check compares Dir with the objects and writes nothing.
	Check bool
}

// Wake reads the tree of entry (Read) and writes to c.Dir the objects that
// wake each Kustomization's dependents the moment it becomes Ready
// (WakeObjects, render.WriteWake), each file only when the graph changed
// it, and the Secret to c.SecretFile, keeping its token; with c.Check it
// writes nothing and reports the stale files.
func Wake(ctx context.Context, entry string, c WakeConfig, opts ...Option) (*render.WakeWritten, error) {
	if c.Dir == "" {
		return nil, errdefs.InvalidOption("wake: no folder to write to")
	}
	repo, err := Read(ctx, entry, opts...)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	w, err := repo.WakeObjects(c.Dir, c.ReceiverURL)
	if err != nil {
		return nil, err
	}
	if c.Check {
		return render.CheckWake(w, c.Dir)
	}
	var wo []render.Option
	if c.SecretFile != "" {
		abs, err := filepath.Abs(c.SecretFile)
		if err != nil {
			return nil, err
		}
		if rel, err := filepath.Rel(repo.Root, abs); err == nil && filepath.IsLocal(rel) {
			return nil, errdefs.InvalidOption("the secret file %s is inside the repository %s: the wake token must stay out of it", c.SecretFile, repo.Root)
		}
		wo = append(wo, render.WithSecretFile(c.SecretFile))
	}
	if c.ReceiverURL != "" {
		wo = append(wo, render.WithReceiverURL(c.ReceiverURL))
	}
	return render.WriteWake(ctx, w, c.Dir, wo...)
}
