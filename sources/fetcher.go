package sources

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"golang.org/x/crypto/ssh"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/oci"
)

// ErrInvalidOption is wrapped by the error of an option given a value it
// cannot use.
var ErrInvalidOption = errdefs.ErrInvalidOption

// Artifact is a fetched source: where its files are and what revision
// source-controller would record for it.
type Artifact struct {
	// Dir holds the artifact's files (for a chart, Path is set instead).
	Dir string `json:"dir,omitempty"`
	// Path is a chart's packaged file (.tgz).
	Path string `json:"path,omitempty"`
	// Revision is status.artifact.revision as source-controller writes
	// it: "main@sha1:<commit>", "v1.2.3@sha256:<digest>", or a chart's
	// version.
	Revision string `json:"revision"`
}

// Fetcher fetches sources into a cache directory. It is safe for
// concurrent use; one fetch of a given reference runs at a time.
type Fetcher struct {
	dir      string
	registry []oci.RegistryOption
	http     *http.Client
	gitUser  string
	gitPass  string
	sshKey   []byte // WithGitSSHKey
	sshHosts string // WithGitSSHKey: known_hosts file
	log      *slog.Logger

	mu      sync.Mutex
	fetched map[string]Artifact // by resolved reference, for this Fetcher's life
	locks   map[string]*sync.Mutex
}

// Option configures New.
type Option func(*Fetcher) error

// WithRegistry says how OCI registries are reached (credentials, CA,
// insecure): package oci's registry options, the ones push uses.
func WithRegistry(opts ...oci.RegistryOption) Option {
	return func(f *Fetcher) error {
		for _, o := range opts {
			if o == nil {
				return errdefs.InvalidOption("WithRegistry: nil option")
			}
		}
		f.registry = append(f.registry, opts...)
		return nil
	}
}

// WithHTTPClient is the client for Git over HTTP(S) and Helm repository
// indexes and charts (default: http.DefaultClient's transport).
func WithHTTPClient(c *http.Client) Option {
	return errdefs.NonNil("WithHTTPClient", "client", c, func(f *Fetcher) **http.Client { return &f.http })
}

// WithGitCredentials authenticates Git over HTTP(S) with basic auth (a
// user and a password or token), as a GitRepository's secretRef with
// username and password does.
func WithGitCredentials(user, password string) Option {
	return func(f *Fetcher) error {
		if user == "" && password == "" {
			return errdefs.InvalidOption("WithGitCredentials: empty user and password")
		}
		f.gitUser, f.gitPass = user, password
		return nil
	}
}

// WithGitSSHKey authenticates Git over SSH (ssh:// and user@host:path
// URLs) with a private key in PEM, as a GitRepository's secretRef with an
// identity does, checking the server against the known_hosts file given
// ("" for $SSH_KNOWN_HOSTS or ~/.ssh/known_hosts). Without it, SSH uses
// the SSH agent.
func WithGitSSHKey(keyPEM []byte, knownHosts string) Option {
	return func(f *Fetcher) error {
		if len(keyPEM) == 0 {
			return errdefs.InvalidOption("WithGitSSHKey: empty key")
		}
		if _, err := ssh.ParsePrivateKey(keyPEM); err != nil {
			return errdefs.InvalidOption("WithGitSSHKey: %v", err)
		}
		f.sshKey, f.sshHosts = keyPEM, knownHosts
		return nil
	}
}

// WithLogger logs each fetch (the reference, what it resolved to, whether
// the cache held it) at info level.
func WithLogger(l *slog.Logger) Option {
	return errdefs.NonNil("WithLogger", "logger", l, func(f *Fetcher) **slog.Logger { return &f.log })
}

// New returns a Fetcher keeping what it fetches under dir, which it
// creates.
func New(dir string, opts ...Option) (*Fetcher, error) {
	if dir == "" {
		return nil, errdefs.InvalidOption("sources.New: empty cache directory")
	}
	f := &Fetcher{dir: dir, http: &http.Client{}, log: slog.New(slog.DiscardHandler), fetched: map[string]Artifact{}, locks: map[string]*sync.Mutex{}}
	for _, o := range opts {
		if o == nil {
			return nil, errdefs.InvalidOption("sources.New: nil Option")
		}
		if err := o(f); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the sources cache: %w", err)
	}
	return f, nil
}

// FetchSource fetches the artifact of src, a *sourcev1.GitRepository or a
// *sourcev1.OCIRepository, and returns the directory holding its files and
// its revision. It is what package fluxrepo calls for a source the
// repository does not hold.
func (f *Fetcher) FetchSource(ctx context.Context, src runtime.Object) (dir, revision string, err error) {
	var a Artifact
	switch s := src.(type) {
	case *sourcev1.GitRepository:
		a, err = f.GitRepository(ctx, s)
	case *sourcev1.OCIRepository:
		a, err = f.OCIRepository(ctx, s)
	default:
		return "", "", fmt.Errorf("%T: fetching this kind of source is not supported", src)
	}
	return a.Dir, a.Revision, err
}

// once runs fetch for key one at a time, and once per Fetcher.
func (f *Fetcher) once(key string, fetch func() (Artifact, error)) (Artifact, error) {
	f.mu.Lock()
	if a, ok := f.fetched[key]; ok {
		f.mu.Unlock()
		return a, nil
	}
	l, ok := f.locks[key]
	if !ok {
		l = &sync.Mutex{}
		f.locks[key] = l
	}
	f.mu.Unlock()
	l.Lock()
	defer l.Unlock()
	f.mu.Lock()
	if a, ok := f.fetched[key]; ok {
		f.mu.Unlock()
		return a, nil
	}
	f.mu.Unlock()
	a, err := fetch()
	if err != nil {
		return Artifact{}, err
	}
	f.mu.Lock()
	f.fetched[key] = a
	f.mu.Unlock()
	return a, nil
}

// cachePath is where content of kind with the given address is kept.
func (f *Fetcher) cachePath(kind, address string) string {
	return filepath.Join(f.dir, kind, address)
}

// hashOf is a short, filesystem-safe address of s.
func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// stage makes a directory beside final to write into; commit renames it
// into place (another process having done so first is fine).
func stage(final string) (tmp string, commit func() error, abort func(), err error) {
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return "", nil, nil, err
	}
	tmp, err = os.MkdirTemp(filepath.Dir(final), "."+filepath.Base(final)+"-")
	if err != nil {
		return "", nil, nil, err
	}
	abort = func() { _ = os.RemoveAll(tmp) }
	commit = func() error {
		if err := os.Chmod(tmp, 0o755); err != nil {
			return err
		}
		if err := os.Rename(tmp, final); err != nil {
			if _, e := os.Stat(final); e == nil {
				abort() // another fetch put it there
				return nil
			}
			return err
		}
		return nil
	}
	return tmp, commit, abort, nil
}

// meta is what the cache keeps beside a directory: its revision.
type meta struct {
	Revision string `json:"revision"`
}

// cached reports whether the cache holds dir whole: its directory, and
// the metadata written once it was in place.
func cached(dir string) bool {
	b, err := os.ReadFile(dir + ".json")
	if err != nil {
		return false
	}
	var m meta
	if json.Unmarshal(b, &m) != nil || m.Revision == "" {
		return false
	}
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}

func writeMeta(dir string, m meta) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	tmp := dir + ".json.tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, dir+".json")
}

// NotFoundError says a source was reached and holds no such ref, version
// or layer: source-controller would fail the object with this message.
type NotFoundError struct {
	// Object is the source or chart, as KIND/NAMESPACE/NAME or URL.
	Object string
	Msg    string
}

func (e *NotFoundError) Error() string { return e.Object + ": " + e.Msg }

// NotFound reports true: the error is the source's answer, not a failure
// to reach it.
func (e *NotFoundError) NotFound() bool { return true }

// IsNotFound reports whether err says that a source was reached and has no
// such ref, version or layer.
func IsNotFound(err error) bool {
	var nf interface{ NotFound() bool }
	return errors.As(err, &nf) && nf.NotFound()
}
