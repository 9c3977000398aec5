package cosign

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/kms"
	"github.com/sigstore/sigstore/pkg/signature/kms/cliplugin"
	sigopts "github.com/sigstore/sigstore/pkg/signature/options"

	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/oci/internal/regutil"
)

// ErrUnknownKMS is wrapped by the error about a KMS key reference whose
// scheme has neither a compiled-in provider nor a plugin on $PATH.
var ErrUnknownKMS = errors.New("unknown KMS scheme")

// KMSProviders returns the key reference prefixes of the KMS providers
// compiled into the program (sigstore's kms.SupportedProviders, such as
// "awskms://"), sorted. This package compiles in none: a program adds one
// by importing sigstore's provider package, such as
// github.com/sigstore/sigstore/pkg/signature/kms/aws, as the fluxpack
// command does for aws, gcp, azure and hashivault. Any other scheme is
// looked up as a sigstore CLI plugin, sigstore-kms-<scheme>, on $PATH.
func KMSProviders() []string {
	p := kms.SupportedProviders()
	slices.Sort(p)
	return p
}

// isKMSRef reports whether keyRef is scheme://… other than env://.
func isKMSRef(keyRef string) bool {
	scheme, _, ok := strings.Cut(keyRef, "://")
	return ok && !strings.HasPrefix(keyRef, EnvKeyPrefix) && regutil.IsScheme(scheme)
}

// kmsKey is a KMS key whose public key was read when it was loaded, and
// whose errors name the key reference.
type kmsKey struct {
	kms.SignerVerifier
	ref string // redacted
	pub crypto.PublicKey
}

// PublicKey returns the public key read when the key was loaded.
func (k *kmsKey) PublicKey(...signature.PublicKeyOption) (crypto.PublicKey, error) {
	return k.pub, nil
}

// SignMessage asks the KMS to sign.
func (k *kmsKey) SignMessage(message io.Reader, opts ...signature.SignOption) ([]byte, error) {
	sig, err := k.SignerVerifier.SignMessage(message, opts...)
	if err != nil {
		return nil, fmt.Errorf("using KMS key %s: %w", k.ref, err)
	}
	return sig, nil
}

// loadKMSKey looks keyRef up in sigstore's KMS registry (a compiled-in
// provider, else the CLI plugin sigstore-kms-<scheme> on $PATH) and reads
// its public key, so that a key the KMS does not have, or a plugin that
// does not work, is found before anything is pushed.
func loadKMSKey(keyRef string) (*kmsKey, error) {
	// LoadKey has no context: the lookup, which for a plugin only finds
	// the program, is not cancelled; signing calls carry their own.
	ctx := context.Background()
	shown := oci.RedactURL(keyRef)
	sv, err := kms.Get(ctx, keyRef, crypto.SHA256)
	if err == nil {
		pub, err := sv.PublicKey(sigopts.WithContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("reading the public key of KMS key %s: %w", shown, err)
		}
		return &kmsKey{SignerVerifier: sv, ref: shown, pub: pub}, nil
	}
	var notFound *kms.ProviderNotFoundError
	if errors.As(err, &notFound) {
		scheme, _, _ := strings.Cut(keyRef, "://")
		built := "none is compiled into the program"
		if p := KMSProviders(); len(p) > 0 {
			built = "compiled in: " + strings.Join(p, ", ")
		}
		return nil, fmt.Errorf("loading KMS key %s: %w: no provider for %s:// (%s) and no sigstore KMS plugin %s%s on $PATH; files and env://VAR are read directly",
			shown, ErrUnknownKMS, scheme, built, cliplugin.PluginBinaryPrefix, scheme)
	}
	return nil, fmt.Errorf("loading KMS key %s: %w", shown, err)
}
