package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/fluxpack/fluxpack/internal/cli"
)

// helperEnv makes the test binary run fluxpack with the JSON-encoded args it
// holds instead of the tests, so a test can run fluxpack in a child process
// (for instance as another user).
const helperEnv = "FLUXPACK_CLI_HELPER_ARGS"

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
		os.Exit(cli.Main(context.Background(), "test", args, os.Stdout, os.Stderr)) //nolint:forbidigo // TestMain has no t
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
	os.Exit(m.Run())
}
