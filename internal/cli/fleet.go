package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/fleet"
	"github.com/fluxpack/fluxpack/lint"
	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/render"
)

// fleetFlag is --fleet, the fleet file of render, lint and push.
type fleetFlag string

func (s *fleetFlag) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar((*string)(s), "fleet", "", "fleet file (apiVersion fluxpack.dev/v1alpha1, kind Fleet): every cluster of it")
}

// renderFleet is render --fleet: out/<cluster>/ per cluster, each
// cluster's Secrets in secretDir.
func renderFleet(ctx context.Context, w io.Writer, log *slog.Logger, file, dir, secretDir, receiverURL string, verify []render.Option) error {
	f, err := fleet.Load(file)
	if err != nil {
		return err
	}
	var opts []render.Option
	if secretDir != "" {
		opts = append(opts, render.WithSecretDir(secretDir))
	}
	if receiverURL != "" {
		opts = append(opts, render.WithReceiverURL(receiverURL))
	}
	opts = append(opts, verify...)
	rs, err := fleet.Render(ctx, f, dir, opts...)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, r := range rs {
		log.Info("rendered", "cluster", r.Cluster, "layers", len(r.Plan.Layers), "dir", r.Dir)
		if len(r.LeftOut) > 0 {
			log.Warn("sensitive outputs left out: give --secret-dir to write their Secret", "cluster", r.Cluster, "outputs", strings.Join(r.LeftOut, ","))
		}
		if r.WakeLeftOut {
			log.Warn("wake Secret left out: give --secret-dir to write it; without it the layers poll their dependencies", "cluster", r.Cluster)
		}
		for _, p := range r.Files {
			b.WriteString(r.Cluster + "/" + p + "\n")
		}
		if r.SecretFile != "" {
			b.WriteString(r.SecretFile + "\n")
		}
	}
	_, err = fmt.Fprint(w, b.String())
	return err
}

// lintFleet is lint --fleet: the findings every cluster shares once, then
// each cluster's own.
func lintFleet(cmd *cobra.Command, file string, out outputFlag, opts []lint.Option) error {
	f, err := fleet.Load(file)
	if err != nil {
		return err
	}
	rep, err := lint.Fleet(cmd.Context(), f, opts...)
	if err != nil {
		return err
	}
	return writeLint(cmd, out, rep, rep.Summary(), rep.Failing(), func(b *strings.Builder, color bool) {
		for _, fd := range rep.Shared {
			b.WriteString(findingLine("all clusters: ", fd, color))
		}
		for _, c := range rep.Clusters {
			for _, fd := range c.Report.Findings {
				b.WriteString(findingLine("cluster "+c.Cluster+": ", fd, color))
			}
		}
	})
}

// pushFleet is push --fleet: a line per cluster (or JSON), exit 0 when
// every cluster is pushed or unchanged.
func pushFleet(cmd *cobra.Command, log *slog.Logger, file string, jobs int, out outputFlag, pushOpts []oci.PushOption, treeOpts []oci.TreeOption) error {
	f, err := fleet.Load(file)
	if err != nil {
		return err
	}
	opts := []fleet.Option{fleet.WithPushOptions(pushOpts...), fleet.WithTreeOptions(treeOpts...), fleet.WithLogger(log)}
	if jobs != 0 {
		opts = append(opts, fleet.Jobs(jobs))
	}
	res, err := fleet.Push(cmd.Context(), f, opts...)
	if res == nil {
		return err
	}
	for _, r := range res {
		if r.Status != fleet.Failed {
			warnUnrecorded(cmd.ErrOrStderr(), "the fleet's folder "+filepath.Dir(file), &oci.Result{Source: r.Source, Revision: r.Revision})
			break // one cluster says it for all: they share the checkout
		}
	}
	if out == "json" {
		if werr := writeJSON(cmd.OutOrStdout(), res); werr != nil {
			return werr
		}
	} else {
		var b strings.Builder
		for _, r := range res {
			switch r.Status {
			case fleet.Failed:
				fmt.Fprintf(&b, "%s failed: %s\n", r.Cluster, r.Error)
			default:
				repo := strings.TrimPrefix(r.URL, oci.Scheme)
				if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
					repo = repo[:i] // host/repository, without the tag
				}
				fmt.Fprintf(&b, "%s %s %s@%s\n", r.Cluster, r.Status, oci.RedactURL(repo), r.Digest)
			}
		}
		if _, werr := fmt.Fprint(cmd.OutOrStdout(), b.String()); werr != nil {
			return werr
		}
	}
	if err != nil {
		var failed int
		for _, r := range res {
			if r.Status == fleet.Failed {
				failed++
			}
		}
		return fmt.Errorf("%d of %d clusters failed (each line says why)", failed, len(res))
	}
	return nil
}
