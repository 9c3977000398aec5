package review

// WithoutGitCLI makes every answer of Git go-git's, as on a machine
// without the git command, until restore is called.
func WithoutGitCLI() (restore func()) {
	gitCLIOff.Store(true)
	return func() { gitCLIOff.Store(false) }
}
