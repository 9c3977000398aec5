package review

// WithoutGitCLI makes every answer of Git go-git's, as on a machine
// without the git command, until restore is called.
func WithoutGitCLI() (restore func()) {
	gitCLIOff.Store(true)
	return func() { gitCLIOff.Store(false) }
}

// WaitHeadReads waits for the head reads CompareRevision stopped to end
// and close what they read.
func WaitHeadReads() {
	abandoned.Range(func(k, _ any) bool {
		<-k.(chan struct{})
		return true
	})
}
