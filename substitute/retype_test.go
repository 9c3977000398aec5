package substitute

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRetypingKeepsEachAnswer: the retyping check keeps what its YAML
// steps answered, each by its own text, so the same value with other
// variable values gets its own answer, in any order, and a value asked
// again is not re-serialised again.
func TestRetypingKeepsEachAnswer(t *testing.T) {
	value := "${retype_test_n}"
	want := map[string]Severity{"3": "", "yes": SeverityWarning, "a: b": SeverityError, "abc": "", "0123": SeverityWarning}
	for range 2 {
		for v, sev := range want {
			f := checkRetyping(value, "retype_test_n", Available{Values: map[string]string{"retype_test_n": v}})
			if sev == "" {
				assert.Nil(t, f, "%q", v)
				continue
			}
			require.NotNil(t, f, "%q", v)
			assert.Equal(t, sev, f.Severity, "%q: %s", v, f.Message)
		}
	}
	_, kept := reserialised.Load(value)
	assert.True(t, kept, "the re-serialised value is kept")
	_, kept = readBack.Load("k: yes\n")
	assert.True(t, kept, "the substituted text read back is kept")
}
