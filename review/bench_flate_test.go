package review_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxpack/fluxpack/internal/testutil"
)

// BenchmarkDiffBesideFlate times a pull request's review as whole
// processes, start-up included, on a repository shaped like the public
// home-ops ones (testutil.GenerateHomeOps: 144 apps, each a Kustomization
// with a HelmRelease, an OCIRepository, some an ExternalSecret), whose last
// commit bumps one app's image tag, as renovate does:
//
//   - fluxpack: `fluxpack diff kubernetes/flux/cluster --base HEAD~1`
//     (changed-only; races and the bootstrap order included), built as
//     the release is, its cache (FLUXPACK_CACHE_DIR: kustomize's builds
//     and the base revision) kept across runs; fluxpack-cold gives it a
//     new one every run;
//   - flate: `flate diff ks --path kubernetes --path-orig BASE/kubernetes`
//     (home-operations/flate, the peer hack/tools.sh builds: make
//     flate-tool), the base checked out beside, as its Action does. flate
//     keeps a render cache on disk: flate-cold gives it a new one every
//     run (a CI runner without a cache), flate-warm keeps one across runs
//     (a laptop, or a CI cache restored);
//   - fluxpack-all: the same diff with --all (every producer rendered),
//     cache kept, and fluxpack-all-cold, a new cache every run;
//   - fluxpack-unread: a change to the README only, which no layer reads,
//     cache kept, and fluxpack-unread-cold, a new cache every run.
//
// Every fluxpack run must report the one image change (or, unread, no
// change). CPU-ms/op is the children's user plus system time.
//
//	go test ./review -run '^$' -bench DiffBesideFlate -benchtime 5x
func BenchmarkDiffBesideFlate(b *testing.B) {
	bins := testutil.BenchBinaries(b, map[string]string{"fluxpack": "./cmd/fluxpack"})
	flate := testutil.Tool(b, "flate")
	dir := filepath.Join(b.TempDir(), "home-ops")
	h, err := testutil.GenerateHomeOps(dir, 12, 12)
	if err != nil {
		b.Fatal(err)
	}
	testutil.Git(b, dir, "init", "-q")
	testutil.Git(b, dir, "add", "-A")
	testutil.Git(b, dir, "commit", "-q", "-m", "the cluster")
	release := filepath.Join(dir, filepath.FromSlash(h.Release))
	data, err := os.ReadFile(release)
	if err != nil {
		b.Fatal(err)
	}
	bumped := strings.Replace(string(data), "tag: 1.", "tag: 2.", 1)
	if bumped == string(data) {
		b.Fatal("the generated release has no tag to bump")
	}
	if err := os.WriteFile(release, []byte(bumped), 0o644); err != nil {
		b.Fatal(err)
	}
	testutil.Git(b, dir, "commit", "-q", "-am", "fix(container): update image")
	base := filepath.Join(b.TempDir(), "base")
	testutil.Git(b, dir, "worktree", "add", "-q", base, "HEAD~1")
	// The unread change: a working tree whose README differs from HEAD.
	unread := filepath.Join(b.TempDir(), "unread")
	testutil.Git(b, dir, "worktree", "add", "-q", unread, "HEAD")
	if err := os.WriteFile(filepath.Join(unread, "README.md"), []byte("# home-ops\n\nNow with a runbook.\n"), 0o644); err != nil {
		b.Fatal(err)
	}

	warm, fluxpackWarm := b.TempDir(), b.TempDir()
	kept := func() string { return fluxpackWarm }
	cold := func() string { return b.TempDir() }
	diff := []string{bins["fluxpack"], "diff", h.Entry, "--base", "HEAD~1"}
	unreadDiff := []string{bins["fluxpack"], "diff", h.Entry, "--base", "HEAD"}
	const flateCache, fluxpackCache = "FLATE_CACHE_DIR", "FLUXPACK_CACHE_DIR"
	cases := []struct {
		name     string
		dir      string
		args     []string
		cacheEnv string
		cache    func() string // the cache folder for a run
		stdout   string        // what a run must print
	}{
		{name: "fluxpack", dir: dir, args: diff, cacheEnv: fluxpackCache, cache: kept, stdout: "image.tag: 1.606.0"},
		{name: "fluxpack-cold", dir: dir, args: diff, cacheEnv: fluxpackCache, cache: cold, stdout: "image.tag: 1.606.0"},
		{name: "flate-warm", dir: dir, args: []string{flate, "diff", "ks", "--path", "kubernetes", "--path-orig", filepath.Join(base, "kubernetes"), "--no-progress"},
			cacheEnv: flateCache, cache: func() string { return warm }, stdout: "2.606.0"},
		{name: "flate-cold", dir: dir, args: []string{flate, "diff", "ks", "--path", "kubernetes", "--path-orig", filepath.Join(base, "kubernetes"), "--no-progress"},
			cacheEnv: flateCache, cache: cold, stdout: "2.606.0"},
		{name: "fluxpack-all", dir: dir, args: append(diff, "--all"), cacheEnv: fluxpackCache, cache: kept, stdout: "image.tag: 1.606.0"},
		{name: "fluxpack-all-cold", dir: dir, args: append(diff, "--all"), cacheEnv: fluxpackCache, cache: cold, stdout: "image.tag: 1.606.0"},
		{name: "fluxpack-unread", dir: unread, args: unreadDiff, cacheEnv: fluxpackCache, cache: kept, stdout: "no layer reads what changed"},
		{name: "fluxpack-unread-cold", dir: unread, args: unreadDiff, cacheEnv: fluxpackCache, cache: cold, stdout: "no layer reads what changed"},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			run := func() time.Duration {
				env := append(os.Environ(), tc.cacheEnv+"="+tc.cache())
				cmd := exec.Command(tc.args[0], tc.args[1:]...)
				cmd.Dir, cmd.Env = tc.dir, env
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				// fluxpack diff exits 1 when something changed.
				var ee *exec.ExitError
				if err != nil && (!errors.As(err, &ee) || ee.ExitCode() > 1) {
					b.Fatalf("%s: %v\n%s", strings.Join(tc.args, " "), err, stderr.Bytes())
				}
				if !strings.Contains(stdout.String(), tc.stdout) {
					b.Fatalf("%s: want %q in its output, got:\n%s\n%s", strings.Join(tc.args, " "), tc.stdout, stdout.Bytes(), stderr.Bytes())
				}
				return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			run() // the warm ones fill their caches; the others read the files once
			var cpu time.Duration
			for b.Loop() {
				cpu += run()
			}
			b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "CPU-ms/op")
		})
	}
}
