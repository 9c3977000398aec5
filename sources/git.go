package sources

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/fluxcd/pkg/version"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/fluxpack/fluxpack/internal/gittree"
)

// defaultBranch is the branch source-controller checks out for a
// GitRepository without spec.ref.
const defaultBranch = "master"

// GitRepository fetches the files of g at the commit its spec.ref
// resolves to, with source-controller's precedence (commit, name, tag,
// semver, branch; branch master without spec.ref: fluxcd/pkg/git's
// checkout order, which e2e O0 holds to source-controller), and returns them with the
// revision source-controller records ("main@sha1:<commit>",
// "v1.2.0@sha1:<commit>", "sha1:<commit>" for a commit alone). The tree
// is kept by commit: a cached commit is not fetched again. Submodules are
// not fetched; spec.ignore and spec.include are the caller's to apply.
func (f *Fetcher) GitRepository(ctx context.Context, g *sourcev1.GitRepository) (Artifact, error) {
	obj := "GitRepository/" + g.Namespace + "/" + g.Name
	if g.Spec.URL == "" {
		return Artifact{}, fmt.Errorf("%s: spec.url is empty", obj)
	}
	ref := g.Spec.Reference
	if ref == nil {
		ref = &sourcev1.GitRepositoryRef{}
	}
	key := "git " + g.Spec.URL + " " + fmt.Sprint(*ref)
	a, err := f.once(key, func() (Artifact, error) { return f.git(ctx, obj, g.Spec.URL, ref) })
	if err != nil {
		return Artifact{}, fmt.Errorf("fetching %s (%s): %w", obj, redactURL(g.Spec.URL), err)
	}
	return a, nil
}

func (f *Fetcher) git(ctx context.Context, obj, url string, ref *sourcev1.GitRepositoryRef) (Artifact, error) {
	auth, err := f.gitAuth(url)
	if err != nil {
		return Artifact{}, err
	}
	var (
		name     plumbing.ReferenceName // what to fetch
		commit   plumbing.Hash
		revision string
	)
	if ref.Commit != "" {
		commit = plumbing.NewHash(ref.Commit)
		if commit.IsZero() || len(ref.Commit) != 40 {
			return Artifact{}, &NotFoundError{Object: obj, Msg: fmt.Sprintf("spec.ref.commit %q is not a full SHA-1", ref.Commit)}
		}
		revision = "sha1:" + commit.String()
		if ref.Branch != "" {
			name = plumbing.NewBranchReferenceName(ref.Branch)
			revision = ref.Branch + "@" + revision
		}
		dir := f.cachePath("git", commit.String())
		if cached(dir) {
			f.log.Info("source cached", "source", obj, "revision", revision)
			return Artifact{Dir: dir, Revision: revision}, nil
		}
	} else {
		refs, err := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{url}}).
			ListContext(ctx, &git.ListOptions{Auth: auth, PeelingOption: git.AppendPeeled})
		if err != nil {
			return Artifact{}, fmt.Errorf("listing refs: %w", err)
		}
		var short string
		switch {
		case ref.Name != "":
			name, short = plumbing.ReferenceName(ref.Name), ref.Name
		case ref.Tag != "":
			name, short = plumbing.NewTagReferenceName(ref.Tag), ref.Tag
		case ref.SemVer != "":
			tag, err := semverTag(refs, ref.SemVer)
			if err != nil {
				return Artifact{}, &NotFoundError{Object: obj, Msg: err.Error()}
			}
			name, short = plumbing.NewTagReferenceName(tag), tag
		default:
			b := ref.Branch
			if b == "" {
				b = defaultBranch
			}
			name, short = plumbing.NewBranchReferenceName(b), b
		}
		commit = peeled(refs, name)
		if commit.IsZero() {
			return Artifact{}, &NotFoundError{Object: obj, Msg: fmt.Sprintf("couldn't find remote ref %q", name)}
		}
		revision = short + "@sha1:" + commit.String()
	}
	dir := f.cachePath("git", commit.String())
	if cached(dir) {
		f.log.Info("source cached", "source", obj, "revision", revision)
		return Artifact{Dir: dir, Revision: revision}, nil
	}
	opts := &git.CloneOptions{URL: url, Auth: auth, Tags: git.NoTags, NoCheckout: true}
	if name != "" {
		opts.ReferenceName, opts.SingleBranch = name, true
		if ref.Commit == "" {
			opts.Depth = 1
		}
	}
	repo, err := git.CloneContext(ctx, memory.NewStorage(), nil, opts)
	if err != nil {
		return Artifact{}, fmt.Errorf("cloning: %w", err)
	}
	c, err := repo.CommitObject(commit)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return Artifact{}, &NotFoundError{Object: obj, Msg: fmt.Sprintf("commit %s not found", commit)}
	}
	if err != nil {
		return Artifact{}, fmt.Errorf("reading commit %s: %w", commit, err)
	}
	tmp, commitDir, abort, err := stage(dir)
	if err != nil {
		return Artifact{}, err
	}
	tree, err := c.Tree()
	if err != nil {
		abort()
		return Artifact{}, fmt.Errorf("reading commit %s: %w", commit, err)
	}
	if err := gittree.Write(ctx, tree, tmp); err != nil {
		abort()
		return Artifact{}, fmt.Errorf("writing commit %s: %w", commit, err)
	}
	if err := commitDir(); err != nil {
		abort()
		return Artifact{}, err
	}
	if err := writeMeta(dir, meta{Revision: "sha1:" + commit.String()}); err != nil {
		return Artifact{}, err
	}
	f.log.Info("source fetched", "source", obj, "revision", revision)
	return Artifact{Dir: dir, Revision: revision}, nil
}

// gitAuth is how url is reached: basic auth over HTTP(S) with
// WithGitCredentials, WithGitSSHKey's key over SSH, else go-git's default
// (none over HTTP(S), the SSH agent over SSH).
func (f *Fetcher) gitAuth(url string) (transport.AuthMethod, error) {
	ep, err := transport.NewEndpoint(url)
	if err != nil {
		return nil, fmt.Errorf("url %q: %w", redactURL(url), err)
	}
	switch ep.Protocol {
	case "http", "https":
		if f.gitUser != "" || f.gitPass != "" {
			return &githttp.BasicAuth{Username: f.gitUser, Password: f.gitPass}, nil
		}
	case "ssh":
		if len(f.sshKey) > 0 {
			user := ep.User
			if user == "" {
				user = "git"
			}
			keys, err := gitssh.NewPublicKeys(user, f.sshKey, "")
			if err != nil {
				return nil, err
			}
			var files []string
			if f.sshHosts != "" {
				files = append(files, f.sshHosts)
			}
			if keys.HostKeyCallback, err = gitssh.NewKnownHostsCallback(files...); err != nil {
				return nil, fmt.Errorf("known hosts: %w", err)
			}
			return keys, nil
		}
	}
	return nil, nil
}

// peeled is the commit name points at among refs: the peeled entry of an
// annotated tag, else the ref's own hash.
func peeled(refs []*plumbing.Reference, name plumbing.ReferenceName) plumbing.Hash {
	var h plumbing.Hash
	for _, r := range refs {
		switch r.Name() {
		case name + "^{}":
			return r.Hash()
		case name:
			h = r.Hash()
		}
	}
	return h
}

// semverTag is the highest tag of refs within the range, as
// source-controller selects a GitRepository's spec.ref.semver.
func semverTag(refs []*plumbing.Reference, constraint string) (string, error) {
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return "", fmt.Errorf("semver parse error: %w", err)
	}
	var (
		best    *semver.Version
		bestTag string
	)
	for _, r := range refs {
		if !r.Name().IsTag() || strings.HasSuffix(string(r.Name()), "^{}") {
			continue
		}
		tag := r.Name().Short()
		v, err := version.ParseVersion(tag)
		if err != nil || !c.Check(v) {
			continue
		}
		if best == nil || v.GreaterThan(best) {
			best, bestTag = v, tag
		}
	}
	if best == nil {
		return "", fmt.Errorf("no match found for semver: %s", constraint)
	}
	return bestTag, nil
}

// redactURL drops the user information of a URL, which may hold a token.
func redactURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	if at := strings.LastIndex(strings.SplitN(rest, "/", 2)[0], "@"); at >= 0 {
		rest = rest[at+1:]
	}
	return scheme + "://" + rest
}
