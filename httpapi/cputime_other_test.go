//go:build !unix

package httpapi

import "time"

func cpuTime() time.Duration { return 0 }
