package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// initLine is one line of GODEBUG=inittrace=1: a package's init, what it
// allocated, and the collections (gctrace) that ran before it.
type initLine struct {
	pkg      string
	bytes    int64
	gcBefore int // collections started before this init
}

// traceInits runs this test binary again, running no test, with
// GODEBUG=inittrace=1,gctrace=1, and returns its package inits in order.
// The test binary links what the fluxpack binary links (package main's
// imports), in the linker's order.
func traceInits(t *testing.T) []initLine {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.CommandContext(t.Context(), exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1,gctrace=1", "GOGC=100", "GOMEMLIMIT=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run(), "%s -test.run=^$:\n%s", exe, stderr.Bytes())

	var inits []initLine
	gcs := 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) > 1 && f[0] == "gc" && strings.HasPrefix(f[2], "@"):
			gcs++
		case len(f) >= 11 && f[0] == "init" && f[8] == "bytes,":
			n, err := strconv.ParseInt(f[7], 10, 64)
			require.NoError(t, err, "inittrace line %q", sc.Text())
			inits = append(inits, initLine{pkg: f[1], bytes: n, gcBefore: gcs})
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, inits, "no inittrace lines from %s:\n%s", exe, stderr.Bytes())
	return inits
}

// ownInitBudget is what the init of one of fluxpack's packages may
// allocate: package-level errors and small map literals fit; a compiled
// regexp, a runtime.Scheme or parsed data do not (make them
// sync.OnceValue): every command, even `fluxpack version`, pays for every
// init.
const ownInitBudget = 8 << 10

// TestOwnInitsAreLight fails when a package of fluxpack does work at init
// (issue 27: start-up no slower than the flux CLI's).
func TestOwnInitsAreLight(t *testing.T) {
	seen := 0
	for _, in := range traceInits(t) {
		if !strings.HasPrefix(in.pkg, "github.com/fluxpack/fluxpack/") {
			continue
		}
		seen++
		assert.LessOrEqual(t, in.bytes, int64(ownInitBudget),
			"init of %s allocates %d bytes, over %d: compile regexps, build schemes and parse data on first use (sync.OnceValue)", in.pkg, in.bytes, ownInitBudget)
	}
	assert.Greater(t, seen, 5, "inittrace names too few of fluxpack's packages")
}

// TestNoCollectionDuringInits fails when the garbage collector runs while
// the linked packages initialize: package internal/startup turns it off
// before the heavy inits (it must sort and initialize early) and main turns
// it back on.
func TestNoCollectionDuringInits(t *testing.T) {
	inits := traceInits(t)
	var total int64
	startup := -1
	for i, in := range inits {
		total += in.bytes
		if in.pkg == "github.com/fluxpack/fluxpack/internal/startup" {
			startup = i
		}
	}
	last := inits[len(inits)-1]
	assert.Zero(t, last.gcBefore, "%d collections ran during the inits (%d MiB allocated); internal/startup is init number %d of %d",
		last.gcBefore, total>>20, startup+1, len(inits))
	require.GreaterOrEqual(t, startup, 0, "package internal/startup is not initialized")
	var before int64
	for _, in := range inits[:startup] {
		before += in.bytes
	}
	assert.Less(t, before*4, total, "inits before internal/startup's allocate %d of %d bytes: it initializes too late", before, total)
}

func TestVersionFrom(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	tests := []struct {
		name    string
		stamped string
		bi      *debug.BuildInfo
		want    string
	}{
		{"stamped by make build", "v1.4.0", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-x"}}, "v1.4.0"},
		{"go install …@version", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0"},
		{"pseudo-version of a checkout", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261128150000-3fba0aa12345+dirty"}}, "v0.0.0-20261128150000-3fba0aa12345+dirty"},
		{"a checkout's commit", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs", "git", "vcs.revision", "3fba0aa1234567890abcdef", "vcs.modified", "false")}, "dev+3fba0aa12345"},
		{"a checkout with changes", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs.revision", "3fba0aa1234567890abcdef", "vcs.modified", "true")}, "dev+3fba0aa12345-dirty"},
		{"-buildvcs=false", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{"no build info", "", nil, "dev"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, versionFrom(tt.stamped, tt.bi))
		})
	}
}
