package bootstrap

import (
	"iter"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Kustomizations returns the folders the bootstrap scripts of
// a repository at root (bootstrapScripts; those of the cluster of the
// entry point entry, when not "") build with kustomize and apply before
// Flux: their `kustomize build DIR`, `kubectl kustomize DIR` and `kubectl
// apply -k DIR` (--kustomize DIR, -k=DIR), that exist and hold a
// kustomization.
func Kustomizations(root, entry string) []string {
	var out []string
	for _, a := range findBootstrapApplies(root, entry) {
		if a.kustomize && hasKustomization(a.path) && !slices.Contains(out, a.path) {
			out = append(out, a.path)
		}
	}
	return out
}

// Manifests returns the files the bootstrap scripts of a
// repository at root (bootstrapScripts; those of the cluster of entry,
// when not "") apply with kubectl before Flux: Applied's paths.
func Manifests(root, entry string) []string {
	var out []string
	for _, m := range Applied(root, entry) {
		out = append(out, m.Path)
	}
	return out
}

// Manifest is a file a bootstrap script applies with kubectl.
type Manifest struct {
	Path string
	// Through names the programs a pipeline passes the file through on
	// its way to kubectl -f - that package bootstrap does not run (a
	// python3 -c script, yq, jq, sed, envsubst: filterPrograms): the
	// objects kubectl applies are taken as the file has them.
	Through []string
}

// Applied returns the files the bootstrap scripts of a repository at root
// (bootstrapScripts; those of the cluster of entry, when not "") apply
// with kubectl before Flux: `kubectl apply -f FILE` (--filename FILE,
// -f=FILE; create too), a folder's files as kubectl reads them (its
// .yaml, .yml and .json files, and those of its subfolders with -R), and
// the one file a pipeline into kubectl apply -f - reads (stdinFile: sops
// --decrypt FILE, minijinja-cli FILE, op inject -i FILE, just template
// FILE, cat FILE, through op inject and the filters it names in
// Manifest.Through), and sops exec-file FILE 'kubectl apply -f {}'. A
// command line goes on while a quote it opens is open (commandLines). A
// Taskfile's {{.VAR}} are go-task's variables, expanded as far as they are
// known without running anything (taskfileScripts); a justfile's
// variables set from its directory functions and string literals are
// expanded (justVars); a shell script's loops over the arrays it sets are
// written out, its variable set from git rev-parse --show-toplevel is
// the root, and one set from its argument is the folder of the entry
// point's path that names a file that exists (shellvars.go). Only files
// that exist are returned; a URL, a path behind another shell variable or
// an unknown go-task one, and other input on stdin (a filter that may
// drop objects: yq or jq select) are not guessed.
func Applied(root, entry string) []Manifest {
	var out []Manifest
	add := func(f string, through []string) {
		for i := range out {
			if out[i].Path == f {
				if len(through) == 0 { // applied as it is by one command
					out[i].Through = nil
				}
				return
			}
		}
		out = append(out, Manifest{Path: f, Through: through})
	}
	for _, a := range findBootstrapApplies(root, entry) {
		if a.kustomize {
			continue
		}
		fi, err := os.Stat(a.path)
		switch {
		case err != nil:
		case !fi.IsDir():
			add(a.path, a.through)
		default:
			_ = filepath.WalkDir(a.path, func(p string, d os.DirEntry, err error) error {
				if err != nil {
					return nil
				}
				if d.IsDir() {
					if p != a.path && !a.recursive {
						return filepath.SkipDir
					}
					return nil
				}
				switch strings.ToLower(filepath.Ext(p)) {
				case ".yaml", ".yml", ".json":
					add(p, a.through)
				}
				return nil
			})
		}
	}
	return out
}

// bootstrapApply is what a command of a bootstrap script applies before
// Flux: a folder kustomize builds, or a file or folder kubectl reads.
type bootstrapApply struct {
	path      string
	kustomize bool
	recursive bool     // kubectl -R: a folder's subfolders too
	through   []string // the filters on the way (Manifest.Through)
}

// findBootstrapApplies reads what the bootstrap scripts apply, with paths
// made absolute from where they run (the repository's root, or a task's
// folder).
func findBootstrapApplies(root, entry string) []bootstrapApply {
	var out []bootstrapApply
	for _, script := range bootstrapScripts(root, entry) {
		dir := root
		if script.dir != "" {
			dir = script.dir
		}
		for _, a := range scriptApplies(script.text) {
			if strings.ContainsAny(a.path, "${}") && len(script.positional) > 0 {
				a.path = forEntry(a.path, script.positional, entryFolders(root, entry), func(p string) bool {
					if !filepath.IsAbs(p) {
						p = filepath.Join(dir, p)
					}
					_, err := os.Stat(p)
					return err == nil
				})
			}
			if a.path == "" || strings.ContainsAny(a.path, "${}") || strings.Contains(a.path, "://") {
				continue // a variable the script sets, or a URL: not known here
			}
			if !filepath.IsAbs(a.path) {
				a.path = filepath.Join(dir, a.path)
			}
			a.path = filepath.Clean(a.path)
			if rel, err := filepath.Rel(root, a.path); err != nil || !filepath.IsLocal(rel) {
				continue
			}
			out = append(out, a)
		}
	}
	return out
}

// scriptApplies reads the commands of a script's text (a shell script, a
// recipe of a justfile or Makefile, a Taskfile's cmds: command lines as
// commandLines joins them) for what they apply: kustomize build DIR,
// kubectl kustomize DIR, kubectl apply/create with -k or -f, and a kubectl
// reading stdin made from one file (stdinFile).
func scriptApplies(text string) []bootstrapApply {
	var out []bootstrapApply
	for _, line := range commandLines(text) {
		for _, pipeline := range splitCommands(line) {
			var before [][]string // the commands before, in the pipeline
			for _, words := range pipeline {
				args := commandArgs(words)
				switch {
				case args == nil:
				case args[0] == "kustomize":
					if len(args) > 1 && args[1] == "build" {
						if dir := positional(args[2:], kustomizeValueFlags); dir != "" {
							out = append(out, bootstrapApply{path: dir, kustomize: true})
						}
					}
				case args[0] == "kubectl":
					out = append(out, kubectlApplies(args[1:], before)...)
				case args[0] == "sops":
					out = append(out, sopsExecFile(args)...)
				}
				before = append(before, args)
			}
		}
	}
	return out
}

// Flags that take a value, so that the value is not taken for a path.
var (
	kustomizeValueFlags = []string{"-o", "--output", "--load-restrictor", "--helm-command", "--network-name", "-e", "--env", "--mount"}
	kubectlValueFlags   = []string{"-n", "--namespace", "--context", "--kubeconfig", "--cluster", "--user", "-l", "--selector", "-o", "--output", "--field-manager", "--server", "-s", "--token", "--as", "--prune-allowlist", "--timeout", "--wait", "--grace-period", "--dry-run", "--validate", "--cascade", "--template", "--request-timeout"}
	minijinjaValueFlags = []string{"-D", "--define", "-f", "--format", "-a", "--autoescape", "--select", "-s", "--syntax", "--env-prefix"}
	sopsValueFlags      = []string{"--input-type", "--output-type", "--extract", "--config", "--keyservice", "--filename-override", "--output", "--decryption-order", "--indent"}
)

// kubectlApplies reads the arguments of a kubectl command (after
// "kubectl"): with apply or create, its -k and -f; kubectl kustomize DIR.
// before are the commands before it in a pipeline, for -f -.
func kubectlApplies(args []string, before [][]string) []bootstrapApply {
	verb := ""
	for i := range operands(args, kubectlValueFlags) {
		verb = args[i]
		args = args[i+1:]
		break
	}
	switch verb {
	case "kustomize":
		if dir := positional(args, kubectlValueFlags); dir != "" {
			return []bootstrapApply{{path: dir, kustomize: true}}
		}
		return nil
	case "apply", "create":
	default:
		return nil
	}
	var out []bootstrapApply
	recursive := slices.Contains(args, "-R") || slices.Contains(args, "--recursive") || slices.Contains(args, "--recursive=true")
	for i := 0; i < len(args); i++ {
		value := func(short, long string) (string, bool) {
			a := args[i]
			switch {
			case a == short || a == long:
				if i+1 < len(args) {
					i++
					return args[i], true
				}
				return "", false
			case strings.HasPrefix(a, long+"="):
				return strings.TrimPrefix(a, long+"="), true
			case strings.HasPrefix(a, short+"="):
				return strings.TrimPrefix(a, short+"="), true
			case strings.HasPrefix(a, short) && len(a) > len(short) && !strings.HasPrefix(a, "--"):
				return a[len(short):], true
			}
			return "", false
		}
		if dir, ok := value("-k", "--kustomize"); ok {
			out = append(out, bootstrapApply{path: dir, kustomize: true})
			continue
		}
		f, ok := value("-f", "--filename")
		switch {
		case !ok:
		case f == "-":
			if file, through := stdinFile(before); file != "" {
				out = append(out, bootstrapApply{path: file, through: through})
			}
		default:
			out = append(out, bootstrapApply{path: f, recursive: recursive})
		}
	}
	return out
}

// stdinFile returns the file whose objects a pipeline's commands (before,
// in order; nil for a command of no known program) write to stdout for
// kubectl -f -, or "": sops --decrypt FILE, minijinja-cli FILE (a
// template whose objects' identities are written out, as bootstrap
// resources are), op inject -i FILE, just template FILE (the recipe
// home-ops repositories run minijinja-cli and op inject with) or cat FILE,
// read through op inject, just template - and cat (which fill in op://
// references in values, or pass it on), and through the filters that
// pass each object on as far as can be told without running them
// (filterPasses), which through names in pipeline order. Anything else on
// the way (a filter that selects or deletes, a script with a file of its
// own) is not guessed.
func stdinFile(before [][]string) (file string, through []string) {
	for i := len(before) - 1; i >= 0; i-- {
		args := before[i]
		switch {
		case args == nil:
			return "", nil
		case args[0] == "sops":
			return sopsDecrypts(args), through
		case args[0] == "minijinja-cli":
			if slices.Contains(args, "-o") || slices.Contains(args, "--output") {
				return "", nil
			}
			return positional(args[1:], minijinjaValueFlags), through
		case args[0] == "op":
			if len(args) < 2 || args[1] != "inject" || slices.Contains(args, "-o") || slices.Contains(args, "--out-file") {
				return "", nil
			}
			for j, a := range args {
				if (a == "-i" || a == "--in-file") && j+1 < len(args) {
					return args[j+1], through
				}
				if v, ok := strings.CutPrefix(a, "--in-file="); ok {
					return v, through
				}
			}
			// Reads stdin: the command before.
		case args[0] == "just":
			if len(args) < 3 || args[1] != "template" {
				return "", nil
			}
			if args[2] != "-" {
				return args[2], through
			}
			// just template -: stdin.
		case args[0] == "cat":
			var files []string
			for j := range operands(args[1:], nil) {
				files = append(files, args[1+j])
			}
			switch {
			case slices.ContainsFunc(args, redirection):
				return "", nil
			case len(files) == 1 && files[0] != "-":
				return files[0], through
			case len(files) > 1:
				return "", nil // several files: not one file's objects
			}
			// cat, cat -: stdin.
		case slices.Contains(filterPrograms, args[0]):
			if !filterPasses(args) {
				return "", nil
			}
			if !slices.Contains(through, args[0]) {
				through = slices.Insert(through, 0, args[0])
			}
		default:
			return "", nil
		}
	}
	return "", nil
}

// filterPrograms are the text filters a pipeline may put between the
// command that writes a file's objects and kubectl -f -, to change values
// on the way (decode one, fill in variables): package bootstrap does not
// run them (filterPasses).
var filterPrograms = []string{"python", "python3", "yq", "jq", "sed", "envsubst"}

// filterPasses reports whether a filter (args, of one of filterPrograms)
// reads its objects from stdin and, as far as its arguments tell, writes
// each on: not a yq or jq program that selects or deletes, nor one that
// names a file to read (a sed script or yq expression's file operand, a
// redirection), nor one that edits in place (sed -i, yq -i) or prints
// only what its script picks (sed -n). What a python script does is not
// known: it is taken to pass them on, and Manifest.Through says so.
func filterPasses(args []string) bool {
	if slices.ContainsFunc(args, redirection) {
		return false
	}
	var ops []string
	for i := range operands(args[1:], filterValueFlags) {
		ops = append(ops, args[1+i])
	}
	switch args[0] {
	case "yq", "jq":
		if slices.ContainsFunc(args[1:], func(a string) bool {
			return strings.Contains(a, "select(") || strings.Contains(a, "del(") || strings.HasPrefix(a, "--from-file") || inPlace(a)
		}) {
			return false
		}
		if args[0] == "yq" && len(ops) > 0 && slices.Contains([]string{"e", "eval", "ea", "eval-all"}, ops[0]) {
			ops = ops[1:]
		}
		return len(ops) <= 1 // the expression, and no file
	case "sed":
		if slices.ContainsFunc(args[1:], func(a string) bool {
			return inPlace(a) || a == "-n" || a == "--quiet" || a == "--silent" // -n prints only what the script prints
		}) {
			return false
		}
		script := slices.Contains(args, "-e") || slices.Contains(args, "-f") || slices.Contains(args, "--expression") || slices.Contains(args, "--file")
		if script {
			return len(ops) == 0
		}
		return len(ops) == 1
	case "python", "python3":
		return slices.Contains(args, "-c") || len(ops) >= 1
	}
	return true // envsubst reads stdin only ('$VAR' names the variables)
}

// inPlace reports whether a filter's argument makes it edit its file in
// place (sed -i, -i.bak, --in-place; yq -i, --inplace): nothing goes on
// to stdout.
func inPlace(a string) bool {
	return strings.HasPrefix(a, "-i") || strings.HasPrefix(a, "--in-place") || strings.HasPrefix(a, "--inplace")
}

// filterValueFlags are the filters' flags that take a value.
var filterValueFlags = []string{"-c", "-e", "-f", "--expression", "--file", "-o", "--output-format", "-I", "--indent", "-p", "--input-format", "--arg", "--argjson"}

// redirection reports whether a word redirects input from a file or a
// here-document (<, <<, <<<).
func redirection(w string) bool { return strings.HasPrefix(w, "<") }

// sopsExecFile reads sops exec-file FILE 'COMMAND {}': what a kubectl
// COMMAND applies of FILE, decrypted to the file {} names.
func sopsExecFile(args []string) []bootstrapApply {
	if len(args) < 2 || args[1] != "exec-file" {
		return nil
	}
	var ops []string
	for i := range operands(args[2:], sopsValueFlags) {
		ops = append(ops, args[2+i])
	}
	if len(ops) != 2 {
		return nil
	}
	var out []bootstrapApply
	for _, pipeline := range splitCommands(strings.ReplaceAll(ops[1], "{}", ops[0])) {
		for _, words := range pipeline {
			if a := commandArgs(words); a != nil && a[0] == "kubectl" {
				out = append(out, kubectlApplies(a[1:], nil)...)
			}
		}
	}
	return out
}

// entryFolders are the folders of the entry point's path, relative to
// root (kubernetes, main, flux, cluster for kubernetes/main/flux/cluster).
func entryFolders(root, entry string) []string {
	if entry == "" {
		return nil
	}
	rel, err := filepath.Rel(absPath(root), absPath(entry))
	if err != nil || !filepath.IsLocal(rel) {
		return nil
	}
	return strings.Split(filepath.ToSlash(rel), "/")
}

// sopsDecrypts returns the file a sops command decrypts to stdout (sops -d
// FILE, sops --decrypt FILE, sops decrypt FILE), or "".
func sopsDecrypts(args []string) string {
	if len(args) < 2 || args[0] != "sops" {
		return ""
	}
	rest := args[1:]
	switch {
	case rest[0] == "decrypt":
		rest = rest[1:]
	case slices.Contains(rest, "-d") || slices.Contains(rest, "--decrypt"):
	default:
		return ""
	}
	if slices.Contains(rest, "--in-place") || slices.Contains(rest, "-i") || slices.Contains(rest, "--output") {
		return "" // not to stdout
	}
	var last string
	for i := range operands(rest, sopsValueFlags) {
		last = rest[i]
	}
	return last
}

// positional is the first argument that is neither a flag nor the value of
// one of valueFlags, or "".
func positional(args, valueFlags []string) string {
	for i := range operands(args, valueFlags) {
		return args[i]
	}
	return ""
}

// operands yields the index of each argument that is neither a flag nor
// the value of one of valueFlags.
func operands(args, valueFlags []string) iter.Seq[int] {
	return func(yield func(int) bool) {
		for i := 0; i < len(args); i++ {
			if strings.HasPrefix(args[i], "-") {
				if slices.Contains(valueFlags, args[i]) {
					i++
				}
				continue
			}
			if !yield(i) {
				return
			}
		}
	}
}

// commandArgs returns a command's words from the program on (kubectl,
// kustomize or sops, by its base name: /usr/local/bin/kubectl too; else
// minijinja-cli, op or just, which make what a kubectl after them in a
// pipeline reads: stdinFile; else cat or a filter of filterPrograms),
// skipping what comes before it on the line (a
// list item's "-", "cmd:", variable assignments, sudo, a wrapper such as
// op run --) and make's prefixes (@kubectl); nil when it runs none of them.
func commandArgs(words []string) []string {
	for _, progs := range [][]string{{"kubectl", "kustomize", "sops"}, {"minijinja-cli", "op", "just"}, append([]string{"cat"}, filterPrograms...)} {
		for i, w := range words {
			// make's @ (silent), - (ignore errors) and + prefixes.
			if prog := path.Base(strings.TrimLeft(w, "@-+")); slices.Contains(progs, prog) {
				out := slices.Clone(words[i:])
				out[0] = prog
				return out
			}
		}
	}
	return nil
}

// splitCommands splits a command line into pipelines (at ;, && and ||)
// of commands (at |), each command into words, as a shell would: quotes
// group, a backslash escapes, an unquoted # starts a comment.
func splitCommands(line string) [][][]string {
	var (
		pipelines [][][]string
		pipeline  [][]string
		words     []string
		word      strings.Builder
		inWord    bool
		quote     byte
	)
	endWord := func() {
		if inWord {
			words = append(words, word.String())
			word.Reset()
			inWord = false
		}
	}
	endCommand := func() {
		endWord()
		if len(words) > 0 {
			pipeline = append(pipeline, words)
			words = nil
		}
	}
	endPipeline := func() {
		endCommand()
		if len(pipeline) > 0 {
			pipelines = append(pipelines, pipeline)
			pipeline = nil
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' && i+1 < len(line) {
				i++
				word.WriteByte(line[i])
			} else {
				word.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '\\' && i+1 < len(line):
			i++
			word.WriteByte(line[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\r':
			endWord()
		case c == '#' && !inWord:
			endPipeline()
			return pipelines
		case c == ';':
			endPipeline()
		case c == '&' && i > 0 && (line[i-1] == '>' || line[i-1] == '<'):
			word.WriteByte(c) // a redirection: 2>&1
			inWord = true
		case c == '&' || c == '|':
			if i+1 < len(line) && line[i+1] == c {
				i++
				endPipeline() // && or ||
			} else if c == '|' {
				endCommand()
			} else {
				endPipeline() // a background job
			}
		case c == '(' || c == ')':
			endPipeline() // a subshell's bounds: the commands in it stand alone
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	endPipeline()
	return pipelines
}

// Namespaces returns the namespaces the bootstrap scripts of
// a repository at root (bootstrapScripts; those of the cluster of entry,
// when not "") create before Flux with `kubectl create
// namespace NAME` (or ns), as they do for the Secrets Flux's first
// Kustomizations decrypt or substitute with.
func Namespaces(root, entry string) []string {
	var out []string
	for _, script := range bootstrapScripts(root, entry) {
		for _, m := range createNamespace().FindAllStringSubmatch(script.text, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// createNamespace matches `kubectl create namespace NAME`, with a name
// written out (not a variable).
var createNamespace = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`kubectl\s+(?:[^|;&\n]*?\s)?create\s+(?:namespace|ns)\s+([a-z0-9](?:[-a-z0-9]*[a-z0-9])?)(?:[\s;|&]|$)`)
})

// script is a bootstrap script's text, with the folders it names relative
// to itself resolved, and the folder it runs in ("": the repository's
// root).
type script struct {
	text, dir string
	// positional are the variables the scripts set from their arguments
	// (forEntry).
	positional []string
}

// bootstrapScripts reads a repository's bootstrap scripts: its justfiles,
// Taskfiles, Makefiles and shell scripts at the root, in .taskfiles/*/,
// and in and under the bootstrap folders (bootstrapDirs) and scripts/,
// with just's {{ source_directory() }} and {{ justfile_directory() }} (and
// their short names), a justfile's variables (justVars), and a shell
// script's $(dirname "$0"), resolved; a Taskfile's tasks with
// their variables expanded (taskfileScripts).
func bootstrapScripts(root, entry string) []script {
	var paths []string
	addPath := func(p string) { // a cluster's bootstrap/CLUSTER/ is also a subfolder of bootstrap/
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	add := func(dir string, subdirs bool) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() {
				if subdirs && n != ".git" {
					sub, _ := os.ReadDir(filepath.Join(dir, n))
					for _, f := range sub {
						if bootstrapScript(f.Name()) && !f.IsDir() {
							addPath(filepath.Join(dir, n, f.Name()))
						}
					}
				}
				continue
			}
			if bootstrapScript(n) {
				addPath(filepath.Join(dir, n))
			}
		}
	}
	add(root, false)
	add(filepath.Join(root, ".taskfiles"), true)
	add(filepath.Join(root, "scripts"), true)
	for _, d := range bootstrapDirs(root, entry) {
		add(d, true)
	}
	var out []script
	var taskfiles []string
	for _, p := range paths {
		if isTaskfile(p) {
			taskfiles = append(taskfiles, p)
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		here := filepath.Dir(p)
		text := string(data)
		for _, r := range []struct{ from, to string }{
			{"{{ source_directory() }}", here}, {"{{source_directory()}}", here},
			{"{{ source_dir() }}", here}, {"{{source_dir()}}", here},
			{"{{ justfile_directory() }}", root}, {"{{justfile_directory()}}", root},
			{"{{ justfile_dir() }}", root}, {"{{justfile_dir()}}", root},
			{`$(dirname "$0")`, here}, {"$(dirname $0)", here}, {`"${0%/*}"`, here},
		} {
			text = strings.ReplaceAll(text, r.from, r.to)
		}
		if isJustfile(filepath.Base(p)) {
			text = justVars(text, root, here)
		}
		out = append(out, script{text: text})
	}
	texts := make([]string, len(out))
	for i, s := range out {
		texts[i] = s.text
	}
	tops, positional := gitTopVars(texts), positionalVars(texts)
	for i := range out {
		for _, v := range tops {
			out[i].text = withVar(out[i].text, v, root)
		}
		out[i].text = expandLoops(out[i].text)
		out[i].positional = positional
	}
	return append(out, taskfileScripts(root, taskfiles)...)
}

func isTaskfile(p string) bool {
	switch strings.ToLower(filepath.Base(p)) {
	case "taskfile.yaml", "taskfile.yml":
		return true
	}
	return false
}

func bootstrapScript(name string) bool {
	switch strings.ToLower(name) {
	case "justfile", ".justfile", "makefile", "taskfile.yaml", "taskfile.yml":
		return true
	}
	return strings.HasSuffix(name, ".just") || strings.HasSuffix(name, ".sh")
}

func hasKustomization(dir string) bool {
	for _, n := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		if fi, err := os.Stat(filepath.Join(dir, n)); err == nil && !fi.IsDir() {
			return true
		}
	}
	return false
}

// Helmfiles returns the helmfiles of the bootstrap step of a
// repository at root (of the cluster of the entry point entry, when not
// ""), where people keep them: helmfile.yaml at the root, and in each
// bootstrap folder (bootstrapDirs) helmfile.yaml, helmfile.yaml.gotmpl (a
// templated one, helmfile v1's name for it) and the .yaml and .yaml.gotmpl
// files of helmfile/ and helmfile.d/ that have releases; helmfile.d/ at
// the root too; and the helmfiles with releases of the folders below a
// bootstrap folder, two levels down (stepFolders), but not those of
// another cluster (otherClusters).
func Helmfiles(root, entry string) []string {
	var out []string
	add := func(f string) {
		if _, err := os.Stat(f); err == nil && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	addReleases := func(f string) {
		if releases, _, err := ReadHelmfile(f); err == nil && len(releases) > 0 && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	addDir := func(dir string) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if !e.IsDir() && (strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yaml.gotmpl")) {
				addReleases(filepath.Join(dir, e.Name()))
			}
		}
	}
	add(filepath.Join(root, "helmfile.yaml"))
	addDir(filepath.Join(root, "helmfile.d"))
	dirs := bootstrapDirs(root, entry)
	others := otherClusters(root, entry)
	for _, d := range dirs {
		add(filepath.Join(d, "helmfile.yaml"))
		if f := filepath.Join(d, "helmfile.yaml.gotmpl"); fileExists(f) {
			addReleases(f)
		}
		addDir(filepath.Join(d, "helmfile"))
		addDir(filepath.Join(d, "helmfile.d"))
	}
	// Below a bootstrap folder, a folder of its own may hold a step's
	// helmfile (bootstrap/crds/helmfile.yaml, bootstrap/apps/helmfile.yaml
	// and bootstrap/apps/crds/helmfile.yaml): those with releases, two
	// levels down, but not another cluster's folder (bootstrap/network/
	// for kubernetes/main/flux/cluster) nor a template's.
	for _, d := range dirs {
		skip := func(name string) bool {
			return others[name] || slices.Contains(dirs, filepath.Join(d, name)) || perCluster(d, root, entry, name)
		}
		for _, sub := range stepFolders(d, 2, skip) {
			for _, name := range []string{"helmfile.yaml", "helmfile.yaml.gotmpl"} {
				if f := filepath.Join(sub, name); fileExists(f) {
					addReleases(f)
				}
			}
			addDir(filepath.Join(sub, "helmfile.d"))
		}
	}
	return out
}

// stepFolders returns the folders below d, down to depth levels, in
// lexical order, leaving out hidden folders, templates/ (a generator's
// input), helmfile/ and helmfile.d/ (read as such), and the folders of d
// itself that skip names.
func stepFolders(d string, depth int, skip func(name string) bool) []string {
	var out []string
	entries, _ := os.ReadDir(d)
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || strings.HasPrefix(name, ".") || name == "templates" || name == "helmfile" || name == "helmfile.d" || skip != nil && skip(name) {
			continue
		}
		sub := filepath.Join(d, name)
		out = append(out, sub)
		if depth > 1 {
			out = append(out, stepFolders(sub, depth-1, nil)...)
		}
	}
	return out
}

// perCluster reports whether the folder name of the bootstrap folder d is
// another cluster's in a layout of one folder per cluster named as the
// clusters' own folders: d holds a folder named as the entry point's
// (bootstrap/prod/ for clusters/prod), and name is a folder beside the
// entry point's that holds a manifest of a name the entry point's folder
// holds too (clusters/staging/flux-instance.yaml beside
// clusters/prod/flux-instance.yaml), as clusters' folders do.
func perCluster(d, root, entry, name string) bool {
	parts := entryFolders(root, entry)
	if len(parts) == 0 || parts[len(parts)-1] == "." {
		return false
	}
	own := parts[len(parts)-1]
	if fi, err := os.Stat(filepath.Join(d, own)); err != nil || !fi.IsDir() || name == own {
		return false
	}
	entryDir := filepath.Join(append([]string{root}, parts...)...)
	sibling := filepath.Join(filepath.Dir(entryDir), name)
	mine, _ := os.ReadDir(entryDir)
	for _, e := range mine {
		n := e.Name()
		if e.Type().IsRegular() && (strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml")) && fileExists(filepath.Join(sibling, n)) {
			return true
		}
	}
	return false
}

// otherClusters returns the names of the folders that stand beside a
// folder of the entry point's path as another cluster's: X beside main
// in kubernetes/main/flux/cluster when kubernetes/X/flux exists (the
// same layout), X beside the entry point's own folder when X holds what
// flux bootstrap writes (clusters/X/flux-system/gotk-sync.yaml).
func otherClusters(root, entry string) map[string]bool {
	out := map[string]bool{}
	parts := entryFolders(root, entry)
	if len(parts) == 1 && parts[0] == "." {
		return out
	}
	for i, part := range parts {
		parent := filepath.Join(append([]string{root}, parts[:i]...)...)
		entries, _ := os.ReadDir(parent)
		for _, e := range entries {
			name := e.Name()
			if !e.IsDir() || name == part || strings.HasPrefix(name, ".") {
				continue
			}
			marker := filepath.Join("flux-system", "gotk-sync.yaml")
			if i+1 < len(parts) {
				marker = parts[i+1]
			}
			if _, err := os.Stat(filepath.Join(parent, name, marker)); err == nil {
				out[name] = true
			}
		}
	}
	return out
}

// bootstrapDirs are the folders where repositories keep the bootstrap
// step of a cluster: for an entry point (a folder under root), the
// bootstrap/ folders on the way from it up to root (kubernetes/bootstrap/
// for kubernetes/flux/cluster, kubernetes/main/bootstrap/ for
// kubernetes/main/cluster, each cluster's own where a repository has
// several), and in each the folder named as a folder of the entry point's
// path (bootstrap/main/ for kubernetes/main/flux/cluster: a repository
// with several clusters keeps each one's bootstrap step so); without one,
// bootstrap/ at the root or in a folder of the root.
func bootstrapDirs(root, entry string) []string {
	var out []string
	isDir := func(d string) bool {
		fi, err := os.Stat(d)
		return err == nil && fi.IsDir()
	}
	if entry != "" {
		rel, err := filepath.Rel(absPath(root), absPath(entry))
		if err != nil || !filepath.IsLocal(rel) && rel != "." {
			rel = "."
		}
		for d := filepath.Join(root, rel); ; d = filepath.Dir(d) {
			if b := filepath.Join(d, "bootstrap"); isDir(b) {
				out = append(out, b)
				for _, name := range entryFolders(root, entry) {
					if c := filepath.Join(b, name); name != "." && name != "bootstrap" && isDir(c) && !slices.Contains(out, c) {
						out = append(out, c)
					}
				}
			}
			if r, err := filepath.Rel(root, d); err != nil || r == "." {
				return out
			}
		}
	}
	if isDir(filepath.Join(root, "bootstrap")) {
		out = append(out, filepath.Join(root, "bootstrap"))
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "bootstrap" {
			continue
		}
		if d := filepath.Join(root, e.Name(), "bootstrap"); isDir(d) {
			out = append(out, d)
		}
	}
	return out
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}
