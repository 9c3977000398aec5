package bootstrap

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// What a bootstrap script's command line applies, spelling by spelling.
func TestScriptApplies(t *testing.T) {
	k := func(p string) bootstrapApply { return bootstrapApply{path: p, kustomize: true} }
	f := func(p string) bootstrapApply { return bootstrapApply{path: p} }
	th := func(p string, through ...string) bootstrapApply { return bootstrapApply{path: p, through: through} }
	for _, tt := range []struct {
		line string
		want []bootstrapApply
	}{
		{"kustomize build bootstrap/base | kubectl apply -f -", []bootstrapApply{k("bootstrap/base")}},
		{"kustomize build --enable-helm --load-restrictor LoadRestrictionsNone bootstrap/base", []bootstrapApply{k("bootstrap/base")}},
		{"kubectl apply -k bootstrap/base", []bootstrapApply{k("bootstrap/base")}},
		{"kubectl apply -kbootstrap/base", []bootstrapApply{k("bootstrap/base")}},
		{"kubectl apply -k=bootstrap/base", []bootstrapApply{k("bootstrap/base")}},
		{"kubectl apply --kustomize bootstrap/base", []bootstrapApply{k("bootstrap/base")}},
		{"kubectl --context home -n flux-system apply --kustomize=bootstrap/base", []bootstrapApply{k("bootstrap/base")}},
		{"kubectl kustomize bootstrap/base | kubectl apply --server-side -f -", []bootstrapApply{k("bootstrap/base")}},
		{"kubectl apply -f bootstrap/ns.yaml -f bootstrap/crds.yaml", []bootstrapApply{f("bootstrap/ns.yaml"), f("bootstrap/crds.yaml")}},
		{"kubectl apply --filename=bootstrap/ns.yaml", []bootstrapApply{f("bootstrap/ns.yaml")}},
		{"kubectl create -f bootstrap/ns.yaml 2>&1 || true", []bootstrapApply{f("bootstrap/ns.yaml")}},
		{"kubectl apply -R -f bootstrap/", []bootstrapApply{{path: "bootstrap/", recursive: true}}},
		{`sops --decrypt "bootstrap/age key.sops.yaml" | kubectl apply -f -`, []bootstrapApply{f("bootstrap/age key.sops.yaml")}},
		{"sops -d --input-type yaml --output-type yaml bootstrap/s.yaml | kubectl apply -f -", []bootstrapApply{f("bootstrap/s.yaml")}},
		// Through a filter lint does not run, which says so (Through).
		{"sops decrypt bootstrap/s.yaml | envsubst | kubectl apply -f -", []bootstrapApply{th("bootstrap/s.yaml", "envsubst")}},
		{"sops -d bootstrap/s.yaml --output /tmp/s.yaml; kubectl apply -f -", nil},
		{"cat bootstrap/ns.yaml | kubectl apply -f -", []bootstrapApply{f("bootstrap/ns.yaml")}},
		{"cat bootstrap/a.yaml bootstrap/b.yaml | kubectl apply -f -", nil},
		{"cat <<EOF | kubectl apply -f -", nil},
		{"sops -d bootstrap/s.yaml | cat | kubectl apply -f -", []bootstrapApply{f("bootstrap/s.yaml")}},
		// A template of bootstrap resources, its op:// references filled in.
		{`minijinja-cli "bootstrap/resources.yaml.j2" | op inject | kubectl apply --server-side --filename -`, []bootstrapApply{f("bootstrap/resources.yaml.j2")}},
		{"minijinja-cli -D env=prod bootstrap/resources.yaml.j2 | kubectl apply -f -", []bootstrapApply{f("bootstrap/resources.yaml.j2")}},
		{"minijinja-cli bootstrap/resources.yaml.j2 -o /tmp/r.yaml; kubectl apply -f -", nil},
		{"op inject -i bootstrap/secrets.yaml | kubectl apply -f -", []bootstrapApply{f("bootstrap/secrets.yaml")}},
		{`just template "bootstrap/resources.yaml.j2" | kubectl apply --server-side -f -`, []bootstrapApply{f("bootstrap/resources.yaml.j2")}},
		{"sops -d bootstrap/s.yaml | just template - | kubectl apply -f -", []bootstrapApply{f("bootstrap/s.yaml")}},
		{"minijinja-cli bootstrap/r.yaml.j2 | envsubst '$DOMAIN' | kubectl apply -f -", []bootstrapApply{th("bootstrap/r.yaml.j2", "envsubst")}},
		{"just template bootstrap/r.yaml.j2 | python3 bootstrap/decode.py | kubectl apply -f -", []bootstrapApply{th("bootstrap/r.yaml.j2", "python3")}},
		{"just template bootstrap/r.yaml.j2 | python3 -c 'import sys; print(sys.stdin.read())' | yq '.metadata.labels.a = \"b\"' | kubectl apply -f -",
			[]bootstrapApply{th("bootstrap/r.yaml.j2", "python3", "yq")}},
		{"sops -d bootstrap/s.yaml | sed -e 's/a/b/' | kubectl apply -f -", []bootstrapApply{th("bootstrap/s.yaml", "sed")}},
		// A filter that may drop objects, or reads a file of its own: not guessed.
		{`kustomize build bootstrap/base | yq ea -e 'select(.kind == "Namespace")' | kubectl apply -f - `, []bootstrapApply{k("bootstrap/base")}},
		{`sops -d bootstrap/s.yaml | yq 'select(.kind == "Secret")' | kubectl apply -f -`, nil},
		{`sops -d bootstrap/s.yaml | jq 'del(.items[0])' | kubectl apply -f -`, nil},
		{"sops -d bootstrap/s.yaml | yq e '.a' other.yaml | kubectl apply -f -", nil},
		{"sops -d bootstrap/s.yaml | sed 's/a/b/' other.yaml | kubectl apply -f -", nil},
		{"sops -d bootstrap/s.yaml | sed -i 's/a/b/' | kubectl apply -f -", nil},
		{"sops -d bootstrap/s.yaml | sed -n '/^kind: Secret/,/^---/p' | kubectl apply -f -", nil},
		{"sops -d bootstrap/s.yaml | yq -i '.a = 1' | kubectl apply -f -", nil},
		{"sops -d bootstrap/s.yaml | python3 < other.py | kubectl apply -f -", nil},
		{"sops -d bootstrap/s.yaml | awk '{print}' | kubectl apply -f -", nil},
		{"just apply | kubectl apply -f -", nil},
		// A wrapper runs kubectl: kubectl's files, not the wrapper's.
		{"op run -- kubectl apply -f bootstrap/ns.yaml", []bootstrapApply{f("bootstrap/ns.yaml")}},
		{"kubectl get -f bootstrap/ns.yaml", nil},
		{"kubectl delete -k bootstrap/base", nil},
		{"# kubectl apply -f bootstrap/ns.yaml", nil},
		{"echo done # kubectl apply -f bootstrap/ns.yaml", nil},
		{"  - cmd: kubectl apply -f bootstrap/ns.yaml", []bootstrapApply{f("bootstrap/ns.yaml")}},
		{"\t@/usr/local/bin/kubectl apply -f bootstrap/ns.yaml && kubectl apply -k bootstrap/base", []bootstrapApply{f("bootstrap/ns.yaml"), k("bootstrap/base")}},
		{"kubectl apply \\\n  --server-side \\\n  -f bootstrap/ns.yaml", []bootstrapApply{f("bootstrap/ns.yaml")}},
		// A quote holds the line open, as the shell reads it.
		{"just template bootstrap/r.yaml.j2 | python3 -c 'import sys\nfor doc in sys.stdin:\n    print(doc) # a | b\n' | kubectl apply -f -",
			[]bootstrapApply{th("bootstrap/r.yaml.j2", "python3")}},
		{"echo \"a\nb\" && kubectl apply -f bootstrap/ns.yaml", []bootstrapApply{f("bootstrap/ns.yaml")}},
		// A stray quote that never closes holds nothing open.
		{"echo don't\nkubectl apply -f bootstrap/ns.yaml", []bootstrapApply{f("bootstrap/ns.yaml")}},
		{"# don't\nkubectl apply -f bootstrap/ns.yaml\necho 'x'", []bootstrapApply{f("bootstrap/ns.yaml")}},
		// A here-document's lines are lines of their own, its quotes too.
		{"cat <<EOF > /tmp/x\nit's here\nEOF\nkubectl apply -f bootstrap/ns.yaml\n# that's all", []bootstrapApply{f("bootstrap/ns.yaml")}},
		{"bash <<'EOF'\nkubectl apply -f bootstrap/ns.yaml\nEOF", []bootstrapApply{f("bootstrap/ns.yaml")}},
		{"cat <<<'x'\nkubectl apply -f bootstrap/ns.yaml", []bootstrapApply{f("bootstrap/ns.yaml")}},
	} {
		assert.Equal(t, tt.want, scriptApplies(tt.line), "scriptApplies(%q)", tt.line)
	}
}
