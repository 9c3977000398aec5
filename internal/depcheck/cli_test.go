package depcheck_test

import (
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
)

// family is a group of heavy dependencies the fluxpack binary may link, by
// import path (a prefix covers the path and the packages under it), with
// the reason it links them.
type family struct {
	name     string
	prefixes []string
	why      string
}

// cliFamilies is the allow-list of what `go list -deps ./cmd/fluxpack`
// may hold beyond the standard library and fluxpack (issue 27: "a test or
// bench that shows which heavy packages the CLI links"). Every package the
// CLI links pays its init on every command, and the binary's size.
// TestCLIFamilies fails on a group of 5 or more packages that no family
// covers, and on a family the binary no longer links. Add a family only
// with its reason.
var cliFamilies = []family{
	// The model and the manifests.
	{"Kubernetes API types", []string{"k8s.io/api/", "k8s.io/apimachinery/", "k8s.io/apiextensions-apiserver/", "k8s.io/kube-openapi/", "sigs.k8s.io/structured-merge-diff/", "k8s.io/klog/", "k8s.io/utils/", "github.com/google/gnostic-models/"},
		"typed Flux and Kubernetes objects (layering, lint, preview)"},
	{"kustomize", []string{"sigs.k8s.io/kustomize/"}, "preview builds Kustomizations with kustomize-controller's generator"},
	{"fluxcd", []string{"github.com/fluxcd/"}, "Flux's API types, kustomize generator, chartutil, oci and envsubst"},
	// Helm and what its install action imports.
	{"helm", []string{"helm.sh/helm/"}, "preview and lint render HelmReleases with Helm's install action, as helm-controller does (fluxbuild)"},
	{"helm plugin runtime (WebAssembly)", []string{"github.com/tetratelabs/", "github.com/extism/", "github.com/dylibso/", "github.com/ianlancetaylor/demangle"},
		"helm's action package imports its plugin system (helm.sh/helm/v4/internal/plugin); fluxpack runs no plugin"},
	{"helm SQL storage driver", []string{"github.com/lib/pq", "github.com/jmoiron/sqlx", "github.com/rubenv/sql-migrate", "github.com/Masterminds/squirrel", "github.com/lann/"},
		"helm's action package imports every release storage driver; fluxpack renders with the in-memory one"},
	{"client-go", []string{"k8s.io/client-go/"}, "helm's kube client and controller-runtime's client types (no cluster is contacted)"},
	{"kubectl", []string{"k8s.io/kubectl/", "k8s.io/cli-runtime/", "k8s.io/component-base/", "k8s.io/apiserver/", "github.com/chai2010/gettext-go"},
		"helm's kube package (kubectl's factory); never run"},
	{"controller-runtime", []string{"sigs.k8s.io/controller-runtime/"}, "client.Object in fluxbuild's HelmRelease values sources; helm's kube package"},
	{"prometheus", []string{"github.com/prometheus/"}, "controller-runtime's client and metrics registry"},
	{"JSON schema and OpenAPI", []string{"github.com/santhosh-tekuri/jsonschema/", "github.com/go-openapi/"},
		"helm validates values against a chart's values.schema.json; rekor's generated client (go-openapi)"},
	// Registries.
	{"go-containerregistry", []string{"github.com/google/go-containerregistry/", "github.com/docker/"}, "package oci: push, pull, diff, tag, list; docker config credentials"},
	{"go-git", []string{"github.com/go-git/", "github.com/emirpasic/gods/", "github.com/pjbgf/sha1cd", "github.com/kevinburke/ssh_config", "github.com/skeema/knownhosts", "github.com/xanzy/ssh-agent", "gopkg.in/warnings.v0", "github.com/jbenet/go-context", "github.com/cyphar/filepath-securejoin", "dario.cat/mergo", "github.com/ProtonMail/go-crypto", "github.com/sergi/go-diff", "github.com/golang/groupcache"},
		"package review: diff --base reads the base revision's tree from the repository's objects, with no second checkout"},
	{"oras", []string{"oras.land/"}, "notation-go's registry client and helm's OCI registry client"},
	// Signing, behind --sign and verify.
	{"sigstore", []string{"github.com/sigstore/", "github.com/theupdateframework/", "github.com/in-toto/", "github.com/secure-systems-lab/", "github.com/transparency-dev/", "github.com/google/certificate-transparency-go/", "github.com/letsencrypt/", "github.com/syndtr/goleveldb/", "github.com/go-jose/", "github.com/cyberphone/", "github.com/sassoftware/"},
		"--sign cosign and cosign verification (oci/cosign); go-tuf's cache of sigstore's trusted root"},
	{"notation", []string{"github.com/notaryproject/", "github.com/veraison/", "github.com/fxamacker/"}, "--sign notation and notation verification (oci/notation)"},
	{"OpenPGP", []string{"github.com/ProtonMail/", "github.com/cloudflare/circl/"}, "helm's chart provenance and plugin signatures"},
	// Cloud KMS providers of sigstore, for --key awskms:// and the rest (internal/cli/kms.go).
	{"AWS SDK", []string{"github.com/aws/"}, "--key awskms:// (sigstore's KMS provider)"},
	{"Azure SDK", []string{"github.com/Azure/", "github.com/AzureAD/"}, "--key azurekms://"},
	{"Google Cloud SDK", []string{"cloud.google.com/", "google.golang.org/api/", "github.com/googleapis/", "github.com/google/s2a-go/", "google.golang.org/genproto/"}, "--key gcpkms://"},
	{"HashiCorp Vault", []string{"github.com/hashicorp/"}, "--key hashivault:// and openbao://"},
	{"grpc", []string{"google.golang.org/grpc/", "github.com/grpc-ecosystem/"}, "the Google Cloud KMS client (gcpkms://); rekor-tiles' generated protobuf"},
	{"protobuf", []string{"google.golang.org/protobuf/"}, "grpc, sigstore's bundle format, client-go's protobuf codecs"},
	{"OpenTelemetry", []string{"go.opentelemetry.io/"}, "instrumentation in the Google Cloud clients and rekor's go-openapi client; fluxpack exports no telemetry"},
	{"golang.org/x", []string{"golang.org/x/"}, "the Go project's extended libraries (crypto, net, text, oauth2)"},
	{"logging", []string{"go.uber.org/", "github.com/sirupsen/logrus"}, "zap via rekor's log package, logrus via docker's config file"},
	{"compression and globs", []string{"github.com/klauspost/compress/", "github.com/gobwas/glob/"}, "the artifact's gzip (klauspost, pinned for reproducible digests); globs in helm's template engine"},
	{"cobra", []string{"github.com/spf13/"}, "the command line (cobra, pflag); cast via sprig"},
	{"reflection helpers", []string{"github.com/mitchellh/"}, "copystructure via sprig (helm's template functions); mapstructure and go-homedir via vault"},
}

// TestCLIFamilies lists the heavy families the fluxpack binary links, with
// their package counts (go test -v shows the table), and fails when a new
// one appears that cliFamilies does not give a reason for.
func TestCLIFamilies(t *testing.T) {
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := exec.LookPath(goBin); err != nil {
		t.Skipf("no go command at %s (%v): the CLI's families need `go list -deps`", goBin, err)
	}
	out, err := exec.CommandContext(t.Context(), goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "github.com/fluxpack/fluxpack/cmd/fluxpack").Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/fluxpack: %v", err)
	}
	counts, unknown := groupFamilies(strings.Fields(string(out)), cliFamilies)

	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "family\tpackages\twhy")
	for _, f := range cliFamilies {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", f.name, counts[f.name], f.why)
		if counts[f.name] == 0 {
			t.Errorf("family %q: the CLI links none of %v any more: remove it from cliFamilies", f.name, f.prefixes)
		}
	}
	tw.Flush()
	t.Logf("heavy families `go list -deps ./cmd/fluxpack` links:\n%s", b.String())

	for _, key := range slices.Sorted(maps.Keys(unknown)) {
		if pkgs := unknown[key]; len(pkgs) >= newFamilyMin {
			t.Errorf("the CLI links %d packages under %s that no family in cliFamilies covers (%s, ...): make the import lighter, or add a family with the reason",
				len(pkgs), key, strings.Join(pkgs[:3], ", "))
		}
	}
}

// newFamilyMin is how many packages under one host/owner make a family.
const newFamilyMin = 5

// groupFamilies counts the packages of each family among pkgs, and groups
// those of no family (fluxpack's own left out) by their first two path
// elements (github.com/owner, k8s.io/name).
func groupFamilies(pkgs []string, families []family) (counts map[string]int, unknown map[string][]string) {
	counts, unknown = map[string]int{}, map[string][]string{}
next:
	for _, p := range pkgs {
		if p == "github.com/fluxpack/fluxpack" || strings.HasPrefix(p, "github.com/fluxpack/fluxpack/") {
			continue
		}
		for _, f := range families {
			for _, pre := range f.prefixes {
				if pre = strings.TrimSuffix(pre, "/"); p == pre || strings.HasPrefix(p, pre+"/") {
					counts[f.name]++
					continue next
				}
			}
		}
		parts := strings.SplitN(p, "/", 3)
		key := strings.Join(parts[:min(2, len(parts))], "/")
		unknown[key] = append(unknown[key], p)
	}
	return counts, unknown
}

func TestGroupFamilies(t *testing.T) {
	fams := []family{{"helm", []string{"helm.sh/helm/"}, ""}, {"pq", []string{"github.com/lib/pq"}, ""}}
	counts, unknown := groupFamilies([]string{
		"helm.sh/helm/v4/pkg/action", "helm.sh/helm/v4/pkg/kube", "github.com/lib/pq", "github.com/lib/pq/oid",
		"github.com/lib/pqx", "github.com/fluxpack/fluxpack/oci", "k8s.io/client-go/rest",
	}, fams)
	if want := map[string]int{"helm": 2, "pq": 2}; !maps.Equal(counts, want) {
		t.Errorf("groupFamilies counts = %v, want %v", counts, want)
	}
	if len(unknown) != 2 || len(unknown["github.com/lib"]) != 1 || len(unknown["k8s.io/client-go"]) != 1 {
		t.Errorf("groupFamilies unknown = %v, want github.com/lib: [github.com/lib/pqx], k8s.io/client-go: [k8s.io/client-go/rest]", unknown)
	}
}
