package oci

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	fluxoci "github.com/fluxcd/pkg/oci"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/fluxpack/fluxpack/oci/internal/regutil"
)

// Scheme prefixes every artifact URL, as in OCIRepository's spec.url.
const Scheme = fluxoci.OCIRepositoryPrefix

// cutScheme returns u without oci://, or an error that shows u without
// credentials. want completes oci://HOST/ in the error.
func cutScheme(u, want string) (string, error) {
	shown := redactRef(u)
	s, ok := strings.CutPrefix(u, Scheme)
	if !ok || s == "" {
		return "", fmt.Errorf("parsing reference %q: want oci://HOST/%s", shown, want)
	}
	if shown != u {
		return "", fmt.Errorf("parsing reference %q: %w", shown, errUserinfo)
	}
	return s, nil
}

// whyNotRef says why s is not a reference: go-containerregistry's
// ParseReference only says that it is not, while NewTag and NewDigest name
// the part at fault.
func whyNotRef(s string) error {
	var err error
	if strings.Contains(s, "@") {
		_, err = name.NewDigest(s)
	} else {
		_, err = name.NewTag(s)
	}
	if err == nil { // cannot happen: ParseReference tries both
		err = errors.New("not a reference")
	}
	return err
}

// errUserinfo refuses credentials written into the reference
// (user:password@host/...): go-containerregistry would echo them in its parse
// error, and neither it nor Flux's OCIRepository reads credentials from there.
var errUserinfo = errors.New("credentials in the reference are not supported: use WithCreds, $FLUXPACK_CREDS or the docker config")

// URL returns the oci:// form of a reference, as users write it.
func URL(ref name.Reference) string { return Scheme + ref.Name() }

// RedactURL removes the password (or token) from a URL's user information,
// so it can be printed. Strings that are not URLs come back unchanged, but
// for anything between "://" and an "@" before the next "/", which is
// dropped.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err == nil {
		if u.User == nil {
			return s
		}
		u.User = nil
		return u.String()
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	return scheme + "://" + dropUserinfo(rest)
}

// redactRef is RedactURL for artifact URLs: it drops anything up to an "@"
// in the host part, with or without a scheme (a registry host never holds
// one), and leaves the rest as it was. The scheme must be one, so that
// "token@://" is not taken for one and its userinfo kept.
func redactRef(s string) string {
	if scheme, rest, ok := strings.Cut(s, "://"); ok && regutil.IsScheme(scheme) {
		return scheme + "://" + dropUserinfo(rest)
	}
	return dropUserinfo(s)
}

// dropUserinfo drops "user:password@" from host[/path].
func dropUserinfo(s string) string {
	authority, _, _ := strings.Cut(s, "/")
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		return s[i+1:]
	}
	return s
}

// Ref is an artifact reference, parsed once (ParseRef): the repository
// oci://HOST/REPOSITORY and a tag or a digest, or neither. Every operation
// of Client takes one; the package-level functions parse their URL into
// one. Its zero value is no reference.
type Ref struct {
	repo   name.Repository
	tag    string // as written, "" when none
	digest string // "" when none
}

// ParseRef parses oci://HOST/REPOSITORY[:TAG|@DIGEST]. A reference without
// tag or digest means the tag "latest" where a tag is read or written (as
// for OCIRepository), and the repository itself for List. A reference
// holding credentials (user:password@host) is refused without printing
// them: they belong in WithCreds.
func ParseRef(url string) (Ref, error) {
	s, err := cutScheme(url, "REPOSITORY[:TAG]")
	if err != nil {
		return Ref{}, err
	}
	ref, err := name.ParseReference(s)
	if err != nil {
		return Ref{}, fmt.Errorf("parsing reference %q: %w", url, whyNotRef(s))
	}
	r := Ref{repo: ref.Context()}
	switch ref := ref.(type) {
	case name.Digest:
		r.digest = ref.DigestStr()
	case name.Tag:
		// name.ParseReference fills in "latest"; keep only a written tag.
		if last := s[strings.LastIndex(s, "/")+1:]; strings.Contains(last, ":") {
			r.tag = ref.TagStr()
		}
	}
	return r, nil
}

// Repository returns the repository.
func (r Ref) Repository() name.Repository { return r.repo }

// Tag returns the tag as written, or "" when the reference has none.
func (r Ref) Tag() string { return r.tag }

// Digest returns the digest (sha256:…), or "" when the reference has none.
func (r Ref) Digest() string { return r.digest }

// IsZero reports whether r is the zero Ref.
func (r Ref) IsZero() bool { return r.repo.RegistryStr() == "" && r.repo.RepositoryStr() == "" }

// Reference returns the tag or digest go-containerregistry reads: the
// digest if any, else the tag, "latest" when none was written.
func (r Ref) Reference() name.Reference {
	if r.digest != "" {
		return r.repo.Digest(r.digest)
	}
	if r.tag != "" {
		return r.repo.Tag(r.tag)
	}
	return r.repo.Tag(name.DefaultTag)
}

// String returns the reference as written, with its scheme:
// oci://host/repository[:tag|@digest].
func (r Ref) String() string {
	s := Scheme + r.repo.Name()
	switch {
	case r.digest != "":
		s += "@" + r.digest
	case r.tag != "":
		s += ":" + r.tag
	}
	return s
}

// at returns r as reached with o's settings: its registry plain HTTP with
// WithInsecure.
func (r Ref) at(o *options) Ref {
	if !o.insecure || r.repo.Scheme() == "http" {
		return r
	}
	repo, err := name.NewRepository(r.repo.Name(), name.Insecure)
	if err != nil { // cannot happen: it parsed before
		return r
	}
	r.repo = repo
	return r
}

// tagRef returns the tag of a reference that must name one (push, diff):
// the tag written, or "latest".
func (r Ref) tagRef() (name.Tag, error) {
	if r.digest != "" {
		return name.Tag{}, fmt.Errorf("parsing reference %q: want a tag, not a digest", r.String())
	}
	return r.Reference().(name.Tag), nil
}
