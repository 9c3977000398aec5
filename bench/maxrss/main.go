//go:build linux

// Command maxrss runs a command and prints its peak resident set size in KiB
// on stdout, as getrusage(2) reports it; the command's own output goes to
// stderr. It is what `/usr/bin/time -f %M` prints, for machines without GNU
// time.
//
// A process started straight from a big parent (a test binary) reports that
// parent's RSS as its own peak: Linux records the size of the memory image an
// exec replaces. Started from this small process, the command's figure is its
// own.
//
// Usage: maxrss COMMAND [ARG...]
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: maxrss COMMAND [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "maxrss: running %s: %v\n", os.Args[1], err)
		os.Exit(2)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Fprintln(os.Stderr, "maxrss: no resource usage for the command")
		os.Exit(2)
	}
	fmt.Println(ru.Maxrss) // KiB on Linux
}
