package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// KMSPluginScheme is the KMS scheme of the test plugin KMSPlugin installs:
// a key reference testkms://<path> signs with the PEM private key at <path>.
const KMSPluginScheme = "testkms"

// KMSPlugin links ./internal/testutil/sigstore-kms-testkms, a sigstore CLI
// KMS plugin that `make test-bins` builds (see Prebuilt), into a temporary
// directory as sigstore-kms-testkms, puts that directory first on $PATH for the rest of the test (so sigstore's kms.Get runs it for
// testkms:// key references) and sets $TESTKMS_LOG to a file in which the
// plugin records each method called. It writes an ECDSA P-256 key pair
// (PKCS8KeyPair "kms" in a temporary directory) and returns the key
// reference for it, the path of its public key and the log's path.
//
// It uses t.Setenv, so the test cannot be parallel.
func KMSPlugin(t *testing.T) (ref, pub, log string) {
	t.Helper()
	plugin := Prebuilt(t, "sigstore-kms-"+KMSPluginScheme)
	bin := t.TempDir()
	if err := os.Symlink(plugin, filepath.Join(bin, "sigstore-kms-"+KMSPluginScheme)); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	keys := t.TempDir()
	key, pub := PKCS8KeyPair(t, keys, "kms", false)
	log = filepath.Join(keys, "calls.log")
	t.Setenv("TESTKMS_LOG", log)
	return KMSPluginScheme + "://" + key, pub, log
}
