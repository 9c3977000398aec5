package layering

import (
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
)

// FromKustomization sets every field of a layer from a Flux Kustomization's
// spec, as Build would emit it back: path, dependsOn (names of the stack's
// layers, with readyExpr), interval, retryInterval, timeout, prune, wait,
// deletionPolicy, health checks and their expressions, targetNamespace,
// postBuild, components, patches, commonMetadata, force, suspend, sourceRef,
// serviceAccountName, decryption, images, namePrefix and nameSuffix (a
// sourceRef without a kind leaves the stack's). A
// repository's Kustomization becomes a stack layer with it (package
// fluxrepo's Import).
func FromKustomization(spec kustomizev1.KustomizationSpec) StepOption {
	return funcStep(func(s *step) {
		spec := *spec.DeepCopy()
		path := spec.Path
		s.path = &path
		for _, d := range spec.DependsOn {
			s.dependsOn = append(s.dependsOn, d.Name)
			if d.ReadyExpr != "" {
				if s.readyExpr == nil {
					s.readyExpr = map[string]string{}
				}
				s.readyExpr[d.Name] = d.ReadyExpr
			}
		}
		iv := spec.Interval.Duration
		s.interval = &iv
		if r := spec.RetryInterval; r != nil {
			d := r.Duration
			s.retryInterval = &d
		}
		if t := spec.Timeout; t != nil {
			d := t.Duration
			s.timeout = &d
		}
		s.prune, s.wait = &spec.Prune, &spec.Wait
		s.deletionPolicy = spec.DeletionPolicy
		s.healthChecks, s.healthCheckExprs = spec.HealthChecks, spec.HealthCheckExprs
		s.targetNamespace = spec.TargetNamespace
		if pb := spec.PostBuild; pb != nil {
			s.substitute, s.substituteFrom, s.substituteStrategy = pb.Substitute, pb.SubstituteFrom, pb.SubstituteStrategy
		}
		s.components, s.patches, s.commonMetadata, s.force = spec.Components, spec.Patches, spec.CommonMetadata, spec.Force
		s.suspend = spec.Suspend
		if ref := spec.SourceRef; ref.Kind != "" {
			s.sourceRef = &ref
		}
		s.serviceAccountName, s.decryption, s.images = spec.ServiceAccountName, spec.Decryption, spec.Images
		s.namePrefix, s.nameSuffix = spec.NamePrefix, spec.NameSuffix
	})
}
