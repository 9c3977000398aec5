package status_test

import (
	"context"
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
