//go:build unix

package httpapi

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used (all threads, user +
// system): benchmarks report it beside wall time, which other processes
// inflate on a busy machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
