package oci

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	fluxoci "github.com/fluxcd/pkg/oci"
	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/fluxpack/fluxpack/internal/errdefs"
)

// The options of each operation. Each is an interface only this package
// implements; an option works with every operation whose option type it
// implements (WithCreds with Push, Diff, Pull, Tag and List, say), so the
// compiler refuses a misplaced one. Every option checks its own input.
type (
	// BuildOption configures Build.
	BuildOption interface{ applyBuild(*options) error }
	// PushOption configures Push.
	PushOption interface{ applyPush(*options) error }
	// DiffOption configures Diff.
	DiffOption interface{ applyDiff(*options) error }
	// PullOption configures Pull.
	PullOption interface{ applyPull(*options) error }
	// TagOption configures Tag.
	TagOption interface{ applyTag(*options) error }
	// ListOption configures List.
	ListOption interface{ applyList(*options) error }
	// VerifyOption configures Verify.
	VerifyOption interface{ applyVerify(*options) error }
	// PromoteOption configures Promote: registry options, and the
	// verifier the promoted artifact must pass (WithVerifier).
	PromoteOption interface{ applyPromote(*options) error }

	// ArtifactOption says what the artifact holds: Build and Push.
	ArtifactOption interface {
		BuildOption
		PushOption
	}
	// TreeOption says what of a directory goes into the artifact: Build,
	// Push and Diff.
	TreeOption interface {
		ArtifactOption
		DiffOption
	}
	// RegistryOption says how to reach the registry: every operation that
	// does.
	RegistryOption interface {
		PushOption
		DiffOption
		PullOption
		TagOption
		ListOption
		VerifyOption
		PromoteOption
	}
	// KeyOption says how a signature is checked: Verify and Promote.
	KeyOption interface {
		VerifyOption
		PromoteOption
	}
	// SharedOption works with every operation.
	SharedOption interface {
		BuildOption
		RegistryOption
	}
)

// The option values, one type per set of operations, so that an option
// implements exactly its operations' interfaces.
type (
	artifactOpt struct{ apply func(*options) error }
	treeOpt     struct{ apply func(*options) error }
	pushOpt     struct{ apply func(*options) error }
	registryOpt struct{ apply func(*options) error }
	listOpt     struct{ apply func(*options) error }
	pullOpt     struct{ apply func(*options) error }
	verifyOpt   struct{ apply func(*options) error }
	promoteOpt  struct{ apply func(*options) error }
	sharedOpt   struct{ apply func(*options) error }
)

func (o promoteOpt) applyPromote(x *options) error { return o.apply(x) }

func (o artifactOpt) applyBuild(x *options) error   { return o.apply(x) }
func (o artifactOpt) applyPush(x *options) error    { return o.apply(x) }
func (o treeOpt) applyBuild(x *options) error       { return o.apply(x) }
func (o treeOpt) applyPush(x *options) error        { return o.apply(x) }
func (o treeOpt) applyDiff(x *options) error        { return o.apply(x) }
func (o pushOpt) applyPush(x *options) error        { return o.apply(x) }
func (o registryOpt) applyPush(x *options) error    { return o.apply(x) }
func (o registryOpt) applyDiff(x *options) error    { return o.apply(x) }
func (o registryOpt) applyPull(x *options) error    { return o.apply(x) }
func (o registryOpt) applyTag(x *options) error     { return o.apply(x) }
func (o registryOpt) applyList(x *options) error    { return o.apply(x) }
func (o registryOpt) applyVerify(x *options) error  { return o.apply(x) }
func (o listOpt) applyList(x *options) error        { return o.apply(x) }
func (o pullOpt) applyPull(x *options) error        { return o.apply(x) }
func (o verifyOpt) applyVerify(x *options) error    { return o.apply(x) }
func (o verifyOpt) applyPromote(x *options) error   { return o.apply(x) }
func (o registryOpt) applyPromote(x *options) error { return o.apply(x) }
func (o sharedOpt) applyPromote(x *options) error   { return o.apply(x) }
func (o sharedOpt) applyBuild(x *options) error     { return o.apply(x) }
func (o sharedOpt) applyPush(x *options) error      { return o.apply(x) }
func (o sharedOpt) applyDiff(x *options) error      { return o.apply(x) }
func (o sharedOpt) applyPull(x *options) error      { return o.apply(x) }
func (o sharedOpt) applyTag(x *options) error       { return o.apply(x) }
func (o sharedOpt) applyList(x *options) error      { return o.apply(x) }
func (o sharedOpt) applyVerify(x *options) error    { return o.apply(x) }

var (
	_ ArtifactOption = artifactOpt{}
	_ TreeOption     = treeOpt{}
	_ PushOption     = pushOpt{}
	_ RegistryOption = registryOpt{}
	_ ListOption     = listOpt{}
	_ PullOption     = pullOpt{}
	_ VerifyOption   = verifyOpt{}
	_ SharedOption   = sharedOpt{}
)

// options is what the options of one call add up to.
type options struct {
	client       *Client // the transports' owner; nil: none shared
	fromEnv      bool    // WithEnvironment
	otherCluster bool    // WithOtherCluster

	// The artifact.
	source, revision string
	created          *time.Time
	gitDefaults      bool
	gitDir           string // WithGitDir
	annotations      map[string]string
	ignorePaths      []string
	allowSecrets     bool

	// The push.
	tags      []string
	force     bool
	signer    Signer // WithSigner
	treeCache string // WithTreeCache

	// Verify and Promote.
	verifier Verifier // WithVerifier

	// The registry.
	auth      authn.Authenticator
	keychain  authn.Keychain
	rootCAs   *x509.CertPool
	caPEM     string // the certificates of rootCAs, WithCAFile's file: the transports' key
	insecure  bool
	transport http.RoundTripper
	backoff   *remote.Backoff
	progress  func(Progress)
	remote    []remote.Option
	logger    *slog.Logger

	// List.
	semver string

	// Pull.
	layerSelector *string // WithLayerSelector: the media type of the layer to extract, "" the first
}

// Progress reports how far an upload has come.
type Progress struct {
	Written, Total int64
}

// collect applies opts, an operation's options, with apply, after the
// options c was made with. c may be nil: no client options then, and
// transports of the call's own.
func collect[T any](c *Client, opts []T, apply func(T, *options) error) (*options, error) {
	o := &options{}
	if c != nil {
		if c.base != nil {
			*o = *c.base
			o.remote = slices.Clip(o.remote)
		}
		o.client = c
	}
	var errs []error
	for _, x := range opts {
		if any(x) == nil {
			errs = append(errs, errors.New("nil option"))
			continue
		}
		if err := apply(x, o); err != nil {
			errs = append(errs, err)
		}
	}
	if o.fromEnv {
		if err := o.environment(); err != nil {
			errs = append(errs, err)
		}
	}
	if o.auth != nil && o.keychain != nil {
		errs = append(errs, errors.New("options WithCreds and WithKeychain exclude each other"))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOption, errors.Join(errs...))
	}
	return o, nil
}

// ErrInvalidOption is wrapped by every error about an option: the sentinel
// every fluxpack package uses.
var ErrInvalidOption = errdefs.ErrInvalidOption

// WithSource sets the org.opencontainers.image.source annotation, e.g. the
// Git URL the manifests come from. Credentials in the URL are refused.
func WithSource(source string) ArtifactOption {
	return artifactOpt{func(o *options) error {
		if source != RedactURL(source) {
			return fmt.Errorf("%s: source %q holds credentials; drop them", "WithSource", RedactURL(source))
		}
		o.source = source
		return nil
	}}
}

// WithRevision sets the org.opencontainers.image.revision annotation, in
// Flux's format <branch|tag>@sha1:<commit>.
func WithRevision(revision string) ArtifactOption {
	return artifactOpt{func(o *options) error {
		if strings.ContainsAny(revision, "\n\r") {
			return fmt.Errorf("%s: revision %q has a line break", "WithRevision", revision)
		}
		o.revision = revision
		return nil
	}}
}

// WithCreated sets the org.opencontainers.image.created annotation and the
// config's created time. It is kept in UTC at one-second resolution. Without
// it the artifact is created at the Unix epoch (or at the commit time, with
// WithGitDefaults), so the same content gives the same digest.
func WithCreated(t time.Time) ArtifactOption {
	return artifactOpt{func(o *options) error {
		if t.IsZero() {
			return fmt.Errorf("%s: zero time", "WithCreated")
		}
		u := t.UTC().Truncate(time.Second)
		if u.Year() < 1970 || u.Year() > 9999 {
			return fmt.Errorf("%s: %s is outside 1970..9999", "WithCreated", u.Format(time.RFC3339))
		}
		o.created = &u
		return nil
	}}
}

// WithGitDefaults fills what WithSource, WithRevision and WithCreated leave
// unset from the Git checkout holding the pushed directory: the origin remote's
// URL (without credentials), <branch>@sha1:<commit> of HEAD, and the commit
// time of the revision. Outside a Git checkout it changes nothing.
func WithGitDefaults() ArtifactOption {
	return artifactOpt{func(o *options) error {
		o.gitDefaults = true
		return nil
	}}
}

// WithGitDir makes WithGitDefaults read the Git checkout holding dir
// instead of the pushed directory: for a directory laid out elsewhere
// (package fleet's copy of a stack) from files of a checkout.
func WithGitDir(dir string) ArtifactOption {
	return artifactOpt{func(o *options) error {
		if dir == "" {
			return errdefs.Kind(ErrInvalidOption, "WithGitDir: empty directory")
		}
		o.gitDir = dir
		return nil
	}}
}

// annotationKey is the OCI annotation key syntax: reverse-DNS-ish, no spaces.
// Compiled on first use, as every regexp of the package: the CLI runs package
// inits for every command.
var annotationKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]*$`) })

// WithAnnotations adds manifest annotations. The keys Flux itself sets
// (created, source, revision) are refused: use WithCreated, WithSource and
// WithRevision.
func WithAnnotations(annotations map[string]string) ArtifactOption {
	return artifactOpt{func(o *options) error {
		if o.annotations == nil {
			o.annotations = map[string]string{}
		}
		for _, k := range slices.Sorted(maps.Keys(annotations)) {
			switch {
			case !annotationKey().MatchString(k):
				return fmt.Errorf("%s: invalid annotation key %q", "WithAnnotations", k)
			case k == fluxoci.CreatedAnnotation || k == fluxoci.SourceAnnotation || k == fluxoci.RevisionAnnotation || k == ContentDigestAnnotation:
				return fmt.Errorf("%s: annotation %q is set by fluxpack; use the matching option", "WithAnnotations", k)
			}
			o.annotations[k] = annotations[k]
		}
		return nil
	}}
}

// WithIgnorePaths adds ignore patterns in .gitignore syntax. They come after
// the default list (DefaultIgnorePaths) and the tree's .sourceignore files, so
// a "!pattern" can bring back what those exclude.
func WithIgnorePaths(patterns ...string) TreeOption {
	return treeOpt{func(o *options) error {
		for _, p := range patterns {
			if strings.ContainsAny(p, "\n\r") {
				return fmt.Errorf("%s: pattern %q has a line break", "WithIgnorePaths", p)
			}
			if strings.TrimSpace(p) != "" {
				o.ignorePaths = append(o.ignorePaths, p)
			}
		}
		return nil
	}}
}

// WithAllowSecrets lets plaintext Kubernetes Secrets into the artifact. By
// default a manifest of kind Secret with data or stringData that is not SOPS
// encrypted makes the operation fail.
func WithAllowSecrets() TreeOption {
	return treeOpt{func(o *options) error {
		o.allowSecrets = true
		return nil
	}}
}

// tagPattern is the OCI distribution spec's tag syntax.
var tagPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`) })

// WithTags adds tags that point at the pushed artifact besides the one in the
// URL. They are written after the URL's tag.
func WithTags(tags ...string) PushOption {
	return pushOpt{func(o *options) error {
		for _, t := range tags {
			if !tagPattern().MatchString(t) {
				return fmt.Errorf("%s: invalid tag %q: want %s", "WithTags", t, tagPattern())
			}
			if !slices.Contains(o.tags, t) {
				o.tags = append(o.tags, t)
			}
		}
		return nil
	}}
}

// WithForce pushes even when the tag already holds the same content.
func WithForce() PushOption {
	return pushOpt{func(o *options) error {
		o.force = true
		return nil
	}}
}

// The environment variables WithEnvironment reads.
const (
	// EnvCreds holds registry credentials, as WithCreds takes them.
	EnvCreds = "FLUXPACK_CREDS"
	// EnvSourceDateEpoch is the creation time of an artifact, in seconds
	// since the epoch (reproducible-builds.org's SOURCE_DATE_EPOCH).
	EnvSourceDateEpoch = "SOURCE_DATE_EPOCH"
)

// WithEnvironment takes from the environment what no option gives: the
// registry credentials from $FLUXPACK_CREDS (as WithCreds, unless WithCreds
// or WithKeychain is given) and the creation time of an artifact from
// $SOURCE_DATE_EPOCH (as WithCreated, unless it is given). A variable that
// does not parse is an error. Without it, the package reads no environment
// variable (go-containerregistry's default keychain reads the docker
// config).
func WithEnvironment() SharedOption {
	return sharedOpt{func(o *options) error { o.fromEnv = true; return nil }}
}

// environment applies WithEnvironment, after the other options.
func (o *options) environment() error {
	if creds := os.Getenv(EnvCreds); creds != "" && o.auth == nil && o.keychain == nil {
		auth, err := fluxoci.GetAuthFromCredentials(creds)
		if err != nil {
			return fmt.Errorf("$%s: %w", EnvCreds, err)
		}
		o.auth = auth
	}
	if epoch := os.Getenv(EnvSourceDateEpoch); epoch != "" && o.created == nil {
		sec, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			return fmt.Errorf("$%s %q: want seconds since the epoch", EnvSourceDateEpoch, epoch)
		}
		t := time.Unix(sec, 0).UTC()
		o.created = &t
	}
	return nil
}

// WithCreds authenticates with static credentials: "user:password", or a bare
// token. Without it, the docker config keychain is used (authn.DefaultKeychain).
func WithCreds(creds string) RegistryOption {
	return registryOpt{func(o *options) error {
		if creds == "" {
			return fmt.Errorf("%s: empty credentials", "WithCreds")
		}
		auth, err := fluxoci.GetAuthFromCredentials(creds)
		if err != nil {
			return fmt.Errorf("%s: %w", "WithCreds", err)
		}
		o.auth = auth
		return nil
	}}
}

// WithKeychain resolves credentials with keychain instead of the default
// docker config keychain.
func WithKeychain(keychain authn.Keychain) RegistryOption {
	return registryOpt{func(o *options) error {
		if keychain == nil {
			return fmt.Errorf("%s: nil keychain", "WithKeychain")
		}
		o.keychain = keychain
		return nil
	}}
}

// WithCAFile trusts the PEM certificates in path, besides the system's, when
// verifying the registry's TLS certificate.
func WithCAFile(path string) RegistryOption {
	return registryOpt{func(o *options) error {
		pem, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("%s: reading CA file: %w", "WithCAFile", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("%s: %s holds no PEM certificate", "WithCAFile", path)
		}
		o.rootCAs, o.caPEM = pool, string(pem)
		return nil
	}}
}

// WithInsecure allows plain HTTP to the registry, whatever its host, and
// unverified TLS. Without it, go-containerregistry already falls back to
// plain HTTP for 127.0.0.1, ::1, localhost:PORT, *.localhost and RFC 1918
// addresses (after trying HTTPS), and verifies TLS.
func WithInsecure() RegistryOption {
	return registryOpt{func(o *options) error {
		o.insecure = true
		return nil
	}}
}

// WithTransport sends registry requests through rt instead of a clone of
// go-containerregistry's default transport. TLS options then apply only if rt
// is an *http.Transport.
func WithTransport(rt http.RoundTripper) RegistryOption {
	return registryOpt{func(o *options) error {
		if rt == nil {
			return fmt.Errorf("%s: nil transport", "WithTransport")
		}
		o.transport = rt
		return nil
	}}
}

// WithRetry sets the backoff for retrying failed registry requests (5xx,
// 429, 408, dropped connections, stalled answers): b.Steps tries, the first
// wait b.Duration, each next one b.Factor times longer, each lengthened by up
// to b.Jitter of itself at random. The same backoff retries a whole blob
// upload, and (at most four tries) each of its requests that is safe to send
// again. b.Cap, if set, ends the retries once a wait would pass it (that is
// go-containerregistry's meaning), so it must be at least b.Duration. The
// default is DefaultRetry. The caller's context deadline (the CLI's
// --timeout) bounds the whole operation, retries included.
func WithRetry(b remote.Backoff) RegistryOption {
	return registryOpt{func(o *options) error {
		if b.Steps < 1 || b.Duration <= 0 || b.Factor < 1 || b.Jitter < 0 || (b.Cap != 0 && b.Cap < b.Duration) {
			return fmt.Errorf("%s: want steps ≥ 1, duration > 0, factor ≥ 1, jitter ≥ 0 and cap 0 or ≥ duration, got %+v", "WithRetry", b)
		}
		o.backoff = &b
		return nil
	}}
}

// DefaultRetry is the backoff used without WithRetry: eight tries, from a
// fifth of a second doubling (25 s of waits at most), with up to half again
// of each wait at random so that a fleet's pushes do not retry in step.
// Through a registry failing a fifth of its requests it pushes every
// cluster of fleet's fault test.
func DefaultRetry() remote.Backoff {
	return remote.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.5, Steps: 8}
}

// retry is the backoff of this call.
func (o *options) retry() remote.Backoff {
	if o.backoff != nil {
		return *o.backoff
	}
	return DefaultRetry()
}

// WithProgress calls fn as the upload of a push progresses.
func WithProgress(fn func(Progress)) PushOption {
	return pushOpt{func(o *options) error {
		if fn == nil {
			return fmt.Errorf("%s: nil func", "WithProgress")
		}
		o.progress = fn
		return nil
	}}
}

// WithRemoteOptions passes options to go-containerregistry's remote package,
// after fluxpack's own. It is an escape hatch; prefer the options above.
func WithRemoteOptions(ro ...remote.Option) RegistryOption {
	return registryOpt{func(o *options) error {
		o.remote = append(o.remote, ro...)
		return nil
	}}
}

// WithLayerSelector makes Pull extract the first layer of the given media
// type of any OCI artifact, as source-controller does for an OCIRepository
// with spec.layerSelector.mediaType; "" extracts the first layer, as
// without spec.layerSelector. Without it, Pull takes Flux artifacts only.
// The layer must be a gzipped tarball (operation extract).
func WithLayerSelector(mediaType string) PullOption {
	return pullOpt{func(o *options) error {
		o.layerSelector = &mediaType
		return nil
	}}
}

// WithSemver keeps only tags that are semantic versions within the range
// (Masterminds/semver syntax, as OCIRepository's spec.ref.semver).
func WithSemver(constraint string) ListOption {
	return listOpt{func(o *options) error {
		if strings.TrimSpace(constraint) == "" {
			return fmt.Errorf("%s: empty range", "WithSemver")
		}
		if _, err := parseSemver(constraint); err != nil {
			return fmt.Errorf("%s: %w", "WithSemver", err)
		}
		o.semver = constraint
		return nil
	}}
}

// WithLogger logs every registry request at debug level: its method, its URL
// without query (signed URLs carry tokens there), the status or error, and
// how long it took. Headers and bodies, which carry credentials, are never
// logged.
func WithLogger(l *slog.Logger) SharedOption {
	return sharedOpt{func(o *options) error {
		if l == nil {
			return fmt.Errorf("%s: nil logger", "WithLogger")
		}
		o.logger = l
		return nil
	}}
}

// ResponseHeaderTimeout bounds the wait for a registry's answer to one
// request, once the request is sent: a registry that stalls is retried
// instead of holding the whole operation until its deadline.
const ResponseHeaderTimeout = 30 * time.Second

// httpTransport returns the transport one operation's registry requests
// go through: it cancels the upload sessions the operation gives up
// (uploadSessions).
func (o *options) httpTransport() http.RoundTripper {
	rt := o.baseTransport()
	if o.logger != nil {
		rt = logTransport{base: rt, log: o.logger}
	}
	return newUploadSessions(rt)
}

func (o *options) baseTransport() http.RoundTripper {
	if o.transport != nil {
		t, ok := o.transport.(*http.Transport)
		if !ok || (o.rootCAs == nil && !o.insecure) {
			return retryAfter{o.transport, o.retry()}
		}
		return retryAfter{o.pingsOf(o.sharedTransport(t)), o.retry()}
	}
	return retryAfter{o.pingsOf(o.sharedTransport(nil)), o.retry()}
}

// pingsOf returns the pingCache over the transport t: the client's, or
// one of this call's own.
func (o *options) pingsOf(t *http.Transport) *pingCache {
	if o.client == nil {
		return newPingCache(t)
	}
	return o.client.pingsOf(t)
}

// transportKey is what a transport is built from.
type transportKey struct {
	base     *http.Transport // WithTransport's, or nil: go-containerregistry's default
	insecure bool
	caPEM    string
}

// sharedTransport returns the transport for base (nil: the default one,
// with ResponseHeaderTimeout) with this call's TLS settings: the client's,
// built once, or one of this call's own.
func (o *options) sharedTransport(base *http.Transport) *http.Transport {
	key := transportKey{base: base, insecure: o.insecure, caPEM: o.caPEM}
	if o.client == nil {
		return o.newTransport(key)
	}
	return o.client.transport(key, o.newTransport)
}

// newTransport builds the transport key describes.
func (o *options) newTransport(key transportKey) *http.Transport {
	if key.base != nil {
		return o.withTLS(key.base.Clone())
	}
	t := remote.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = ResponseHeaderTimeout
	if o.rootCAs != nil || o.insecure {
		t = o.withTLS(t)
	}
	return t
}

func (o *options) withTLS(t *http.Transport) *http.Transport {
	if t.TLSClientConfig == nil {
		t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	} else {
		t.TLSClientConfig = t.TLSClientConfig.Clone()
	}
	if o.rootCAs != nil {
		t.TLSClientConfig.RootCAs = o.rootCAs
	}
	if o.insecure {
		t.TLSClientConfig.InsecureSkipVerify = true //nolint:gosec // asked for with WithInsecure
	}
	return t
}

// remoteOptions turns the registry options into go-containerregistry's.
func (o *options) remoteOptions(ctx context.Context) []remote.Option {
	backoff := o.retry()
	ro := []remote.Option{
		remote.WithContext(ctx),
		remote.WithTransport(o.httpTransport()),
		remote.WithUserAgent(UserAgent),
		remote.WithRetryBackoff(backoff),
		remote.WithRetryPredicate(retryable),
	}
	switch {
	case o.auth != nil:
		ro = append(ro, remote.WithAuth(o.auth))
	case o.keychain != nil:
		ro = append(ro, remote.WithAuthFromKeychain(o.keychain))
	default:
		ro = append(ro, remote.WithAuthFromKeychain(authn.DefaultKeychain))
	}
	return append(ro, o.remote...)
}

// progressOption reports upload progress to the WithProgress func, if any.
// go-containerregistry closes the channel when the write ends.
func (o *options) progressOption() []remote.Option {
	if o.progress == nil {
		return nil
	}
	updates := make(chan v1.Update, 16)
	go func() {
		for u := range updates {
			if u.Error == nil {
				o.progress(Progress{Written: u.Complete, Total: u.Total})
			}
		}
	}()
	return []remote.Option{remote.WithProgress(updates)}
}

// UserAgent is sent with every registry request.
const UserAgent = "fluxpack"
