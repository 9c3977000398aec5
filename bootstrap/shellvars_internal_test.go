package bootstrap

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// expandLoops takes each loop's array from the nearest assignment before
// it (two functions may both set local files=(…)), leaves a loop holding
// a loop as written, and withVar leaves a longer variable name alone.
func TestExpandLoops(t *testing.T) {
	text := `a() {
    local -r files=( "one.yaml" )
    for f in "${files[@]}"; do
        kubectl apply -f "${f}"
    done
}
b() {
    local -r files=( "two.yaml" 'three.yaml' )
    for f in "${files[@]}"; do
        kubectl apply -f $f $files_dir
    done
}
c() {
    local -r dirs=( "x" )
    for d in "${dirs[@]}"; do
        for f in "${d}"/*; do
            kubectl apply -f "${f}"
        done
    done
}
`
	got := expandLoops(text)
	assert.Equal(t, 1, strings.Count(got, `kubectl apply -f "one.yaml"`), "a's loop, from a's array")
	assert.Equal(t, 1, strings.Count(got, "kubectl apply -f two.yaml $files_dir"), "b's loop, from b's array")
	assert.Equal(t, 1, strings.Count(got, "kubectl apply -f three.yaml $files_dir"))
	assert.Contains(t, got, `for d in "${dirs[@]}"; do`, "a loop holding a loop stays as written")
}
