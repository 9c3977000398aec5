package bootstrap

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// Taskfiles (go-task, taskfile.dev) name their paths with variables:
// `kubectl apply -f {{.SETTINGS}}`, where SETTINGS is
// "{{.KUBERNETES_DIR}}/flux/vars/settings.yaml" and KUBERNETES_DIR is
// "{{.ROOT_DIR}}/kubernetes" in the Taskfile that includes this one.
// taskfileScripts reads them as go-task would run them, as far as that
// is known without running anything:
//
//   - a task's commands: its cmds (a command, or an item's cmd:), its
//     cmd:, or the task written as a command or a list of them; a call of
//     another task (task:) and defer: are not read;
//   - {{.NAME}} (spaces inside the braces allowed) is the value of the
//     variable NAME, looked up, most important first, in the task's vars,
//     its Taskfile's vars, the vars of the include that brought that
//     Taskfile in, and those of the Taskfiles above it; a variable's value
//     is expanded when it is defined, so it sees the variables defined
//     before it (nested expansion);
//   - the special variables ROOT_DIR (the folder of the Taskfile that
//     includes the others), TASKFILE_DIR (the folder of the Taskfile the
//     task is in), TASK_DIR (where the task runs) and USER_WORKING_DIR
//     (taken to be ROOT_DIR: scripts run from the repository's root), and
//     a variable set by `sh: git rev-parse --show-toplevel`, the
//     repository's root;
//   - includes: NAME: PATH, or NAME: {taskfile: PATH, dir: DIR, vars:
//     {...}}, PATH a Taskfile or a folder holding one, relative to the
//     including Taskfile; an included Taskfile in the repository is read
//     too, whatever its name; a task runs in its Taskfile's include dir:
//     (the root Taskfile's folder by default) or in its own dir:; when
//     that dir: is not known, in the include's folder still.
//
// What is not understood stays as it is written, so a path holding it is
// not guessed (findBootstrapApplies skips paths with braces): a dynamic
// variable (sh:, but git's toplevel), a ref: or map: variable, a list, any other template
// ({{.A | default "x"}}, {{if}}, sprig functions), a variable given on
// the command line or by a calling task, and the environment (env:,
// dotenv:, $VAR). A Taskfile that no other Taskfile found here includes
// is taken to run from the repository's root, which is ROOT_DIR; one that
// is not YAML is read as text, line by line, like a shell script.
func taskfileScripts(root string, files []string) []script {
	parsed := map[string]*taskfile{}
	read := func(file string) *taskfile {
		if tf, ok := parsed[file]; ok {
			return tf
		}
		tf := readTaskfile(file)
		parsed[file] = tf
		return tf
	}
	var out []script
	included := map[string]bool{}
	for _, f := range files {
		tf := read(f)
		if tf == nil {
			if data, err := os.ReadFile(f); err == nil {
				out = append(out, script{text: string(data)})
			}
			continue
		}
		for _, inc := range tf.includes {
			if file := inc.file(filepath.Dir(f), nil); file != "" {
				included[file] = true
			}
		}
	}
	// walk reads tf and the Taskfiles it includes, reached with the
	// variables vars (the specials but TASKFILE_DIR and TASK_DIR set),
	// running its tasks in dir.
	var walk func(tf *taskfile, vars map[string]string, dir string, seen []string)
	walk = func(tf *taskfile, vars map[string]string, dir string, seen []string) {
		seen = append(seen, tf.path)
		here := filepath.Dir(tf.path)
		vars = maps.Clone(vars)
		vars["TASKFILE_DIR"] = here
		defineVars(vars, tf.vars, root)
		for _, t := range tf.tasks {
			out = append(out, t.script(vars, dir, root))
		}
		for _, inc := range tf.includes {
			file := inc.file(here, vars)
			if rel, err := filepath.Rel(root, file); file == "" || err != nil || !filepath.IsLocal(rel) || slices.Contains(seen, file) {
				continue // not found, remote, behind a variable, outside the repository, or a cycle
			}
			child := read(file)
			if child == nil {
				continue
			}
			childDir := dir
			if d := expandTaskVars(inc.dir, vars); d != "" && !strings.Contains(d, "{{") {
				childDir = joinDir(here, d)
			}
			childVars := maps.Clone(vars)
			defineVars(childVars, inc.vars, root)
			walk(child, childVars, childDir, seen)
		}
	}
	for _, f := range files {
		tf := read(f)
		if tf == nil || included[f] {
			continue
		}
		walk(tf, map[string]string{"ROOT_DIR": root, "USER_WORKING_DIR": root}, root, nil)
	}
	return out
}

// taskfile is what taskfileScripts reads of a Taskfile.
type taskfile struct {
	path     string // absolute
	vars     []taskVar
	includes []taskInclude
	tasks    []taskDef
}

// taskVar is a variable; dynamic when its value is not a plain scalar (sh:,
// ref:, map:, a list): unknown here, but for toplevel, `sh: git rev-parse
// --show-toplevel`, which is the repository's root.
type taskVar struct {
	name, value       string
	dynamic, toplevel bool
}

type taskInclude struct {
	taskfile, dir string
	vars          []taskVar
}

type taskDef struct {
	dir  string
	vars []taskVar
	cmds []string
}

// readTaskfile parses a Taskfile, or returns nil when it is not a YAML
// mapping.
func readTaskfile(file string) *taskfile {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	tf := &taskfile{path: file}
	top := doc.Content[0]
	tf.vars = readTaskVars(yamlutil.Field(top, "vars"))
	if incs := yamlutil.Field(top, "includes"); incs != nil && incs.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(incs.Content); i += 2 {
			v := incs.Content[i+1]
			switch v.Kind {
			case yaml.ScalarNode:
				tf.includes = append(tf.includes, taskInclude{taskfile: v.Value})
			case yaml.MappingNode:
				tf.includes = append(tf.includes, taskInclude{taskfile: yamlScalar(yamlutil.Field(v, "taskfile")), dir: yamlScalar(yamlutil.Field(v, "dir")), vars: readTaskVars(yamlutil.Field(v, "vars"))})
			}
		}
	}
	if tasks := yamlutil.Field(top, "tasks"); tasks != nil && tasks.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(tasks.Content); i += 2 {
			tf.tasks = append(tf.tasks, readTask(tasks.Content[i+1]))
		}
	}
	return tf
}

// readTask reads a task: a command, a list of commands, or a mapping with
// cmds, cmd, vars and dir.
func readTask(n *yaml.Node) taskDef {
	var t taskDef
	cmd := func(n *yaml.Node) {
		switch {
		case n == nil:
		case n.Kind == yaml.ScalarNode:
			t.cmds = append(t.cmds, n.Value)
		case n.Kind == yaml.MappingNode:
			if c := yamlutil.Field(n, "cmd"); c != nil && c.Kind == yaml.ScalarNode {
				t.cmds = append(t.cmds, c.Value)
			}
		}
	}
	cmds := func(n *yaml.Node) {
		if n != nil && n.Kind == yaml.SequenceNode {
			for _, c := range n.Content {
				cmd(c)
			}
		}
	}
	switch n.Kind {
	case yaml.ScalarNode:
		cmd(n)
	case yaml.SequenceNode:
		cmds(n)
	case yaml.MappingNode:
		cmd(yamlutil.Field(n, "cmd"))
		cmds(yamlutil.Field(n, "cmds"))
		t.vars = readTaskVars(yamlutil.Field(n, "vars"))
		t.dir = yamlScalar(yamlutil.Field(n, "dir"))
	}
	return t
}

// readTaskVars reads a vars: mapping, in order.
func readTaskVars(n *yaml.Node) []taskVar {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var out []taskVar
	for i := 0; i+1 < len(n.Content); i += 2 {
		v := n.Content[i+1]
		known := v.Kind == yaml.ScalarNode && v.Tag != "!!null"
		toplevel := strings.Join(strings.Fields(yamlScalar(yamlutil.Field(v, "sh"))), " ") == "git rev-parse --show-toplevel"
		out = append(out, taskVar{name: n.Content[i].Value, value: v.Value, dynamic: !known && !toplevel, toplevel: toplevel})
	}
	return out
}

// defineVars adds vs to vars in order, each expanded with the variables
// before it; a dynamic one removes the name, so that references to it stay
// as written; git's toplevel is root.
func defineVars(vars map[string]string, vs []taskVar, root string) {
	for _, v := range vs {
		switch {
		case v.toplevel:
			vars[v.name] = root
		case v.dynamic:
			delete(vars, v.name)
		default:
			vars[v.name] = expandTaskVars(v.value, vars)
		}
	}
}

// script is t's commands, expanded with vars and t's own, as one text,
// run in dir or in t's dir: (relative to dir); in dir still when t's dir:
// is not known (a dynamic variable), as lint reads every script from the
// repository's root.
func (t taskDef) script(vars map[string]string, dir, root string) script {
	vars = maps.Clone(vars)
	defineVars(vars, t.vars, root)
	if d := expandTaskVars(t.dir, vars); d != "" && !strings.Contains(d, "{{") {
		dir = joinDir(dir, d)
	}
	vars["TASK_DIR"] = dir
	cmds := make([]string, len(t.cmds))
	for i, c := range t.cmds {
		cmds[i] = expandTaskVars(c, vars)
	}
	return script{text: strings.Join(cmds, "\n"), dir: dir}
}

// file is the Taskfile the include names, from the folder of the
// Taskfile that includes it, expanded with vars (nil: not expanded): PATH
// itself, or the Taskfile in the folder PATH, as go-task looks for it;
// "" when there is none, or PATH is remote or behind a variable.
func (inc taskInclude) file(from string, vars map[string]string) string {
	p := inc.taskfile
	if vars != nil {
		p = expandTaskVars(p, vars)
	}
	if p == "" || strings.Contains(p, "{{") || strings.Contains(p, "://") {
		return ""
	}
	p = joinDir(from, p)
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return ""
	case !fi.IsDir():
		return p
	}
	for _, n := range []string{"Taskfile.yml", "taskfile.yml", "Taskfile.yaml", "taskfile.yaml", "Taskfile.dist.yml", "taskfile.dist.yml", "Taskfile.dist.yaml", "taskfile.dist.yaml"} {
		if f := filepath.Join(p, n); fileExists(f) {
			return f
		}
	}
	return ""
}

// expandTaskVars replaces each {{.NAME}} of s whose NAME vars holds with
// its value, once (a value is not expanded again); anything else stays.
func expandTaskVars(s string, vars map[string]string) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	return taskVarRef().ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := vars[taskVarRef().FindStringSubmatch(m)[1]]; ok {
			return v
		}
		return m
	})
}

var taskVarRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\{\{\s*\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)
})

// joinDir is p from dir, unless p is absolute.
func joinDir(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

func yamlScalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}
