package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
)

// repoFlags read an existing Flux repository: the sources that map to
// local directories, the objects made outside it, where it starts.
type repoFlags struct {
	root               string
	sources            []string
	external           []string
	existingNamespaces []string
	existingGroups     []string
	existingWebhooks   []string
	helmfiles          []string
	bootstrapDirs      []string
	noHelmfile         bool
	noCrossNSRefs      bool
	noRemoteBases      bool
	config             string
}

func (r *repoFlags) bind(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&r.root, "root", "", "the repository's root (default: the nearest directory above ENTRY holding .git)")
	fs.StringArrayVar(&r.sources, "source", nil, "a Flux source that is a local directory: KIND/NAMESPACE/NAME=DIR (repeatable; GitRepository/flux-system/flux-system is the repository itself unless given)")
	fs.StringArrayVar(&r.external, "external", nil, "an object made outside the repository, such as Terraform's ConfigMap of cluster variables: KIND/NAMESPACE/NAME, or KIND/NAME (KIND//NAME) for one without a namespace, as lint prints it (repeatable)")
}

// bindLint adds the flags that say what exists before Flux, for lint.
func (r *repoFlags) bindLint(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&r.config, "config", "", "the lint configuration (kind LintConfig): what exists before Flux, charts, rule severities, suppressions with reasons (default: "+lint.ConfigFile+" at the repository's root, or beside the stack file)")
	fs.StringArrayVar(&r.existingNamespaces, "existing-namespace", nil, "a namespace that exists before Flux applies anything, made by IaC or a bootstrap step (repeatable)")
	fs.StringArrayVar(&r.existingGroups, "existing-api-group", nil, "an API group whose CRDs exist before Flux applies anything, installed by a bootstrap step such as helmfile (repeatable)")
	fs.StringArrayVar(&r.existingWebhooks, "existing-webhook", nil, "GROUP or GROUP/RESOURCE whose admission webhook serves before Flux applies anything (repeatable)")
	fs.StringArrayVar(&r.helmfiles, "helmfile", nil, "a helmfile a bootstrap step syncs before Flux: its releases' CRDs and webhooks exist first (repeatable; default for ENTRY: helmfile.yaml or helmfile.d/*.yaml at the repository's root, and helmfile.yaml, helmfile/*.yaml or helmfile.d/*.yaml, or their .yaml.gotmpl kin, in the bootstrap/ folders from ENTRY up to the root and in their step folders two levels down)")
	fs.StringArrayVar(&r.bootstrapDirs, "bootstrap-kustomization", nil, "a folder a bootstrap step applies with kustomize before Flux (kustomize build DIR | kubectl apply): its objects exist first (repeatable; default for ENTRY: the folders the repository's justfiles, Taskfiles, Makefiles and shell scripts at its root, in .taskfiles/, scripts/ and the bootstrap/ folders from ENTRY up to the root build with kustomize build, kubectl kustomize or kubectl apply -k (--kustomize))")
	fs.BoolVar(&r.noHelmfile, "no-helmfile", false, "do not look for a bootstrap step (helmfiles; the kustomize builds, kubectl apply -f of files and kubectl create namespace of the bootstrap scripts)")
	fs.BoolVar(&r.noCrossNSRefs, "no-cross-namespace-refs", false, "the controllers run with --no-cross-namespace-refs (multi-tenancy lockdown): a source in another namespace is a finding")
	fs.BoolVar(&r.noRemoteBases, "no-remote-bases", false, "kustomize-controller runs with --no-remote-bases: a remote resource in a kustomization is a finding (by default, a layer lint does not check)")
}

// lintOptions are what the flags say to lint of a repository or a stack:
// what exists before Flux.
func (r *repoFlags) lintOptions() []lint.Option {
	var opts []lint.Option
	if len(r.existingNamespaces) > 0 {
		opts = append(opts, lint.WithExistingNamespaces(r.existingNamespaces...))
	}
	if len(r.existingGroups) > 0 {
		opts = append(opts, lint.WithExistingAPIGroups(r.existingGroups...))
	}
	if len(r.existingWebhooks) > 0 {
		opts = append(opts, lint.WithExistingWebhooks(r.existingWebhooks...))
	}
	if len(r.helmfiles) > 0 {
		opts = append(opts, lint.WithHelmfile(r.helmfiles...))
	}
	if len(r.bootstrapDirs) > 0 {
		opts = append(opts, lint.WithBootstrapKustomization(r.bootstrapDirs...))
	}
	if r.noCrossNSRefs {
		opts = append(opts, lint.WithNoCrossNamespaceRefs())
	}
	if r.noRemoteBases {
		opts = append(opts, lint.WithNoRemoteBases())
	}
	return opts
}

// discovery is what lint looks for in a repository besides the flags.
func (r *repoFlags) discovery() lint.Discovery {
	return lint.Discovery{ConfigFile: r.config, NoBootstrap: r.noHelmfile,
		Helmfiles: len(r.helmfiles) > 0, BootstrapKustomizations: len(r.bootstrapDirs) > 0}
}

// entryLintOptions are lintOptions for a repository's entry point with
// what the repository says (lint.Discover), as lint.Tree takes them.
func (r *repoFlags) entryLintOptions(entry string) ([]lint.Option, error) {
	root := r.root
	if root == "" {
		var err error
		if root, err = fluxrepo.Root(entry); err != nil {
			return nil, err
		}
	}
	config, found, err := lint.Discover(root, entry, r.discovery())
	if err != nil {
		return nil, err
	}
	return slices.Concat(config, r.lintOptions(), found), nil
}

// configOptions reads --config, or the configuration file in dir when
// there is one.
func (r *repoFlags) configOptions(dir string) ([]lint.Option, error) {
	config, _, err := lint.Discover(dir, "", lint.Discovery{ConfigFile: r.config, NoBootstrap: true})
	return config, err
}

// options are the options of reading the repository: --root, then
// sourceOptions.
func (r *repoFlags) options() ([]fluxrepo.Option, error) {
	var opts []fluxrepo.Option
	if r.root != "" {
		opts = append(opts, fluxrepo.WithRoot(r.root))
	}
	more, err := r.sourceOptions()
	return append(opts, more...), err
}

// sourceOptions are --source and --external as read options. A source is
// cut at its first "=": a reference holds none, a directory may.
func (r *repoFlags) sourceOptions() ([]fluxrepo.Option, error) {
	var opts []fluxrepo.Option
	for _, s := range r.sources {
		ref, dir, ok := strings.Cut(s, "=")
		if !ok || ref == "" || dir == "" {
			return nil, fmt.Errorf("--source %q: want KIND/NAMESPACE/NAME=DIR", s)
		}
		sr, err := fluxrepo.ParseSourceRef(ref)
		if err != nil {
			return nil, fmt.Errorf("--source: %w", err)
		}
		opts = append(opts, fluxrepo.WithSource(sr, dir))
	}
	ext, err := r.externalRefs()
	if err != nil {
		return nil, err
	}
	if len(ext) > 0 {
		opts = append(opts, fluxrepo.WithExternal(ext...))
	}
	return opts, nil
}

func (r *repoFlags) externalRefs() ([]layering.ObjectRef, error) {
	var ext []layering.ObjectRef
	for _, e := range r.external {
		ref, err := layering.ParseObjectRef(e)
		if err != nil {
			return nil, fmt.Errorf("--external: %w", err)
		}
		ext = append(ext, ref)
	}
	return ext, nil
}

// stackLintOptions maps the flags to the options of linting a stack file
// (-f): --external adds to the stack's spec.external. --root and --source
// are refused, not ignored (see notForStack).
func (r *repoFlags) stackLintOptions() ([]lint.Option, error) {
	if err := r.notForStack(true); err != nil {
		return nil, err
	}
	ext, err := r.externalRefs()
	if err != nil || len(ext) == 0 {
		return nil, err
	}
	return []lint.Option{lint.WithExternal(ext...)}, nil
}

// notForStack refuses the flags that say how to read a Flux repository when
// the command reads a stack file instead: --root and --source (a stack's
// layers name their own sources, their paths relative to the file), and
// --external unless the command applies it to the stack (appliesExternal).
func (r *repoFlags) notForStack(appliesExternal bool) error {
	var given, why []string
	if r.root != "" {
		given = append(given, "--root")
	}
	if len(r.sources) > 0 {
		given = append(given, "--source")
	}
	if len(given) > 0 {
		why = append(why, "a stack file's layers name their own sources, and their paths are relative to the file")
	}
	if !appliesExternal && len(r.external) > 0 {
		given = append(given, "--external")
		why = append(why, "a stack file declares the objects made outside it in spec.external")
	}
	if len(given) == 0 {
		return nil
	}
	verb := "apply"
	if len(given) == 1 {
		verb = "applies"
	}
	return fmt.Errorf("%s %s to a Flux repository (ENTRY), not to a stack file (-f): %s", strings.Join(given, " and "), verb, strings.Join(why, "; "))
}

// stackOrEntry checks that a command got a stack file or an entry point,
// not both, and returns the entry point ("" for a stack file).
func stackOrEntry(stack stackFlag, args []string) (string, error) {
	switch {
	case stack != "" && len(args) > 0:
		return "", fmt.Errorf("give a stack file (-f) or a Flux entry point (%s), not both", args[0])
	case stack == "" && len(args) == 0:
		return "", fmt.Errorf("give a Flux entry point (the folder kustomize-controller applies for the cluster, such as clusters/production) or a stack file with -f")
	case len(args) > 0:
		return args[0], nil
	}
	return "", nil
}
