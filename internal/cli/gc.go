package cli

import (
	"os"

	"github.com/spf13/cobra"
)

// The commands that read whole repositories (lint, diff, graph, import,
// preview, render) build every layer with kustomize, which allocates much
// and keeps little, and end within seconds: collecting a quarter as often
// saves about a third of their CPU time (a one-commit diff of a 146-layer
// repository: 1.22-1.32 s of user CPU instead of 1.92-2.10 s) for about
// twice the peak RSS (220-245 MB instead of 124-131 MB there). The soft memory limit makes the
// runtime collect as often as before when a very large repository's heap
// nears it. push and the other registry commands keep Go's defaults (their
// peak RSS is benchmarked against the flux CLI's).
const (
	readingGCPercent  = 400
	readingMemoryGiB  = 2
	readingAnnotation = "fluxpack/reads-repositories"
)

// GC returns the collector settings for the command args name (GOGC
// percent and a soft memory limit in bytes), and false when the command
// keeps Go's defaults, or when GOGC or GOMEMLIMIT is set in the
// environment (the user's choice stands). The main package applies them
// (internal/startup.Tune): a library must not change its host's collector.
func GC(args []string) (percent int, limit int64, ok bool) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return 0, 0, false
	}
	cmd, _, err := NewRoot("").Find(args)
	if err != nil || cmd.Annotations[readingAnnotation] == "" {
		return 0, 0, false
	}
	return readingGCPercent, readingMemoryGiB << 30, true
}

// ReadsRepositories reports whether the command args name reads whole
// repositories (the commands GC tunes); the main package gives them the
// kustomize build cache (fluxbuild.ContextWithCache).
func ReadsRepositories(args []string) bool {
	cmd, _, err := NewRoot("").Find(args)
	return err == nil && cmd.Annotations[readingAnnotation] != ""
}

// readsRepositories marks commands whose collector GC tunes.
func readsRepositories(cmds ...*cobra.Command) []*cobra.Command {
	for _, c := range cmds {
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[readingAnnotation] = "true"
	}
	return cmds
}
