package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/oci"
)

// registryFlags are the flags of every command that talks to a registry.
type registryFlags struct {
	creds    string
	caFile   string
	insecure bool
	timeout  time.Duration
}

func (r *registryFlags) bind(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&r.creds, "creds", "", "registry credentials, user:password or a token (default $FLUXPACK_CREDS, else the docker config)")
	fs.StringVar(&r.caFile, "ca-file", "", "PEM file of CA certificates to trust besides the system's")
	fs.BoolVar(&r.insecure, "insecure-registry", false, "allow plain HTTP and unverified TLS")
	fs.DurationVar(&r.timeout, "timeout", 5*time.Minute, "deadline for the whole operation, retries included")
}

// options maps the flags to oci options for an operation of option type T
// (oci.PushOption, oci.PullOption…); log gets the registry requests at debug
// level. $FLUXPACK_CREDS and $SOURCE_DATE_EPOCH are the library's to read
// (oci.WithEnvironment).
func options[T any](r *registryFlags, log *slog.Logger) []T {
	opts := []any{oci.WithLogger(log), oci.WithEnvironment()}
	if r.creds != "" {
		opts = append(opts, oci.WithCreds(r.creds))
	}
	if r.caFile != "" {
		opts = append(opts, oci.WithCAFile(r.caFile))
	}
	if r.insecure {
		opts = append(opts, oci.WithInsecure())
	}
	out := make([]T, len(opts))
	for i, o := range opts {
		out[i] = o.(T) // every registry option implements every operation's type
	}
	return out
}

func (r *registryFlags) context(ctx context.Context) (context.Context, context.CancelFunc) {
	if r.timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, r.timeout)
}

// outputFlag is -o for commands that print plain text or JSON.
type outputFlag string

func (o *outputFlag) bind(cmd *cobra.Command) {
	cmd.Flags().StringVarP((*string)(o), "output", "o", "", `output format: "" (plain) or "json"`)
}

func (o outputFlag) check() error {
	if o != "" && o != "json" {
		return fmt.Errorf(`invalid --output %q: want "json" or nothing`, string(o))
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// parseKeyValues parses k=v flag values.
func parseKeyValues(flag string, kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("invalid --%s %q: want key=value", flag, kv)
		}
		m[k] = v
	}
	return m, nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
