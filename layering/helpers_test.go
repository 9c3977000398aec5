package layering_test

import kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"

func kustomizeRef(kind, name string) kustomizev1.SubstituteReference {
	return kustomizev1.SubstituteReference{Kind: kind, Name: name}
}
