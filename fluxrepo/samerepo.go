package fluxrepo

import (
	"net/url"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"

	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// sameRepository reports whether ref is a GitRepository of the tree that
// reads the repository itself: its spec.url names the repository another
// source read from the root names (the FluxInstance's spec.sync.url, or
// the url of flux bootstrap's GitRepository in the tree), at the same
// reference. A repository moved from flux bootstrap to flux-operator keeps
// its own GitRepository (home-kubernetes, say) beside the one the
// FluxInstance makes, and its layers read that one: the working tree is
// what both fetch, so those layers are read from the root, with the
// GitRepository's own ignore rules, rather than left unread. It is asked
// when a layer needs ref, so ref must be defined by then (the entry point,
// or a layer read before).
func (r *reader) sameRepository(ref SourceRef) bool {
	if ref.Kind != sourcev1.GitRepositoryKind {
		return false
	}
	o, ok := r.srcObjs[ref]
	if !ok {
		return false
	}
	g := &sourcev1.GitRepository{}
	if decodeNode(o.Node, g) != nil || g.Spec.URL == "" {
		return false
	}
	at := gitRefName(g.Spec.Reference)
	if s := r.instance; s != nil && r.cfg.sources[s.source] == r.root && s.url != "" {
		if sameGitURL(s.url, g.Spec.URL) && at != "" && at == instanceRefName(yamlutil.Str(s.object.Node, "spec", "sync", "ref")) {
			return true
		}
	}
	for other, obj := range r.srcObjs {
		if other == ref || other.Kind != sourcev1.GitRepositoryKind || r.cfg.sources[other] != r.root {
			continue
		}
		og := &sourcev1.GitRepository{}
		if decodeNode(obj.Node, og) != nil {
			continue
		}
		if sameGitURL(og.Spec.URL, g.Spec.URL) && at != "" && at == gitRefName(og.Spec.Reference) {
			return true
		}
	}
	return false
}

// selfApplied reports whether the Kustomization k of the entry point
// (rel, from the root) applies the entry point itself through ref, a
// GitRepository the tree defines that no option maps: flux bootstrap's
// shape (gotk-sync.yaml) under another name, home-kubernetes beside a
// Kustomization cluster whose path is the entry point. Whatever its url
// says, that GitRepository fetches the repository the entry point is
// read from.
func (r *reader) selfApplied(ref SourceRef, k *kustomizev1.Kustomization, rel string) bool {
	if ref.Kind != sourcev1.GitRepositoryKind || cleanPath(k.Spec.Path) != cleanPath(rel) {
		return false
	}
	if _, mapped := r.cfg.sources[ref]; mapped {
		return false
	}
	_, defined := r.srcObjs[ref]
	return defined
}

// gitRefName is the Git reference a GitRepository's spec.ref names, as a
// full name (refs/heads/main), or a commit or semver range as written;
// "" when it names none (source-controller's default then depends on the
// version, so it is no match).
func gitRefName(ref *sourcev1.GitRepositoryRef) string {
	switch {
	case ref == nil:
		return ""
	case ref.Commit != "":
		return "commit:" + ref.Commit
	case ref.Name != "":
		return ref.Name
	case ref.SemVer != "":
		return "semver:" + ref.SemVer
	case ref.Tag != "":
		return "refs/tags/" + ref.Tag
	case ref.Branch != "":
		return "refs/heads/" + ref.Branch
	}
	return ""
}

// instanceRefName is a FluxInstance's spec.sync.ref as gitRefName names
// it: a full reference name as it is, a bare name as a branch.
func instanceRefName(ref string) string {
	switch {
	case ref == "":
		return ""
	case strings.HasPrefix(ref, "refs/"):
		return ref
	}
	return "refs/heads/" + ref
}

// sameGitURL reports whether two Git URLs name one repository: the same
// host and path, whatever the scheme (https, ssh) or user, and with or
// without .git and a trailing slash; letters compared without case, as
// the Git hosts do.
func sameGitURL(a, b string) bool {
	ka, kb := gitURLKey(a), gitURLKey(b)
	return ka != "" && ka == kb
}

func gitURLKey(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Host == "" {
		return ""
	}
	p := strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), ".git")
	if p == "" {
		return ""
	}
	return strings.ToLower(u.Hostname() + p)
}
