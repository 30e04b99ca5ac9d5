package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"reportdb/httpapi"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func runVersion(w io.Writer) int {
	commit, modified := "unknown", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			version = bi.Main.Version
		}
	}
	if modified {
		commit += "-dirty"
	}
	// the API reproduced, whatever version serve is configured to report
	fmt.Fprintf(w, "reportdb %s\ncommit %s\n%s %s/%s\nPuppetDB API %s\n", version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH, httpapi.PuppetDBVersion)
	return 0
}
