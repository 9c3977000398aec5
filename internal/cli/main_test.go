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

func TestMain(m *testing.M) {
	if raw := os.Getenv(helperEnv); raw != "" {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			panic(err)
		}
		os.Exit(cli.Main(context.Background(), "test", args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
