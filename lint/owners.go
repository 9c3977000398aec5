package lint

import (
	"strings"
)

// checkOwners: an object two layers of one cluster apply (FL-G003's dual
// ownership). Both Kustomizations apply their version in turn and label
// it as theirs, the dependsOn of either does not hold for it (the other
// applies it without waiting), and when either stops applying it, its
// prune deletes the object the other still wants (RuleDualOwner). Objects
// kustomize-controller only creates when missing (ssa: IfNotPresent) or
// leaves alone (reconcile: disabled), a chart's objects (Helm owns them),
// and names holding a ${var} (told apart only by substitution) are left
// out.
func (l *linter) checkOwners() {
	type owner struct {
		ly *lintLayer
		o  *object
	}
	total := 0
	for _, ly := range l.layers {
		total += len(ly.objects)
	}
	// Each object's key, in the order first seen, with the layers
	// applying it: most have one, so the rest are kept apart.
	type owned struct {
		first owner
		more  []owner
	}
	byKey := make(map[string]int, total)
	all := make([]owned, 0, total)
	for _, ly := range l.layers {
		for _, o := range ly.objects {
			if o.release != nil || o.yielding || strings.Contains(o.Name, "${") || strings.Contains(o.Namespace, "${") {
				continue
			}
			ns := o.Namespace
			if ns == "" && !l.isClusterScoped(o) {
				ns = ly.Kustomization.Spec.TargetNamespace
			}
			key := l.clusterOf(ly) + "|" + o.group() + "/" + o.Kind + "/" + ns + "/" + o.Name
			if i, ok := byKey[key]; ok {
				last := all[i].first
				if n := len(all[i].more); n > 0 {
					last = all[i].more[n-1]
				}
				if last.ly != ly { // twice in one layer: kustomize refuses that itself
					all[i].more = append(all[i].more, owner{ly, o})
				}
				continue
			}
			byKey[key] = len(all)
			all = append(all, owned{first: owner{ly, o}})
		}
	}
	for _, ow := range all {
		if len(ow.more) == 0 {
			continue
		}
		owners := append([]owner{ow.first}, ow.more...)
		var layers []string
		for _, ow := range owners {
			layers = append(layers, ow.ly.Name)
		}
		last := owners[len(owners)-1]
		l.objFinding(RuleDualOwner, last.ly, last.o, "applied by layers %s: each Kustomization applies its own version in turn and takes ownership, a dependsOn on one of them does not hold for it (another applies it without waiting), and when the one that applied it last stops applying it or is deleted, its prune deletes it (kustomize-controller prunes what carries its own labels) while the others still list it; apply it from one layer",
			names(layers))
	}
}
