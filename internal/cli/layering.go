package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/bootstrap"
	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
)

// stackFlag is -f, the stack file of render, lint and graph.
type stackFlag string

func (s *stackFlag) bind(cmd *cobra.Command) {
	cmd.Flags().StringVarP((*string)(s), "file", "f", "", "stack file (apiVersion fluxpack.dev/v1alpha1, kind Stack)")
}

func newRenderCmd(f *rootFlags) *cobra.Command {
	var (
		stack                                        stackFlag
		fleetFile                                    fleetFlag
		dir, outputs, secret, secretDir, receiverURL string
		verifyKey, verifyPolicy                      string
		verifyCerts                                  []string
		allowSecrets                                 bool
	)
	cmd := &cobra.Command{
		Use:   "render (-f STACK | --fleet FLEET) -d DIR [--outputs FILE] [--secret-file FILE | --secret-dir DIR]",
		Short: "Render a stack file as Flux manifests: one Kustomization per layer, the OCIRepository and the vars ConfigMap",
		Long: `Render builds the stack file and writes, to DIR: kustomization.yaml,
source.yaml (the stack's OCIRepository), layers/<layer>.yaml (a Flux
Kustomization per layer) and releases/<layer>/helmrelease.yaml for HelmRelease
layers. Every default is written out; the output is the same byte for byte on
every run.

For each spec.vars entry with an IaC outputs file (terraform/tofu output -json,
pulumi stack output --json, CloudFormation, tofu-controller, .env, YAML, JSON;
--outputs replaces the file of the stack's one vars entry), the plain outputs
become vars/configmap-<name>.yaml, listed in kustomization.yaml, which every
layer reads through spec.postBuild.substituteFrom. The sensitive outputs go to
a Secret of the same name, written only to --secret-file (mode 0600, outside
DIR: DIR is meant to be pushed, a plaintext Secret must not be; apply it out of
band or encrypt it with SOPS); without --secret-file they are left out, and
their names (never their values) are logged. An outputs file inside the
stack's folder (the folder push ships) is refused unless --allow-secrets:
keep it outside, as push refuses it too.

A stack with spec.wake also gets wake.yaml: a notification-controller
Provider, Alert and Receiver that request a reconcile of a layer's dependents
the moment it becomes Ready, so that stock Flux does not leave them polling
every --requeue-dependency (30s). They read the wake Secret (a token, and the
Receiver's URL, which holds a digest of the token), which goes to
--secret-file like the vars Secret; rendering again keeps its token.
--receiver-url says where notification-controller reaches its webhook receiver
(default: the stack's wake.receiverURL, else
http://webhook-receiver.flux-system.svc.cluster.local). Without the Secret in
the cluster the layers poll, as without wake.

A stack whose source verifies signatures (source.verify: {provider: cosign,
secretRef: {name: cosign-pub}}) makes source-controller refuse an artifact
that is unsigned, signed by another key or moved since signing; --verify-key
cosign.pub writes the Secret it names, holding the key as cosign.pub, to
--secret-file: it must be in the cluster before the artifact, never in it.
For source.verify {provider: notation, …}, --verify-cert ca.crt (repeatable)
writes the Secret holding the certificates (ca.crt, or ca-0.crt, … one
certificate a key, as source-controller reads the first of each) and
trustpolicy.json: --verify-trust-policy's file, or a strict policy for the
source's repository trusting those certificates.

With --fleet, every cluster of the fleet file is rendered, each to
DIR/<cluster>/ as above (its own OCIRepository, vars ConfigMap, wake), each
cluster's Secrets to --secret-dir/<cluster>.secret.yaml; every cluster is
rendered in memory before any is written.

DIR is replaced atomically, and only if it is empty or holds a previous render.
A stack with any problem (unknown field, invalid name, cycle, unknown
dependency, missing path, unreadable outputs) is refused with every problem
listed, and nothing is written. Prints the files written.`,
		Example: `  fluxpack render -f platform/stack.yaml -d platform/flux
  terraform output -json > outputs.json
  fluxpack render -f platform/stack.yaml --outputs outputs.json --secret-file ../cluster-vars.secret.yaml -d platform/flux
  fluxpack render --fleet platform/fleet.yaml --secret-dir ../secrets -d out`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var verify []layering.RenderOption
			if verifyKey != "" {
				verify = append(verify, layering.WithVerifyKey(verifyKey))
			}
			switch {
			case len(verifyCerts) > 0:
				verify = append(verify, layering.WithVerifyNotation(verifyPolicy, verifyCerts...))
			case verifyPolicy != "":
				return fmt.Errorf("--verify-trust-policy needs --verify-cert")
			}
			switch {
			case (stack == "") == (fleetFile == ""):
				return fmt.Errorf("give a stack file with -f or a fleet file with --fleet")
			case fleetFile != "" && (outputs != "" || secret != ""):
				return fmt.Errorf("--outputs and --secret-file are per stack: a fleet names each cluster's outputs; use --secret-dir")
			case fleetFile != "":
				return renderFleet(cmd.Context(), cmd.OutOrStdout(), f.log, string(fleetFile), dir, secretDir, receiverURL, verify)
			case secretDir != "":
				return fmt.Errorf("--secret-dir is for --fleet; use --secret-file")
			}
			if !allowSecrets {
				if err := checkStackInputs(string(stack), outputs); err != nil {
					return err
				}
			}
			var opts []layering.RenderOption
			if outputs != "" {
				opts = append(opts, layering.WithOutputs(outputs))
			}
			if secret != "" {
				opts = append(opts, layering.WithSecretFile(secret))
			}
			if receiverURL != "" {
				opts = append(opts, layering.WithReceiverURL(receiverURL))
			}
			opts = append(opts, verify...)
			r, err := layering.RenderFile(cmd.Context(), string(stack), dir, opts...)
			if err != nil {
				return err
			}
			f.log.Info("rendered", "stack", r.Plan.Name, "layers", len(r.Plan.Layers), "dir", dir)
			if len(r.LeftOut) > 0 {
				f.log.Warn("sensitive outputs left out: give --secret-file to write their Secret", "outputs", strings.Join(r.LeftOut, ","))
			}
			if r.WakeLeftOut {
				f.log.Warn("wake Secret left out: give --secret-file to write it; without it the layers poll their dependencies")
			}
			var b strings.Builder
			for _, file := range r.Files {
				b.WriteString(file + "\n")
			}
			if r.SecretFile != "" {
				b.WriteString(r.SecretFile + "\n")
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), b.String())
			return err
		},
	}
	stack.bind(cmd)
	fleetFile.bind(cmd)
	cmd.Flags().StringVarP(&dir, "output-dir", "d", "", "directory to write the manifests to")
	cmd.Flags().StringVar(&secretDir, "secret-dir", "", "with --fleet: directory to write each cluster's Secrets to, outside the output directory")
	cmd.Flags().StringVar(&outputs, "outputs", "", "IaC outputs file for the stack's vars entry, instead of the one the stack names")
	cmd.Flags().StringVar(&secret, "secret-file", "", "file to write the vars Secret (sensitive outputs) and the wake Secret to, outside the output directory")
	cmd.Flags().StringVar(&verifyKey, "verify-key", "", "cosign public key (PEM) whose Secret, named by the stack's source.verify.secretRef, goes to --secret-file")
	cmd.Flags().StringArrayVar(&verifyCerts, "verify-cert", nil, "notation CA certificate (PEM) for the Secret of the stack's source.verify.secretRef, to --secret-file (repeatable)")
	cmd.Flags().StringVar(&verifyPolicy, "verify-trust-policy", "", "notation trust policy for that Secret (default: strict, the source's repository, the --verify-cert certificates)")
	cmd.Flags().StringVar(&receiverURL, "receiver-url", "", "where notification-controller reaches its webhook receiver, for the wake Secret of a stack with spec.wake")
	cmd.Flags().BoolVar(&allowSecrets, "allow-secrets", false, "render even when an IaC outputs file lies inside the stack's folder, which push ships")
	_ = cmd.MarkFlagRequired("output-dir")
	refuseOldOutput(cmd, "output-dir")
	return cmd
}

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
	fs.StringArrayVar(&r.helmfiles, "helmfile", nil, "a helmfile a bootstrap step syncs before Flux: its releases' CRDs and webhooks exist first (repeatable; default for ENTRY: helmfile.yaml or helmfile.d/*.yaml at the repository's root, and helmfile.yaml, helmfile/*.yaml or helmfile.d/*.yaml in the bootstrap/ folders from ENTRY up to the root)")
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

// entryLintOptions are lintOptions for a repository's entry point, with
// the configuration file and the bootstrap helmfiles found at the
// repository's root unless given or turned off.
func (r *repoFlags) entryLintOptions(entry string) ([]lint.Option, error) {
	root := r.root
	if root == "" {
		var err error
		if root, err = fluxrepo.Root(entry); err != nil {
			return nil, err
		}
	}
	opts, err := r.configOptions(root)
	if err != nil {
		return nil, err
	}
	opts = append(opts, r.lintOptions()...)
	if r.noHelmfile {
		return opts, nil
	}
	if len(r.helmfiles) == 0 {
		if found := bootstrap.Helmfiles(root, entry); len(found) > 0 {
			opts = append(opts, lint.WithHelmfile(found...))
		}
	}
	if len(r.bootstrapDirs) == 0 {
		if found := bootstrap.Kustomizations(root, entry); len(found) > 0 {
			opts = append(opts, lint.WithBootstrapKustomization(found...))
		}
	}
	if found := bootstrap.Manifests(root, entry); len(found) > 0 {
		opts = append(opts, lint.WithBootstrapManifests(found...))
	}
	if found := bootstrap.Namespaces(root, entry); len(found) > 0 {
		opts = append(opts, lint.WithBootstrapNamespaces(found...))
	}
	return opts, nil
}

// configOptions reads --config, or the configuration file in dir when
// there is one.
func (r *repoFlags) configOptions(dir string) ([]lint.Option, error) {
	file := r.config
	if file == "" {
		file = filepath.Join(dir, lint.ConfigFile)
		if _, err := os.Stat(file); err != nil {
			return nil, nil
		}
	}
	c, err := lint.LoadConfig(file)
	if err != nil {
		return nil, err
	}
	return c.Options()
}

func (r *repoFlags) options() ([]fluxrepo.Option, error) {
	var opts []fluxrepo.Option
	if r.root != "" {
		opts = append(opts, fluxrepo.WithRoot(r.root))
	}
	for _, s := range r.sources {
		ref, dir, ok := strings.Cut(s, "=")
		if !ok {
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

func newLintCmd(f *rootFlags) *cobra.Command {
	var (
		stack     stackFlag
		fleetFile fleetFlag
		repo      repoFlags
		charts    chartFlags
		out       outputFlag
	)
	cmd := &cobra.Command{
		Use:   "lint [ENTRY | -f STACK | --fleet FLEET]",
		Short: "Find the orders that race, in a stack file or in the Flux repository a cluster runs",
		Long: `Lint reads every layer's manifests (the build kustomize-controller would do)
and reports, with the layer, the object and file:line:

  graph            unknown dependency, cycle, duplicate or invalid name
  path             a layer's path is missing or does not build
  source           a layer's source cannot be read offline (its objects are unknown)
  crd-order        a custom resource whose CRD is not in a layer applied before it
  webhook-order    a custom resource not behind the operator serving its webhook
  operator-wait    an operator layer without wait or health checks
  namespace-order  an object in a namespace no layer applied before it creates
  crd-prune        prune: true on a layer holding CRDs
  helm-crds        a HelmRelease installing CRDs in the layer that uses them
  chart            a HelmRelease whose chart does not render, as helm-controller would fail
  health-check     a health check on an object no layer (applied before) creates
  substitute-from  a substituteFrom source that nothing creates, or that races the layer
  no-postbuild     a ${var} of the platform's variables (one a postBuild provides,
                   or substitutes in other layers) in a layer without postBuild
  variables        a ${var} Flux would fail on or retype (package substitute's
                   checks), against the layer's own postBuild sources
  dual-owner       an object two layers apply: they fight over it, a dependsOn
                   on one does not hold for it, and either's prune deletes it
  cross-namespace-ref  with --no-cross-namespace-refs: a Kustomization's or
                   HelmRelease's source in another namespace, which the
                   locked-down controllers refuse
  merge            (a hint) layers that could be one Kustomization with no
                   race: kustomize-controller applies CRDs, Namespaces and
                   ClusterRoles first and waits until CRDs are established,
                   so a dependsOn to such a layer (or to one nobody waits
                   for) only costs time: up to --requeue-dependency (30s in
                   stock Flux) per edge of the critical path

ENTRY is a Flux entry point: the folder (or file) kustomize-controller
applies for a cluster, typically clusters/<name>. Lint builds it as Flux
does, follows every Kustomization's spec.path in its source, recursively,
and lints the whole tree; the repository itself is the source
GitRepository/flux-system/flux-system (--source maps others), and objects
made outside it, such as Terraform's ConfigMap of cluster variables, are
declared with --external. With -f, lint reads a fluxpack stack file;
--external adds to its spec.external, and --root and --source, which say how
to read a repository, are refused. With --fleet, lint reads a fleet file and
lints every cluster's stack: a finding all clusters share is printed once
("all clusters: …"), the others with their cluster ("cluster prod: …").

HelmReleases' charts are rendered as helm-controller renders them (values
merged in its order, post-renderers) when lint can have them: a chart folder in
a source it reads, one of the --charts folders, or with --charts online its
OCI registry (pulled with the registry flags); their CRDs, webhooks and
namespaces count for every rule. A chart it cannot have falls back on a table
of well-known operators (--operator adds to it), and findings that rely on it
say the webhook is assumed.

A problem found at several places (a ${var} nothing sets, used in many objects;
one custom resource per namespace applied before its CRD) is one finding, at
its first place, with every place listed under it, file:line and object ("places"
with -o json).

Lint reads files only, but for the charts --charts online pulls;
kustomizations pointing at URLs are findings, not fetched. Hints (merge) are
printed after the findings, marked "hint:" (severity "hint" with -o json), and
do not fail lint. Each source lint could not read follows the findings, once,
with why and the layers it leaves unchecked ("not checked (source): …"), and
with --sources online or --charts online each chart it could not fetch.
Whatever the result, stderr
gets one summary line (what was
found, how much could be checked) and nothing else: logs, such as the files
left out as Flux leaves them out, only with --debug. On a terminal the
findings are coloured (file:line bold, the rule red for an error, yellow for a
warning, cyan for a hint); $NO_COLOR or TERM=dumb turns that off. Exit 0 clean or only
hints, 1 findings, 2 an input that cannot be read.`,
		Example: `  fluxpack lint clusters/production
  fluxpack lint clusters/production --external ConfigMap/flux-system/cluster-vars -o json
  fluxpack lint -f platform/stack.yaml --charts charts/`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			if fleetFile != "" && (stack != "" || len(args) > 0) {
				return fmt.Errorf("give one of ENTRY, -f STACK and --fleet FLEET")
			}
			var entry string
			if fleetFile == "" {
				var err error
				if entry, err = stackOrEntry(stack, args); err != nil {
					return err
				}
			}
			ctx, chartOpts, done, err := charts.lintOptions(cmd.Context(), f.log)
			if err != nil {
				return err
			}
			defer done()
			if fleetFile != "" {
				opts, err := repo.stackLintOptions()
				if err != nil {
					return err
				}
				cmd.SetContext(ctx)
				return lintFleet(cmd, string(fleetFile), out, append(opts, chartOpts...))
			}
			var rep *lint.Report
			if entry != "" {
				opts, err := repo.options()
				if err != nil {
					return err
				}
				lintOpts, err := repo.entryLintOptions(entry)
				if err != nil {
					return err
				}
				opts = append(opts, charts.readOptions()...)
				if f.debug {
					// What the read leaves out as Flux does (symlinks, say)
					// is a log: stderr holds the summary line alone
					// unless --debug.
					opts = append(opts, fluxrepo.WithLogger(f.log))
				}
				rep, err = lint.Tree(ctx, entry, opts, append(chartOpts, lintOpts...)...)
				if err != nil {
					return err
				}
			} else {
				opts, err := repo.stackLintOptions()
				if err != nil {
					return err
				}
				cfgOpts, err := repo.configOptions(filepath.Dir(string(stack)))
				if err != nil {
					return err
				}
				if rep, err = lint.File(ctx, string(stack), slices.Concat(opts, chartOpts, cfgOpts, repo.lintOptions())...); err != nil {
					return err
				}
			}
			if out == "json" {
				if err := writeJSON(cmd.OutOrStdout(), rep); err != nil {
					return err
				}
			} else {
				var b strings.Builder
				color := useColor(cmd.OutOrStdout())
				for _, fd := range rep.Findings {
					b.WriteString(findingLine("", fd, color))
				}
				// The sources lint could not read, and why, once each
				// (the summary says only how many layers they leave
				// unchecked); the charts too when it fetched them.
				for _, c := range rep.Coverage {
					if c.Cause != lint.CoverageSource && !charts.fetches() {
						continue
					}
					for _, why := range c.Reasons() {
						b.WriteString("not checked (" + c.Cause + "): " + why + "\n")
					}
				}
				if _, err := fmt.Fprint(cmd.OutOrStdout(), b.String()); err != nil {
					return err
				}
			}
			// One summary line on stderr, findings or not: what was
			// found, and how much of the platform lint could check.
			if rep.Failing() > 0 {
				return &FindingError{Msg: rep.Summary()}
			}
			_, err = fmt.Fprintln(cmd.ErrOrStderr(), "fluxpack: "+rep.Summary())
			return err
		},
	}
	stack.bind(cmd)
	fleetFile.bind(cmd)
	repo.bind(cmd)
	repo.bindLint(cmd)
	charts.bind(cmd)
	out.bind(cmd)
	return cmd
}

func newGraphCmd(*rootFlags) *cobra.Command {
	var (
		stack             stackFlag
		repo              repoFlags
		format, oldFormat string
	)
	cmd := &cobra.Command{
		Use:   "graph [ENTRY | -f STACK] [-o tree|mermaid|dot|json]",
		Short: "Draw the layers of a stack file or of a cluster's Flux repository, how each becomes Ready, and the critical path",
		Long: `Graph draws the dependency DAG of a stack file (-f) or of the Flux
Kustomizations of a cluster's repository (ENTRY, as lint reads it): each layer
with its kind (Kustomization or HelmRelease) and how it becomes Ready (wait,
health checks, no wait), the Kustomization that applies it (dashed), and the
critical path: the longest chain of layers that become Ready one after
another, with what its dependsOn edges cost a bootstrap in stock Flux: up to
--requeue-dependency (30s) each, as kustomize-controller looks at a
Kustomization whose dependencies are not Ready again only after that long
(fluxpack flux-patch shortens it, where you may change Flux).

-o chooses the format (--format is its deprecated spelling):

  tree     the bootstrap order from the top: each layer that depends on none,
           and below a layer those that wait for it, each drawn under the
           dependency it waits for last (default)
  mermaid  a flowchart that renders on GitHub (critical path in red)
  dot      Graphviz
  json     the layers (kind, how each becomes Ready, dependsOn, the layer
           that applies it) and the critical path, for programs

--external, --root and --source read a repository (ENTRY); with -f they are
refused.`,
		Example: `  fluxpack graph clusters/production -o mermaid
  fluxpack graph -f platform/stack.yaml -o dot
  fluxpack graph -f platform/stack.yaml -o json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fs := cmd.Flags()
			if fs.Changed("format") {
				if fs.Changed("output") {
					return fmt.Errorf("give -o/--output only: --format is its deprecated spelling")
				}
				fmt.Fprintln(cmd.ErrOrStderr(), "Flag --format has been deprecated, use -o/--output")
				format = oldFormat
			}
			f, err := layering.ParseGraphFormat(format)
			if err != nil {
				return formatError(format, formatNames())
			}
			entry, err := stackOrEntry(stack, args)
			if err != nil {
				return err
			}
			var out []byte
			if entry != "" {
				opts, err := repo.options()
				if err != nil {
					return err
				}
				out, err = fluxrepo.Graph(cmd.Context(), entry, f, opts...)
				if err != nil {
					return err
				}
			} else {
				if err := repo.notForStack(false); err != nil {
					return err
				}
				if out, err = layering.GraphFile(string(stack), f); err != nil {
					return err
				}
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	stack.bind(cmd)
	repo.bind(cmd)
	cmd.Flags().StringVarP(&format, "output", "o", string(layering.GraphTree), "output format: "+formatNames())
	cmd.Flags().StringVar(&oldFormat, "format", "", "deprecated: use -o/--output")
	_ = cmd.Flags().MarkHidden("format")
	return cmd
}

// formatNames lists graph's formats.
func formatNames() string {
	var s []string
	for _, f := range layering.GraphFormats() {
		s = append(s, string(f))
	}
	return strings.Join(s, ", ")
}
