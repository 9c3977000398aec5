// Command fluxpack renders a platform's bootstrap order as Flux manifests and
// ships them as OCI artifacts. See the README and docs/cli for the commands.
// Installed as flux-pack it is the Flux CLI plugin `flux pack`.
package main

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"syscall"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/startup"
)

// version is set at build time with -ldflags "-X main.version=…" (make
// build, make release). Unset, it comes from the build info: see
// versionFrom.
var version = ""

func main() {
	if percent, limit, ok := cli.GC(os.Args[1:]); ok {
		startup.Tune(percent, limit)
	}
	startup.Done() // the collector was off while the linked packages initialized
	// The handlers stay until the process exits: a signal that arrives as
	// the command ends is absorbed, not fatal (a restored default handler
	// would kill the process after its cleanup, with no exit code).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop() // never runs: os.Exit runs no deferred call, so the handlers stay
	if cli.ReadsRepositories(os.Args[1:]) {
		// The commands that read repositories keep kustomize's builds
		// (fluxbuild.ContextWithCache) under cli.CacheRoot.
		ctx = withBuildCache(ctx)
	}
	bi, _ := debug.ReadBuildInfo()
	stopProfile := cpuProfile(os.Getenv("FLUXPACK_CPUPROFILE"))
	code := cli.MainAs(ctx, cli.NameFor(os.Args[0]), versionFrom(version, bi), os.Args[1:], os.Stdout, os.Stderr)
	stopProfile()
	os.Exit(code)
}

// cpuProfile writes a CPU profile of the command to file when it is not
// empty (FLUXPACK_CPUPROFILE, for developers: `go tool pprof` reads it); the
// returned function ends it. A profile that cannot be written is said on
// stderr and the command runs without it.
func cpuProfile(file string) (stop func()) {
	if file == "" {
		return func() {}
	}
	f, err := os.Create(file)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		os.Stderr.WriteString("fluxpack: FLUXPACK_CPUPROFILE: " + err.Error() + "\n")
		if f != nil {
			_ = f.Close()
		}
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}

// versionFrom is the version `fluxpack version` prints: the stamped one;
// else the module's version when go install built it at a version
// (`go install …/cmd/fluxpack@v1.2.3`), or the pseudo-version the go
// command derives from the checkout's commit; else "dev+" and the commit
// the build info records (with "-dirty" for uncommitted changes); else
// "dev" (a build with -buildvcs=false from a checkout).
func versionFrom(stamped string, bi *debug.BuildInfo) string {
	if stamped != "" {
		return stamped
	}
	if bi == nil {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	v := "dev+" + rev[:min(12, len(rev))]
	if dirty {
		v += "-dirty"
	}
	return v
}

// withBuildCache returns ctx with the kustomize build cache of the reading
// commands (fluxbuild.ContextWithCache) under cli.CacheRoot, or ctx as it
// is when there is none.
func withBuildCache(ctx context.Context) context.Context {
	root := cli.CacheRoot()
	if root == "" {
		return ctx
	}
	if c, err := fluxbuild.ContextWithCache(ctx, filepath.Join(root, "kustomize")); err == nil {
		return c
	}
	return ctx
}
