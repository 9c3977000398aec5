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
// means the tag "latest", as for OCIRepository.
func parseRef(u string, o *options) (name.Reference, error) {
	s, ok := strings.CutPrefix(u, Scheme)
	if !ok {
		return nil, fmt.Errorf("parsing reference %q: want oci://HOST/REPOSITORY[:TAG]", RedactURL(u))
	}
	if err := checkNoUserinfo(s); err != nil {
		return nil, fmt.Errorf("parsing reference %q: %w", RedactURL(u), err)
	}
	ref, err := name.ParseReference(s, nameOptions(o)...)
	if err != nil {
		return nil, fmt.Errorf("parsing reference %q: %w", RedactURL(u), err)
	}
	return ref, nil
}

// parseTag parses an artifact URL that must name a tag (push, diff).
func parseTag(u string, o *options) (name.Tag, error) {
	ref, err := parseRef(u, o)
	if err != nil {
		return name.Tag{}, err
	}
	tag, ok := ref.(name.Tag)
	if !ok {
		return name.Tag{}, fmt.Errorf("parsing reference %q: want a tag, not a digest", RedactURL(u))
	}
	return tag, nil
}

// parseRepo parses oci://host/repo, without tag or digest (list).
func parseRepo(u string, o *options) (name.Repository, error) {
	s, ok := strings.CutPrefix(u, Scheme)
	if !ok {
		return name.Repository{}, fmt.Errorf("parsing repository %q: want oci://HOST/REPOSITORY", RedactURL(u))
	}
	if err := checkNoUserinfo(s); err != nil {
		return name.Repository{}, fmt.Errorf("parsing repository %q: %w", RedactURL(u), err)
	}
	repo, err := name.NewRepository(s, nameOptions(o)...)
	if err != nil {
		return name.Repository{}, fmt.Errorf("parsing repository %q: %w", RedactURL(u), err)
	}
	return repo, nil
}

// checkNoUserinfo refuses credentials written into the reference
// (user:password@host/...): go-containerregistry would echo them in its parse
// error, and neither it nor Flux's OCIRepository reads credentials from there.
func checkNoUserinfo(ref string) error {
	host, _, _ := strings.Cut(ref, "/")
	if strings.Contains(host, "@") {
		return errors.New("credentials in the reference are not supported: use --creds, $FLUXPACK_CREDS or the docker config")
	}
	return nil
}

func nameOptions(o *options) []name.Option {
	if o.insecure {
		return []name.Option{name.Insecure}
	}
	return nil
}

// URL returns the oci:// form of a reference, as users write it.
func URL(ref name.Reference) string { return Scheme + ref.Name() }

// RedactURL removes the password (or token) from a URL's user information,
// so it can be printed. Strings that are not URLs come back unchanged.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	u.User = nil
	return u.String()
}
