package lint

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/fluxpack/fluxpack/layering"
)

// FleetReport is the lint of every cluster of a fleet: the findings all
// clusters share once, the rest per cluster.
type FleetReport struct {
	// Shared are the findings every cluster has.
	Shared []Finding `json:"shared"`
	// Clusters are each cluster's report without the shared findings, in
	// the fleet's order.
	Clusters []ClusterReport `json:"clusters"`
}

// ClusterReport is one cluster's part of a FleetReport.
type ClusterReport struct {
	Cluster string `json:"cluster"`
	*Report
}

// Findings counts every finding, the shared ones once.
func (r *FleetReport) Findings() int {
	n := len(r.Shared)
	for _, c := range r.Clusters {
		n += len(c.Report.Findings)
	}
	return n
}

// Failing counts the findings that fail lint (Finding.Fails), the shared
// ones once: Findings less the hints.
func (r *FleetReport) Failing() int {
	n := failing(r.Shared)
	for _, c := range r.Clusters {
		n += c.Report.Failing()
	}
	return n
}

// Summary is the report in one line: "2 findings in 3 clusters (and 1
// hint)", the shared findings counted once.
func (r *FleetReport) Summary() string {
	return findingsIn(r.Failing(), r.Findings()-r.Failing(), fmt.Sprintf("%d cluster%s", len(r.Clusters), plural(len(r.Clusters), "", "s")))
}

// Clusters is what Fleet lints: a fleet of package fleet (*fleet.Fleet),
// one stack resolved per cluster. lint takes it by these methods, not by
// the type, so that it does not link what package fleet pushes with.
type Clusters interface {
	Name() string
	// Err is the fleet's own problems, before any cluster is resolved.
	Err() error
	Clusters() []string
	// Resolve is the cluster's stack, its Build problems left to Stack.
	Resolve(cluster string) (*layering.Builder, error)
}

// Fleet lints every cluster's resolved stack as Stack lints a stack. A
// fleet that cannot be resolved (an unknown layer to disable, a bad
// artifact URL) is an error; what Lint finds in a cluster's stack is
// findings.
func Fleet(ctx context.Context, f Clusters, opts ...Option) (*FleetReport, error) {
	if err := f.Err(); err != nil {
		return nil, err
	}
	rep := &FleetReport{}
	var errs []error
	for _, name := range f.Clusters() {
		b, err := f.Resolve(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r, err := Stack(ctx, b, "", opts...)
		if err != nil {
			return nil, fmt.Errorf("fleet %q: cluster %q: %w", f.Name(), name, err)
		}
		rep.Clusters = append(rep.Clusters, ClusterReport{Cluster: name, Report: r})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	// A finding every cluster has is reported once.
	count := map[string]int{}
	for _, c := range rep.Clusters {
		seen := map[string]bool{}
		for _, fd := range c.Report.Findings {
			if k := fd.key(); !seen[k] {
				seen[k] = true
				count[k]++
			}
		}
	}
	if len(rep.Clusters) > 1 {
		for i, c := range rep.Clusters {
			var own []Finding
			for _, fd := range c.Report.Findings {
				if count[fd.key()] == len(rep.Clusters) {
					if i == 0 {
						rep.Shared = append(rep.Shared, fd)
					}
					continue
				}
				own = append(own, fd)
			}
			r := *c.Report
			r.Findings = slices.Clip(own)
			rep.Clusters[i].Report = &r
		}
	}
	if rep.Shared == nil {
		rep.Shared = []Finding{}
	}
	return rep, nil
}

// key is f as a fleet compares it across clusters: with every place.
func (f Finding) key() string {
	k := f.String()
	for _, p := range f.Places {
		k += "\n" + p.String()
	}
	return k
}
