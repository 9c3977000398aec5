package review

import (
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Action says what a change does to an object.
type Action string

// The actions of an ObjectChange.
const (
	Added   Action = "added"
	Removed Action = "removed"
	Changed Action = "changed"
)

// FieldOp says what a change does to one field.
type FieldOp string

// The operations of a FieldChange.
const (
	FieldAdded   FieldOp = "added"
	FieldRemoved FieldOp = "removed"
	FieldChanged FieldOp = "changed"
	// FieldMoved is a list whose entries (matched by their key) are the
	// same but in another order: Before and After list the keys.
	FieldMoved FieldOp = "moved"
)

// FieldChange is one difference inside an object.
type FieldChange struct {
	// Path is the field, as a reader spells it:
	// spec.template.spec.containers[name=web].image, and
	// metadata.annotations["example.com/x"] for keys with dots or slashes.
	// List entries are matched by their key (name, mountPath,
	// containerPort, port, key) where every entry has one, so a reorder is
	// one FieldMoved, not churn.
	Path string  `json:"path"`
	Op   FieldOp `json:"op"`
	// Before and After are the values (nil when absent). For a Secret's
	// data and stringData they are always nil and Hidden is true: a
	// report says a value changed, never what it was or is.
	Before any  `json:"before,omitempty"`
	After  any  `json:"after,omitempty"`
	Hidden bool `json:"hidden,omitempty"`
}

// ObjectChange is what a change does to one object.
type ObjectChange struct {
	ID     ObjectID `json:"id"`
	Action Action   `json:"action"`
	// Producer applies the object after the change (before it, for a
	// removed object). BaseProducer is set when another producer applied
	// it before the change.
	Producer     string `json:"producer"`
	BaseProducer string `json:"baseProducer,omitempty"`
	// BaseID is the object before the change when its name changed: a
	// ConfigMap or Secret of a kustomize generator, whose name carries a
	// hash of its content, is matched with the one it replaces
	// (values-5fbk9c7h2m for values-2k8mh6tgd4) and its content diffed.
	BaseID *ObjectID `json:"baseId,omitempty"`
	// Fields are the differences of a changed object, in path order.
	Fields []FieldChange `json:"fields,omitempty"`
	// Secret is true for a Secret: its values never appear in Fields,
	// Before or After.
	Secret bool `json:"secret,omitempty"`
	// Before and After are the object as YAML, noise stripped and Secret
	// values hidden; empty on the side where it does not exist.
	Before string `json:"-"`
	After  string `json:"-"`
}

// DefaultStripAttrs are the labels and annotations a diff leaves out
// unless told otherwise: they change with every chart release or config
// hash and say nothing a reviewer acts on.
var DefaultStripAttrs = []string{"helm.sh/chart", "checksum/*"}

// listKeys are the fields that name the entries of Kubernetes lists
// (containers, env, volumes, volumeMounts, ports, items), tried in order.
var listKeys = []string{"name", "mountPath", "containerPort", "port", "key", "devicePath"}

// objectKey matches an object of one side with the other's.
type objectKey struct {
	id  ObjectID
	dup string // producer, for an ID two producers apply on one side
}

// DiffObjects compares the objects of two sides, matched by ID (and by
// producer when an ID repeats on a side), and returns what changed,
// sorted by ID. Labels and annotations matching strip (path.Match
// patterns, such as DefaultStripAttrs) are left out first.
func DiffObjects(base, head []Object, strip []string) []ObjectChange {
	type key = objectKey
	index := func(objs []Object) (map[key]Object, []key) {
		count := map[ObjectID]int{}
		for _, o := range objs {
			count[o.ID]++
		}
		m := map[key]Object{}
		var keys []key
		for _, o := range objs {
			k := key{id: o.ID}
			if count[o.ID] > 1 {
				k.dup = o.Producer
			}
			if _, seen := m[k]; !seen {
				keys = append(keys, k)
			}
			m[k] = o
		}
		return m, keys
	}
	bm, bkeys := index(base)
	hm, hkeys := index(head)
	renamed := generatedRenames(bm, bkeys, hm, hkeys)
	var out []ObjectChange
	for _, k := range hkeys {
		h := hm[k]
		hv := stripped(h.Value, strip)
		b, ok := bm[k]
		if bk, r := renamed[k]; r {
			b, ok = bm[bk], true
		}
		if !ok {
			out = append(out, ObjectChange{ID: k.id, Action: Added, Producer: h.Producer, Secret: h.isSecret(), After: toYAML(maskObject(redact(hv, h.isSecret(), nil), nil, false))})
			continue
		}
		bv := stripped(b.Value, strip)
		secret := h.isSecret() || b.isSecret()
		var fields []FieldChange
		diffValue("", bv, hv, secret, &fields)
		if b.Producer != h.Producer {
			// The object is the same but another producer applies it
			// now: a reviewer needs to know, as pruning follows it.
			fields = append(fields, FieldChange{Path: "(producer)", Op: FieldChanged, Before: b.Producer, After: h.Producer})
		}
		if len(fields) == 0 {
			continue
		}
		c := ObjectChange{ID: k.id, Action: Changed, Producer: h.Producer, Fields: fields, Secret: secret,
			Before: toYAML(maskObject(redact(bv, secret, nil), nil, false)), After: toYAML(maskObject(redact(hv, secret, bv), bv, true))}
		if b.Producer != h.Producer {
			c.BaseProducer = b.Producer
		}
		if b.ID != h.ID {
			baseID := b.ID
			c.BaseID = &baseID
		}
		out = append(out, c)
	}
	gone := map[key]bool{}
	for _, bk := range renamed {
		gone[bk] = true
	}
	for _, k := range bkeys {
		if _, ok := hm[k]; ok || gone[k] {
			continue
		}
		b := bm[k]
		out = append(out, ObjectChange{ID: k.id, Action: Removed, Producer: b.Producer, Secret: b.isSecret(), Before: toYAML(maskObject(redact(stripped(b.Value, strip), b.isSecret(), nil), nil, false))})
	}
	slices.SortStableFunc(out, func(a, b ObjectChange) int {
		if c := compareIDs(a.ID, b.ID); c != 0 {
			return c
		}
		return strings.Compare(a.Producer, b.Producer)
	})
	return out
}

// generatedHash is the suffix kustomize's configMapGenerator and
// secretGenerator append to a name: "-" and ten characters of the
// content's hash, with 0, 1, 3, a and e written g, h, k, m and t.
// Compiled on first use: package inits stay light (cmd/fluxpack's
// TestOwnInitsAreLight).
var generatedHash = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.+)-[2456789bcdfghkmt]{10}$`) })

// generatedStem is name without its generator hash, and whether it had
// one.
func generatedStem(name string) (string, bool) {
	m := generatedHash().FindStringSubmatch(name)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// generatedRenames pairs the head's unmatched ConfigMaps and Secrets
// with hashed names with the base's unmatched one of the same kind,
// namespace and name stem, where the stem names exactly one on each
// side: a generator whose content changed. Keys are the head's.
func generatedRenames(bm map[objectKey]Object, bkeys []objectKey, hm map[objectKey]Object, hkeys []objectKey) map[objectKey]objectKey {
	type stem struct {
		kind, namespace, name string
	}
	stems := func(keys []objectKey, other map[objectKey]Object) map[stem][]objectKey {
		out := map[stem][]objectKey{}
		for _, k := range keys {
			if _, matched := other[k]; matched {
				continue
			}
			i := k.id
			if i.Group != "" || (i.Kind != "ConfigMap" && i.Kind != "Secret") {
				continue
			}
			if s, ok := generatedStem(i.Name); ok {
				st := stem{i.Kind, i.Namespace, s}
				out[st] = append(out[st], k)
			}
		}
		return out
	}
	bs, hs := stems(bkeys, hm), stems(hkeys, bm)
	renamed := map[objectKey]objectKey{}
	for st, hk := range hs {
		if bk := bs[st]; len(bk) == 1 && len(hk) == 1 {
			renamed[hk[0]] = bk[0]
		}
	}
	return renamed
}

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func join(p, k string) string {
	if !plainKey.MatchString(k) {
		return fmt.Sprintf("%s[%q]", p, k)
	}
	if p == "" {
		return k
	}
	return p + "." + k
}

// secretPath reports whether p is inside a Secret's values.
func secretPath(p string) bool {
	return p == "data" || p == "stringData" || strings.HasPrefix(p, "data.") || strings.HasPrefix(p, "data[") ||
		strings.HasPrefix(p, "stringData.") || strings.HasPrefix(p, "stringData[")
}

// addField appends c to out, with a Secret's values hidden and SOPS
// ciphertexts replaced by a placeholder.
func addField(out *[]FieldChange, secret bool, c FieldChange) {
	if secret && secretPath(c.Path) {
		c.Before, c.After, c.Hidden = nil, nil, true
	}
	before := c.Before
	c.Before = maskSops(c.Before, nil, false)
	c.After = maskSops(c.After, before, c.Op == FieldChanged)
	*out = append(*out, c)
}

func diffValue(p string, a, b any, secret bool, out *[]FieldChange) {
	if reflect.DeepEqual(a, b) {
		return
	}
	add := func(c FieldChange) { addField(out, secret, c) }
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(av)+len(bv))
		for k := range av {
			keys = append(keys, k)
		}
		for k := range bv {
			if _, ok := av[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			x, inA := av[k]
			y, inB := bv[k]
			switch {
			case !inA:
				add(FieldChange{Path: join(p, k), Op: FieldAdded, After: y})
			case !inB:
				add(FieldChange{Path: join(p, k), Op: FieldRemoved, Before: x})
			default:
				diffValue(join(p, k), x, y, secret, out)
			}
		}
		return
	case []any:
		bv, ok := b.([]any)
		if !ok {
			break
		}
		diffList(p, av, bv, secret, out)
		return
	}
	add(FieldChange{Path: p, Op: FieldChanged, Before: a, After: b})
}

// listKey returns the field naming every entry of both lists uniquely, or
// "".
func listKey(a, b []any) string {
	if len(a) == 0 && len(b) == 0 {
		return ""
	}
next:
	for _, k := range listKeys {
		for _, l := range [][]any{a, b} {
			seen := map[string]bool{}
			for _, e := range l {
				m, ok := e.(map[string]any)
				if !ok {
					return ""
				}
				v, ok := m[k]
				if !ok {
					continue next
				}
				s := fmt.Sprint(v)
				if _, scalar := v.(map[string]any); scalar || seen[s] {
					continue next
				}
				if _, list := v.([]any); list {
					continue next
				}
				seen[s] = true
			}
		}
		return k
	}
	return ""
}

func diffList(p string, a, b []any, secret bool, out *[]FieldChange) {
	k := listKey(a, b)
	if k == "" {
		diffUnkeyed(p, a, b, secret, out)
		return
	}
	name := func(e any) string { return fmt.Sprint(e.(map[string]any)[k]) }
	at := func(e any) string { return fmt.Sprintf("%s[%s=%s]", p, k, name(e)) }
	inB := map[string]any{}
	for _, e := range b {
		inB[name(e)] = e
	}
	// An entry naming a generated ConfigMap or Secret (valuesFrom,
	// envFrom, volumes) follows its rename: it is the head's entry.
	renamed := renamedEntries(a, b, name, inB)
	base := name
	name = func(e any) string {
		if r, ok := renamed[base(e)]; ok {
			return r
		}
		return base(e)
	}
	inA := map[string]any{}
	for _, e := range a {
		inA[name(e)] = e
	}
	var orderA, orderB []string
	for _, e := range a {
		if _, ok := inB[name(e)]; ok {
			orderA = append(orderA, name(e))
		}
	}
	for _, e := range b {
		if _, ok := inA[name(e)]; ok {
			orderB = append(orderB, name(e))
		}
	}
	if !slices.Equal(orderA, orderB) {
		addField(out, secret, FieldChange{Path: p, Op: FieldMoved, Before: orderA, After: orderB})
	}
	for _, e := range b {
		x, ok := inA[name(e)]
		if !ok {
			addField(out, secret, FieldChange{Path: at(e), Op: FieldAdded, After: e})
			continue
		}
		diffValue(at(e), x, e, secret, out)
	}
	for _, e := range a {
		if _, ok := inB[name(e)]; !ok {
			addField(out, secret, FieldChange{Path: at(e), Op: FieldRemoved, Before: e})
		}
	}
}

// renamedEntries maps the base's entry names a list lost to the head's
// it gained where both carry a generator hash on one stem, one each.
func renamedEntries(a, b []any, name func(any) string, inB map[string]any) map[string]string {
	inA := map[string]bool{}
	lost := map[string][]string{}
	for _, e := range a {
		n := name(e)
		inA[n] = true
		if _, kept := inB[n]; !kept {
			if s, ok := generatedStem(n); ok {
				lost[s] = append(lost[s], n)
			}
		}
	}
	gained := map[string][]string{}
	for _, e := range b {
		if n := name(e); !inA[n] {
			if s, ok := generatedStem(n); ok {
				gained[s] = append(gained[s], n)
			}
		}
	}
	out := map[string]string{}
	for s, g := range gained {
		if l := lost[s]; len(l) == 1 && len(g) == 1 {
			out[l[0]] = g[0]
		}
	}
	return out
}

// maxLCSCells bounds the table of an unkeyed list's LCS: past it (two
// lists of thousands of entries that differ throughout), entries are
// compared by position.
const maxLCSCells = 1 << 22

// diffUnkeyed compares two lists whose entries have no key (args, a
// chart's mounts, hosts): the entries equal on both sides are matched as
// a longest common subsequence, so inserting entries is that many
// additions, not a change of every entry after them. Between two matched
// entries, entries alike (maps sharing most of their fields) are matched
// next, and what is left is paired by position as changes, the rest
// added or removed. An entry's path is its index on the head ([i]), on
// the base for a removed entry.
func diffUnkeyed(p string, a, b []any, secret bool, out *[]FieldChange) {
	at := func(i int) string { return fmt.Sprintf("%s[%d]", p, i) }
	ka, kb := entryKeys(a), entryKeys(b)
	same := lcs(len(a), len(b), func(i, j int) bool { return ka[i] == kb[j] })
	gap := func(i0, i1, j0, j1 int) {
		// Entries alike are matched first; between them, by position.
		similar := lcs(i1-i0, j1-j0, func(i, j int) bool { return alike(a[i0+i], b[j0+j]) })
		i, j := i0, j0
		for _, m := range append(similar, [2]int{i1 - i0, j1 - j0}) {
			mi, mj := i0+m[0], j0+m[1]
			n := min(mi-i, mj-j)
			for d := range n {
				diffValue(at(j+d), a[i+d], b[j+d], secret, out)
			}
			for x := j + n; x < mj; x++ {
				addField(out, secret, FieldChange{Path: at(x), Op: FieldAdded, After: b[x]})
			}
			for x := i + n; x < mi; x++ {
				addField(out, secret, FieldChange{Path: at(x), Op: FieldRemoved, Before: a[x]})
			}
			if mi < i1 {
				diffValue(at(mj), a[mi], b[mj], secret, out)
			}
			i, j = mi+1, mj+1
		}
	}
	i, j := 0, 0
	for _, m := range same {
		gap(i, m[0], j, m[1])
		i, j = m[0]+1, m[1]+1
	}
	gap(i, len(a), j, len(b))
}

// entryKeys returns each entry as canonical JSON (map keys sorted), to
// compare entries as strings.
func entryKeys(l []any) []string {
	out := make([]string, len(l))
	for i, e := range l {
		b, err := json.Marshal(e)
		if err != nil {
			b = fmt.Appendf(nil, "%#v", e)
		}
		out[i] = string(b)
	}
	return out
}

// alike reports whether two list entries are one entry changed: maps
// that hold the same value in at least half of the fields of the larger,
// one of them a string (a flag both set is no identity).
func alike(x, y any) bool {
	mx, ok := x.(map[string]any)
	my, ok2 := y.(map[string]any)
	if !ok || !ok2 {
		return false
	}
	n, named := 0, false
	for k, v := range mx {
		if w, ok := my[k]; ok && reflect.DeepEqual(v, w) {
			n++
			_, s := v.(string)
			named = named || s
		}
	}
	return named && 2*n >= max(len(mx), len(my))
}

// lcs returns the index pairs (i, j) of a longest common subsequence of
// two sequences of lengths n and m, where eq says whether entry i of the
// first equals entry j of the second, in order. The common start and end
// are matched directly; a table past maxLCSCells matches nothing more.
func lcs(n, m int, eq func(i, j int) bool) [][2]int {
	var out [][2]int
	lo := 0
	for lo < n && lo < m && eq(lo, lo) {
		out = append(out, [2]int{lo, lo})
		lo++
	}
	hn, hm := n, m
	for hn > lo && hm > lo && eq(hn-1, hm-1) {
		hn--
		hm--
	}
	rows, cols := hn-lo, hm-lo
	if rows > 0 && cols > 0 && rows*cols <= maxLCSCells {
		// t[i][j]: the LCS length of the suffixes from lo+i and lo+j.
		t := make([][]int32, rows+1)
		for i := range t {
			t[i] = make([]int32, cols+1)
		}
		for i := rows - 1; i >= 0; i-- {
			for j := cols - 1; j >= 0; j-- {
				switch {
				case eq(lo+i, lo+j):
					t[i][j] = t[i+1][j+1] + 1
				case t[i+1][j] >= t[i][j+1]:
					t[i][j] = t[i+1][j]
				default:
					t[i][j] = t[i][j+1]
				}
			}
		}
		for i, j := 0, 0; i < rows && j < cols; {
			switch {
			case eq(lo+i, lo+j):
				out = append(out, [2]int{lo + i, lo + j})
				i++
				j++
			case t[i+1][j] >= t[i][j+1]:
				i++
			default:
				j++
			}
		}
	}
	for d := range n - hn {
		out = append(out, [2]int{hn + d, hm + d})
	}
	return out
}

// stripped returns a copy of v without the labels and annotations whose
// keys match one of patterns, at any depth (an object's, and a pod
// template's).
func stripped(v map[string]any, patterns []string) map[string]any {
	if len(patterns) == 0 {
		return v
	}
	c, _ := stripValue(v, patterns).(map[string]any)
	return c
}

func stripValue(v any, patterns []string) any {
	switch x := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(x))
		for k, e := range x {
			if (k == "labels" || k == "annotations") && isStringMap(e) {
				m := map[string]any{}
				for lk, lv := range e.(map[string]any) {
					if !matchAny(patterns, lk) {
						m[lk] = lv
					}
				}
				if len(m) > 0 {
					c[k] = m
				}
				continue
			}
			c[k] = stripValue(e, patterns)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = stripValue(e, patterns)
		}
		return c
	}
	return v
}

func isStringMap(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for _, e := range m {
		if _, ok := e.(string); !ok {
			return false
		}
	}
	return true
}

func matchAny(patterns []string, s string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, s); ok || p == s {
			return true
		}
	}
	return false
}

// redact returns v with a Secret's data and stringData values replaced:
// "(hidden)", or "(hidden, changed)" where base (the other side) holds
// another value under the key.
func redact(v map[string]any, secret bool, base map[string]any) map[string]any {
	if !secret || v == nil {
		return v
	}
	c := make(map[string]any, len(v))
	for k, e := range v {
		c[k] = e
	}
	for _, field := range []string{"data", "stringData"} {
		m, ok := v[field].(map[string]any)
		if !ok {
			continue
		}
		old, _ := base[field].(map[string]any)
		r := make(map[string]any, len(m))
		for k, val := range m {
			r[k] = "(hidden)"
			if base != nil {
				if ov, ok := old[k]; !ok || !reflect.DeepEqual(ov, val) {
					r[k] = "(hidden, changed)"
				}
			}
		}
		c[field] = r
	}
	return c
}
