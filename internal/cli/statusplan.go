package cli

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/fluxpack/fluxpack/fleet"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
	"github.com/fluxpack/fluxpack/stackfile"
	"github.com/fluxpack/fluxpack/status"
)

// stackTarget is what status -f STACK and status --fleet FLEET --cluster
// NAME lay the cluster out along: a stack file, or one cluster of a fleet.
type stackTarget struct {
	stack   stackFlag
	fleet   fleetFlag
	cluster string
}

func (s *stackTarget) set() bool { return s.stack != "" || s.fleet != "" }

// check refuses what does not name one stack.
func (s *stackTarget) check(args []string) error {
	switch {
	case s.stack != "" && s.fleet != "":
		return fmt.Errorf("give -f STACK or --fleet FLEET --cluster NAME, not both")
	case s.set() && len(args) > 0:
		return fmt.Errorf("give ENTRY, -f STACK or --fleet FLEET --cluster NAME, not two of them")
	case s.fleet != "" && s.cluster == "":
		return fmt.Errorf("--fleet needs --cluster: the cluster of the fleet the kubeconfig reaches")
	case s.fleet == "" && s.cluster != "":
		return fmt.Errorf("--cluster is for --fleet")
	}
	return nil
}

// builder loads the stack file, or resolves the fleet's cluster (its
// layers off, overridden and added).
func (s *stackTarget) builder() (*layering.Builder, error) {
	if s.stack != "" {
		return stackfile.Load(string(s.stack))
	}
	f, err := fleet.Load(string(s.fleet))
	if err != nil {
		return nil, err
	}
	return f.Resolve(s.cluster)
}

// watcherOptions are the status options of a stack: its layers as the
// plan, and lint's findings on it (as fluxpack lint -f, or for one cluster
// lint --fleet, finds them) as the explainer.
func (s *stackTarget) watcherOptions(ctx context.Context, repo *repoFlags, log *slog.Logger) ([]status.Option, error) {
	b, err := s.builder()
	if err != nil {
		return nil, err
	}
	opts, err := repo.stackLintOptions()
	if err != nil {
		return nil, err
	}
	var rep *lint.Report
	if s.stack != "" {
		rep, err = lint.File(ctx, string(s.stack), slices.Concat(opts, repo.lintOptions(), []lint.Option{lint.WithDiscovery(repo.discovery())})...)
	} else {
		rep, err = lint.Stack(ctx, b, "", slices.Concat(opts, repo.lintOptions())...)
	}
	if err != nil {
		return nil, fmt.Errorf("linting the stack: %w", err)
	}
	p, _ := b.Draft() // what Build would refuse is among lint's findings
	log.Info("linted the stack to explain failures with its findings", "layers", len(p.Layers), "findings", len(rep.Findings))
	return []status.Option{status.WithPlan(planned(p)...), status.WithExplainer(findingsExplainer(rep.Findings))}, nil
}

// planned are the Kustomizations of a plan, as status lays them out.
func planned(p *layering.Plan) []status.Planned {
	out := make([]status.Planned, 0, len(p.Layers))
	for _, l := range p.Layers {
		k := l.Kustomization
		if k == nil {
			continue
		}
		pl := status.Planned{Ref: status.Ref{Kind: status.KindKustomization, Namespace: k.Namespace, Name: k.Name}}
		for _, d := range k.Spec.DependsOn {
			ns := d.Namespace
			if ns == "" {
				ns = k.Namespace
			}
			pl.DependsOn = append(pl.DependsOn, ns+"/"+d.Name)
		}
		out = append(out, pl)
	}
	return out
}

// watcher builds the status watcher for the stack: the cluster from c (for
// a fleet's cluster without --context, the kubeconfig context named as
// it, when there is one), the stack's plan and lint's findings.
func (s *stackTarget) watcher(ctx context.Context, c clusterFlags, repo *repoFlags, log *slog.Logger) (*status.Watcher, error) {
	var err error
	if s.fleet != "" && c.context == "" {
		if c, err = c.forFleetCluster(s.cluster, "", "context", true); err != nil {
			return nil, err
		}
	}
	cfg, err := c.restConfig()
	if err != nil {
		return nil, err
	}
	opts, err := s.watcherOptions(ctx, repo, log)
	if err != nil {
		return nil, err
	}
	if c.namespace != "" {
		opts = append(opts, status.WithNamespace(c.namespace))
	}
	return status.New(cfg, opts...)
}
