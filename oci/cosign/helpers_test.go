package cosign_test

import (
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/oci/cosign"
)

// platformFiles is a small manifest tree.
var platformFiles = map[string]string{
	"crds/externalsecrets.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: externalsecrets.external-secrets.io\n",
	"operator/deployment.yaml":  "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: external-secrets\n  namespace: external-secrets\n",
	"kustomization.yaml":        "resources: [crds, operator]\n",
}

// fastRetry keeps tests of unreachable registries short.
var fastRetry = remote.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 1}

func tagDigest(t *testing.T, ref string) string {
	t.Helper()
	d, err := crane.Digest(ref)
	require.NoError(t, err)
	return d
}

// withKey is the push option signing with the key keyRef names.
func withKey(t *testing.T, keyRef string, password []byte) oci.PushOption {
	t.Helper()
	s, err := cosign.NewKeySigner(keyRef, password)
	require.NoError(t, err, "NewKeySigner(%q)", keyRef)
	return oci.WithSigner(s)
}

// withPub is the option verifying with the public key keyRef names.
func withPub(t *testing.T, keyRef string) oci.KeyOption {
	t.Helper()
	v, err := cosign.NewKeyVerifier(keyRef)
	require.NoError(t, err, "NewKeyVerifier(%q)", keyRef)
	return oci.WithVerifier(v)
}

// withSigner is the push option signing with s.
func withSigner(t *testing.T, s signature.Signer) oci.PushOption {
	t.Helper()
	cs, err := cosign.NewSigner(s)
	require.NoError(t, err)
	return oci.WithSigner(cs)
}

// withKeyless is the push option signing keyless with k.
func withKeyless(t *testing.T, k cosign.Keyless) oci.PushOption {
	t.Helper()
	s, err := cosign.NewKeylessSigner(k)
	require.NoError(t, err)
	return oci.WithSigner(s)
}

// withIdentity is the option verifying keyless signatures of ids against
// the trusted root in the file root.
func withIdentity(t *testing.T, root string, ids ...cosign.Identity) oci.KeyOption {
	t.Helper()
	v, err := cosign.NewKeylessVerifier(root, ids...)
	require.NoError(t, err)
	return oci.WithVerifier(v)
}
