module github.com/fluxpack/fluxpack

go 1.27.0

toolchain go1.27.4

// Build with the kustomize that kustomize-controller v1.10.1 and flux v2.9.5
// ship (kustomize v5.8.1), so offline previews match the controller byte for
// byte. kustomize-controller pins it with the same replace.
replace (
	sigs.k8s.io/kustomize/api => sigs.k8s.io/kustomize/api v0.21.1
	sigs.k8s.io/kustomize/kyaml => sigs.k8s.io/kustomize/kyaml v0.21.1
)

require (
	github.com/google/go-cmp v0.7.0
	github.com/google/go-containerregistry v0.22.1
	github.com/spf13/cobra v1.10.2
)

require (
	github.com/docker/docker-credential-helpers v0.9.5 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/sirupsen/logrus v1.10.2 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/tools v0.51.0 // indirect
)
