package status_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fluxpack/fluxpack/status"
)

// A bootstrap in the middle: crs fails on its webhook, apps waits on it
// and on the operator, which runs its health checks. The blocking layers
// come first, with the rule that explains the failure.
func Example() {
	dyn, disc := fakeClients(bootstrap()...) // in a program: status.New(restConfig)
	w, err := status.NewFromClients(dyn, disc, status.WithNamespace("flux-system"))
	if err != nil {
		panic(err)
	}
	snap, err := w.Snapshot(context.Background())
	if err != nil {
		panic(err)
	}
	for _, l := range snap.Layers {
		fmt.Println(strings.TrimSpace(fmt.Sprintf("%-10s %s %s%s", l.Name, l.State, l.Step, strings.Join(l.WaitingOn, ","))))
	}
	for _, b := range snap.Blocking() {
		fmt.Printf("blocking: %s (%s), holding %v", b.Name, b.State, b.Holds)
		if b.Explanation != nil {
			fmt.Printf(" [%s]", b.Explanation.Rule)
		}
		fmt.Println()
	}
	// Output:
	// namespaces Ready
	// crds       Ready
	// crs        Failed
	// extras     Suspended
	// operator   Reconciling health-checking
	// apps       WaitingOn flux-system/crs,flux-system/operator
	// blocking: crs (Failed), holding [flux-system/apps] [webhook-order]
	// blocking: operator (Reconciling), holding [flux-system/apps]
}

// Before promoting what a cluster runs, ask it once: the same bootstrap is
// not Ready on the artifact, and the error names what blocks it.
func ExampleWatcher_Require() {
	dyn, disc := fakeClients(bootstrap()...) // in a program: status.New(restConfig)
	w, err := status.NewFromClients(dyn, disc)
	if err != nil {
		panic(err)
	}
	_, err = w.Require(context.Background(), status.WithArtifact("oci://registry.example.com/platform:main", "sha256:1111111111111111111111111111111111111111111111111111111111111111"))
	var nr *status.NotReadyError
	if errors.As(err, &nr) {
		for _, b := range nr.Layers {
			fmt.Println(b.Ref, b.State)
		}
	}
	// Output:
	// Kustomization/flux-system/crs Failed
	// Kustomization/flux-system/operator Reconciling
}
