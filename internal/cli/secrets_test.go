package cli_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// TestCredentialsNeverPrinted runs every registry command against a real
// registry with TLS and basic auth, with credentials from --creds,
// $FLUXPACK_CREDS and the docker config, with and without --debug, when it
// works and when it fails (wrong password, untrusted certificate,
// credentials written into the URL, an unreachable registry), and scans all
// that fluxpack prints for every form of every credential. fluxpack runs in a
// child process, so whatever writes to the process's stdout and stderr is
// scanned, not only what the commands write.
func TestCredentialsNeverPrinted(t *testing.T) {
	const user, password, wrong = "ci-bot", "Zq7-right-pw-41", "Xk9-wrong-pw-77"
	reg := testutil.StartDistribution(t, testutil.DistributionOptions{TLS: true, Users: map[string]string{user: password}})
	// Every way a credential could show: as given, base64 as in the docker
	// config and in a Basic Authorization header, and URL-escaped.
	var secrets []string
	for _, pw := range []string{password, wrong} {
		secrets = append(secrets, pw, user+":"+pw,
			base64.StdEncoding.EncodeToString([]byte(user+":"+pw)),
			base64.URLEncoding.EncodeToString([]byte(user+":"+pw)))
	}
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, tree)
	work := t.TempDir()

	// dockerConfig writes a docker config holding user:pw for the registry.
	dockerConfig := func(pw string) string {
		d := t.TempDir()
		auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + pw))
		require.NoError(t, os.WriteFile(filepath.Join(d, "config.json"), fmt.Appendf(nil, `{"auths":{%q:{"auth":%q}}}`, reg.Host, auth), 0o600))
		return d
	}
	emptyConfig := t.TempDir()
	sources := []struct {
		name string
		// use returns the environment and flags that pass the credentials pw.
		use func(pw string) (env, flags []string)
	}{
		{"--creds", func(pw string) ([]string, []string) {
			return []string{"DOCKER_CONFIG=" + emptyConfig, "FLUXPACK_CREDS="}, []string{"--creds", user + ":" + pw}
		}},
		{"$FLUXPACK_CREDS", func(pw string) ([]string, []string) {
			return []string{"DOCKER_CONFIG=" + emptyConfig, "FLUXPACK_CREDS=" + user + ":" + pw}, nil
		}},
		{"docker config", func(pw string) ([]string, []string) {
			return []string{"DOCKER_CONFIG=" + dockerConfig(pw), "FLUXPACK_CREDS="}, nil
		}},
	}
	type variant struct {
		name string
		pw   string
		ca   bool   // pass --ca-file
		host string // in the URLs
		code int
		args []string
	}
	variants := []variant{
		{name: "works", pw: password, ca: true, host: reg.Host, code: cli.ExitOK},
		{name: "wrong password", pw: wrong, ca: true, host: reg.Host, code: cli.ExitError},
		{name: "untrusted certificate", pw: password, host: reg.Host, code: cli.ExitError},
		{name: "credentials in the URL", pw: password, ca: true, host: user + ":" + password + "@" + reg.Host, code: cli.ExitError},
		{name: "unreachable", pw: password, ca: true, host: fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t)), code: cli.ExitError, args: []string{"--timeout", "1s"}},
	}
	var (
		mu            sync.Mutex
		runs, scanned int
	)
	t.Run("all", func(t *testing.T) {
		for _, src := range sources {
			for _, v := range variants {
				for _, debug := range []bool{false, true} {
					name := fmt.Sprintf("%s/%s/debug=%t", src.name, v.name, debug)
					env, flags := src.use(v.pw)
					t.Run(name, func(t *testing.T) {
						t.Parallel()
						flags := append(slices.Clip(flags), v.args...)
						if v.ca {
							flags = append(flags, "--ca-file", reg.CAFile)
						}
						if debug {
							flags = append(flags, "--debug")
						}
						url := "oci://" + v.host + "/acme/platform"
						pulled := filepath.Join(work, strings.NewReplacer("/", "_", " ", "_", "$", "").Replace(name))
						commands := []struct {
							args []string
							code int // when the variant works
						}{
							{args: []string{"push", dir, url + ":v1", "--source", "s", "--revision", "r"}},
							{args: []string{"diff", dir, url + ":v1"}},
							{args: []string{"pull", url + ":v1", "-d", pulled}},
							{args: []string{"tag", url + ":v1", "--tag", "stable"}},
							{args: []string{"list", url}},
							{args: []string{"pull", url + ":nope", "-d", pulled + "-nope"}, code: cli.ExitError},
						}
						batch := make([][]string, len(commands))
						for i, c := range commands {
							batch[i] = append(c.args, flags...)
						}
						stdout, stderr, codes := runBatch(t, env, batch)
						mu.Lock()
						runs += len(batch)
						scanned += len(stdout) + len(stderr)
						mu.Unlock()
						for i, c := range commands {
							want := v.code
							if want == cli.ExitOK {
								want = c.code
							}
							assert.Equal(t, want, codes[i], "fluxpack %s: exit code; stderr of the batch:\n%s", strings.Join(batch[i], " "), stderr)
						}
						if v.code != cli.ExitOK {
							assert.Equal(t, len(commands), strings.Count(stderr, "fluxpack: "), "each failure says why")
						}
						if debug && v.code == cli.ExitOK {
							assert.Contains(t, stderr, `msg="registry request"`, "--debug logs the registry requests")
						}
						for _, s := range secrets {
							assert.NotContains(t, stdout, s, "fluxpack printed a credential on stdout")
							assert.NotContains(t, stderr, s, "fluxpack printed a credential on stderr")
						}
					})
				}
			}
		}
	})
	t.Logf("credentials: %d runs, %d bytes of stdout and stderr scanned for %d secret strings", runs, scanned, len(secrets))
}

// runBatch runs fluxpack once for each args of batch, one after the other,
// in a child process (the test binary, see TestMain) with the test's
// environment and env, and returns all it wrote on stdout and stderr and each run's
// exit code.
func runBatch(t *testing.T, env []string, batch [][]string) (string, string, []int) {
	t.Helper()
	raw, err := json.Marshal(batch)
	require.NoError(t, err)
	codesFile := filepath.Join(t.TempDir(), "codes.json")
	cmd := exec.CommandContext(t.Context(), os.Args[0])
	cmd.Env = slices.Concat(os.Environ(), env, []string{batchEnv + "=" + string(raw), codesEnv + "=" + codesFile})
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr:\n%s", stderr.String())
	var codes []int
	b, err := os.ReadFile(codesFile)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &codes))
	require.Len(t, codes, len(batch))
	return stdout.String(), stderr.String(), codes
}
