package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// TestFluxRepoCommands runs the commands that read a cluster's Flux
// repository (lint, graph, preview --cluster, import, import --argocd) on
// the fixture repositories of packages fluxrepo and argocd, and holds what
// they print in testdata/fluxrepo/<case>.golden. The libraries test what
// they find; this tests the flags that reach them, the exit codes and what
// goes to stdout and stderr. It also holds the repository flags given with
// a stack file (-f): --external is applied by lint, the rest refused.
func TestFluxRepoCommands(t *testing.T) {
	root := testutil.RepoRoot(t)
	repos := filepath.Join(root, "fluxrepo", "testdata", "repos")
	ph := filepath.Join(repos, "platform-hierarchy")
	phEntry := filepath.Join(ph, "clusters", "mycluster-0")
	fx := filepath.Join(repos, "fluxcd-example")
	mt := filepath.Join(repos, "multi-tenancy")
	ho := filepath.Join(repos, "helm-operators")
	mp := filepath.Join(repos, "many-places")
	argo := filepath.Join(root, "argocd", "testdata", "app-of-apps")
	tfVars := "ConfigMap/flux-system/eks-mycluster-0-vars"
	stack := filepath.Join("testdata", "stacks", "external", "stack.yaml")
	// The tenant's own repository, which multi-tenancy syncs from: mapped
	// to a local directory with --source.
	devTeam := t.TempDir()
	testutil.WriteFiles(t, devTeam, map[string]string{
		"production/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: apps\n",
	})

	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // a substring stderr must hold
		same   string // the library's golden file (from the repository's root) stdout must equal
	}{
		// lint ENTRY
		{name: "lint-entry", args: []string{"lint", phEntry, "--root", ph, "--external", tfVars}},
		{name: "lint-entry-undeclared", args: []string{"lint", phEntry, "--root", ph}, code: cli.ExitFinding, stderr: "1 finding in 9 layers", same: "fluxrepo/testdata/platform-hierarchy-undeclared-lint.golden"},
		{name: "lint-entry-json", args: []string{"lint", phEntry, "--root", ph, "-o", "json"}, code: cli.ExitFinding},
		{name: "lint-entry-other-source", args: []string{"lint", filepath.Join(mt, "clusters", "production"), "--root", mt}, stderr: "checked 3 of 4 layers fully; 1 behind a source lint could not read"}, // stdout: the findings, then the source not read and why
		{name: "lint-entry-source", args: []string{"lint", filepath.Join(mt, "clusters", "production"), "--root", mt, "--source", "GitRepository/apps/dev-team=" + devTeam}},
		{name: "lint-entry-bad-source", args: []string{"lint", phEntry, "--root", ph, "--source", "GitRepository/apps/dev-team"}, code: cli.ExitError, stderr: "want KIND/NAMESPACE/NAME=DIR"},
		{name: "lint-entry-bad-external", args: []string{"lint", phEntry, "--root", ph, "--external", "eks-vars"}, code: cli.ExitError, stderr: "--external: "},
		{name: "lint-entry-missing", args: []string{"lint", filepath.Join(ph, "clusters", "nope"), "--root", ph}, code: cli.ExitError},
		{name: "lint-entry-and-stack", args: []string{"lint", phEntry, "-f", stack}, code: cli.ExitError, stderr: "not both"},
		{name: "lint-nothing", args: []string{"lint"}, code: cli.ExitError, stderr: "give a Flux entry point"},
		// graph ENTRY
		{name: "graph-entry-mermaid", args: []string{"graph", filepath.Join(fx, "clusters", "production"), "--root", fx, "-o", "mermaid"}, same: "fluxrepo/testdata/fluxcd-example-production-graph-mermaid.golden"},
		{name: "graph-entry-tree", args: []string{"graph", phEntry, "--root", ph}, same: "fluxrepo/testdata/platform-hierarchy-graph-tree.golden"},
		{name: "graph-entry-dot", args: []string{"graph", filepath.Join(mt, "clusters", "production"), "--root", mt, "-o", "dot"}},
		// preview --cluster ENTRY HelmRelease/NAMESPACE/NAME: what
		// helm-controller installs, Secret values redacted unless asked.
		{name: "preview-release", args: []string{"preview", "--cluster", filepath.Join(ho, "clusters", "naive"), "--root", ho, "HelmRelease/flux-system/external-secrets"}},
		{name: "preview-release-secret", args: []string{"preview", "--cluster", filepath.Join(ho, "clusters", "naive"), "--root", ho, "HelmRelease/external-secrets", "--vars-from", filepath.Join("testdata", "fluxrepo", "token-secret.yaml")}},
		{name: "preview-release-show-secrets", args: []string{"preview", "--cluster", filepath.Join(ho, "clusters", "naive"), "--root", ho, "HelmRelease/external-secrets", "--vars-from", filepath.Join("testdata", "fluxrepo", "token-secret.yaml"), "--show-secrets"}},
		{name: "preview-release-unknown", args: []string{"preview", "--cluster", filepath.Join(ho, "clusters", "naive"), "--root", ho, "HelmRelease/flux-system/nope"}, code: cli.ExitError, stderr: "HelmRelease/flux-system/nope: no layer applies it"},
		{name: "lint-entry-helm-naive", args: []string{"lint", filepath.Join(ho, "clusters", "naive"), "--root", ho}, code: cli.ExitFinding, stderr: "1 finding in", same: "fluxrepo/testdata/helm-operators-naive-lint.golden"},
		// One finding per problem, its places listed under it (issue 40).
		{name: "lint-many-places", args: []string{"lint", filepath.Join(mp, "clusters", "vars"), "--root", mp}, code: cli.ExitFinding, stderr: "4 findings in"},
		{name: "lint-many-places-json", args: []string{"lint", filepath.Join(mp, "clusters", "eso"), "--root", mp, "-o", "json"}, code: cli.ExitFinding, stderr: "1 finding in"},
		{name: "lint-entry-helm-fixed", args: []string{"lint", filepath.Join(ho, "clusters", "fixed"), "--root", ho}},
		{name: "lint-bad-operator", args: []string{"lint", filepath.Join(ho, "clusters", "fixed"), "--root", ho, "--operator", "eso"}, code: cli.ExitError, stderr: "want CHART=GROUP"},
		{name: "lint-bad-charts", args: []string{"lint", filepath.Join(ho, "clusters", "fixed"), "--root", ho, "--charts", filepath.Join(ho, "nope")}, code: cli.ExitError, stderr: "charts folder"},
		// preview --cluster ENTRY NAME
		{name: "preview-cluster", args: []string{"preview", "--cluster", filepath.Join(fx, "clusters", "staging"), "--root", fx, "infra-configs"}, same: "fluxrepo/testdata/preview-infra-configs.golden"},
		{name: "preview-cluster-vars-from", args: []string{"preview", "--cluster", phEntry, "--root", ph, "infrastructure", "--vars-from", filepath.Join(root, "fluxrepo", "testdata", "eks-mycluster-0-vars.yaml")}, same: "fluxrepo/testdata/preview-infrastructure.golden"},
		{name: "preview-cluster-no-vars", args: []string{"preview", "--cluster", phEntry, "--root", ph, "infrastructure"}, code: cli.ExitError, stderr: "eks-mycluster-0-vars"},
		{name: "preview-cluster-unknown", args: []string{"preview", "--cluster", phEntry, "--root", ph, "nope"}, code: cli.ExitError, stderr: `has no Kustomization "nope"`},
		{name: "preview-cluster-no-name", args: []string{"preview", "--cluster", phEntry, "--root", ph}, code: cli.ExitError, stderr: "with --cluster, give the Kustomization's NAME"},
		{name: "preview-cluster-and-path", args: []string{"preview", "--cluster", phEntry, "--root", ph, "infrastructure", "--path", ph}, code: cli.ExitError, stderr: "neither --path nor --kustomization-file"},
		// import ENTRY, import --argocd DIR
		{name: "import-entry", args: []string{"import", filepath.Join(fx, "clusters", "production"), "--root", fx}, stderr: "import: ", same: "fluxrepo/testdata/fluxcd-example-production-import.golden"},
		{name: "import-entry-external", args: []string{"import", phEntry, "--root", ph, "--external", tfVars}, stderr: "import: ", same: "fluxrepo/testdata/platform-hierarchy-import.golden"},
		{name: "import-argocd", args: []string{"import", "--argocd", argo}, stderr: "import: "},
		{name: "import-argocd-apps", args: []string{"import", "--argocd", filepath.Join(argo, "apps")}, stderr: "import: "},
		{name: "import-argocd-none", args: []string{"import", "--argocd", devTeam}, code: cli.ExitError, stderr: "none found"},
		{name: "import-no-entry", args: []string{"import"}, code: cli.ExitError, stderr: "accepts 1 arg(s)"},
		// the repository flags with a stack file
		{name: "lint-stack-undeclared", args: []string{"lint", "-f", stack}, code: cli.ExitFinding, stderr: "1 finding in 1 layer"},
		{name: "lint-stack-external", args: []string{"lint", "-f", stack, "--external", "ConfigMap/flux-system/cluster-vars"}},
		{name: "lint-stack-external-other", args: []string{"lint", "-f", stack, "--external", "ConfigMap/flux-system/other-vars"}, code: cli.ExitFinding},
		{name: "lint-stack-bad-external", args: []string{"lint", "-f", stack, "--external", "cluster-vars"}, code: cli.ExitError, stderr: "--external: "},
		{name: "lint-stack-source", args: []string{"lint", "-f", stack, "--source", "GitRepository/flux-system/flux-system=" + devTeam}, code: cli.ExitError, stderr: "--source applies to a Flux repository (ENTRY), not to a stack file (-f)"},
		{name: "lint-stack-root", args: []string{"lint", "-f", stack, "--root", root, "--external", "ConfigMap/flux-system/cluster-vars"}, code: cli.ExitError, stderr: "--root applies to a Flux repository (ENTRY), not to a stack file (-f)"},
		{name: "graph-stack-external", args: []string{"graph", "-f", stack, "--external", "ConfigMap/flux-system/cluster-vars"}, code: cli.ExitError, stderr: "--external applies to a Flux repository (ENTRY), not to a stack file (-f)"},
		{name: "graph-stack-root-source", args: []string{"graph", "-f", stack, "--root", root, "--source", "GitRepository/flux-system/flux-system=" + devTeam}, code: cli.ExitError, stderr: "--root and --source apply to a Flux repository (ENTRY)"},
		{name: "graph-stack", args: []string{"graph", "-f", stack, "-o", "mermaid"}},
		{name: "graph-stack-json", args: []string{"graph", "-f", stack, "-o", "json"}},
		{name: "graph-stack-old-format", args: []string{"graph", "-f", stack, "--format", "mermaid"}, stderr: "Flag --format has been deprecated, use -o/--output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := run(t, tt.args...)
			assert.Equal(t, tt.code, code, "fluxpack %s: exit code; stderr:\n%s", strings.Join(tt.args, " "), stderr)
			if tt.stderr != "" {
				assert.Contains(t, stderr, tt.stderr)
			}
			if tt.same != "" {
				want, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(tt.same)))
				require.NoError(t, err)
				assert.Equal(t, string(want), stdout, "stdout is what %s holds: the CLI adds nothing to the library's answer", tt.same)
			}
			if code == cli.ExitError {
				assert.Empty(t, stdout, "an error prints nothing on stdout")
			}
			got := stdout
			if stderr != "" {
				got += "--- stderr ---\n" + stderr
			}
			got = strings.NewReplacer(devTeam, "DEVTEAM", root, "ROOT").Replace(got)
			testutil.Golden(t, "fluxrepo/"+tt.name, []byte(got))
		})
	}
}
