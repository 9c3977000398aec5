// Package readfile reads whole files with fewer system calls than
// os.ReadFile, for fluxpack lint, which reads every manifest of a
// platform: ten thousand files is common.
//
// os.ReadFile wraps the descriptor in an os.File, which registers it with
// the runtime's poller (a system call that fails for regular files), and
// stats it for its size. On the 2-core VMs fluxpack's CI runs on, that
// doubles the cost of reading a small file (BenchmarkRead compares both).
// Read opens, reads and closes, no more; on systems that are not Unix it
// is os.ReadFile.
package readfile
