package lint

import (
	"os"
	"path/filepath"

	"github.com/fluxpack/fluxpack/bootstrap"
)

// Discovery says what Discover looks for in a repository.
type Discovery struct {
	// ConfigFile is the configuration to read; "" reads ConfigFile at
	// the repository's root when there is one.
	ConfigFile string
	// NoBootstrap turns off the search for the bootstrap step (helmfiles,
	// the kustomize builds, `kubectl apply -f` of files and `kubectl
	// create namespace` of the bootstrap scripts: package bootstrap).
	NoBootstrap bool
	// Helmfiles and BootstrapKustomizations given by the caller replace
	// those Discover would find.
	Helmfiles, BootstrapKustomizations bool
}

// Discover returns the options a repository at root says for linting its
// entry point entry, as `fluxpack lint ENTRY` takes them: its
// configuration file (d.ConfigFile, or ConfigFile at root), then what its
// bootstrap step makes before Flux, found by package bootstrap (unless
// d.NoBootstrap): helmfiles and kustomize builds (unless the caller gives
// its own), files applied with kubectl, namespaces created. Give the
// caller's own options after the configuration's and before the
// bootstrap's: Tree does.
func Discover(root, entry string, d Discovery) (conf, found []Option, err error) {
	file := d.ConfigFile
	if file == "" {
		file = filepath.Join(root, ConfigFile)
		if _, err := os.Stat(file); err != nil {
			file = ""
		}
	}
	if file != "" {
		c, err := LoadConfig(file)
		if err != nil {
			return nil, nil, err
		}
		if conf, err = c.Options(); err != nil {
			return nil, nil, err
		}
	}
	if d.NoBootstrap {
		return conf, nil, nil
	}
	if !d.Helmfiles {
		if fs := bootstrap.Helmfiles(root, entry); len(fs) > 0 {
			found = append(found, WithHelmfile(fs...))
		}
	}
	if !d.BootstrapKustomizations {
		if fs := bootstrap.Kustomizations(root, entry); len(fs) > 0 {
			found = append(found, WithBootstrapKustomization(fs...))
		}
	}
	var plain []string
	for _, m := range bootstrap.Applied(root, entry) {
		if len(m.Through) > 0 {
			found = append(found, WithFilteredBootstrapManifest(m.Path, m.Through...))
		} else {
			plain = append(plain, m.Path)
		}
	}
	if len(plain) > 0 {
		found = append(found, WithBootstrapManifests(plain...))
	}
	if ns := bootstrap.Namespaces(root, entry); len(ns) > 0 {
		found = append(found, WithBootstrapNamespaces(ns...))
	}
	return conf, found, nil
}

// WithDiscovery says what Tree looks for in the repository (Discover).
func WithDiscovery(d Discovery) Option {
	return funcLint(func(c *config) error {
		c.discovery = d
		return nil
	})
}

// WithoutDiscovery makes Tree lint with the options given only: no
// configuration file, no bootstrap step.
func WithoutDiscovery() Option {
	return funcLint(func(c *config) error {
		c.noDiscovery = true
		return nil
	})
}
