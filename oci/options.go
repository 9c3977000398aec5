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
	"strings"
	"time"

	fluxoci "github.com/fluxcd/pkg/oci"
	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Option configures one operation of this package (Build, Push, Diff, Pull,
// Tag, List). Every option checks its own input, and an operation refuses an
// option it cannot use, so no option is ever silently ignored.
type Option func(*options) error

// options is what the Options of one call add up to.
type options struct {
	given map[string]bool // names of the options passed, to refuse misplaced ones

	// The artifact.
	source, revision string
	created          *time.Time
	gitDefaults      bool
	annotations      map[string]string
	ignorePaths      []string
	allowSecrets     bool

	// The push.
	tags  []string
	force bool

	// The registry.
	auth      authn.Authenticator
	keychain  authn.Keychain
	rootCAs   *x509.CertPool
	insecure  bool
	transport http.RoundTripper
	backoff   *remote.Backoff
	progress  func(Progress)
	remote    []remote.Option
	logger    *slog.Logger

	// List.
	semver string
}

// Progress reports how far an upload has come.
type Progress struct {
	Written, Total int64
}

// Names of options, for the error that refuses a misplaced one.
const (
	optSource       = "WithSource"
	optRevision     = "WithRevision"
	optCreated      = "WithCreated"
	optGitDefaults  = "WithGitDefaults"
	optAnnotations  = "WithAnnotations"
	optIgnorePaths  = "WithIgnorePaths"
	optAllowSecrets = "WithAllowSecrets"
	optTags         = "WithTags"
	optForce        = "WithForce"
	optCreds        = "WithCreds"
	optKeychain     = "WithKeychain"
	optCAFile       = "WithCAFile"
	optInsecure     = "WithInsecure"
	optTransport    = "WithTransport"
	optRetry        = "WithRetry"
	optProgress     = "WithProgress"
	optRemote       = "WithRemoteOptions"
	optSemver       = "WithSemver"
	optLogger       = "WithLogger"
)

var (
	artifactOptions = []string{optSource, optRevision, optCreated, optGitDefaults, optAnnotations, optIgnorePaths, optAllowSecrets}
	treeOptions     = []string{optIgnorePaths, optAllowSecrets}
	registryOptions = []string{optCreds, optKeychain, optCAFile, optInsecure, optTransport, optRetry, optRemote, optLogger}

	allowedOptions = map[string][]string{
		"Build": slices.Concat(artifactOptions, []string{optLogger}),
		"Push":  slices.Concat(artifactOptions, registryOptions, []string{optTags, optForce, optProgress}),
		"Diff":  slices.Concat(treeOptions, registryOptions),
		"Pull":  registryOptions,
		"Tag":   registryOptions,
		"List":  slices.Concat(registryOptions, []string{optSemver}),
	}
)

// newOptions applies opts for the operation op and refuses options that op
// cannot use.
func newOptions(op string, opts []Option) (*options, error) {
	o := &options{given: map[string]bool{}}
	var errs []error
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(o); err != nil {
			errs = append(errs, err)
		}
	}
	allowed := allowedOptions[op]
	for _, name := range slices.Sorted(maps.Keys(o.given)) {
		if !slices.Contains(allowed, name) {
			errs = append(errs, fmt.Errorf("option %s does not apply to %s", name, op))
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

// ErrInvalidOption is wrapped by every error about an Option.
var ErrInvalidOption = errors.New("invalid option")

func (o *options) mark(name string) { o.given[name] = true }

// WithSource sets the org.opencontainers.image.source annotation, e.g. the
// Git URL the manifests come from. Credentials in the URL are refused.
func WithSource(source string) Option {
	return func(o *options) error {
		o.mark(optSource)
		if source != RedactURL(source) {
			return fmt.Errorf("%s: source %q holds credentials; drop them", optSource, RedactURL(source))
		}
		o.source = source
		return nil
	}
}

// WithRevision sets the org.opencontainers.image.revision annotation, in
// Flux's format <branch|tag>@sha1:<commit>.
func WithRevision(revision string) Option {
	return func(o *options) error {
		o.mark(optRevision)
		if strings.ContainsAny(revision, "\n\r") {
			return fmt.Errorf("%s: revision %q has a line break", optRevision, revision)
		}
		o.revision = revision
		return nil
	}
}

// WithCreated sets the org.opencontainers.image.created annotation and the
// config's created time. It is kept in UTC at one-second resolution. Without
// it the artifact is created at the Unix epoch (or at the commit time, with
// WithGitDefaults), so the same content gives the same digest.
func WithCreated(t time.Time) Option {
	return func(o *options) error {
		o.mark(optCreated)
		if t.IsZero() {
			return fmt.Errorf("%s: zero time", optCreated)
		}
		u := t.UTC().Truncate(time.Second)
		if u.Year() < 1970 || u.Year() > 9999 {
			return fmt.Errorf("%s: %s is outside 1970..9999", optCreated, u.Format(time.RFC3339))
		}
		o.created = &u
		return nil
	}
}

// WithGitDefaults fills what WithSource, WithRevision and WithCreated leave
// unset from the Git checkout holding the pushed directory: the origin remote's
// URL (without credentials), <branch>@sha1:<commit> of HEAD, and the commit
// time of the revision. Outside a Git checkout it changes nothing.
func WithGitDefaults() Option {
	return func(o *options) error {
		o.mark(optGitDefaults)
		o.gitDefaults = true
		return nil
	}
}

// annotationKey is the OCI annotation key syntax: reverse-DNS-ish, no spaces.
var annotationKey = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]*$`)

// WithAnnotations adds manifest annotations. The keys Flux itself sets
// (created, source, revision) are refused: use WithCreated, WithSource and
// WithRevision.
func WithAnnotations(annotations map[string]string) Option {
	return func(o *options) error {
		o.mark(optAnnotations)
		if o.annotations == nil {
			o.annotations = map[string]string{}
		}
		for _, k := range slices.Sorted(maps.Keys(annotations)) {
			switch {
			case !annotationKey.MatchString(k):
				return fmt.Errorf("%s: invalid annotation key %q", optAnnotations, k)
			case k == fluxoci.CreatedAnnotation || k == fluxoci.SourceAnnotation || k == fluxoci.RevisionAnnotation || k == ContentDigestAnnotation:
				return fmt.Errorf("%s: annotation %q is set by fluxpack; use the matching option", optAnnotations, k)
			}
			o.annotations[k] = annotations[k]
		}
		return nil
	}
}

// WithIgnorePaths adds ignore patterns in .gitignore syntax. They come after
// the default list (DefaultIgnorePaths) and the tree's .sourceignore files, so
// a "!pattern" can bring back what those exclude.
func WithIgnorePaths(patterns ...string) Option {
	return func(o *options) error {
		o.mark(optIgnorePaths)
		for _, p := range patterns {
			if strings.ContainsAny(p, "\n\r") {
				return fmt.Errorf("%s: pattern %q has a line break", optIgnorePaths, p)
			}
			if strings.TrimSpace(p) != "" {
				o.ignorePaths = append(o.ignorePaths, p)
			}
		}
		return nil
	}
}

// WithAllowSecrets lets plaintext Kubernetes Secrets into the artifact. By
// default a manifest of kind Secret with data or stringData that is not SOPS
// encrypted makes the operation fail.
func WithAllowSecrets() Option {
	return func(o *options) error {
		o.mark(optAllowSecrets)
		o.allowSecrets = true
		return nil
	}
}

// tagPattern is the OCI distribution spec's tag syntax.
var tagPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

// WithTags adds tags that point at the pushed artifact besides the one in the
// URL. They are written after the URL's tag.
func WithTags(tags ...string) Option {
	return func(o *options) error {
		o.mark(optTags)
		for _, t := range tags {
			if !tagPattern.MatchString(t) {
				return fmt.Errorf("%s: invalid tag %q: want %s", optTags, t, tagPattern)
			}
			if !slices.Contains(o.tags, t) {
				o.tags = append(o.tags, t)
			}
		}
		return nil
	}
}

// WithForce pushes even when the tag already holds the same content.
func WithForce() Option {
	return func(o *options) error {
		o.mark(optForce)
		o.force = true
		return nil
	}
}

// WithCreds authenticates with static credentials: "user:password", or a bare
// token. Without it, the docker config keychain is used (authn.DefaultKeychain).
func WithCreds(creds string) Option {
	return func(o *options) error {
		o.mark(optCreds)
		if creds == "" {
			return fmt.Errorf("%s: empty credentials", optCreds)
		}
		auth, err := fluxoci.GetAuthFromCredentials(creds)
		if err != nil {
			return fmt.Errorf("%s: %w", optCreds, err)
		}
		o.auth = auth
		return nil
	}
}

// WithKeychain resolves credentials with keychain instead of the default
// docker config keychain.
func WithKeychain(keychain authn.Keychain) Option {
	return func(o *options) error {
		o.mark(optKeychain)
		if keychain == nil {
			return fmt.Errorf("%s: nil keychain", optKeychain)
		}
		o.keychain = keychain
		return nil
	}
}

// WithCAFile trusts the PEM certificates in path, besides the system's, when
// verifying the registry's TLS certificate.
func WithCAFile(path string) Option {
	return func(o *options) error {
		o.mark(optCAFile)
		pem, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("%s: reading CA file: %w", optCAFile, err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("%s: %s holds no PEM certificate", optCAFile, path)
		}
		o.rootCAs = pool
		return nil
	}
}

// WithInsecure allows plain HTTP and unverified TLS to the registry.
// (go-containerregistry already falls back to plain HTTP for loopback and
// RFC 1918 hosts.)
func WithInsecure() Option {
	return func(o *options) error {
		o.mark(optInsecure)
		o.insecure = true
		return nil
	}
}

// WithTransport sends registry requests through rt instead of a clone of
// go-containerregistry's default transport. TLS options then apply only if rt
// is an *http.Transport.
func WithTransport(rt http.RoundTripper) Option {
	return func(o *options) error {
		o.mark(optTransport)
		if rt == nil {
			return fmt.Errorf("%s: nil transport", optTransport)
		}
		o.transport = rt
		return nil
	}
}

// WithRetry sets the backoff for retrying failed registry requests (5xx, 429,
// dropped connections). The default is DefaultRetry. The caller's context
// deadline bounds the whole operation, retries included.
func WithRetry(b remote.Backoff) Option {
	return func(o *options) error {
		o.mark(optRetry)
		if b.Steps < 1 || b.Duration <= 0 || b.Factor < 1 {
			return fmt.Errorf("%s: want steps ≥ 1, duration > 0 and factor ≥ 1, got %+v", optRetry, b)
		}
		o.backoff = &b
		return nil
	}
}

// DefaultRetry is the backoff used without WithRetry: five tries, from a
// quarter second growing threefold.
var DefaultRetry = remote.Backoff{Duration: 250 * time.Millisecond, Factor: 3, Jitter: 0.1, Steps: 5, Cap: 30 * time.Second}

// WithProgress calls fn as the upload of a push progresses.
func WithProgress(fn func(Progress)) Option {
	return func(o *options) error {
		o.mark(optProgress)
		if fn == nil {
			return fmt.Errorf("%s: nil func", optProgress)
		}
		o.progress = fn
		return nil
	}
}

// WithRemoteOptions passes options to go-containerregistry's remote package,
// after fluxpack's own. It is an escape hatch; prefer the options above.
func WithRemoteOptions(ro ...remote.Option) Option {
	return func(o *options) error {
		o.mark(optRemote)
		o.remote = append(o.remote, ro...)
		return nil
	}
}

// WithSemver keeps only tags that are semantic versions within the range
// (Masterminds/semver syntax, as OCIRepository's spec.ref.semver).
func WithSemver(constraint string) Option {
	return func(o *options) error {
		o.mark(optSemver)
		if strings.TrimSpace(constraint) == "" {
			return fmt.Errorf("%s: empty range", optSemver)
		}
		if _, err := parseSemver(constraint); err != nil {
			return fmt.Errorf("%s: %w", optSemver, err)
		}
		o.semver = constraint
		return nil
	}
}

// WithLogger logs every registry request at debug level: its method, its URL
// without query (signed URLs carry tokens there), the status or error, and
// how long it took. Headers and bodies, which carry credentials, are never
// logged.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error {
		o.mark(optLogger)
		if l == nil {
			return fmt.Errorf("%s: nil logger", optLogger)
		}
		o.logger = l
		return nil
	}
}

// ResponseHeaderTimeout bounds the wait for a registry's answer to one
// request, once the request is sent: a registry that stalls is retried
// instead of holding the whole operation until its deadline.
const ResponseHeaderTimeout = 30 * time.Second

// httpTransport returns the transport registry requests go through.
func (o *options) httpTransport() http.RoundTripper {
	rt := o.baseTransport()
	if o.logger != nil {
		rt = logTransport{base: rt, log: o.logger}
	}
	return rt
}

func (o *options) baseTransport() http.RoundTripper {
	if o.transport != nil {
		t, ok := o.transport.(*http.Transport)
		if !ok || (o.rootCAs == nil && !o.insecure) {
			return retryAfter{o.transport}
		}
		return retryAfter{o.withTLS(t.Clone())}
	}
	t := remote.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = ResponseHeaderTimeout
	if o.rootCAs == nil && !o.insecure {
		return retryAfter{t}
	}
	return retryAfter{o.withTLS(t)}
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
	backoff := DefaultRetry
	if o.backoff != nil {
		backoff = *o.backoff
	}
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
var UserAgent = "fluxpack"
