package cli_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/outputs"
)

// canaryOutputs are IaC outputs files, one per format that marks outputs
// sensitive, whose sensitive values are unique strings (canaries) in every
// shape an output takes: string, multi-line string, list, map. The committed
// samples of package outputs join them in TestIaCSecretsNeverLeak.
var canaryOutputs = map[string]string{
	"canary-terraform.json": `{
  "cluster_name": {"sensitive": false, "type": "string", "value": "prod-1"},
  "db_password": {"sensitive": true, "type": "string", "value": "CANARY-tf-password-5b1e"},
  "tls_key": {"sensitive": true, "type": "string", "value": "-----BEGIN KEY-----\nCANARY-tf-pem-line-88a0\n-----END KEY-----\n"},
  "api_tokens": {"sensitive": true, "type": ["list", "string"], "value": ["CANARY-tf-token-one-1c2d", "CANARY-tf-token-two-3e4f"]},
  "db": {"sensitive": true, "type": ["object", {"user": "string", "pass": "string"}], "value": {"user": "admin", "pass": "CANARY-tf-nested-pass-9a7b"}}
}
`,
	"canary-tofu-controller.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: tf-outputs-db\n  namespace: flux-system\ntype: Opaque\ndata:\n" +
		"  db_password: " + base64.StdEncoding.EncodeToString([]byte("CANARY-tofu-password-6c3d")) + "\n" +
		"  endpoints: " + base64.StdEncoding.EncodeToString([]byte(`["CANARY-tofu-endpoint-0f9e"]`)) + "\n" +
		"  endpoints__type: " + base64.StdEncoding.EncodeToString([]byte(`["list","string"]`)) + "\n",
	"canary-tofu-controller.json": `{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "tf-outputs-cache"},
  "stringData": {"redis_auth": "CANARY-tofu-json-redis-2b8c"}}
`,
}

// TestIaCSecretsNeverLeak reads every IaC outputs file of the sample corpus
// (package outputs' testdata/outputs, the examples' infra/ and the
// canaries above) and follows each sensitive value through everything
// fluxpack makes of it: the
// substituteFrom ConfigMap and the Helm values ConfigMaps, the stream an
// outputs command prints (Manifests.YAML without the Secret), the files
// WriteDir writes, the errors of a values map naming a sensitive output and
// of a file cut right after the value, and then fluxpack push, diff and pull
// --debug of a platform tree holding those files, in a child process whose
// whole stdout and stderr are scanned, and the artifact pushed (manifest,
// config and every byte of the unpacked layer). No sensitive value may show
// in any of them, as given or base64-encoded; it may only be in the Secret.
func TestIaCSecretsNeverLeak(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	t.Setenv("FLUXPACK_CREDS", "")
	corpus := map[string][]byte{}
	samples := filepath.Join(testutil.RepoRoot(t), "outputs", "testdata", "outputs")
	entries, err := os.ReadDir(samples)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() || strings.HasSuffix(e.Name(), ".golden") || e.Name() == "values-map.yaml" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(samples, e.Name()))
		require.NoError(t, err)
		corpus[e.Name()] = b
	}
	// The examples' IaC outputs (examples/*/infra/*), e.g. the demo's.
	infra, err := filepath.Glob(filepath.Join(testutil.RepoRoot(t), "examples", "*", "infra", "*"))
	require.NoError(t, err)
	for _, p := range infra {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		corpus[filepath.Base(filepath.Dir(filepath.Dir(p)))+"-"+filepath.Base(p)] = b
	}
	for n, b := range canaryOutputs {
		corpus[n] = []byte(b)
	}
	require.GreaterOrEqual(t, len(corpus), 10, "the IaC sample corpus shrank")

	reg := testutil.NewRegistry(t)
	var refused, sensitive, places, scannedBytes int
	leaks := 0
	for _, fileName := range testutil.SortedKeys(corpus) {
		data := corpus[fileName]
		t.Run(fileName, func(t *testing.T) {
			outs, err := outputs.Parse(fileName, data)
			if err != nil {
				// The one sample fluxpack refuses: Pulumi's output without
				// --show-secrets.
				require.ErrorIs(t, err, outputs.ErrSecretPlaceholder)
				refused++
				return
			}
			// secrets holds every form a sensitive value could leak in.
			var secrets []string
			var sensitiveVars []string
			for _, out := range outs.List {
				if !out.Sensitive {
					continue
				}
				sensitive++
				sensitiveVars = append(sensitiveVars, out.Var)
				secrets = append(secrets, scannable(out.Value)...)
			}
			if len(sensitiveVars) == 0 {
				return
			}
			scan := func(where string, got []byte) {
				t.Helper()
				places++
				scannedBytes += len(got)
				for _, s := range secrets {
					if bytes.Contains(got, []byte(s)) {
						leaks++
						t.Errorf("%s: %s shows sensitive value %q", fileName, where, s)
					}
				}
			}

			// The ConfigMaps: no sensitive variable, no sensitive value.
			values := valuesMapFor(t, outs, false)
			m, err := outs.Render("cluster-vars", "flux-system", values)
			require.NoError(t, err)
			require.NotNil(t, m.Secret, "sensitive outputs go to a Secret")
			for _, v := range sensitiveVars {
				assert.NotContains(t, m.ConfigMap.Data, v, "the ConfigMap holds sensitive variable %s", v)
				assert.Contains(t, m.Secret.Data, v, "the Secret holds sensitive variable %s", v)
			}
			for _, cm := range append([]*corev1.ConfigMap{m.ConfigMap}, m.Values...) {
				b, err := sigyaml.Marshal(cm)
				require.NoError(t, err)
				scan("ConfigMap/"+cm.Namespace+"/"+cm.Name, b)
			}
			stdout, err := m.YAML()
			require.NoError(t, err)
			scan("the printed manifests", stdout)

			// The files written: all but the Secret scanned; the Secret 0600.
			platform := t.TempDir()
			written, err := m.WriteDir(filepath.Join(platform, "outputs"))
			require.NoError(t, err)
			var secretFile string
			for _, p := range written {
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				if strings.HasPrefix(filepath.Base(p), "secret-") {
					secretFile = p
					fi, err := os.Stat(p)
					require.NoError(t, err)
					assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "%s", p)
					continue
				}
				scan(filepath.Base(p), b)
			}
			require.NotEmpty(t, secretFile, "WriteDir wrote the Secret")

			// Errors: a values map naming a sensitive output, and the file
			// cut right after each sensitive value.
			if _, err := outs.Render("cluster-vars", "flux-system", valuesMapFor(t, outs, true)); assert.ErrorIs(t, err, outputs.ErrSensitiveValue) {
				scan("the error of a values map naming a sensitive output", []byte(err.Error()))
			}
			for _, s := range secrets {
				if i := bytes.Index(data, []byte(s)); i >= 0 {
					_, err := outputs.Parse(fileName, data[:i+len(s)])
					if err != nil {
						scan("the error of the file cut after a value", []byte(err.Error()))
					}
				}
			}

			// The CLI, in a child process: outputs prints the objects (the
			// Secret left out), then, on a tree holding those files, push refuses the plaintext Secret, then pushes, diffs and pulls
			// the tree without it; all with --debug.
			testutil.WriteFiles(t, platform, map[string]string{"kustomization.yaml": "resources: [outputs]\n"})
			url := "oci://" + reg.Host + "/iac/" + strings.NewReplacer(".", "-", "_", "-").Replace(fileName)
			pulled := filepath.Join(t.TempDir(), "pulled")
			in := filepath.Join(t.TempDir(), fileName)
			require.NoError(t, os.WriteFile(in, data, 0o600))
			batch := [][]string{
				{"outputs", in, "--name", "cluster-vars", "--debug"},
				{"push", platform, url + ":v1", "--debug"},
				{"push", platform, url + ":v1", "--debug", "--ignore-paths", "outputs/" + filepath.Base(secretFile)},
				{"diff", platform, url + ":v1", "--debug", "--ignore-paths", "outputs/" + filepath.Base(secretFile)},
				{"pull", url + ":v1", "-d", pulled, "--debug"},
			}
			out, errOut, codes := runBatch(t, nil, batch)
			assert.Equal(t, []int{cli.ExitOK, cli.ExitError, cli.ExitOK, cli.ExitOK, cli.ExitOK}, codes, "exit codes of %q; stderr:\n%s", batch, errOut)
			assert.Contains(t, errOut, "plaintext Secret", "push refuses the Secret")
			assert.Contains(t, errOut, `msg="registry request"`, "--debug logged")
			scan("stdout of outputs, push, diff and pull --debug", []byte(out))
			scan("stderr of outputs, push, diff and pull --debug", []byte(errOut))
			for p, b := range testutil.ReadFiles(t, pulled) {
				scan("pulled "+p, []byte(b))
			}
			scanArtifact(t, strings.TrimPrefix(url, "oci://")+":v1", scan)
		})
	}
	require.Positive(t, sensitive, "the corpus has sensitive outputs")
	t.Logf("IaC secrets: %d outputs files (%d refused), %d sensitive outputs, %d places scanned (%d bytes), %d leaks", len(corpus), refused, sensitive, places, scannedBytes, leaks)
}

// scannable returns the forms of a sensitive value worth searching for: the
// value, its base64 form, and each of its lines, of at least 6 bytes (a
// shorter value, such as tofu-controller's node_count "3", would be found
// everywhere; the ConfigMap check covers it by variable name).
func scannable(v string) []string {
	var out []string
	for _, s := range append([]string{v, base64.StdEncoding.EncodeToString([]byte(v))}, strings.Split(v, "\n")...) {
		if s = strings.TrimSpace(s); len(s) >= 6 && !slices.Contains(out, s) && !strings.HasPrefix(s, "-----") {
			out = append(out, s)
		}
	}
	return out
}

// valuesMapFor returns a values map putting every plain output (or, with
// sensitive, every sensitive one) into a Helm values ConfigMap.
func valuesMapFor(t *testing.T, outs *outputs.Outputs, sensitive bool) *outputs.ValuesMap {
	t.Helper()
	var b strings.Builder
	b.WriteString("configMaps:\n  - name: chart-values\n    values:\n")
	n := 0
	for _, out := range outs.List {
		if out.Sensitive == sensitive {
			fmt.Fprintf(&b, "      v%d: %s\n", n, out.Var)
			n++
		}
	}
	if n == 0 {
		return nil
	}
	vm, err := outputs.ParseValuesMap("values-map.yaml", []byte(b.String()))
	require.NoError(t, err)
	return vm
}

// scanArtifact reads ref straight from the registry and scans its manifest,
// its config and its unpacked layer.
func scanArtifact(t *testing.T, ref string, scan func(string, []byte)) {
	t.Helper()
	r, err := name.ParseReference(ref)
	require.NoError(t, err)
	img, err := remote.Image(r, remote.WithContext(t.Context()))
	require.NoError(t, err)
	manifest, err := img.RawManifest()
	require.NoError(t, err)
	scan("the pushed manifest", manifest)
	config, err := img.RawConfigFile()
	require.NoError(t, err)
	scan("the pushed config", config)
	layers, err := img.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 1)
	rc, err := layers[0].Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	scan("the pushed layer", b)
}
