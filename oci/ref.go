package oci

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	fluxoci "github.com/fluxcd/pkg/oci"
	"github.com/google/go-containerregistry/pkg/name"
)

// Scheme prefixes every artifact URL, as in OCIRepository's spec.url.
const Scheme = fluxoci.OCIRepositoryPrefix

// parseRef parses oci://host/repo[:tag|@digest]. A URL without tag or digest
// means the tag "latest", as for OCIRepository. A URL with credentials is
// refused without printing them: they belong in WithCreds.
func parseRef(u string, o *options) (name.Reference, error) {
	s, err := cutScheme(u, "REPOSITORY[:TAG]")
	if err != nil {
		return nil, err
	}
	ref, err := name.ParseReference(s, nameOptions(o)...)
	if err != nil {
		return nil, fmt.Errorf("parsing reference %q: %w", u, whyNotRef(s, o))
	}
	return ref, nil
}

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
func whyNotRef(s string, o *options) error {
	var err error
	if strings.Contains(s, "@") {
		_, err = name.NewDigest(s, nameOptions(o)...)
	} else {
		_, err = name.NewTag(s, nameOptions(o)...)
	}
	if err == nil { // cannot happen: ParseReference tries both
		err = errors.New("not a reference")
	}
	return err
}

// parseTag parses an artifact URL that must name a tag (push, diff).
func parseTag(u string, o *options) (name.Tag, error) {
	ref, err := parseRef(u, o)
	if err != nil {
		return name.Tag{}, err
	}
	tag, ok := ref.(name.Tag)
	if !ok {
		return name.Tag{}, fmt.Errorf("parsing reference %q: want a tag, not a digest", u)
	}
	return tag, nil
}

// parseRepo parses oci://host/repo, without tag or digest (list).
func parseRepo(u string, o *options) (name.Repository, error) {
	s, err := cutScheme(u, "REPOSITORY")
	if err != nil {
		return name.Repository{}, err
	}
	repo, err := name.NewRepository(s, nameOptions(o)...)
	if err != nil {
		return name.Repository{}, fmt.Errorf("parsing repository %q: %w", u, err)
	}
	return repo, nil
}

// errUserinfo refuses credentials written into the reference
// (user:password@host/...): go-containerregistry would echo them in its parse
// error, and neither it nor Flux's OCIRepository reads credentials from there.
var errUserinfo = errors.New("credentials in the reference are not supported: use --creds, $FLUXPACK_CREDS or the docker config")

func nameOptions(o *options) []name.Option {
	if o.insecure {
		return []name.Option{name.Insecure}
	}
	return nil
}

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
// one), and leaves the rest as it was.
func redactRef(s string) string {
	if scheme, rest, ok := strings.Cut(s, "://"); ok && isScheme(scheme) {
		return scheme + "://" + dropUserinfo(rest)
	}
	return dropUserinfo(s)
}

// isScheme reports whether s is a URL scheme (RFC 3986: a letter, then
// letters, digits, "+", "-" or "."), so that "token@://" is not taken for
// one and its userinfo kept.
func isScheme(s string) bool {
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	return s != ""
}

// dropUserinfo drops "user:password@" from host[/path].
func dropUserinfo(s string) string {
	authority, _, _ := strings.Cut(s, "/")
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		return s[i+1:]
	}
	return s
}
