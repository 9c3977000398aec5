package layering

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/internal/errdefs"
)

// CosignPublicKeyKey is the key of the cosign public key in the
// verification Secret VerifySecret renders. source-controller tries every
// key of the Secret that ends in ".pub"; cosign.pub is the name Flux's
// documentation uses.
const CosignPublicKeyKey = "cosign.pub"

// Verify makes the stack's OCIRepository verify the artifact's signature
// before source-controller hands it on, so no layer applies an artifact
// that is unsigned, signed by another key or moved since signing:
// spec.verify {provider, secretRef: {name: secretName}}. provider is
// "cosign" or "notation"; for cosign the Secret holds the public key
// (Plan.VerifySecret, or WithVerifyKey when rendering a stack file). The
// Secret is never part of the rendered directory: it must be in the
// cluster before the artifact it vouches for, and an artifact must not
// carry the key it is checked with.
func Verify(provider, secretName string) StackOption {
	return funcStack(func(s *stack) {
		if provider != "cosign" && provider != "notation" {
			s.invalidf("invalid verify provider %q: want cosign or notation", provider)
			return
		}
		if msg := notSubdomain(secretName); msg != "" {
			s.invalidf("invalid verify Secret name %q: %s", secretName, msg)
			return
		}
		s.verify = &sourcev1.OCIRepositoryVerification{Provider: provider, SecretRef: &meta.LocalObjectReference{Name: secretName}}
	})
}

// VerifySecret renders the Secret the OCIRepository's spec.verify.secretRef
// names, holding publicKey (PEM) as cosign.pub. It fails when the plan has
// no OCIRepository verifying with cosign and a Secret.
func (p *Plan) VerifySecret(publicKey []byte) (*corev1.Secret, error) {
	if p.Source == nil || p.Source.Spec.Verify == nil || p.Source.Spec.Verify.SecretRef == nil || p.Source.Spec.Verify.Provider != "cosign" {
		return nil, errdefs.Kind(ErrInvalidOption, "a verification key needs a stack whose source verifies with cosign and a Secret (source.verify: {provider: cosign, secretRef: {name: …}})")
	}
	src := p.Source
	ref := "Secret/" + src.Namespace + "/" + src.Spec.Verify.SecretRef.Name
	block, _ := pem.Decode(publicKey)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, errdefs.Kind(ErrInvalidOption, "%s: the key is not a PEM public key (-----BEGIN PUBLIC KEY-----)", ref)
	}
	if _, err := x509.ParsePKIXPublicKey(block.Bytes); err != nil {
		return nil, errdefs.Kind(ErrInvalidOption, "%s: parsing the public key: %v", ref, err)
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: src.Spec.Verify.SecretRef.Name, Namespace: src.Namespace},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{CosignPublicKeyKey: publicKey},
	}, nil
}

// WithVerifyKey renders, for a stack whose source verifies with cosign
// (source.verify with a secretRef), the Secret holding the public key in
// file (PEM, cosign.pub) to WithSecretFile's file, beside the vars
// Secrets: it stays out of the pushed directory.
func WithVerifyKey(file string) RenderOption {
	return funcRender(func(c *renderConfig) error {
		if file == "" {
			return errdefs.Kind(ErrInvalidOption, "WithVerifyKey: empty file name")
		}
		c.verifyKey = file
		return nil
	})
}

// verifySecret renders the verification Secret for RenderFile.
func verifySecret(p *Plan, cfg *renderConfig) ([]byte, error) {
	key, err := os.ReadFile(cfg.verifyKey)
	if err != nil {
		return nil, fmt.Errorf("reading the verification key: %w", err)
	}
	s, err := p.VerifySecret(key)
	if err != nil {
		return nil, err
	}
	return marshal(s)
}
