package cli

// flagWorded is a library error reworded for the command line: its message
// names the flags that set the options or fields the library's message
// names. errors.Is and errors.As still see the library's error.
type flagWorded struct {
	err error
	msg string
}

func (e flagWorded) Error() string { return e.msg }
func (e flagWorded) Unwrap() error { return e.err }
