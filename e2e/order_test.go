//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A race a case is about is never left to timing: the case holds the slow
// side (the operator's pod, and with it its webhook server) until the
// controllers have done the fast side's part, which the test sees on a
// watch. A naive layout's dependent layer has then failed (it ran into the
// slow side); a fixed layout's has been seen waiting for its dependency
// (the slow side held it back). Only then does the slow side start, so
// both layouts run in the same forced order, whatever the machine's load.

// HoldUntil returns a channel that is closed the first time the
// Kustomization flux-system/name is seen in the state cond reports; pass it
// to RunGatedPods to hold pods until then. If the Kustomization is seen
// Ready before that, the order was not the one forced (it did not wait for
// what is held, nor run into it), and the cluster breaks: every wait of
// the test fails at once, saying so.
func (c *Cluster) HoldUntil(name string, cond func(*kustomizev1.Kustomization) bool) <-chan struct{} {
	c.t.Helper()
	hold := make(chan struct{})
	released := false
	c.WatchEach(&kustomizev1.KustomizationList{}, func(_ context.Context, obj client.Object) {
		k := obj.(*kustomizev1.Kustomization)
		if released || k.Namespace != fluxNamespace || k.Name != name {
			return
		}
		switch {
		case cond(k):
			released = true
			close(hold)
		case apimeta.IsStatusConditionTrue(k.Status.Conditions, meta.ReadyCondition):
			c.breakWith(fmt.Sprintf("Kustomization/%s/%s was Ready while the test held what it should wait for or run into: the order was not forced", fluxNamespace, name))
		}
	})
	return hold
}

// reconcileFailed reports whether a Kustomization is Ready=False for a
// failure (a reason other than the waiting ones): it ran into the race.
func reconcileFailed(k *kustomizev1.Kustomization) bool {
	ready := apimeta.FindStatusCondition(k.Status.Conditions, meta.ReadyCondition)
	return ready != nil && ready.Status == metav1.ConditionFalse && !slices.Contains(waitingReasons, ready.Reason)
}

// waitingForDependency reports whether a Kustomization is Ready=False
// because a dependency is not Ready: its dependsOn held it back.
func waitingForDependency(k *kustomizev1.Kustomization) bool {
	ready := apimeta.FindStatusCondition(k.Status.Conditions, meta.ReadyCondition)
	return ready != nil && ready.Status == metav1.ConditionFalse && ready.Reason == meta.DependencyNotReadyReason
}
