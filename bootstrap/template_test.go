package bootstrap_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluxpack/fluxpack/bootstrap"
)

// A bootstrap template's loops over lists written out are expanded, with
// nested loops; other statements are dropped; expressions whose value is
// not known are the mark.
func TestExpandTemplate(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"loop",
			"{% for namespace in [\"flux-system\", 'rook-ceph'] %}\n---\nkind: Namespace\nmetadata:\n  name: {{ namespace }}\n{% endfor %}\n",
			"---\nkind: Namespace\nmetadata:\n  name: flux-system\n---\nkind: Namespace\nmetadata:\n  name: rook-ceph\n"},
		{"nested",
			"{%- for a in [\"x\"] -%}\n{% for b in [\"1\", \"2\"] %}\nname: {{a}}-{{ b }}\n{% endfor %}\n{% endfor %}\n",
			"name: x-1\nname: x-2\n"},
		{"statements and unknown values",
			"{# a comment #}\n{% if ENV.CLUSTER == \"main\" %}\nkey: {{ ENV.KEY }}\n{% else %}\nkey: other\n{% endif %}\n",
			"key: " + bootstrap.TemplateMark + "\nkey: other\n"},
		{"a loop over what is not written out",
			"{% for ns in ENV.NAMESPACES %}\nname: {{ ns }}\n{% endfor %}\n",
			"name: " + bootstrap.TemplateMark + "\n"},
		{"no template", "kind: Secret\nmetadata:\n  name: a\n", "kind: Secret\nmetadata:\n  name: a\n"},
	} {
		assert.Equal(t, tt.want, bootstrap.ExpandTemplate(tt.in), tt.name)
	}
}
