package review

import (
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
	// Objects are the objects whose references to it change (Before and
	// After are theirs): an object that uses it the same way on both
	// sides is not one of them.
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
// templates, custom resources that embed them) of two sides, object by
// object: an image changes where an object's references to it do.
func DiffImages(base, head []Object) []ImageChange {
	var b, h imageIndex
	b.add(base)
	h.add(head)
	return diffImageIndexes(&b, &h)
}

// imageIndex is what images a side's objects use: what DiffImages
// compares, gathered producer by producer.
type imageIndex struct {
	uses map[string]map[string]*imageUse // repository → object → its use
}

// imageUse is one object's use of a repository.
type imageUse struct {
	refs       map[string]bool // the references, with tag or digest
	fromValues bool            // named by a HelmRelease's values
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
	if x.uses == nil {
		x.uses = map[string]map[string]*imageUse{}
	}
	image, _ = maskSops(image, nil, false).(string)
	repo := imageRepository(image)
	if x.uses[repo] == nil {
		x.uses[repo] = map[string]*imageUse{}
	}
	u := x.uses[repo][user]
	if u == nil {
		u = &imageUse{refs: map[string]bool{}}
		x.uses[repo][user] = u
	}
	u.refs[image] = true
	u.fromValues = u.fromValues || fromValues
}

// diffImageIndexes compares the sides object by object: a repository
// changes for the objects whose references to it differ, and only for
// them. Objects the same on both sides say nothing, so a side that
// indexed the producers a change leaves alone (--all) and one that did not
// (changed-only) give the same answer: nginx taken up by one release is
// nginx added to that release, whether or not others run it already.
// Before and After are the references of those objects on each side: none
// before is an image added to them, none after one removed; references
// that only move from one object to another change no image.
func diffImageIndexes(bi, hi *imageIndex) []ImageChange {
	var out []ImageChange
	for _, repo := range slices.Sorted(maps.Keys(union(bi.uses, hi.uses))) {
		b, h := bi.uses[repo], hi.uses[repo]
		before, after := map[string]bool{}, map[string]bool{}
		var objects []string
		values := false
		for _, user := range slices.Sorted(maps.Keys(union(b, h))) {
			bu, hu := b[user], h[user]
			if bu != nil && hu != nil && sameKeys(bu.refs, hu.refs) {
				continue
			}
			objects = append(objects, user)
			for _, u := range []*imageUse{bu, hu} {
				if u != nil {
					values = values || u.fromValues
				}
			}
			if bu != nil {
				maps.Copy(before, bu.refs)
			}
			if hu != nil {
				maps.Copy(after, hu.refs)
			}
		}
		if len(objects) == 0 || sameKeys(before, after) {
			continue
		}
		c := ImageChange{Image: repo, Op: "retagged", Before: sorted(before), After: sorted(after), Objects: objects, FromValues: values}
		switch {
		case len(before) == 0:
			c.Op = "added"
		case len(after) == 0:
			c.Op = "removed"
		}
		out = append(out, c)
	}
	return out
}

// union is the keys of a and b, as a map.
func union[V any](a, b map[string]V) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
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
