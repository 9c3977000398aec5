package review

import (
	"cmp"
	"fmt"
	"maps"
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
	// FromValues is set when a side's references were read from the
	// spec.values of a HelmRelease whose chart was not rendered
	// (image.repository with image.tag, or image: REPO:TAG, under any
	// key): the chart decides what it runs, so the image is what the
	// values name, not what was rendered.
	FromValues bool `json:"fromValues,omitempty"`
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
	fromValues  map[string]bool            // repositories a HelmRelease's values name
}

func (x *imageIndex) add(objs []Object) {
	for _, o := range objs {
		walkContainers(o.Value, func(image string) { x.record(image, o.ID.String(), false) })
	}
}

// addValues indexes the images the spec.values of the HelmRelease o name,
// for a release whose chart was not rendered.
func (x *imageIndex) addValues(o Object) {
	spec, _ := o.Value["spec"].(map[string]any)
	walkValues(spec["values"], func(image string) { x.record(image, o.ID.String(), true) })
}

func (x *imageIndex) record(image, user string, fromValues bool) {
	if x.refs == nil {
		x.refs, x.users, x.fromValues = map[string]map[string]bool{}, map[string]map[string]bool{}, map[string]bool{}
	}
	image, _ = maskSops(image, nil, false).(string)
	repo := imageRepository(image)
	if x.refs[repo] == nil {
		x.refs[repo], x.users[repo] = map[string]bool{}, map[string]bool{}
	}
	x.refs[repo][image] = true
	x.users[repo][user] = true
	if fromValues {
		x.fromValues[repo] = true
	}
}

func diffImageIndexes(bi, hi *imageIndex) []ImageChange {
	b, bObjs, h, hObjs := bi.refs, bi.users, hi.refs, hi.users
	values := func(repo string) bool { return bi.fromValues[repo] || hi.fromValues[repo] }
	var out []ImageChange
	for repo, refs := range h {
		old, ok := b[repo]
		switch {
		case !ok:
			out = append(out, ImageChange{Image: repo, Op: "added", After: sorted(refs), Objects: sorted(hObjs[repo]), FromValues: values(repo)})
		case !sameKeys(old, refs):
			out = append(out, ImageChange{Image: repo, Op: "retagged", Before: sorted(old), After: sorted(refs), Objects: sorted(hObjs[repo]), FromValues: values(repo)})
		}
	}
	for repo, refs := range b {
		if _, ok := h[repo]; !ok {
			out = append(out, ImageChange{Image: repo, Op: "removed", Before: sorted(refs), Objects: sorted(bObjs[repo]), FromValues: values(repo)})
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

// walkValues calls f with each image a chart's values name: under a key
// image (or …Image), a reference (image: ghcr.io/x/app:1.2), or a map of
// repository with tag, registry and digest as charts spell them
// (image.repository, image.tag), at any depth
// (controllers.main.containers.app.image).
func walkValues(v any, f func(string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "image" || strings.HasSuffix(k, "Image") {
				if ref := valuesImage(e); ref != "" {
					f(ref)
					continue
				}
			}
			walkValues(e, f)
		}
	case []any:
		for _, e := range x {
			walkValues(e, f)
		}
	}
}

// valuesImage returns the image reference a values entry names, or "".
func valuesImage(v any) string {
	switch x := v.(type) {
	case string:
		if x == "" || strings.ContainsAny(x, " \t\n") || strings.Contains(x, "{{") {
			return ""
		}
		return x
	case map[string]any:
		repo, _ := x["repository"].(string)
		if repo == "" || strings.ContainsAny(repo, " \t\n") {
			return ""
		}
		if reg, _ := x["registry"].(string); reg != "" && !strings.HasPrefix(repo, reg+"/") {
			repo = strings.TrimSuffix(reg, "/") + "/" + repo
		}
		if tag := scalar(x["tag"]); tag != "" && imageRepository(repo) == repo {
			repo += ":" + tag
		}
		if d, _ := x["digest"].(string); d != "" && !strings.Contains(repo, "@") {
			repo += "@" + d
		}
		return repo
	}
	return ""
}

// scalar prints a tag YAML may have read as a number.
func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int, int64, float64:
		return fmt.Sprint(x)
	}
	return ""
}

func sorted(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }

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
