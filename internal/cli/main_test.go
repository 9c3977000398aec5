package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testhook"
)

// helperEnv makes the test binary run fluxpack with the JSON-encoded args it
// holds instead of the tests, so a test can run fluxpack in a child process
// (for instance as another user).
const helperEnv = "FLUXPACK_CLI_HELPER_ARGS"

// readyEnv names a file the helper creates once SIGINT and SIGTERM cancel
// its context, for a test to interrupt it only then.
const readyEnv = "FLUXPACK_CLI_HELPER_READY"

// pauseEnv makes the helper stop when fluxpack reaches the phase it names
// (package testhook: prepared, staged), create readyEnv's file only then
// and wait there for SIGINT or SIGTERM: a test interrupts a command that
// ends in milliseconds at that phase, not after a guessed delay.
const pauseEnv = "FLUXPACK_CLI_HELPER_PAUSE"

// batchEnv makes the test binary run fluxpack once for each JSON-encoded list
// of args it holds, one after the other, and write their exit codes as a JSON
// list to the file codesEnv names.
const batchEnv, codesEnv = "FLUXPACK_CLI_HELPER_BATCH", "FLUXPACK_CLI_HELPER_CODES"

func TestMain(m *testing.M) {
	if raw := os.Getenv(helperEnv); raw != "" {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			panic(err)
		}
		// As cmd/fluxpack's main: SIGINT and SIGTERM cancel the context.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM) //nolint:forbidigo // TestMain has no t
		ready := os.Getenv(readyEnv)
		if phase := os.Getenv(pauseEnv); phase != "" {
			testhook.Set(func(ctx context.Context, p string) {
				if p != phase || ctx.Err() != nil {
					return
				}
				if err := os.WriteFile(ready, nil, 0o600); err != nil {
					panic(err)
				}
				<-ctx.Done() // the signal
			})
		} else if ready != "" {
			if err := os.WriteFile(ready, nil, 0o600); err != nil {
				panic(err)
			}
		}
		// As main: the handlers stay until exit, so a late signal is absorbed.
		defer stop()
		os.Exit(cli.Main(ctx, "test", args, os.Stdout, os.Stderr))
	}
	if raw := os.Getenv(batchEnv); raw != "" {
		var batch [][]string
		if err := json.Unmarshal([]byte(raw), &batch); err != nil {
			panic(err)
		}
		codes := make([]int, len(batch))
		for i, args := range batch {
			codes[i] = cli.Main(context.Background(), "test", args, os.Stdout, os.Stderr) //nolint:forbidigo // TestMain has no t
		}
		out, err := json.Marshal(codes)
		if err != nil {
			panic(err)
		}
		if err := os.WriteFile(os.Getenv(codesEnv), out, 0o600); err != nil {
			panic(err)
		}
		os.Exit(0)
	}
	// push keeps a tree cache in the user's cache directory: the tests'
	// go to a directory of their own.
	cache, err := os.MkdirTemp("", "fluxpack-cli-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	code := m.Run()
	os.RemoveAll(cache)
	os.Exit(code)
}
