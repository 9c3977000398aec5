package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
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
	fs.BoolVar(&r.insecure, "insecure-registry", false, "allow plain HTTP to any host (loopback and private addresses need no flag for it) and unverified TLS")
	fs.DurationVar(&r.timeout, "timeout", 5*time.Minute, "deadline for the whole operation, retries included")
}

// options maps the flags to oci options; log gets the registry requests at
// debug level. $FLUXPACK_CREDS and $SOURCE_DATE_EPOCH are the library's to
// read (oci.WithEnvironment).
func (r *registryFlags) options(log *slog.Logger) []oci.RegistryOption {
	opts := []oci.RegistryOption{oci.WithLogger(log), oci.WithEnvironment()}
	if r.creds != "" {
		opts = append(opts, oci.WithCreds(r.creds))
	}
	if r.caFile != "" {
		opts = append(opts, oci.WithCAFile(r.caFile))
	}
	if r.insecure {
		opts = append(opts, oci.WithInsecure())
	}
	return opts
}

// The flags' options for each operation: a RegistryOption is an option of
// every operation, which these assertions hold at compile time.
var (
	_ oci.PushOption    = oci.RegistryOption(nil)
	_ oci.DiffOption    = oci.RegistryOption(nil)
	_ oci.PullOption    = oci.RegistryOption(nil)
	_ oci.TagOption     = oci.RegistryOption(nil)
	_ oci.PromoteOption = oci.RegistryOption(nil)
	_ oci.ListOption    = oci.RegistryOption(nil)
	_ oci.VerifyOption  = oci.RegistryOption(nil)
)

// as is the registry options as an operation's option type T.
func as[T any](opts []oci.RegistryOption) []T {
	out := make([]T, len(opts))
	for i, o := range opts {
		out[i] = any(o).(T)
	}
	return out
}

func (r *registryFlags) context(ctx context.Context) (context.Context, context.CancelFunc) {
	return timeoutContext(ctx, r.timeout)
}

// timeoutContext is ctx bounded by a --timeout flag's value; 0 or less is
// no bound.
func timeoutContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, timeout)
}

// outputFlag is -o for commands that print plain text or JSON.
type outputFlag string

func (o *outputFlag) bind(cmd *cobra.Command) {
	cmd.Flags().StringVarP((*string)(o), "output", "o", "", `output format: "" (plain) or "json"`)
}

func (o outputFlag) check() error {
	if o != "" && o != "json" {
		return formatError(string(o), `"json" or nothing`)
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
