package review

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// FolderObjects reads the Kubernetes objects of every YAML file of dir
// (what an artifact ships), each with its file (slash-separated, relative
// to dir) as the producer. Documents that are not objects (kustomize's
// own kustomization.yaml, a values file) are left out, as are the files
// ignore says push leaves out (nil: none).
func FolderObjects(dir string, ignore func(rel string) bool) ([]Object, error) {
	var out []Object
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" || rel != "." && ignore != nil && ignore(rel+"/") {
				return filepath.SkipDir
			}
			return nil
		}
		ext := strings.ToLower(path.Ext(rel))
		if !d.Type().IsRegular() || ext != ".yaml" && ext != ".yml" || ignore != nil && ignore(rel) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		objs, err := ParseObjects(rel, data)
		if err != nil {
			// Not a file of objects (a values file, a document that is
			// no object): what Flux applies comes from the others.
			objs = parseObjectsLenient(rel, data)
		}
		out = append(out, objs...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sortObjects(out)
	return out, nil
}

// parseObjectsLenient keeps the documents of data that are objects.
func parseObjectsLenient(producer string, data []byte) []Object {
	var out []Object
	for _, doc := range strings.Split(string(data), "\n---") {
		objs, err := ParseObjects(producer, []byte(doc))
		if err == nil {
			out = append(out, objs...)
		}
	}
	return out
}
