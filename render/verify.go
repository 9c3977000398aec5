package render

import (
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/layering"
)

// CosignPublicKeyKey is the key of the cosign public key in the
// verification Secret VerifySecret renders. source-controller tries every
// key of the Secret that ends in ".pub"; cosign.pub is the name Flux's
// documentation uses.
const CosignPublicKeyKey = "cosign.pub"

// VerifySecret renders the Secret the OCIRepository's spec.verify.secretRef
// names, holding publicKey (PEM) as cosign.pub. It fails when the plan has
// no OCIRepository verifying with cosign and a Secret.
func VerifySecret(p *layering.Plan, publicKey []byte) (*corev1.Secret, error) {
	if p.Source == nil || p.Source.Spec.Verify == nil || p.Source.Spec.Verify.SecretRef == nil || p.Source.Spec.Verify.Provider != "cosign" {
		return nil, errdefs.Kind(layering.ErrInvalidOption, "a verification key needs a stack whose source verifies with cosign and a Secret (source.verify: {provider: cosign, secretRef: {name: …}})")
	}
	src := p.Source
	ref := "Secret/" + src.Namespace + "/" + src.Spec.Verify.SecretRef.Name
	block, _ := pem.Decode(publicKey)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, errdefs.Kind(layering.ErrInvalidOption, "%s: the key is not a PEM public key (-----BEGIN PUBLIC KEY-----)", ref)
	}
	if _, err := x509.ParsePKIXPublicKey(block.Bytes); err != nil {
		return nil, errdefs.Kind(layering.ErrInvalidOption, "%s: parsing the public key: %v", ref, err)
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
func WithVerifyKey(file string) Option {
	return funcRender(errdefs.NonEmpty("WithVerifyKey", "file name", file, func(c *renderConfig) *string { return &c.verifyKey }))
}

// verifySecret renders the verification Secret for StackFile.
func verifySecret(p *layering.Plan, cfg *renderConfig) ([]byte, error) {
	key, err := os.ReadFile(cfg.verifyKey)
	if err != nil {
		return nil, fmt.Errorf("reading the verification key: %w", err)
	}
	s, err := VerifySecret(p, key)
	if err != nil {
		return nil, err
	}
	return marshal(s)
}

// The keys of the notation verification Secret NotationVerifySecret
// renders. source-controller reads the trust policy from trustpolicy.json
// and the certificates from every key ending in ".crt" or ".pem", each
// key's first PEM block only: a file with several certificates becomes
// ca-0.crt, ca-1.crt, ….
const (
	NotationTrustPolicyKey = "trustpolicy.json"
	NotationCertificateKey = "ca.crt"
)

// notationPolicy is the shape of notation's OCI trust policy document
// (version 1.0), as far as layering checks and writes it; notation-go
// validates the rest where it verifies (source-controller, fluxpack verify).
type notationPolicy struct {
	Version       string                    `json:"version"`
	TrustPolicies []notationPolicyStatement `json:"trustPolicies"`
}

type notationPolicyStatement struct {
	Name                  string   `json:"name"`
	RegistryScopes        []string `json:"registryScopes"`
	SignatureVerification struct {
		Level string `json:"level"`
	} `json:"signatureVerification"`
	TrustStores       []string `json:"trustStores,omitempty"`
	TrustedIdentities []string `json:"trustedIdentities,omitempty"`
}

// NotationTrustPolicy returns the trust policy NotationVerifySecret writes
// when given none: strict verification of the stack's repository
// (host/repository of its OCIRepository's URL) against the Secret's
// certificates as the trust store "ca:<secret name>", any identity they
// issued.
func NotationTrustPolicy(p *layering.Plan) ([]byte, error) {
	src, err := notationSource(p)
	if err != nil {
		return nil, err
	}
	st := notationPolicyStatement{
		Name:              src.Spec.Verify.SecretRef.Name,
		RegistryScopes:    []string{strings.TrimPrefix(src.Spec.URL, sourcev1.OCIRepositoryPrefix)},
		TrustStores:       []string{"ca:" + src.Spec.Verify.SecretRef.Name},
		TrustedIdentities: []string{"*"},
	}
	st.SignatureVerification.Level = "strict"
	data, err := json.MarshalIndent(notationPolicy{Version: "1.0", TrustPolicies: []notationPolicyStatement{st}}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

func notationSource(p *layering.Plan) (*sourcev1.OCIRepository, error) {
	if p.Source == nil || p.Source.Spec.Verify == nil || p.Source.Spec.Verify.SecretRef == nil || p.Source.Spec.Verify.Provider != "notation" {
		return nil, errdefs.Kind(layering.ErrInvalidOption, "a notation trust policy needs a stack whose source verifies with notation and a Secret (source.verify: {provider: notation, secretRef: {name: …}})")
	}
	return p.Source, nil
}

// NotationVerifySecret renders the Secret the OCIRepository's
// spec.verify.secretRef names for provider notation: trustPolicy (JSON)
// as trustpolicy.json, or Plan.NotationTrustPolicy's when it is nil, and
// the PEM certificates of certs, one per key (ca.crt, or ca-0.crt, ca-1.crt,
// … for several). It fails when the plan has no OCIRepository verifying
// with notation and a Secret, when the policy is not a version 1.0 trust
// policy with at least one statement, and when certs hold no certificate.
func NotationVerifySecret(p *layering.Plan, trustPolicy []byte, certs ...[]byte) (*corev1.Secret, error) {
	src, err := notationSource(p)
	if err != nil {
		return nil, err
	}
	ref := "Secret/" + src.Namespace + "/" + src.Spec.Verify.SecretRef.Name
	if trustPolicy == nil {
		if trustPolicy, err = NotationTrustPolicy(p); err != nil {
			return nil, err
		}
	}
	var doc notationPolicy
	if err := json.Unmarshal(trustPolicy, &doc); err != nil {
		return nil, errdefs.Kind(layering.ErrInvalidOption, "%s: parsing the trust policy: %v", ref, err)
	}
	if doc.Version != "1.0" || len(doc.TrustPolicies) == 0 {
		return nil, errdefs.Kind(layering.ErrInvalidOption, "%s: the trust policy is not notation's (version \"1.0\", trustPolicies)", ref)
	}
	var pems [][]byte
	for i, c := range certs {
		n := 0
		for rest := c; ; {
			var block *pem.Block
			block, rest = pem.Decode(rest)
			if block == nil {
				break
			}
			if block.Type != "CERTIFICATE" {
				return nil, errdefs.Kind(layering.ErrInvalidOption, "%s: certificate %d holds a %q PEM block", ref, i+1, block.Type)
			}
			if _, err := x509.ParseCertificate(block.Bytes); err != nil {
				return nil, errdefs.Kind(layering.ErrInvalidOption, "%s: parsing certificate %d: %v", ref, i+1, err)
			}
			pems = append(pems, pem.EncodeToMemory(block))
			n++
		}
		if n == 0 {
			return nil, errdefs.Kind(layering.ErrInvalidOption, "%s: certificate %d is not a PEM certificate (-----BEGIN CERTIFICATE-----)", ref, i+1)
		}
	}
	if len(pems) == 0 {
		return nil, errdefs.Kind(layering.ErrInvalidOption, "%s: no certificate for the trust store", ref)
	}
	data := map[string][]byte{NotationTrustPolicyKey: trustPolicy}
	if len(pems) == 1 {
		data[NotationCertificateKey] = pems[0]
	} else {
		for i, c := range pems {
			data[fmt.Sprintf("ca-%d.crt", i)] = c
		}
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: src.Spec.Verify.SecretRef.Name, Namespace: src.Namespace},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}, nil
}

// WithVerifyNotation renders, for a stack whose source verifies with
// notation (source.verify with a secretRef), the Secret holding the trust
// policy in trustPolicyFile (Plan.NotationTrustPolicy's when "") and the
// PEM certificates in certFiles to WithSecretFile's file, beside the vars
// Secrets: it stays out of the pushed directory.
func WithVerifyNotation(trustPolicyFile string, certFiles ...string) Option {
	return funcRender(func(c *renderConfig) error {
		if len(certFiles) == 0 || slices.Contains(certFiles, "") {
			return errdefs.Kind(layering.ErrInvalidOption, "WithVerifyNotation: no certificate file")
		}
		c.notationPolicy, c.notationCerts = trustPolicyFile, certFiles
		return nil
	})
}

// notationSecret renders the notation verification Secret for StackFile.
func notationSecret(p *layering.Plan, cfg *renderConfig) ([]byte, error) {
	var policy []byte
	if cfg.notationPolicy != "" {
		var err error
		if policy, err = os.ReadFile(cfg.notationPolicy); err != nil {
			return nil, fmt.Errorf("reading the trust policy: %w", err)
		}
	}
	var certs [][]byte
	for _, f := range cfg.notationCerts {
		c, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading the trust store certificate: %w", err)
		}
		certs = append(certs, c)
	}
	s, err := NotationVerifySecret(p, policy, certs...)
	if err != nil {
		return nil, err
	}
	return marshal(s)
}
