// Package regutil holds what package oci and its signing packages
// (oci/cosign, oci/notation) share about registries and is not API: telling
// a missing tag from a failure, parsing a digest again as its registry
// was reached, and telling a URL scheme.
package regutil

import (
	"errors"
	"net/http"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// IsNotFound reports whether err says the tag or repository does not exist.
func IsNotFound(err error) bool {
	var te *transport.Error
	if !errors.As(err, &te) {
		return false
	}
	if te.StatusCode == http.StatusNotFound {
		return true
	}
	for _, d := range te.Errors {
		switch d.Code {
		case transport.ManifestUnknownErrorCode, transport.NameUnknownErrorCode:
			return true
		}
	}
	return false
}

// NameOptions keeps d's plain-HTTP registry plain HTTP when a library
// (cosign) parses d's name again.
func NameOptions(d name.Digest) []name.Option {
	if d.Context().Scheme() == "http" {
		return []name.Option{name.Insecure}
	}
	return nil
}

// IsScheme reports whether s is a URL scheme (RFC 3986: a letter, then
// letters, digits, "+", "-" or ".").
func IsScheme(s string) bool {
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	return s != ""
}
