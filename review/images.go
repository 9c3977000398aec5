package review

import (
	"cmp"
	"slices"
	"strings"
)

// ImageChange is what a change does to one container image repository.
type ImageChange struct {
	// Image is the repository, without tag or digest.
	Image string `json:"image"`
	// Op is "added", "removed" or "retagged".
	Op string `json:"op"`
	// Before and After are the references (with tag or digest) used on
	// each side.
	Before []string `json:"before,omitempty"`
	After  []string `json:"after,omitempty"`
	// Objects are the objects that use it (after the change, or before it
	// for a removed image).
	Objects []string `json:"objects"`
}

// DiffImages compares the container images (containers, initContainers
// and ephemeralContainers at any depth: pods, pod templates, job
// templates, custom resources that embed them) of two sides.
func DiffImages(base, head []Object) []ImageChange {
	var b, h imageIndex
	b.add(base)
	h.add(head)
	return diffImageIndexes(&b, &h)
}

// imageIndex is what images a side's objects use, and which objects use
// each repository: what DiffImages compares, gathered producer by
// producer.
type imageIndex struct {
	refs, users map[string]map[string]bool // repository → references, objects
}

func (x *imageIndex) add(objs []Object) {
	if x.refs == nil {
		x.refs, x.users = map[string]map[string]bool{}, map[string]map[string]bool{}
	}
	for _, o := range objs {
		walkContainers(o.Value, func(image string) {
			repo := imageRepository(image)
			if x.refs[repo] == nil {
				x.refs[repo], x.users[repo] = map[string]bool{}, map[string]bool{}
			}
			x.refs[repo][image] = true
			x.users[repo][o.ID.String()] = true
		})
	}
}

func diffImageIndexes(bi, hi *imageIndex) []ImageChange {
	b, bObjs, h, hObjs := bi.refs, bi.users, hi.refs, hi.users
	var out []ImageChange
	for repo, refs := range h {
		old, ok := b[repo]
		switch {
		case !ok:
			out = append(out, ImageChange{Image: repo, Op: "added", After: sorted(refs), Objects: sorted(hObjs[repo])})
		case !sameKeys(old, refs):
			out = append(out, ImageChange{Image: repo, Op: "retagged", Before: sorted(old), After: sorted(refs), Objects: sorted(hObjs[repo])})
		}
	}
	for repo, refs := range b {
		if _, ok := h[repo]; !ok {
			out = append(out, ImageChange{Image: repo, Op: "removed", Before: sorted(refs), Objects: sorted(bObjs[repo])})
		}
	}
	slices.SortFunc(out, func(x, y ImageChange) int { return cmp.Compare(x.Image, y.Image) })
	return out
}

// imageRepository cuts the tag and digest off an image reference.
func imageRepository(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}

func walkContainers(v any, f func(string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "containers" || k == "initContainers" || k == "ephemeralContainers" {
				if l, ok := e.([]any); ok {
					for _, c := range l {
						if m, ok := c.(map[string]any); ok {
							if img, ok := m["image"].(string); ok && img != "" {
								f(img)
							}
						}
					}
				}
			}
			walkContainers(e, f)
		}
	case []any:
		for _, e := range x {
			walkContainers(e, f)
		}
	}
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func sameKeys(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}
